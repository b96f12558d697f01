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
