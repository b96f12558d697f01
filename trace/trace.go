// Package trace is the executable ground truth of one clip: the event list
// T* = (t_i, e_i, s_i⁻, s_i⁺, c_i) of low-frequency-trap §3.2 together with
// the clip's parameters. It is pure data plus validation and replay, so the
// evaluation side can use it without scenes or GL.
package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
)

// Schema names the JSON layout written by this package.
const Schema = "tracegrid/trace/v1"

// Event is one ground-truth event.
type Event struct {
	T      float64           `json:"t"`      // seconds from the start of the clip
	Type   string            `json:"type"`   // e.g. "wall_contact", "pulse_on", "transition"
	Before string            `json:"before"` // state just before t
	After  string            `json:"after"`  // state from t on
	Count  int               `json:"count"`  // cumulative count c_i (1-based)
	Attrs  map[string]string `json:"attrs,omitempty"`
}

// Trace is one clip's ground truth.
type Trace struct {
	Schema   string  `json:"schema"`
	ID       string  `json:"id"`
	Domain   string  `json:"domain"`
	N        int     `json:"n"`
	F        float64 `json:"f"` // Hz; N=0 controls carry the nominal 1.0
	Seed     int     `json:"seed"`
	Duration float64 `json:"duration"` // seconds
	FPS      int     `json:"fps"`
	Width    int     `json:"width"`
	Height   int     `json:"height"`
	// ActiveStart and ActiveEnd bound the span in which anything moves or
	// changes; outside it every frame is identical to its neighbour.
	ActiveStart float64 `json:"active_start"`
	ActiveEnd   float64 `json:"active_end"`
	// InitialState is the state before the first event (s_1⁻ when N>0).
	InitialState string `json:"initial_state"`
	// Pulse is the on-time of a transient event in seconds (blinking); 0 for
	// persistent events. A transient state reverts to Before after Pulse.
	Pulse    float64        `json:"pulse,omitempty"`
	Nuisance map[string]any `json:"nuisance"`
	Events   []Event        `json:"events"`
	// Class is the object class "<shape>-<colour>" of a static-object clip
	// (domain objects); empty for event domains.
	Class string `json:"class,omitempty"`
	// Objects is the ground truth of a static-object clip (domain objects,
	// CountVideoBench): there are no events, N is the number of objects and
	// F is 0. Nil for event domains.
	Objects *Objects `json:"objects,omitempty"`
}

// Validation errors a caller may test for.
var (
	ErrSchema  = errors.New("trace: unknown schema")
	ErrEvents  = errors.New("trace: inconsistent events")
	ErrObjects = errors.New("trace: inconsistent objects")
)

// Validate checks the invariants every trace must hold: the schema, N equals
// the number of events, counts run 1..N, times are strictly increasing and
// inside the clip, consecutive states chain (s_{i+1}⁻ = s_i⁺, or the initial
// state for persistent events), and rate-regular spacing t_i = t_1+(i−1)/F.
func (tr *Trace) Validate() error {
	if tr.Schema != Schema {
		return fmt.Errorf("%w %q (want %q)", ErrSchema, tr.Schema, Schema)
	}
	if tr.ID == "" || tr.Domain == "" {
		return fmt.Errorf("%w: id and domain are required", ErrEvents)
	}
	if tr.Duration <= 0 || tr.FPS <= 0 || tr.Width <= 0 || tr.Height <= 0 {
		return fmt.Errorf("%w: duration, fps, width and height must be positive", ErrEvents)
	}
	if tr.Objects != nil || tr.Class != "" {
		return tr.validateObjects()
	}
	if tr.F <= 0 {
		return fmt.Errorf("%w: f must be positive, got %v", ErrEvents, tr.F)
	}
	if len(tr.Events) != tr.N {
		return fmt.Errorf("%w: n=%d but %d events", ErrEvents, tr.N, len(tr.Events))
	}
	state := tr.InitialState
	for i, e := range tr.Events {
		if e.Count != i+1 {
			return fmt.Errorf("%w: event %d has count %d, want %d", ErrEvents, i+1, e.Count, i+1)
		}
		if e.T < 0 || e.T > tr.Duration || math.IsNaN(e.T) {
			return fmt.Errorf("%w: event %d at t=%v is outside the clip [0, %v]", ErrEvents, i+1, e.T, tr.Duration)
		}
		if i > 0 {
			prev := tr.Events[i-1].T
			if e.T <= prev {
				return fmt.Errorf("%w: event %d at t=%v does not follow t=%v", ErrEvents, i+1, e.T, prev)
			}
			if want := 1 / tr.F; math.Abs(e.T-prev-want) > 1e-6 {
				return fmt.Errorf("%w: events %d and %d are %.6f s apart, want 1/F = %.6f s", ErrEvents, i, i+1, e.T-prev, want)
			}
		}
		if e.Type == "" {
			return fmt.Errorf("%w: event %d has no type", ErrEvents, i+1)
		}
		if e.Before != state {
			return fmt.Errorf("%w: event %d starts from state %q, but the state was %q", ErrEvents, i+1, e.Before, state)
		}
		if tr.Pulse == 0 {
			state = e.After
		}
	}
	if tr.ActiveStart > tr.ActiveEnd {
		return fmt.Errorf("%w: active span [%v, %v] is reversed", ErrEvents, tr.ActiveStart, tr.ActiveEnd)
	}
	return nil
}

// Replay executes the trace up to time t (inclusive: an event at exactly t
// has happened) and returns the cumulative count and the state at t.
func (tr *Trace) Replay(t float64) (count int, state string) {
	// Events are sorted by time (Validate checks it); find the last t_i ≤ t.
	k := sort.Search(len(tr.Events), func(i int) bool { return tr.Events[i].T > t })
	if k == 0 {
		return 0, tr.InitialState
	}
	e := tr.Events[k-1]
	if tr.Pulse > 0 && t >= e.T+tr.Pulse {
		return k, e.Before
	}
	return k, e.After
}

// Final returns c_N, the count after the last event (0 for N=0).
func (tr *Trace) Final() int {
	if len(tr.Events) == 0 {
		return 0
	}
	return tr.Events[len(tr.Events)-1].Count
}

// Times returns the event timestamps t_1..t_N.
func (tr *Trace) Times() []float64 {
	ts := make([]float64, len(tr.Events))
	for i, e := range tr.Events {
		ts[i] = e.T
	}
	return ts
}

// Marshal returns the trace as indented JSON with a trailing newline. Go's
// float formatting is the shortest that round-trips, so times read back
// bit-identical.
func (tr *Trace) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(tr); err != nil {
		return nil, fmt.Errorf("trace %s: %w", tr.ID, err)
	}
	return buf.Bytes(), nil
}

// Read decodes and validates a trace, rejecting unknown fields.
func Read(r io.Reader) (*Trace, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var tr Trace
	if err := dec.Decode(&tr); err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	if err := tr.Validate(); err != nil {
		return nil, err
	}
	return &tr, nil
}

// Load reads and validates a trace file.
func Load(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return tr, nil
}
