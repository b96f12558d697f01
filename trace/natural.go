package trace

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/tracegrid/tracegrid/domain"
)

// Natural is what the trace of a natural-video clip (domain natural,
// low-frequency-trap §7) holds besides the common fields: the video it
// describes and, where the annotation gives them, its repetitions. There
// is no scene: the clip is a video from outside (`tracegrid import`, package
// natural), N is the annotated count and F is 0 (a natural video's rate is
// not controlled). The events are derived from the repetitions — one per
// repetition, at the time of its end frame, its start frame or midway
// between the two (EventAt) — so the trace stays executable: replaying it
// at t gives the repetitions completed (or begun) by t.
//
// A clip annotated with its count alone has no repetitions and no events
// (domain.Spec.EventsOptional): tracegrid writes no trace file for it, and
// the evaluation scores it on its count.
type Natural struct {
	// Video is the video's file name as the annotation names it.
	Video string `json:"video"`
	// Action is the annotation's action type (RepCount-A's "type", e.g.
	// "squat"); empty when the table has none.
	Action string `json:"action,omitempty"`
	// FrameRate is the video's average frame rate in frames per second
	// (libav's, e.g. 29.97002997002997); the trace's fps is it rounded to
	// a whole number.
	FrameRate float64 `json:"frame_rate"`
	// Frames is the number of video frames; annotation frame indices run
	// from 0 (the first frame decoded) to Frames−1.
	Frames int `json:"frames"`
	// Rotation is the angle in degrees, clockwise, by which the decoded
	// picture turns for display (the video's display matrix): 0, 90, 180
	// or 270. The trace's width and height are the displayed size.
	Rotation int `json:"rotation"`
	// EventAt places each repetition's event: at its end frame
	// (EventAtEnd), its start frame (EventAtStart) or midway between their
	// times (EventAtMiddle). Empty when there are no repetitions.
	EventAt string `json:"event_at,omitempty"`
	// Repetitions are the annotated repetitions in order; empty for a clip
	// annotated with its count alone.
	Repetitions []Repetition `json:"repetitions,omitempty"`
}

// Repetition is one annotated repetition: its first and last frame
// (indices from 0) and their presentation times in seconds from the start
// of the video, read from the video's timestamps.
type Repetition struct {
	Start  int     `json:"start"`
	End    int     `json:"end"`
	StartT float64 `json:"start_t"`
	EndT   float64 `json:"end_t"`
}

// Where a natural clip's repetition event lies (Natural.EventAt).
const (
	EventAtEnd    = "end"
	EventAtStart  = "start"
	EventAtMiddle = "middle"
)

// EventAts lists the accepted Natural.EventAt values, the default first.
var EventAts = []string{EventAtEnd, EventAtStart, EventAtMiddle}

// ErrNatural is wrapped by the errors about a natural clip's section; it
// also matches ErrInvalid.
var ErrNatural error = &invalid{"trace: inconsistent natural-video annotation"}

// EventTime is the time of a repetition's event under EventAt (at), in
// seconds; NaN for an unknown at.
func (r Repetition) EventTime(at string) float64 {
	switch at {
	case EventAtEnd:
		return r.EndT
	case EventAtStart:
		return r.StartT
	case EventAtMiddle:
		return (r.StartT + r.EndT) / 2
	}
	return math.NaN()
}

// naturalRotations are the display rotations a natural clip may have.
var naturalRotations = []int{0, 90, 180, 270}

