package pipeline

import "testing"

// A spec that changes the codec gets that codec's default preset unless it
// names one: x264's "veryfast" made h264_nvenc refuse to open on every
// machine (found on an H200, BENCHMARKS.gpu.md).
func TestPresetFollowsCodec(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"grid: default\n", "veryfast"},
		{"grid: default\nencoder: {codec: libx264}\n", "veryfast"},
		{"grid: default\nencoder: {codec: h264_nvenc}\n", "p4"},
		{"grid: default\nencoder: {codec: hevc_nvenc, crf: 20}\n", "p4"},
		{"grid: default\nencoder: {codec: h264_nvenc, preset: p7}\n", "p7"},
		{"grid: default\nencoder: {codec: libx264, preset: slow}\n", "slow"},
		{"grid: default\nencoder: {codec: libvpx-vp9}\n", ""},
	} {
		s, err := ParseSpec([]byte(c.yaml))
		if err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		if s.Encoder.Preset != c.want {
			t.Errorf("%q: preset %q, want %q", c.yaml, s.Encoder.Preset, c.want)
		}
	}
	if s, _ := BuiltinSpec(GridPaper); s.Encoder.Preset != "veryfast" {
		t.Errorf("paper grid preset %q, want veryfast (the paper grid's clips must not move)", s.Encoder.Preset)
	}
}
