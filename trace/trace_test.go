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
