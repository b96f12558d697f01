// Package trace is the executable ground truth of one clip: the event list
// T* = (t_i, e_i, s_i⁻, s_i⁺, c_i) of low-frequency-trap §3.2 together with
// the clip's parameters. It is pure data plus validation and replay, so the
// evaluation side can use it without scenes or GL. The domains a trace may
// name, and whether its truth is events or static objects, come from
// package domain.
package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"

	"github.com/tracegrid/tracegrid/domain"
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
	// Natural describes the video and the annotation of a natural-video
	// clip (domain natural, natural.go): F is 0, the events are its
	// repetitions. Nil for every other domain.
	Natural *Natural `json:"natural,omitempty"`
}

// ErrInvalid is wrapped by every error about a trace's content or format
// (ErrSchema, ErrEvents, ErrObjects, ErrNatural, ErrFormat, ErrTooLarge): the input is
// bad, as opposed to a file that could not be read.
var ErrInvalid = errors.New("trace: invalid")

// Validation errors a caller may test for; each also matches ErrInvalid.
var (
	ErrSchema  error = &invalid{"trace: unknown schema"}
	ErrEvents  error = &invalid{"trace: inconsistent events"}
	ErrObjects error = &invalid{"trace: inconsistent objects"}
	// ErrFormat is a file that is not one JSON trace object: a syntax
	// error, an unknown key, a value of the wrong type, an empty file,
	// or anything but white space after the object.
	ErrFormat error = &invalid{"trace: malformed JSON"}
	// ErrTooLarge is a file above MaxBytes.
	ErrTooLarge error = &invalid{"trace: file too large"}
)

// invalid is a sentinel that also matches ErrInvalid.
type invalid struct{ msg string }

func (e *invalid) Error() string        { return e.msg }
func (e *invalid) Is(target error) bool { return target == ErrInvalid }

// Limits a trace must keep (docs/trace.md, "Limits"). The scene limits are
// repeated here because scene imports this package; a test checks that
// they agree with scene's.
const (
	// MaxBytes caps a trace file. Reading stops after MaxBytes+1 bytes, so
	// a huge or endless file (/dev/zero) costs at most this much memory.
	// An event trace holds at most scene.MaxN = 10,000 events (about
	// 2 MB); an objects trace lists the objects in view per frame, about
	// 14 bytes per object per frame, so 64 MiB holds e.g. 200 objects
	// over 20,000 frames (11 minutes at 30 fps). A render spec whose
	// objects traces would exceed it is refused.
	MaxBytes = 64 << 20
	// MaxFPS, MaxDuration, MinSize and MaxSize are the ranges a render
	// spec allows (scene.MaxFPS, scene.MaxDuration, scene.MinSize,
	// scene.MaxSize).
	MaxFPS      = 240
	MaxDuration = 3600.0
	MinSize     = 64
	MaxSize     = 4096
)

// Domains are the domains a trace may name, those registered in package
// domain: the rendered event domains by name, then the others in the
// registry's order (objects, natural). The rendered ones are
// scene.AllDomains; natural has no scene.
var Domains = traceDomains()

func traceDomains() []string {
	rendered := func(s domain.Spec) bool { return s.Truth == domain.TruthEvents && s.Scene }
	events := domain.Where(rendered)
	slices.Sort(events)
	return append(events, domain.Where(func(s domain.Spec) bool { return !rendered(s) })...)
}

// ObjectsDomain is the static-object domain (CountVideoBench), the same
// name as domain.Objects.
const ObjectsDomain = domain.Objects

// spanTolerance absorbs the rounding of times written as float64 seconds.
const spanTolerance = 1e-6

