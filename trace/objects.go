package trace

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Objects is the ground truth of a static-object clip (CountVideoBench §4):
// which objects stand where, how the camera turns, and which objects are in
// view in every frame. The camera path is executable (CameraPath.At), and
// the scene draws every frame from the same numbers.
type Objects struct {
	Shape string `json:"shape"` // cube or sphere
	Color string `json:"color"` // red, blue, green, yellow or purple
	// RegionHalf bounds the placement: |x|, |z| ≤ RegionHalf on the ground
	// plane y = 0 (world units, y up).
	RegionHalf float64 `json:"region_half"`
	// MinDistance is the least distance between two objects' centres.
	MinDistance float64    `json:"min_distance"`
	Items       []Object   `json:"items"`
	Camera      CameraPath `json:"camera"`
	// InView[k] lists, ascending, the ids of the objects whose centre
	// projects inside the frame at frame k (t = k/FPS).
	InView [][]int `json:"in_view"`
	// LeftView lists, ascending, the ids out of view in at least one frame.
	LeftView []int `json:"left_view"`
	// FramesAllInView counts the frames in which all N objects are in view.
	FramesAllInView int `json:"frames_all_in_view"`
}

// Object is one static object; its id is its index in Objects.Items.
type Object struct {
	ID     int        `json:"id"`
	Center [3]float64 `json:"center"` // world units; resting on the ground
	Size   float64    `json:"size"`   // cube edge or sphere diameter
	YawDeg float64    `json:"yaw_deg"`
}

// CameraPath is a camera that stays at Eye and turns: its yaw and pitch
// are interpolated between Keys, whose times rise strictly from 0 to the
// clip's duration. Between keys k and k+1, u = (t − T_k)/(T_{k+1} − T_k)
// and the weight of key k+1 is (1 − cos πu)/2 ("cosine"), so the camera
// eases in and out of every key and never jumps.
type CameraPath struct {
	Eye           [3]float64  `json:"eye"`
	FovYDeg       float64     `json:"fov_y_deg"` // vertical field of view
	Interpolation string      `json:"interpolation"`
	Keys          []CameraKey `json:"keys"`
}

// CameraKey is the camera's orientation at time T. Yaw 0 looks along −z,
// positive yaw turns left; negative pitch looks down.
type CameraKey struct {
	T        float64 `json:"t"`
	YawDeg   float64 `json:"yaw_deg"`
	PitchDeg float64 `json:"pitch_deg"`
}

// InterpolationCosine is the only interpolation CameraPath knows.
const InterpolationCosine = "cosine"

// At returns the camera's yaw and pitch in degrees at time t (clamped to
// the first and last key).
func (c *CameraPath) At(t float64) (yawDeg, pitchDeg float64) {
	ks := c.Keys
	if len(ks) == 0 {
		return 0, 0
	}
	if t <= ks[0].T {
		return ks[0].YawDeg, ks[0].PitchDeg
	}
	for k := 0; k+1 < len(ks); k++ {
		a, b := ks[k], ks[k+1]
		if t <= b.T {
			u := (t - a.T) / (b.T - a.T)
			w := (1 - math.Cos(math.Pi*u)) / 2
			return a.YawDeg + (b.YawDeg-a.YawDeg)*w, a.PitchDeg + (b.PitchDeg-a.PitchDeg)*w
		}
	}
	last := ks[len(ks)-1]
	return last.YawDeg, last.PitchDeg
}

// Frames is the number of frames of the clip, round(Duration × FPS).
func (tr *Trace) Frames() int { return int(math.Round(tr.Duration * float64(tr.FPS))) }

// IsObjects reports whether the trace is a static-object clip (no events;
// the answer is N, the number of objects).
func (tr *Trace) IsObjects() bool { return tr.Objects != nil }

// Shapes and colours of the object classes (CountVideoBench §4.3).
var (
	ObjectShapes = []string{"cube", "sphere"}
	ObjectColors = []string{"red", "blue", "green", "yellow", "purple"}
)

// SplitClass splits an object class "<shape>-<colour>" into its halves;
// ok is false unless both are known (ObjectShapes, ObjectColors).
func SplitClass(class string) (shape, color string, ok bool) {
	shape, color, ok = strings.Cut(class, "-")
	if !ok || !slices.Contains(ObjectShapes, shape) || !slices.Contains(ObjectColors, color) {
		return "", "", false
	}
	return shape, color, true
}

