package chat

import "testing"

func TestFrameLabelRoundTrip(t *testing.T) {
	for _, c := range []struct {
		pos, total int
		t          float64
	}{{0, 1, 0}, {2, 96, 0.5}, {383, 384, 23.9375}, {8, 9, 12.1}} {
		s := FrameLabel(c.pos, c.total, c.t)
		p, n, v, ok := ParseFrameLabel("some text. " + s + "\n")
		if !ok || p != c.pos || n != c.total || v != float64(int(c.t*1000+0.5))/1000 {
			t.Errorf("%q → %d %d %v %v", s, p, n, v, ok)
		}
	}
	if _, _, _, ok := ParseFrameLabel("Frame at t = 1 s"); ok {
		t.Errorf("malformed label accepted")
	}
}

func TestLabelModes(t *testing.T) {
	for _, c := range []struct {
		mode Labels
		want string
	}{
		{LabelsTime, "Frame 3 of 9 at t = 12.100 s"},
		{LabelsPosition, "Frame 3 of 9"},
		{LabelsNone, ""},
	} {
		if got := c.mode.Label(2, 9, 12.1); got != c.want {
			t.Errorf("%s: %q, want %q", c.mode, got, c.want)
		}
		if l, err := ParseLabels(string(c.mode)); err != nil || l != c.mode {
			t.Errorf("ParseLabels(%q) = %q, %v", c.mode, l, err)
		}
	}
	if _, err := ParseLabels("times"); err == nil {
		t.Error("ParseLabels accepted an unknown mode")
	}
	if !LabelsTime.Timed() || LabelsPosition.Timed() || LabelsNone.Timed() {
		t.Error("Timed: only the time mode states times")
	}
	// Both label forms read back; the last label in the text wins.
	p, n, v, timed, ok := ParseAnyFrameLabel("intro. Frame 1 of 4 at t = 0.250 s\nFrame 2 of 4")
	if !ok || p != 1 || n != 4 || v != 0 || timed {
		t.Errorf("position label read as %d %d %v %v %v", p, n, v, timed, ok)
	}
	p, n, v, timed, ok = ParseAnyFrameLabel(FrameLabel(6, 7, 3.5))
	if !ok || p != 6 || n != 7 || v != 3.5 || !timed {
		t.Errorf("time label read as %d %d %v %v %v", p, n, v, timed, ok)
	}
	if _, _, _, _, ok := ParseAnyFrameLabel("no label here"); ok {
		t.Error("text without a label read as one")
	}
}
