package scene

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/tracegrid/tracegrid/trace"
)

func objectsParams(n int, class string, seed int) Params {
	return Params{Domain: ObjectsDomain, N: n, Class: class, Seed: seed, Duration: CountVideoBenchDuration, FPS: 30, Width: 1920, Height: 1080}
}

// The whole CountVideoBench grid: every clip is valid (no two objects
// closer than the minimum distance, every object in view in some frame),
// and the share of clips in which an object leaves the view and the mean
// number that do are near the paper's 83.0 % and 3.29 (§4.3).
func TestObjectsGridLeaveStats(t *testing.T) {
	if len(CountVideoBenchCounts) != 26 || len(ObjectClasses()) != 10 {
		t.Fatalf("grid has %d cardinalities and %d classes, want 26 and 10", len(CountVideoBenchCounts), len(ObjectClasses()))
	}
	var trs []*trace.Trace
	for _, n := range CountVideoBenchCounts {
		for _, class := range ObjectClasses() {
			for seed := range CountVideoBenchSeeds {
				c, err := New(objectsParams(n, class, seed))
				if err != nil {
					t.Fatal(err)
				}
				tr := c.Trace()
				if err := tr.Validate(); err != nil {
					t.Fatalf("%s: %v", tr.ID, err)
				}
				trs = append(trs, tr)
			}
		}
	}
	v := trace.SummarizeViews(trs)
	share, mean := 100*v.Share, v.MeanLeaving
	t.Logf("%d clips: %.1f%% have an object leaving the view (paper 83.0%%), %.2f leave on average (paper 3.29)", v.Clips, share, mean)
	if v.Clips != 2600 || math.Abs(share-83.0) > 3 || math.Abs(mean-3.29) > 0.3 {
		t.Errorf("grid statistics %.1f%% / %.2f are off the paper's 83.0%% / 3.29", share, mean)
	}
}

func TestObjectsDeterministic(t *testing.T) {
	a, _ := New(objectsParams(20, "sphere-blue", 3))
	b, _ := New(objectsParams(20, "sphere-blue", 3))
	ja, _ := a.Trace().Marshal()
	jb, _ := b.Trace().Marshal()
	if !bytes.Equal(ja, jb) {
		t.Fatal("two builds of one clip differ")
	}
	if !a.State(1.3).Equal(b.State(1.3)) {
		t.Fatal("two builds draw different frames")
	}
	c, _ := New(objectsParams(20, "sphere-blue", 4))
	jc, _ := c.Trace().Marshal()
	if bytes.Equal(ja, jc) {
		t.Fatal("seeds 3 and 4 give the same clip")
	}
	if a.State(0).Equal(a.State(2.5)) {
		t.Fatal("the camera does not move")
	}
}

func TestObjectsTraceAndFrames(t *testing.T) {
	c, err := New(objectsParams(12, "cube-red", 0))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.P.ID(), "objects_N12_cube-red_s00"; got != want {
		t.Fatalf("id %q, want %q", got, want)
	}
	tr := c.Trace()
	if tr.N != 12 || len(tr.Events) != 0 || tr.F != 0 || tr.Class != "cube-red" || len(tr.Objects.InView) != 150 {
		t.Fatalf("trace n=%d events=%d f=%v class=%q frames=%d", tr.N, len(tr.Events), tr.F, tr.Class, len(tr.Objects.InView))
	}
	// The draw list's world is the trace's: same objects, and the camera
	// at frame k has the orientation of the trace's path at k/30.
	for _, k := range []int{0, 37, 75, 149} {
		dl := c.State(float64(k) / 30)
		w := dl.World
		if w == nil || len(w.Objects) != 12 || len(dl.Items) != 0 {
			t.Fatalf("frame %d: world %v, %d items", k, w != nil, len(dl.Items))
		}
		yaw, pitch := tr.Objects.Camera.At(float64(k) / 30)
		if math.Abs(w.Camera.Yaw*180/math.Pi-yaw) > 1e-9 || math.Abs(w.Camera.Pitch*180/math.Pi-pitch) > 1e-9 {
			t.Fatalf("frame %d: camera %v/%v, trace %v/%v", k, w.Camera.Yaw, w.Camera.Pitch, yaw, pitch)
		}
		in := map[int]bool{}
		for _, id := range tr.Objects.InView[k] {
			in[id] = true
		}
		for i, o := range w.Objects {
			if Vec3(tr.Objects.Items[i].Center) != o.Center || o.Color != ObjectColorRGB["red"] || o.Shape != Cube {
				t.Fatalf("object %d differs from the trace", i)
			}
			x, y, _, front := w.Camera.Project(o.Center, 1920.0/1080)
			if got := front && math.Abs(x) <= 1 && math.Abs(y) <= 1; got != in[i] {
				t.Fatalf("frame %d object %d: projects to (%.3f, %.3f) but in_view says %v", k, i, x, y, in[i])
			}
		}
	}
}

