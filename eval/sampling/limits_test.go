package sampling

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestParseRefusesAbsurdParameters: issue 12 #9. fps:1e9 used to pass
// Parse and then allocate 24·10⁹ frame times (out of memory).
func TestParseRefusesAbsurdParameters(t *testing.T) {
	cases := []struct{ policy, want string }{
		{"fps:1e9", "above the limit of 1000 frames per second"},
		{"fps:1000.5", "above the limit of 1000 frames per second"},
		{"native:5000", "above the limit of 1000 frames per second"},
		{"fps:NaN", "not a positive number"},
		{"fps:-Inf", "not a positive number"},
		{"fps:+Inf", "not a positive number"},
		{"native:0", "not a positive number"},
		{"keyframes:NaN", "not a positive number"},
		{"keyframes:61", "above the limit of 60 seconds"},
		{"uniform:10001", "above the limit of 10000 frames per plan"},
		{"shuffled:1000000", "above the limit of 10000 frames per plan"},
		{"adaptive:10001", "above the limit of 10000 frames per plan"},
		{"uniform:99999999999999999999", "above the limit of 10000 frames per plan"},
		{"uniform:-99999999999999999999", "not a positive whole number"},
		{"uniform:1e3", "not a positive whole number"},
	}
	for _, c := range cases {
		p, err := Parse(c.policy)
		if err == nil || !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, %v; want ErrPolicy containing %q", c.policy, p, err, c.want)
		}
		if p != nil {
			t.Errorf("Parse(%q) returned a policy with its error", c.policy)
		}
	}
	// The ceilings themselves are accepted.
	for _, s := range []string{"fps:1000", "native:1000", "keyframes:60", "uniform:10000", "shuffled:10000", "adaptive:10000"} {
		if _, err := Parse(s); err != nil {
			t.Errorf("Parse(%q): %v", s, err)
		}
	}
}

// TestPlanBounds: issue 12 #9. A plan is refused before it is allocated
// when it samples faster than the clip (without Exact) or has more than
// MaxPlanFrames frames; uniform:100000 on a 40-frame clip used to write
// 100,000 files.
func TestPlanBounds(t *testing.T) {
	forty := Clip{ID: "c40", Duration: 4, FPS: 10} // 40 frames
	cases := []struct {
		policy string
		clip   Clip
		want   string
	}{
		// 24 s at 30 fps: fps:31 would repeat frames.
		{"fps:31", clip24(), `fps:31 on clip "bounce_ball_N03_F1.0_s00": 31 samples/s is faster than the clip's own 30 fps`},
		{"native:60", clip24(), "faster than the clip's own 30 fps"},
		{"uniform:41", forty, "41 frames from a clip of 40 frames would repeat clip frames (at most 40 here"},
		{"shuffled:10000", forty, "10000 frames from a clip of 40 frames"},
		// With Exact the rate may exceed the clip's, but the plan is still
		// capped: 1000/s × 24 s = 24,000 frames.
		{"fps:1000", exact(clip24()), "it gives 24000 frames over 24 s, more than the limit of 10000 frames per plan"},
		// A 3,600 s clip at 240 fps: fps:4 is 14,400 frames.
		{"fps:4", Clip{ID: "long", Duration: 3600, FPS: 240}, "14400 frames over 3600 s"},
		// An absurd duration (a broken external video) is refused, not
		// converted to a negative int.
		{"fps:1", Clip{ID: "huge", Duration: 1e300, FPS: 30}, "1e+300 frames"},
		{"fps:1", Clip{ID: "inf", Duration: math.Inf(1), FPS: 30}, "finite"},
		// Keyframes: 3 per event; 3,334 events give 10,002.
		{"keyframes", Clip{ID: "many", Duration: 3600, FPS: 240, Events: evenly(3334, 1)}, "10002 frames"},
	}
	for _, c := range cases {
		_, err := mustPolicy(t, c.policy).Plan(c.clip)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s on %s: %v, want an error containing %q", c.policy, c.clip.ID, err, c.want)
		}
		if err != nil && !strings.Contains(err.Error(), "finite") && !errors.Is(err, ErrPolicy) {
			t.Errorf("%s on %s: %v does not wrap ErrPolicy", c.policy, c.clip.ID, err)
		}
	}
	// At the bounds: the clip's own rate and frame count, and the cap.
	ok := []struct {
		policy string
		clip   Clip
		n      int
	}{
		{"fps:30", clip24(), 720},
		{"native:10", forty, 40},
		{"uniform:40", forty, 40},
		{"fps:20", exact(forty), 80},
		{"uniform:100", exact(forty), 100},
		{"fps:1000", exact(Clip{ID: "ten", Duration: 10, FPS: 30}), 10000},
		{"keyframes", Clip{ID: "many", Duration: 3600, FPS: 240, Events: evenly(3333, 1)}, 9999},
	}
	for _, c := range ok {
		if p := mustPlan(t, c.policy, c.clip); len(p.Frames) != c.n {
			t.Errorf("%s on %s: %d frames, want %d", c.policy, c.clip.ID, len(p.Frames), c.n)
		}
	}
}

// TestAdaptivePassBound: the low-resolution pass of a clip with more than
// MaxAdaptivePass frames is refused before any frame is read.
func TestAdaptivePassBound(t *testing.T) {
	reads := 0
	c := Clip{ID: "endless", Duration: 1e7, FPS: 30, Pixels: countingSource{&reads}}
	_, err := mustPolicy(t, "adaptive:8").Plan(c)
	if err == nil || !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), "300000000 clip frames, more than the limit of 1000000") {
		t.Errorf("adaptive on a 10⁷ s clip: %v", err)
	}
	if reads != 0 {
		t.Errorf("%d frames read before the refusal", reads)
	}
}

type countingSource struct{ n *int }

func (s countingSource) LowRes(float64) ([]byte, error) { *s.n++; return []byte{0}, nil }

func exact(c Clip) Clip {
	c.Exact = true
	return c
}

// evenly is n event times 1/f apart from 0.5 s.
func evenly(n int, f float64) []float64 {
	ts := make([]float64, n)
	for i := range ts {
		ts[i] = 0.5 + float64(i)/f
	}
	return ts
}
