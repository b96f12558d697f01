package sampling

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestCappedFrameTimes: fps:K,max:M hand-worked on a 24 s clip at 30 fps
// and shorter clips (issue 26 §3).
func TestCappedFrameTimes(t *testing.T) {
	// The cap does not bite: fps:2 gives 48 ≤ 768 frames at j/2.
	p := mustPlan(t, "fps:2,max:768", clip24())
	if p.Policy != "fps:2,max:768" || len(p.Frames) != 48 || p.Note != "" {
		t.Fatalf("fps:2,max:768: policy %q, %d frames, note %q; want 48 frames, no note", p.Policy, len(p.Frames), p.Note)
	}
	for j, f := range p.Frames {
		if f.T != float64(j)*0.5 || f.Index != j || f.Position != j {
			t.Errorf("fps:2,max:768 frame %d = %+v, want t = %v", j, f, float64(j)*0.5)
		}
	}
	if want := mustPlan(t, "fps:2", clip24()).Times(); !reflect.DeepEqual(p.Times(), want) {
		t.Errorf("an uncapped fps:2,max:768 differs from fps:2")
	}

	// The cap bites: fps:2 would give 48 > 10, so 10 frames at j·24/10.
	p = mustPlan(t, "fps:2,max:10", clip24())
	want := []float64{0, 2.4, 4.8, 7.2, 9.6, 12, 14.4, 16.8, 19.2, 21.6}
	if !reflect.DeepEqual(p.Times(), want) {
		t.Errorf("fps:2,max:10 times %v, want %v", p.Times(), want)
	}
	for j, f := range p.Frames {
		if f.Index != j || f.Position != j {
			t.Errorf("fps:2,max:10 frame %d numbered %+v", j, f)
		}
	}
	if p.Note != "fps:2 gives 48 frames over 24 s, more than max 10: 10 evenly spaced frames, one every 2.4 s" {
		t.Errorf("fps:2,max:10 note %q", p.Note)
	}
	if u := mustPlan(t, "uniform:10", clip24()).Times(); !reflect.DeepEqual(p.Times(), u) {
		t.Errorf("a biting cap differs from uniform:10: %v vs %v", p.Times(), u)
	}

	// A short clip where the cap does not bite: 3 s at fps:2 is 6 frames.
	short := Clip{ID: "short", Duration: 3, FPS: 30}
	if got := mustPlan(t, "fps:2,max:10", short).Times(); !reflect.DeepEqual(got, []float64{0, 0.5, 1, 1.5, 2, 2.5}) {
		t.Errorf("fps:2,max:10 on 3 s: %v", got)
	}
	// Exactly at the cap (K·D = M): j/K, which is also j·D/M.
	five := Clip{ID: "five", Duration: 5, FPS: 30}
	if p := mustPlan(t, "fps:2,max:10", five); len(p.Frames) != 10 || p.Frames[9].T != 4.5 || p.Note != "" {
		t.Errorf("fps:2,max:10 on 5 s: %v, note %q", p.Times(), p.Note)
	}
	// One frame fewer: 5 s is 10 frames at fps:2, above max:9.
	if got := mustPlan(t, "fps:2,max:9", five).Times(); len(got) != 9 || got[1] != 5.0/9 || got[8] != 40.0/9 {
		t.Errorf("fps:2,max:9 on 5 s: %v, want j·5/9", got)
	}
}

// TestCappedRateBound: K is bounded by the clip's rate as for fps:K, and
// the error names the whole policy.
func TestCappedRateBound(t *testing.T) {
	_, err := mustPolicy(t, "fps:60,max:100").Plan(clip24())
	if err == nil || !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), `fps:60,max:100 on clip "bounce_ball_N03_F1.0_s00": 60 samples/s is faster than the clip's own 30 fps`) {
		t.Errorf("fps:60,max:100 on a 30 fps clip: %v", err)
	}
	if p := mustPlan(t, "fps:60,max:100", exact(clip24())); len(p.Frames) != 100 || p.Frames[1].T != 0.24 {
		t.Errorf("fps:60,max:100 --exact: %d frames, %v", len(p.Frames), p.Times())
	}
	if p := mustPlan(t, "fps:30,max:10000", clip24()); len(p.Frames) != 720 {
		t.Errorf("fps:30,max:10000: %d frames, want 720", len(p.Frames))
	}
}

