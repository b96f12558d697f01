package encode

// Counters returns how many packets v has sent to its decoder and how many
// times it has seeked (or rewound), for tests that check FrameAt's cost.
func (v *Video) Counters() (packets, seeks int) { return v.packets, v.seeks }