func TestObjectsParamsErrors(t *testing.T) {
	ok := objectsParams(5, "cube-green", 0)
	for name, mod := range map[string]func(*Params){
		"unknown class":   func(p *Params) { p.Class = "cone-red" },
		"no class":        func(p *Params) { p.Class = "" },
		"orange":          func(p *Params) { p.Class = "cube-orange" },
		"frequency":       func(p *Params) { p.F = 1 },
		"zero objects":    func(p *Params) { p.N = 0 },
		"too many":        func(p *Params) { p.N = MaxObjects + 1 },
		"class elsewhere": func(p *Params) { p.Domain = "blinking"; p.F = 1 },
	} {
		p := ok
		mod(&p)
		if _, err := New(p); !errors.Is(err, ErrParams) {
			t.Errorf("%s: err %v, want ErrParams", name, err)
		}
	}
	if _, err := New(ok); err != nil {
		t.Fatal(err)
	}
}

func TestCameraProject(t *testing.T) {
	cam := Camera{FovY: math.Pi / 2, Near: 0.1, Far: 100}
	x, y, _, front := cam.Project(Vec3{0, 0, -5}, 1)
	if !front || math.Abs(x) > 1e-12 || math.Abs(y) > 1e-12 {
		t.Fatalf("straight ahead projects to (%v, %v, %v)", x, y, front)
	}
	// 90° field of view: a point at 45° to the right is on the right edge.
	if x, y, _, _ := cam.Project(Vec3{5, 0, -5}, 1); math.Abs(x-1) > 1e-12 || math.Abs(y) > 1e-12 {
		t.Fatalf("45° right projects to (%v, %v)", x, y)
	}
	if _, y, _, _ := cam.Project(Vec3{0, 2, -5}, 1); !(y > 0) {
		t.Fatalf("a point above projects to y=%v", y)
	}
	if _, _, _, front := cam.Project(Vec3{0, 0, 5}, 1); front {
		t.Fatal("a point behind is in front")
	}
	// Positive yaw turns left: a point 45° to the left is then ahead.
	cam.Yaw = math.Pi / 4
	if x, _, _, _ := cam.Project(Vec3{-5, 0, -5}, 1); math.Abs(x) > 1e-12 {
		t.Fatalf("after a 45° left turn the point 45° left projects to x=%v", x)
	}
	// Looking straight down with yaw 0, +x is right and −z is up.
	down := Camera{Eye: Vec3{0, 10, 0}, Pitch: -math.Pi / 2, FovY: math.Pi / 2, Near: 0.1, Far: 100}
	x, y, _, _ = down.Project(Vec3{1, 0, -2}, 1)
	if !(x > 0 && y > 0) || math.Abs(x-0.1) > 1e-9 || math.Abs(y-0.2) > 1e-9 {
		t.Fatalf("top-down view projects (1, 0, −2) to (%v, %v)", x, y)
	}
}