func (tr *Trace) validateObjects() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrObjects, fmt.Sprintf(format, args...))
	}
	o := tr.Objects
	if o == nil {
		return bad("an objects clip (class %q) needs an objects section", tr.Class)
	}
	if _, _, ok := SplitClass(o.Shape + "-" + o.Color); !ok {
		return bad("unknown class %s-%s", o.Shape, o.Color)
	}
	if tr.Class != o.Shape+"-"+o.Color {
		return bad("class %q does not match the objects' %s-%s", tr.Class, o.Shape, o.Color)
	}
	if tr.F != 0 || len(tr.Events) != 0 || tr.Pulse != 0 {
		return bad("a static-object clip has f = 0, no events and no pulse")
	}
	if tr.N < 1 || len(o.Items) != tr.N {
		return bad("n=%d but %d objects", tr.N, len(o.Items))
	}
	if !(o.RegionHalf > 0) || !(o.MinDistance > 0) {
		return bad("region_half and min_distance must be positive")
	}
	for i, a := range o.Items {
		if a.ID != i {
			return bad("object %d has id %d", i, a.ID)
		}
		if !(a.Size > 0) || math.Abs(a.Center[0]) > o.RegionHalf+1e-9 || math.Abs(a.Center[2]) > o.RegionHalf+1e-9 {
			return bad("object %d (size %v at %v) is outside the region ±%v", i, a.Size, a.Center, o.RegionHalf)
		}
		for j := range i {
			b := o.Items[j]
			if d := math.Hypot(a.Center[0]-b.Center[0], a.Center[2]-b.Center[2]); d < o.MinDistance-1e-9 {
				return bad("objects %d and %d are %.3f apart, closer than the minimum %.3f", j, i, d, o.MinDistance)
			}
		}
	}
	c := o.Camera
	if c.Interpolation != InterpolationCosine {
		return bad("camera interpolation %q (want %q)", c.Interpolation, InterpolationCosine)
	}
	if !(c.FovYDeg > 0 && c.FovYDeg < 180) {
		return bad("camera fov_y_deg %v out of (0, 180)", c.FovYDeg)
	}
	if len(c.Keys) < 2 || c.Keys[0].T != 0 || math.Abs(c.Keys[len(c.Keys)-1].T-tr.Duration) > 1e-9 {
		return bad("camera keys must run from t=0 to t=%v", tr.Duration)
	}
	for k := 1; k < len(c.Keys); k++ {
		if !(c.Keys[k].T > c.Keys[k-1].T) {
			return bad("camera key %d at t=%v does not follow t=%v", k, c.Keys[k].T, c.Keys[k-1].T)
		}
	}
	frames := tr.Frames()
	if len(o.InView) != frames {
		return bad("in_view has %d frames, the clip %d", len(o.InView), frames)
	}
	seen := make([]int, tr.N) // frames in which each object is in view
	all := 0
	for k, ids := range o.InView {
		for i, id := range ids {
			if id < 0 || id >= tr.N || (i > 0 && id <= ids[i-1]) {
				return bad("frame %d: in_view ids %v must be ascending ids below %d", k, ids, tr.N)
			}
			seen[id]++
		}
		if len(ids) == tr.N {
			all++
		}
	}
	var left []int
	for id, n := range seen {
		if n == 0 {
			return bad("object %d is in view in no frame: the count is not attainable", id)
		}
		if n < frames {
			left = append(left, id)
		}
	}
	if !slices.Equal(left, o.LeftView) && !(len(left) == 0 && len(o.LeftView) == 0) {
		return bad("left_view %v, but in_view says %v", o.LeftView, left)
	}
	if all != o.FramesAllInView {
		return bad("frames_all_in_view %d, but in_view says %d", o.FramesAllInView, all)
	}
	return nil
}

// ViewStats summarizes how often objects leave the view across clips
// (CountVideoBench §4.3 reports 83.0 % and 3.29 for its grid).
type ViewStats struct {
	Clips int `json:"clips"`
	// WithLeaving counts clips in which some object leaves the view.
	WithLeaving int `json:"with_leaving"`
	// Share is WithLeaving/Clips.
	Share float64 `json:"share"`
	// MeanLeaving is the mean number of objects per clip that leave.
	MeanLeaving float64 `json:"mean_leaving"`
}

// Paper values of CountVideoBench §4.3 for ViewStats.
const (
	PaperShareLeaving = 0.830
	PaperMeanLeaving  = 3.29
)

// SummarizeViews computes ViewStats over the objects traces among trs
// (others are skipped; pass each clip once).
func SummarizeViews(trs []*Trace) ViewStats {
	var v ViewStats
	left := 0
	for _, tr := range trs {
		if tr == nil || tr.Objects == nil {
			continue
		}
		v.Clips++
		if l := len(tr.Objects.LeftView); l > 0 {
			v.WithLeaving++
			left += l
		}
	}
	if v.Clips > 0 {
		v.Share = float64(v.WithLeaving) / float64(v.Clips)
		v.MeanLeaving = float64(left) / float64(v.Clips)
	}
	return v
}