// Validate checks the invariants every trace must hold: the schema, a known
// domain, the clip's parameters in the ranges a render spec allows, N
// equals the number of events, counts run 1..N, times are strictly
// increasing and inside the clip, consecutive states chain (s_{i+1}⁻ = s_i⁺,
// or the initial state for persistent events), rate-regular spacing
// t_i = t_1+(i−1)/F (within half a frame for a domain whose events are on
// frames, domain.Spec.EventsOnFrames), a pulse between one frame and half a period, and an
// active span inside the clip that holds every event and is at most N/F
// long (empty for N = 0). A natural clip (a domain without a scene) is
// checked against its natural section instead (validateNatural: no
// scene-based rule; events, where annotated, one per repetition, sorted,
// inside the clip).
func (tr *Trace) Validate() error {
	if tr.Schema != Schema {
		return fmt.Errorf("%w %q (want %q)", ErrSchema, tr.Schema, Schema)
	}
	if tr.ID == "" || tr.Domain == "" {
		return fmt.Errorf("%w: id and domain are required", ErrEvents)
	}
	spec, known := domain.Lookup(tr.Domain)
	if !known {
		return fmt.Errorf("%w: unknown domain %q (known: %v)", ErrEvents, tr.Domain, Domains)
	}
	if !(tr.Duration > 0) || tr.Duration > MaxDuration {
		return fmt.Errorf("%w: duration %v s out of range (0, %v]", ErrEvents, tr.Duration, MaxDuration)
	}
	if tr.FPS < 1 || tr.FPS > MaxFPS {
		return fmt.Errorf("%w: fps %d out of range [1, %d]", ErrEvents, tr.FPS, MaxFPS)
	}
	if tr.Width < MinSize || tr.Width > MaxSize || tr.Height < MinSize || tr.Height > MaxSize {
		return fmt.Errorf("%w: size %dx%d out of range [%d, %d]", ErrEvents, tr.Width, tr.Height, MinSize, MaxSize)
	}
	if tr.Seed < 0 {
		return fmt.Errorf("%w: seed %d must be non-negative", ErrEvents, tr.Seed)
	}
	if !(tr.Pulse >= 0) || math.IsInf(tr.Pulse, 0) {
		return fmt.Errorf("%w: pulse %v must be a non-negative number of seconds", ErrEvents, tr.Pulse)
	}
	if !finite(tr.ActiveStart) || !finite(tr.ActiveEnd) || tr.ActiveStart < 0 || tr.ActiveEnd > tr.Duration+spanTolerance {
		return fmt.Errorf("%w: active span [%v, %v] is not inside the clip [0, %v]", ErrEvents, tr.ActiveStart, tr.ActiveEnd, tr.Duration)
	}
	if tr.ActiveStart > tr.ActiveEnd {
		return fmt.Errorf("%w: active span [%v, %v] is reversed", ErrEvents, tr.ActiveStart, tr.ActiveEnd)
	}
	if imported := !spec.Scene; imported || tr.Natural != nil {
		if !imported {
			return fmt.Errorf("%w: domain %s is rendered; only an imported video's trace has a natural section", ErrNatural, tr.Domain)
		}
		return tr.validateNatural(spec)
	}
	if objects := spec.Truth == domain.TruthObjects; objects || tr.Objects != nil || tr.Class != "" {
		if !objects {
			return fmt.Errorf("%w: domain %s has events, not objects (class %q)", ErrObjects, tr.Domain, tr.Class)
		}
		return tr.validateObjects()
	}
	if !(tr.F > 0) || math.IsInf(tr.F, 0) {
		return fmt.Errorf("%w: f must be positive, got %v", ErrEvents, tr.F)
	}
	if tr.N > 0 && 2*tr.F > float64(tr.FPS) {
		return fmt.Errorf("%w: f=%v Hz is above half the frame rate (%d fps)", ErrEvents, tr.F, tr.FPS)
	}
	if tr.Pulse > 0 {
		if tr.Pulse > 1/(2*tr.F)+spanTolerance {
			return fmt.Errorf("%w: pulse %v s is longer than half the period 1/(2F) = %v s", ErrEvents, tr.Pulse, 1/(2*tr.F))
		}
		if tr.Pulse < 1/float64(tr.FPS)-spanTolerance {
			return fmt.Errorf("%w: pulse %v s is shorter than one frame (1/%d s): a pulse could fall between frames", ErrEvents, tr.Pulse, tr.FPS)
		}
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
			if spec.EventsOnFrames {
				// Contacts are put on the frame nearest t_1 + (i−1)/F.
				want, off := tr.Events[0].T+float64(i)/tr.F, 0.5/float64(tr.FPS)
				if math.Abs(e.T-want) > off+spanTolerance {
					return fmt.Errorf("%w: event %d at t=%v is %.6f s from t_1+(i−1)/F = %.6f s, more than half a frame (%.6f s)",
						ErrEvents, i+1, e.T, math.Abs(e.T-want), want, off)
				}
			} else if want := 1 / tr.F; math.Abs(e.T-prev-want) > 1e-6 {
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
	return tr.validateSpan()
}

// validateSpan checks the active span of an event trace against its events:
// empty for N = 0; otherwise it holds t_1 … t_N (and the last pulse) and is
// at most N/F long (the scene's span [t_1 − 1/(2F), t_N + 1/(2F)] is
// exactly N/F, clipped to the clip).
func (tr *Trace) validateSpan() error {
	a, b := tr.ActiveStart, tr.ActiveEnd
	if tr.N == 0 {
		if b-a > spanTolerance {
			return fmt.Errorf("%w: active span [%v, %v] of a clip without events must be empty", ErrEvents, a, b)
		}
		return nil
	}
	first, last := tr.Events[0].T, tr.Events[tr.N-1].T+tr.Pulse
	if a > first+spanTolerance || b < math.Min(last, tr.Duration)-spanTolerance {
		return fmt.Errorf("%w: active span [%v, %v] does not hold the events at %v … %v s", ErrEvents, a, b, first, last)
	}
	if want := float64(tr.N) / tr.F; b-a > want+spanTolerance {
		return fmt.Errorf("%w: active span [%v, %v] is %v s long, more than N/F = %v s", ErrEvents, a, b, b-a, want)
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

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

// Read decodes and validates a trace: one JSON object, unknown keys
// rejected, nothing but white space after it, at most MaxBytes (reading
// stops there). Format errors wrap ErrFormat and name the line and column;
// an error reading r is returned as is.
func Read(r io.Reader) (*Trace, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("%w: more than %d bytes (the limit is %d MiB)", ErrTooLarge, MaxBytes, MaxBytes>>20)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var tr Trace
	if err := dec.Decode(&tr); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrFormat, describeJSONError(data, err))
	}
	end := int(dec.InputOffset())
	if rest := bytes.TrimLeft(data[end:], " \t\r\n"); len(rest) > 0 {
		return nil, fmt.Errorf("%w: %s: data after the trace's JSON object", ErrFormat, position(data, int64(len(data)-len(rest))))
	}
	if err := tr.Validate(); err != nil {
		return nil, err
	}
	return &tr, nil
}

// describeJSONError says what is wrong with data and where.
func describeJSONError(data []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF) && len(bytes.TrimSpace(data)) == 0:
		return "the file is empty"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the file ends inside the JSON object (truncated?)"
	case errors.As(err, &syn):
		return fmt.Sprintf("%s: %v", position(data, syn.Offset-1), syn)
	case errors.As(err, &typ):
		return fmt.Sprintf("%s: key %q: %v", position(data, typ.Offset-1), typ.Field, typ)
	}
	return err.Error()
}

// position is "line L, column C" of the byte at offset off (1-based).
func position(data []byte, off int64) string {
	off = max(0, min(off, int64(len(data))))
	before := data[:off]
	line := 1 + bytes.Count(before, []byte("\n"))
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
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
