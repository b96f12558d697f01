package trace

import (
	"errors"
	"math"
	"testing"
)

// objectsTrace is a hand-made 2-object, 4-frame clip: object 1 leaves the
// view in frames 2 and 3.
func objectsTrace() *Trace {
	return &Trace{Schema: Schema, ID: "objects_N02_cube-red_s00", Domain: "objects", N: 2, Duration: 1, FPS: 4, Width: 64, Height: 64,
		Class: "cube-red", Events: []Event{}, Nuisance: map[string]any{},
		Objects: &Objects{Shape: "cube", Color: "red", RegionHalf: 5, MinDistance: 1.6,
			Items: []Object{{ID: 0, Center: [3]float64{0, 0.5, 0}, Size: 1}, {ID: 1, Center: [3]float64{2, 0.5, 0}, Size: 1}},
			Camera: CameraPath{FovYDeg: 45, Interpolation: InterpolationCosine,
				Keys: []CameraKey{{T: 0, YawDeg: -10, PitchDeg: -40}, {T: 1, YawDeg: 10, PitchDeg: -30}}},
			InView: [][]int{{0, 1}, {0, 1}, {0}, {0}}, LeftView: []int{1}, FramesAllInView: 2}}
}

func TestObjectsValidate(t *testing.T) {
	if err := objectsTrace().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*Trace){
		"overlap":        func(tr *Trace) { tr.Objects.Items[1].Center[0] = 1 },
		"never in view":  func(tr *Trace) { tr.Objects.InView = [][]int{{0}, {0}, {0}, {0}}; tr.Objects.FramesAllInView = 0 },
		"wrong left":     func(tr *Trace) { tr.Objects.LeftView = []int{} },
		"wrong all":      func(tr *Trace) { tr.Objects.FramesAllInView = 3 },
		"frame count":    func(tr *Trace) { tr.Objects.InView = tr.Objects.InView[:3] },
		"unsorted ids":   func(tr *Trace) { tr.Objects.InView[0] = []int{1, 0} },
		"n mismatch":     func(tr *Trace) { tr.N = 3 },
		"class mismatch": func(tr *Trace) { tr.Class = "sphere-red" },
		"events":         func(tr *Trace) { tr.Events = []Event{{T: 0.5, Type: "x", Count: 1}} },
		"frequency":      func(tr *Trace) { tr.F = 1 },
		"outside region": func(tr *Trace) { tr.Objects.Items[1].Center[2] = 6 },
		"keys end early": func(tr *Trace) { tr.Objects.Camera.Keys[1].T = 0.5 },
		"interpolation":  func(tr *Trace) { tr.Objects.Camera.Interpolation = "linear" },
		"no objects":     func(tr *Trace) { tr.Objects = nil },
	} {
		tr := objectsTrace()
		mod(tr)
		if err := tr.Validate(); !errors.Is(err, ErrObjects) {
			t.Errorf("%s: err %v, want ErrObjects", name, err)
		}
	}
}

func TestCameraPathAt(t *testing.T) {
	c := objectsTrace().Objects.Camera
	for _, tc := range []struct{ t, yaw, pitch float64 }{
		{-1, -10, -40}, {0, -10, -40}, {0.5, 0, -35}, {1, 10, -30}, {2, 10, -30},
		// u = 0.25: weight (1 − cos(π/4))/2
		{0.25, -10 + 20*(1-math.Cos(math.Pi/4))/2, -40 + 10*(1-math.Cos(math.Pi/4))/2},
	} {
		yaw, pitch := c.At(tc.t)
		if math.Abs(yaw-tc.yaw) > 1e-12 || math.Abs(pitch-tc.pitch) > 1e-12 {
			t.Errorf("At(%v) = %v, %v; want %v, %v", tc.t, yaw, pitch, tc.yaw, tc.pitch)
		}
	}
}

func TestSummarizeViews(t *testing.T) {
	a, b := objectsTrace(), objectsTrace()
	b.Objects.LeftView = []int{}
	c := objectsTrace()
	c.Objects.LeftView = []int{0, 1}
	ev := &Trace{} // not an objects trace: skipped
	v := SummarizeViews([]*Trace{a, b, c, ev, nil})
	if v.Clips != 3 || v.WithLeaving != 2 || math.Abs(v.Share-2.0/3) > 1e-12 || v.MeanLeaving != 1 {
		t.Fatalf("got %+v, want 3 clips, 2 with leaving, share 2/3, mean (1+0+2)/3 = 1", v)
	}
	if z := SummarizeViews(nil); z != (ViewStats{}) {
		t.Fatalf("empty: %+v", z)
	}
}
