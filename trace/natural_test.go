package trace

import (
	"bytes"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
)

// naturalSample is a 10 s natural clip at 25 fps with three repetitions
// annotated by frames (25–50, 50–80, 90–120), events at the end frames:
// 50/25 = 2 s, 80/25 = 3.2 s, 120/25 = 4.8 s.
func naturalSample() *Trace {
	reps := []Repetition{{Start: 25, End: 50, StartT: 1, EndT: 2}, {Start: 50, End: 80, StartT: 2, EndT: 3.2}, {Start: 90, End: 120, StartT: 3.6, EndT: 4.8}}
	return &Trace{
		Schema: Schema, ID: "squat_01", Domain: "natural", N: 3, Duration: 10, FPS: 25, Width: 320, Height: 240,
		ActiveStart: 1, ActiveEnd: 4.8, Nuisance: map[string]any{},
		Events: NaturalEvents(reps, EventAtEnd),
		Natural: &Natural{Video: "squat_01.mp4", Action: "squat", FrameRate: 25, Frames: 250, EventAt: EventAtEnd,
			Repetitions: reps},
	}
}

// TestNaturalValidate: a natural clip's trace validates against its
// annotation, with no scene-based rule (f = 0, uneven spacing, no
// states), reads back, and replays to the repetitions completed by t.
func TestNaturalValidate(t *testing.T) {
	tr := naturalSample()
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := tr.Times(); len(got) != 3 || got[0] != 2 || got[1] != 3.2 || got[2] != 4.8 {
		t.Errorf("event times %v, want [2 3.2 4.8]", got)
	}
	if tr.Events[0].Type != "repetition" || tr.Events[2].Count != 3 {
		t.Errorf("events %+v", tr.Events)
	}
	b, err := tr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	if back.Natural == nil || back.Natural.Repetitions[1].End != 80 || back.Natural.Action != "squat" {
		t.Errorf("read back %+v", back.Natural)
	}
	for _, c := range []struct {
		t    float64
		want int
	}{{1.9, 0}, {2, 1}, {3.5, 2}, {9, 3}} {
		if n, _ := tr.Replay(c.t); n != c.want {
			t.Errorf("Replay(%v) = %d, want %d", c.t, n, c.want)
		}
	}
	// Start and middle events.
	for at, want := range map[string][]float64{EventAtStart: {1, 2, 3.6}, EventAtMiddle: {1.5, 2.6, 4.2}} {
		tr := naturalSample()
		tr.Natural.EventAt, tr.Events = at, NaturalEvents(tr.Natural.Repetitions, at)
		if err := tr.Validate(); err != nil {
			t.Errorf("%s: %v", at, err)
		}
		for i, e := range tr.Events {
			if d := e.T - want[i]; d > 1e-12 || d < -1e-12 {
				t.Errorf("%s: event %d at %v, want %v", at, i+1, e.T, want[i])
			}
		}
	}
	// A count alone: no repetitions, no events, the whole clip as span.
	c := naturalSample()
	c.N, c.Events, c.Natural.Repetitions, c.Natural.EventAt, c.ActiveStart, c.ActiveEnd = 7, nil, nil, "", 0, 10
	if err := c.Validate(); err != nil {
		t.Errorf("count alone: %v", err)
	}
}

// TestNaturalRefuses: each rule of validateNatural, by its message.
func TestNaturalRefuses(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Trace)
		want string
	}{
		{"no natural section", func(tr *Trace) { tr.Natural = nil }, "needs a natural section"},
		{"natural section on a rendered domain", func(tr *Trace) { tr.Domain = "bounce_ball" }, "only an imported video's trace"},
		{"f", func(tr *Trace) { tr.F = 1 }, "f must be 0"},
		{"pulse", func(tr *Trace) { tr.Pulse = 0.1 }, "no pulse"},
		{"objects", func(tr *Trace) { tr.Class = "cube-red" }, "no objects section"},
		{"path in the video name", func(tr *Trace) { tr.Natural.Video = "../x.mp4" }, "must be a file name"},
		{"frame rate", func(tr *Trace) { tr.Natural.FrameRate = 0 }, "natural.frame_rate 0"},
		{"fps not the rate rounded", func(tr *Trace) { tr.Natural.FrameRate = 29.97 }, "fps 25 is not natural.frame_rate 29.97 rounded"},
		{"rotation", func(tr *Trace) { tr.Natural.Rotation = 45 }, "rotation 45"},
		{"n without repetitions", func(tr *Trace) { tr.N = 4 }, "n=4 but 3 repetitions"},
		{"event_at", func(tr *Trace) { tr.Natural.EventAt = "peak" }, `event_at "peak"`},
		{"past the last frame", func(tr *Trace) { tr.Natural.Repetitions[2].End = 250 }, "go past the video's last frame 249"},
		{"start after end", func(tr *Trace) { tr.Natural.Repetitions[0].Start = 60 }, "start frame 60 is not before its end frame 50"},
		{"overlap", func(tr *Trace) { tr.Natural.Repetitions[2].Start = 70 }, "repetition 3 starts at frame 70, before repetition 2 ends at frame 80"},
		{"time past the clip", func(tr *Trace) { tr.Natural.Repetitions[2].EndT = 11 }, "outside the video [0, 10]"},
		{"event off its repetition", func(tr *Trace) { tr.Events[1].T = 3.1 }, "repetition 2's end is at 3.2 s"},
		{"event type", func(tr *Trace) { tr.Events[0].Type = "wall_contact" }, `type "wall_contact", want "repetition"`},
		{"states", func(tr *Trace) { tr.Events[0].After = "up" }, "has states"},
		{"span", func(tr *Trace) { tr.ActiveStart = 0 }, "must run from the first repetition's start"},
		{"events without repetitions", func(tr *Trace) { tr.Natural.Repetitions = nil }, "3 events but no repetitions"},
		{"count alone with a partial span", func(tr *Trace) {
			tr.Events, tr.Natural.Repetitions, tr.Natural.EventAt = nil, nil, ""
		}, "must be the whole clip"},
	}
	for _, c := range cases {
		tr := naturalSample()
		c.mod(tr)
		err := tr.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: got %v, want an invalid-trace error containing %q", c.name, err, c.want)
		}
	}
}

// TestCheckRepetitions: the importer's check names the repetition and
// does not claim the input is a trace.
func TestCheckRepetitions(t *testing.T) {
	reps := []Repetition{{Start: 0, End: 10, StartT: 0, EndT: 0.4}, {Start: 12, End: 11, StartT: 0.48, EndT: 0.44}}
	err := CheckRepetitions(reps, 100, 4)
	if err == nil || err.Error() != "repetition 2: start frame 12 is not before its end frame 11" || errors.Is(err, ErrInvalid) {
		t.Errorf("got %v", err)
	}
	if err := CheckRepetitions(reps[:1], 100, 4); err != nil {
		t.Error(err)
	}
}

// TestNaturalDocExample: the natural trace of docs/trace.md reads and
// validates.
func TestNaturalDocExample(t *testing.T) {
	b, err := os.ReadFile("../docs/trace.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)## Natural clips.*?```json\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatal("docs/trace.md has no natural example")
	}
	tr, err := Read(bytes.NewReader(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	if tr.N != 2 || tr.Natural.Repetitions[1].End != 50 || tr.Times()[1] != 2 {
		t.Errorf("%+v", tr)
	}
}
