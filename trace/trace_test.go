package trace

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func sample() *Trace {
	return &Trace{
		Schema: Schema, ID: "state_machine_N03_F2.0_s00", Domain: "state_machine", N: 3, F: 2, Seed: 0,
		Duration: 24, FPS: 30, Width: 854, Height: 480, ActiveStart: 1, ActiveEnd: 2.5, InitialState: "A",
		Nuisance: map[string]any{"k": 1.0},
		Events: []Event{
			{T: 1.25, Type: "transition", Before: "A", After: "B", Count: 1},
			{T: 1.75, Type: "transition", Before: "B", After: "C", Count: 2},
			{T: 2.25, Type: "transition", Before: "C", After: "A", Count: 3},
		},
	}
}

func TestReplay(t *testing.T) {
	tr := sample()
	cases := []struct {
		at    float64
		count int
		state string
	}{{0, 0, "A"}, {1.2499, 0, "A"}, {1.25, 1, "B"}, {1.8, 2, "C"}, {2.25, 3, "A"}, {24, 3, "A"}}
	for _, c := range cases {
		n, s := tr.Replay(c.at)
		if n != c.count || s != c.state {
			t.Errorf("Replay(%v) = %d,%q want %d,%q", c.at, n, s, c.count, c.state)
		}
	}
	// A transient event reverts after its pulse.
	bl := sample()
	bl.Pulse = 0.1
	bl.InitialState = "off"
	for i := range bl.Events {
		bl.Events[i].Before, bl.Events[i].After = "off", "on"
	}
	if err := bl.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, s := bl.Replay(1.3); s != "on" {
		t.Errorf("inside pulse: %q", s)
	}
	if _, s := bl.Replay(1.35); s != "off" {
		t.Errorf("after pulse: %q", s)
	}
}

func TestRoundTripAndValidate(t *testing.T) {
	tr := sample()
	b, err := tr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if back.Events[1].T != 1.75 || back.Final() != 3 {
		t.Errorf("round trip lost data: %+v", back)
	}
	bad := []struct {
		mod  func(*Trace)
		want string
	}{
		{func(t *Trace) { t.Schema = "x" }, "schema"},
		{func(t *Trace) { t.N = 4 }, "n=4 but 3 events"},
		{func(t *Trace) { t.Events[2].Count = 2 }, "count 2"},
		{func(t *Trace) { t.Events[1].T = 1.9 }, "apart"},
		{func(t *Trace) { t.Events[2].T = 30 }, "outside the clip"},
		{func(t *Trace) { t.Events[1].Before = "Z" }, "starts from state"},
	}
	for _, c := range bad {
		tr := sample()
		c.mod(tr)
		err := tr.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	if _, err := Read(strings.NewReader(`{"schema":"tracegrid/trace/v1","bogus":1}`)); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Errorf("unknown field accepted: %v", err)
	}
	if err := (&Trace{Schema: "v0"}).Validate(); !errors.Is(err, ErrSchema) {
		t.Errorf("want ErrSchema, got %v", err)
	}
}

// TestContactsWithinHalfAFrame: a bounce_ball contact is on the frame
// nearest t_1 + (i−1)/F (domain.Spec.EventsOnFrames), so its trace may
// stray from the nominal spacing by half a frame, and no more; other
// event domains keep 1/F exactly.
func TestContactsWithinHalfAFrame(t *testing.T) {
	bounce := func(t2 float64) *Trace {
		tr := sample()
		tr.ID, tr.Domain, tr.F, tr.InitialState = "bounce_ball_N03_F4.0_s00", "bounce_ball", 4, "none"
		tr.ActiveStart, tr.ActiveEnd = 1, 1.75
		for i, w := range []string{"left", "right", "left"} {
			tr.Events[i] = Event{T: []float64{1.125, t2, 1.625}[i], Type: "wall_contact", Before: []string{"none", "left", "right"}[i], After: w, Count: i + 1,
				Attrs: map[string]string{"wall": w}}
		}
		return tr
	}
	// 4 Hz at 30 fps: t_2 = 1.375 s is frame 41.25; frame 41 (1.366667
	// s) is within half a frame of it, frame 42 (1.4 s) is not.
	for _, ok := range []float64{1.375, 41.0 / 30, 41.4 / 30} {
		if err := bounce(ok).Validate(); err != nil {
			t.Errorf("contact at %v s: %v", ok, err)
		}
	}
	for _, bad := range []float64{42.0 / 30, 40.7 / 30} {
		if err := bounce(bad).Validate(); err == nil || !strings.Contains(err.Error(), "more than half a frame") {
			t.Errorf("contact at %v s: got %v, want more than half a frame", bad, err)
		}
	}
	tr := sample()
	tr.Events[1].T = 1.75 + 0.4/30
	if err := tr.Validate(); err == nil || !strings.Contains(err.Error(), "apart") {
		t.Errorf("transition off the nominal schedule accepted: %v", err)
	}
}