// validateNatural checks a natural clip's trace (the common fields were
// checked by Validate): the natural section, F = 0, no pulse, no states,
// no objects; then either no repetitions and no events (a count alone:
// the active span is the whole clip) or one event per repetition, each at
// its repetition's time under EventAt, with the repetitions inside the
// video and in order (s_i < e_i ≤ s_{i+1}) and the active span from the
// first start to the last end.
func (tr *Trace) validateNatural(spec domain.Spec) error {
	nat := tr.Natural
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrNatural, fmt.Sprintf(format, args...))
	}
	switch {
	case nat == nil:
		return bad("domain %s needs a natural section (the video and its annotation)", tr.Domain)
	case tr.Objects != nil || tr.Class != "":
		return bad("a natural clip has no objects section or class")
	case tr.F != 0:
		return bad("f must be 0 for a natural clip (its rate is not controlled), got %v", tr.F)
	case tr.Pulse != 0 || tr.InitialState != "":
		return bad("a natural clip has no pulse and no initial state")
	case tr.N < 0:
		return bad("n=%d must be non-negative", tr.N)
	case nat.Video == "" || strings.ContainsAny(nat.Video, `/\`) || nat.Video == "." || nat.Video == "..":
		return bad("natural.video %q must be a file name (no directory)", nat.Video)
	case !(nat.FrameRate > 0) || math.IsInf(nat.FrameRate, 0):
		return bad("natural.frame_rate %v must be a positive number of frames per second", nat.FrameRate)
	case math.Abs(float64(tr.FPS)-nat.FrameRate) > 0.5:
		return bad("fps %d is not natural.frame_rate %v rounded", tr.FPS, nat.FrameRate)
	case nat.Frames < 1:
		return bad("natural.frames %d must be at least 1", nat.Frames)
	}
	rotOK := false
	for _, r := range naturalRotations {
		rotOK = rotOK || nat.Rotation == r
	}
	if !rotOK {
		return bad("natural.rotation %d is not 0, 90, 180 or 270", nat.Rotation)
	}
	if len(nat.Repetitions) == 0 {
		if len(tr.Events) != 0 {
			return bad("%d events but no repetitions: a natural clip's events are its repetitions", len(tr.Events))
		}
		if nat.EventAt != "" {
			return bad("event_at %q without repetitions", nat.EventAt)
		}
		// A count alone: where the repetitions are is not known, so the
		// span is the whole clip.
		if math.Abs(tr.ActiveStart) > spanTolerance || math.Abs(tr.ActiveEnd-tr.Duration) > spanTolerance {
			return bad("active span [%v, %v] of a clip annotated with its count alone must be the whole clip [0, %v]", tr.ActiveStart, tr.ActiveEnd, tr.Duration)
		}
		return nil
	}
	if len(nat.Repetitions) != tr.N {
		return bad("n=%d but %d repetitions", tr.N, len(nat.Repetitions))
	}
	if len(tr.Events) != tr.N {
		return bad("n=%d but %d events (one per repetition)", tr.N, len(tr.Events))
	}
	known := false
	for _, a := range EventAts {
		known = known || nat.EventAt == a
	}
	if !known {
		return bad("event_at %q (want %s)", nat.EventAt, strings.Join(EventAts, ", "))
	}
	if err := checkRepetitions(nat.Repetitions, nat.Frames, tr.Duration); err != nil {
		return fmt.Errorf("%w: %w", ErrNatural, err)
	}
	for i, e := range tr.Events {
		want := nat.Repetitions[i].EventTime(nat.EventAt)
		switch {
		case e.Count != i+1:
			return bad("event %d has count %d, want %d", i+1, e.Count, i+1)
		case e.Type != spec.EventType:
			return bad("event %d has type %q, want %q", i+1, e.Type, spec.EventType)
		case e.Before != "" || e.After != "":
			return bad("event %d has states; a repetition has none", i+1)
		case !(math.Abs(e.T-want) <= spanTolerance):
			return bad("event %d at t=%v, but repetition %d's %s is at %v s", i+1, e.T, i+1, nat.EventAt, want)
		case i > 0 && e.T <= tr.Events[i-1].T:
			return bad("event %d at t=%v does not follow t=%v", i+1, e.T, tr.Events[i-1].T)
		}
	}
	first, last := nat.Repetitions[0].StartT, nat.Repetitions[tr.N-1].EndT
	if math.Abs(tr.ActiveStart-first) > spanTolerance || math.Abs(tr.ActiveEnd-last) > spanTolerance {
		return bad("active span [%v, %v] must run from the first repetition's start to the last one's end [%v, %v]", tr.ActiveStart, tr.ActiveEnd, first, last)
	}
	return nil
}

// checkRepetitions checks annotated repetitions against a video of frames
// frames and duration seconds: frame indices in [0, frames), each
// repetition's start before its end, each repetition starting at or after
// the previous one's end, and times inside [0, duration] that follow the
// frames' order. Its errors name the repetition and are the messages
// tracegrid import prints for a bad row.
func checkRepetitions(reps []Repetition, frames int, duration float64) error {
	for i, r := range reps {
		switch {
		case r.Start < 0 || r.End < 0:
			return fmt.Errorf("repetition %d: frame indices %d–%d must not be negative", i+1, r.Start, r.End)
		case r.End >= frames || r.Start >= frames:
			return fmt.Errorf("repetition %d: frames %d–%d go past the video's last frame %d (it has %d frames)", i+1, r.Start, r.End, frames-1, frames)
		case r.Start >= r.End:
			return fmt.Errorf("repetition %d: start frame %d is not before its end frame %d", i+1, r.Start, r.End)
		case i > 0 && r.Start < reps[i-1].End:
			return fmt.Errorf("repetition %d starts at frame %d, before repetition %d ends at frame %d (boundaries must not decrease)", i+1, r.Start, i, reps[i-1].End)
		case !finite(r.StartT) || !finite(r.EndT) || r.StartT < -spanTolerance || r.EndT > duration+spanTolerance:
			return fmt.Errorf("repetition %d: times %v–%v s are outside the video [0, %v]", i+1, r.StartT, r.EndT, duration)
		case !(r.StartT < r.EndT):
			return fmt.Errorf("repetition %d: start time %v s is not before its end time %v s", i+1, r.StartT, r.EndT)
		case i > 0 && r.StartT < reps[i-1].EndT-spanTolerance:
			return fmt.Errorf("repetition %d starts at %v s, before repetition %d ends at %v s", i+1, r.StartT, i, reps[i-1].EndT)
		}
	}
	return nil
}

// CheckRepetitions is the check Validate applies to a natural clip's
// repetitions (frame indices inside a video of frames frames, s_i < e_i ≤
// s_{i+1}, times inside [0, duration] in the frames' order), for an
// importer to report a bad annotation row before it writes a trace. The
// error does not wrap ErrInvalid.
func CheckRepetitions(reps []Repetition, frames int, duration float64) error {
	err := checkRepetitions(reps, frames, duration)
	if err != nil {
		return errors.New(err.Error())
	}
	return nil
}

// NaturalEvents returns the events of a natural clip's repetitions under
// at (EventAtEnd, EventAtStart, EventAtMiddle): one per repetition, typed
// as the natural domain declares (domain.Spec.EventType), counts 1…N.
func NaturalEvents(reps []Repetition, at string) []Event {
	typ := domain.Of(domain.Natural).EventType
	out := make([]Event, len(reps))
	for i, r := range reps {
		out[i] = Event{T: r.EventTime(at), Type: typ, Count: i + 1}
	}
	return out
}