func TestCappedParse(t *testing.T) {
	// Canonical round trip: the string keys a condition.
	for in, want := range map[string]string{
		"fps:2,max:10":        "fps:2,max:10",
		"fps:2.0,max:010":     "fps:2,max:10",
		" fps:0.5 , max:768 ": "fps:0.5,max:768",
		"fps:1000,max:10000":  "fps:1000,max:10000",
	} {
		p := mustPolicy(t, in)
		if p.String() != want {
			t.Errorf("Parse(%q).String() = %q, want %q", in, p, want)
		}
		if again := mustPolicy(t, p.String()); again != p {
			t.Errorf("%q does not round-trip: %#v vs %#v", in, again, p)
		}
	}
	cases := []struct{ policy, want string }{
		{"fps:2,max:0", "max:0: M is not a positive whole number"},
		{"fps:2,max:-3", "max:-3: M is not a positive whole number"},
		{"fps:2,max:2.5", "max:2.5: M is not a positive whole number"},
		{"fps:2,max:1e3", "max:1e3: M is not a positive whole number"},
		{"fps:2,max:", "max:: M is not a positive whole number"},
		{"fps:2,max", "max needs a frame count"},
		{"fps:2,max:10001", "max:10001 is above the limit of 10000 frames per plan"},
		{"fps:2,max:99999999999999999999", "above the limit of 10000 frames per plan"},
		{"fps:2,max:10,max:5", "one frame cap"},
		{"fps:2,", "only a frame cap max:M may follow the comma"},
		{"fps:1,fps:4", "only a frame cap max:M may follow the comma"},
		{"fps:2,min:4", "only a frame cap max:M may follow the comma"},
		{"keyframes,max:5", "keyframes:0.1 takes no frame cap: max:M goes with fps:K only"},
		{"uniform:8,max:4", "uniform:8 takes no frame cap"},
		{"shuffled:8,max:4", "shuffled:8 takes no frame cap"},
		{"native:2,max:4", "native:2 takes no frame cap"},
		{"adaptive:8,max:4", "adaptive:8 takes no frame cap"},
		{"single:best,max:4", "single:best takes no frame cap"},
		{"fps:0,max:4", "not a positive number"},
		{"fps,max:4", "fps needs a rate"},
		{"max:10", "max:M is a frame cap: write it after its policy"},
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
}

func TestSplitList(t *testing.T) {
	cases := []struct {
		in   []string
		want []string
	}{
		{[]string{"fps:1,fps:4"}, []string{"fps:1", "fps:4"}},
		{[]string{"fps:1,fps:2,max:768,keyframes"}, []string{"fps:1", "fps:2,max:768", "keyframes"}},
		// Already split at every comma (pflag's StringSlice, a YAML flow
		// list [fps:2,max:10]): the cap goes back to its policy.
		{[]string{"fps:2", "max:10", "uniform:8"}, []string{"fps:2,max:10", "uniform:8"}},
		{[]string{" fps:2 , max:10 ", "", " native "}, []string{"fps:2,max:10", "native"}},
		{[]string{"fps:1,,fps:4,"}, []string{"fps:1", "fps:4"}},
		// What does not follow a policy is kept for Parse to refuse.
		{[]string{"max:10,fps:2"}, []string{"max:10", "fps:2"}},
		{[]string{"fps:2,bogus"}, []string{"fps:2,bogus"}},
		{nil, nil},
	}
	for _, c := range cases {
		if got := SplitList(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("SplitList(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Every policy name Parse knows splits a list.
	for _, k := range kinds {
		_, err := Parse(k + ":1")
		if err != nil && strings.Contains(err.Error(), "unknown policy") {
			t.Errorf("kinds lists %q, which Parse does not know", k)
		}
		if !strings.Contains(Policies, k) {
			t.Errorf("Policies does not name %q", k)
		}
	}
}

func TestEvenlyAndConstantRate(t *testing.T) {
	c := clip24()
	cases := []struct {
		policy string
		rate   float64
		ok     bool
	}{
		{"fps:2", 2, true},
		{"native", 1, true},
		{"native:2", 2, true},
		{"uniform:8", 8.0 / 24, true},
		{"fps:2,max:768", 2, true},        // 48 frames: the cap does not bite
		{"fps:2,max:10", 10.0 / 24, true}, // the cap bites: M/D
		{"fps:2,max:48", 2, true},         // exactly at the cap
		{"shuffled:8", 0, false},
		{"keyframes", 0, false},
		{"adaptive:8", 0, false},
		{"single:random", 0, false},
		{"single:best", 0, false},
	}
	for _, tc := range cases {
		p := mustPolicy(t, tc.policy)
		if Evenly(p) != tc.ok {
			t.Errorf("Evenly(%s) = %v, want %v", tc.policy, !tc.ok, tc.ok)
		}
		r, ok := ConstantRate(p, c)
		if r != tc.rate || ok != tc.ok {
			t.Errorf("ConstantRate(%s) = %v, %v; want %v, %v", tc.policy, r, ok, tc.rate, tc.ok)
		}
		if !ok {
			continue
		}
		// The plan's frames are exactly j/rate (to rounding), in order.
		plan := mustPlan(t, tc.policy, c)
		for j, f := range plan.Frames {
			if d := f.T - float64(j)/r; d > 1e-9 || d < -1e-9 || f.Position != j {
				t.Errorf("%s frame %d at %v, want %v at the rate %v", tc.policy, j, f.T, float64(j)/r, r)
				break
			}
		}
	}
	if _, ok := ConstantRate(mustPolicy(t, "uniform:8"), Clip{ID: "x"}); ok {
		t.Errorf("a clip without a duration has a constant rate")
	}
}

func TestCappedLabelsShowTimes(t *testing.T) {
	if TimesReveal(mustPolicy(t, "fps:2,max:10")) {
		t.Errorf("fps:K,max:M hides its times; its times follow from K, M and D as uniform:M's do")
	}
}
