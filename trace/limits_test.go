package trace

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
)

// TestValidateRefuses: issue 12 #14. Each of these traces used to pass
// validation.
func TestValidateRefuses(t *testing.T) {
	blink := func(tr *Trace) {
		tr.Pulse, tr.InitialState = 0.1, "off"
		for i := range tr.Events {
			tr.Events[i].Before, tr.Events[i].After = "off", "on"
		}
	}
	cases := []struct {
		name string
		mod  func(*Trace)
		want string
	}{
		{"unknown domain", func(tr *Trace) { tr.Domain = "juggling" }, `unknown domain "juggling"`},
		{"negative pulse", func(tr *Trace) { blink(tr); tr.Pulse = -0.1 }, "pulse -0.1 must be a non-negative number"},
		{"NaN pulse", func(tr *Trace) { blink(tr); tr.Pulse = math.NaN() }, "pulse NaN"},
		// F = 2 Hz: half a period is 0.25 s; one frame at 30 fps 1/30 s.
		{"pulse over half a period", func(tr *Trace) { blink(tr); tr.Pulse = 0.3 }, "longer than half the period"},
		{"pulse under a frame", func(tr *Trace) { blink(tr); tr.Pulse = 0.02 }, "shorter than one frame"},
		{"fps 1e9", func(tr *Trace) { tr.FPS = 1e9 }, "fps 1000000000 out of range [1, 240]"},
		{"fps 0", func(tr *Trace) { tr.FPS = 0 }, "fps 0 out of range"},
		{"duration NaN", func(tr *Trace) { tr.Duration = math.NaN() }, "duration NaN s out of range"},
		{"duration 1e9", func(tr *Trace) { tr.Duration = 1e9 }, "out of range (0, 3600]"},
		{"width 1e6", func(tr *Trace) { tr.Width = 1e6 }, "size 1000000x480 out of range"},
		{"negative seed", func(tr *Trace) { tr.Seed = -1 }, "seed -1"},
		{"F above fps/2", func(tr *Trace) {
			tr.F, tr.FPS = 20, 30
			tr.Events[1].T, tr.Events[2].T = 1.3, 1.35
		}, "above half the frame rate"},
		{"F infinite", func(tr *Trace) { tr.F = math.Inf(1) }, "f must be positive"},
		// The sample's events are at 1.25, 1.75, 2.25 s at F = 2 Hz: the
		// scene's span is [1, 2.5], N/F = 1.5 s long.
		{"span reversed", func(tr *Trace) { tr.ActiveStart, tr.ActiveEnd = 2.5, 1 }, "reversed"},
		{"span before the clip", func(tr *Trace) { tr.ActiveStart = -1 }, "not inside the clip"},
		{"span after the clip", func(tr *Trace) { tr.ActiveEnd = 25 }, "not inside the clip"},
		{"span NaN", func(tr *Trace) { tr.ActiveEnd = math.NaN() }, "not inside the clip"},
		{"span misses the first event", func(tr *Trace) { tr.ActiveStart = 1.3 }, "does not hold the events"},
		{"span misses the last event", func(tr *Trace) { tr.ActiveEnd = 2.2 }, "does not hold the events"},
		{"span misses the last pulse", func(tr *Trace) { blink(tr); tr.ActiveEnd = 2.3 }, "does not hold the events at 1.25 … 2.35 s"},
		{"span longer than N/F", func(tr *Trace) { tr.ActiveStart, tr.ActiveEnd = 0, 2.5 }, "more than N/F = 1.5 s"},
		{"span of a clip without events", func(tr *Trace) { tr.N, tr.Events = 0, nil }, "must be empty"},
		{"objects section on an event domain", func(tr *Trace) { tr.Class = "cube-red" }, "has events, not objects"},
		{"objects domain without objects", func(tr *Trace) { tr.Domain = ObjectsDomain }, "needs an objects section"},
	}
	for _, c := range cases {
		tr := sample()
		c.mod(tr)
		err := tr.Validate()
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalid containing %q", c.name, err, c.want)
		}
	}
	// The edges that are valid: the scene's exact span, a span clipped
	// to the clip, a pulse of exactly one frame or half a period, and an
	// N = 0 control with an empty span.
	for name, mod := range map[string]func(*Trace){
		"exact span":      func(*Trace) {},
		"shorter span":    func(tr *Trace) { tr.ActiveStart, tr.ActiveEnd = 1.25, 2.25 },
		"one-frame pulse": func(tr *Trace) { blink(tr); tr.Pulse = 1.0 / 30 },
		"half-period":     func(tr *Trace) { blink(tr); tr.Pulse = 0.25 },
		"N=0":             func(tr *Trace) { tr.N, tr.Events, tr.ActiveStart, tr.ActiveEnd = 0, nil, 0, 0 },
	} {
		tr := sample()
		mod(tr)
		if err := tr.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestReadFormatErrors: issue 12 #14. JSON errors are ErrFormat (bad
// input, exit 2) with a position, and trailing data is refused.
func TestReadFormatErrors(t *testing.T) {
	good, err := sample().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// good is 41 lines and a newline, so what follows it is on line 42.
	cases := []struct {
		name, text, want string
	}{
		{"trailing garbage", string(good) + "garbage\n", "line 42, column 1: data after the trace's JSON object"},
		{"second object", string(good) + " {}", "line 42, column 2: data after"},
		{"syntax error", "{\n  \"schema\": ,\n}", "line 2, column 13: invalid character ','"},
		// A wrong type is placed at the value's last byte (column 16).
		{"wrong type", "{\n \"schema\": \"tracegrid/trace/v1\",\n \"fps\": \"thirty\"}", `line 3, column 16: key "fps"`},
		{"empty", "  \n", "the file is empty"},
		{"truncated", string(good[:40]), "the file ends inside the JSON object"},
		{"unknown key", `{"schema":"tracegrid/trace/v1","bogus":1}`, `unknown field "bogus"`},
		{"fps 1e9 as a float", `{"schema":"tracegrid/trace/v1","fps":1e9}`, `key "fps"`},
	}
	for _, c := range cases {
		_, err := Read(strings.NewReader(c.text))
		if err == nil || !errors.Is(err, ErrFormat) || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrFormat containing %q", c.name, err, c.want)
		}
	}
	// White space after the object is fine.
	if _, err := Read(strings.NewReader(string(good) + "\n\n  \t\n")); err != nil {
		t.Errorf("trailing white space: %v", err)
	}
	// The old sentinels still match themselves and ErrInvalid.
	err = (&Trace{Schema: "v0"}).Validate()
	if !errors.Is(err, ErrSchema) || !errors.Is(err, ErrInvalid) || errors.Is(err, ErrEvents) {
		t.Errorf("schema error: %v", err)
	}
}

// TestReadStopsAtMaxBytes: issue 12 #12. An endless input (like
// /dev/zero) is refused after MaxBytes+1 bytes, not read whole.
func TestReadStopsAtMaxBytes(t *testing.T) {
	r := &countingReader{}
	_, err := Read(r)
	if !errors.Is(err, ErrTooLarge) || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "the limit is 64 MiB") {
		t.Errorf("endless input: %v", err)
	}
	if r.n != MaxBytes+1 {
		t.Errorf("read %d bytes, want MaxBytes+1 = %d", r.n, MaxBytes+1)
	}
	// A file of exactly MaxBytes is read (and then judged on its content).
	good, _ := sample().Marshal()
	padded := append(bytes.Clone(good), bytes.Repeat([]byte(" "), MaxBytes-len(good))...)
	if _, err := Read(bytes.NewReader(padded)); err != nil {
		t.Errorf("a trace of exactly MaxBytes: %v", err)
	}
}

// countingReader yields spaces forever and counts them.
type countingReader struct{ n int }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	r.n += len(p)
	return len(p), nil
}

var _ io.Reader = (*countingReader)(nil)
