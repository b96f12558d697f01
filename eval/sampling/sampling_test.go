package sampling

import (
	"errors"
	"math"
	"sort"
	"strings"
	"testing"
)

func clip24(events ...float64) Clip {
	return Clip{ID: "bounce_ball_N03_F1.0_s00", Duration: 24, FPS: 30, Seed: 0, Events: events}
}

func mustPlan(t *testing.T, policy string, c Clip) Plan {
	t.Helper()
	p, err := Parse(policy)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := p.Plan(c)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

func TestUniformRates(t *testing.T) {
	cases := []struct {
		policy string
		n      int
		last   float64
	}{
		{"fps:1", 24, 23}, {"fps:2", 48, 23.5}, {"fps:4", 96, 23.75}, {"fps:8", 192, 23.875},
		{"fps:10", 240, 23.9}, {"fps:16", 384, 23.9375}, {"native", 24, 23}, {"native:2", 48, 23.5},
		{"fps:0.7", 17, 16 / 0.7}, {"uniform:8", 8, 21}, {"uniform:1", 1, 0},
	}
	for _, c := range cases {
		p := mustPlan(t, c.policy, clip24())
		if len(p.Frames) != c.n {
			t.Errorf("%s: %d frames, want %d", c.policy, len(p.Frames), c.n)
			continue
		}
		if p.Frames[0].T != 0 || math.Abs(p.Frames[c.n-1].T-c.last) > 1e-9 {
			t.Errorf("%s: first %v last %v, want 0 and %v", c.policy, p.Frames[0].T, p.Frames[c.n-1].T, c.last)
		}
		for i, f := range p.Frames {
			if f.Index != i || f.Position != i || f.T >= 24 {
				t.Errorf("%s: frame %d = %+v", c.policy, i, f)
			}
		}
	}
	if p := mustPlan(t, "fps:4", clip24()); p.Frames[5].T != 1.25 {
		t.Errorf("fps:4 frame 5 at %v, want 1.25 (t_j = j/K)", p.Frames[5].T)
	}
}

func TestKeyframes(t *testing.T) {
	p := mustPlan(t, "keyframes", clip24(2, 3, 4))
	want := []float64{1.9, 2, 2.1, 2.9, 3, 3.1, 3.9, 4, 4.1}
	if len(p.Frames) != 9 {
		t.Fatalf("%d frames, want 9", len(p.Frames))
	}
	for i, f := range p.Frames {
		if math.Abs(f.T-want[i]) > 1e-12 || f.Index != i || f.Position != i {
			t.Errorf("frame %d = %+v, want t=%v", i, f, want[i])
		}
	}
	// Clamped to the clip; offset settable.
	p = mustPlan(t, "keyframes:0.25", clip24(0.1, 23.9))
	got := p.Times()
	for i, w := range []float64{0, 0.1, 0.35, 23.65, 23.9, 24} {
		if math.Abs(got[i]-w) > 1e-12 {
			t.Errorf("clamped keyframes %v, want %v", got, w)
			break
		}
	}
	p = mustPlan(t, "keyframes", clip24())
	if len(p.Frames) != 0 || !strings.Contains(p.Note, "no true events") {
		t.Errorf("N=0 keyframes: %d frames, note %q", len(p.Frames), p.Note)
	}
}

func TestShuffledIsSeedFixedPermutationOfUniform(t *testing.T) {
	u := mustPlan(t, "uniform:16", clip24())
	s := mustPlan(t, "shuffled:16", clip24())
	s2 := mustPlan(t, "shuffled:16", clip24())
	other := clip24()
	other.Seed = 7
	s3 := mustPlan(t, "shuffled:16", other)
	byIndex := map[int]float64{}
	identity := true
	for pos, f := range s.Frames {
		if f.Position != pos {
			t.Fatalf("frames not in shown order: %+v", s.Frames)
		}
		if f.T != u.Frames[f.Index].T {
			t.Errorf("shuffled frame index %d at %v, uniform has %v", f.Index, f.T, u.Frames[f.Index].T)
		}
		byIndex[f.Index] = f.T
		identity = identity && f.Index == pos
		if s2.Frames[pos] != f {
			t.Errorf("shuffled order differs between two runs")
		}
	}
	if len(byIndex) != 16 || identity {
		t.Errorf("not a proper permutation: %+v", s.Frames)
	}
	same := true
	for i := range s.Frames {
		same = same && s.Frames[i] == s3.Frames[i]
	}
	if same {
		t.Errorf("another seed gives the same order")
	}
}

func TestSingleFrames(t *testing.T) {
	c := clip24(5, 6, 7, 8)
	best := mustPlan(t, "single:best", c)
	if len(best.Frames) != 1 || best.Frames[0].T != 6 {
		t.Errorf("single:best = %+v, want t_2 = 6", best.Frames)
	}
	if b := mustPlan(t, "single:best", clip24()); b.Frames[0].T != 12 {
		t.Errorf("single:best with N=0 = %v, want mid-clip", b.Frames[0].T)
	}
	// A static-object clip: the frame with the most objects in view; of
	// frames 1 and 4 (5 in view each) frame 4 is nearer the middle (3).
	objs := Clip{ID: "objects_N05_cube-red_s00", Duration: 7.0 / 10, FPS: 10, InView: []int{3, 5, 4, 4, 5, 2, 1}}
	if b := mustPlan(t, "single:best", objs); len(b.Frames) != 1 || math.Abs(b.Frames[0].T-0.4) > 1e-12 {
		t.Errorf("single:best on objects = %+v, want frame 4 (t = 0.4)", b.Frames)
	}
	r1, r2 := mustPlan(t, "single:random", c), mustPlan(t, "single:random", c)
	if len(r1.Frames) != 1 || r1.Frames[0] != r2.Frames[0] {
		t.Errorf("single:random not fixed: %+v %+v", r1.Frames, r2.Frames)
	}
	if k := r1.Frames[0].T * 30; math.Abs(k-math.Round(k)) > 1e-9 || r1.Frames[0].T >= 24 {
		t.Errorf("single:random %v is not a frame time of the clip", r1.Frames[0].T)
	}
}

func TestBadPolicies(t *testing.T) {
	for _, s := range []string{"", "fps", "fps:0", "fps:-2", "fps:abc", "fps:Inf", "uniform:0", "uniform:2.5",
		"shuffled:-1", "adaptive:0", "single", "single:worst", "keyframes:0", "magic:3", "fps:NaN"} {
		if _, err := Parse(s); err == nil || !errors.Is(err, ErrPolicy) {
			t.Errorf("Parse(%q) = %v, want ErrPolicy", s, err)
		}
	}
	if _, err := mustPolicy(t, "fps:4").Plan(Clip{ID: "x", Duration: 0, FPS: 30}); err == nil {
		t.Errorf("zero-length clip accepted")
	}
	if _, err := mustPolicy(t, "keyframes").Plan(clip24(3, 2)); err == nil || !strings.Contains(err.Error(), "not sorted") {
		t.Errorf("unsorted events: %v", err)
	}
	if _, err := mustPolicy(t, "adaptive:8").Plan(clip24()); err == nil || !strings.Contains(err.Error(), "pixels") {
		t.Errorf("adaptive without pixels: %v", err)
	}
}

func mustPolicy(t *testing.T, s string) Policy {
	p, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestApplyLimit(t *testing.T) {
	p := mustPlan(t, "fps:16", clip24())
	if _, err := ApplyLimit(p, 50, "refuse"); err == nil || !strings.Contains(err.Error(), "384 frames, more than max_images 50") {
		t.Errorf("refuse: %v", err)
	}
	th, err := ApplyLimit(p, 50, "thin")
	if err != nil || len(th.Frames) != 50 || th.Limit == nil || th.Limit.Before != 384 || th.Limit.After != 50 {
		t.Fatalf("thin: %+v %v", th.Limit, err)
	}
	for i, f := range th.Frames {
		if f.Index != i || f.Position != i {
			t.Errorf("thinned frame %d numbered %+v", i, f)
		}
		if want := p.Frames[i*384/50].T; f.T != want {
			t.Errorf("thinned frame %d at %v, want %v", i, f.T, want)
		}
	}
	// Thinning a shuffled plan keeps the shown order of the kept frames.
	s := mustPlan(t, "shuffled:20", clip24())
	ts, _ := ApplyLimit(s, 5, "thin")
	var lastPosInOld []int
	for _, f := range ts.Frames {
		for _, o := range s.Frames {
			if o.T == f.T {
				lastPosInOld = append(lastPosInOld, o.Position)
			}
		}
	}
	if !sort.IntsAreSorted(lastPosInOld) || len(lastPosInOld) != 5 {
		t.Errorf("thinned shuffled plan lost its order: %v", lastPosInOld)
	}
	if same, _ := ApplyLimit(p, 400, "refuse"); len(same.Frames) != 384 || same.Limit != nil {
		t.Errorf("a plan under the cap changed")
	}
}

// pulses is a synthetic pixel source: a 4-pixel image that is bright
// during [t_i, t_i+0.1) and dark otherwise, like blinking.
type pulses []float64

func (p pulses) LowRes(t float64) ([]byte, error) {
	for _, ti := range p {
		if t >= ti && t < ti+0.1 {
			return []byte{200, 200, 200, 200}, nil
		}
	}
	return []byte{10, 10, 10, 10}, nil
}

func TestAdaptiveFollowsChangesNotTrace(t *testing.T) {
	events := []float64{5, 6, 7, 8}
	c := clip24() // no events given: adaptive must find them from pixels
	c.Pixels = pulses(events)
	p := mustPlan(t, "adaptive:16", c)
	if len(p.Frames) != 16 {
		t.Fatalf("%d frames", len(p.Frames))
	}
	near := 0
	for _, f := range p.Frames {
		for _, e := range events {
			if f.T >= e-1.0/30-1e-9 && f.T <= e+0.1+1.0/30+1e-9 {
				near++
				break
			}
		}
	}
	// 8 change frames carry d=190 each; the baseline 0.1·mean(d) over 720
	// frames weighs 0.1·8·190 = 152 in all, i.e. ~9% of the total: at
	// least 12 of 16 frames must sit at the pulse edges.
	if near < 12 {
		t.Errorf("adaptive put only %d of 16 frames near changes: %v", near, p.Times())
	}
	// A static clip gets uniform coverage.
	c.Pixels = pulses(nil)
	p = mustPlan(t, "adaptive:4", c)
	if got := p.Times(); math.Abs(got[0]-3) > 0.05 || math.Abs(got[3]-21) > 0.05 {
		t.Errorf("static clip: %v, want ~3, 9, 15, 21", got)
	}
	// A budget above the frame count takes every frame and says so.
	short := Clip{ID: "s", Duration: 1, FPS: 10, Pixels: pulses(nil)}
	p = mustPlan(t, "adaptive:50", short)
	if len(p.Frames) != 10 || !strings.Contains(p.Note, "every frame") {
		t.Errorf("oversized budget: %d frames, note %q", len(p.Frames), p.Note)
	}
}
