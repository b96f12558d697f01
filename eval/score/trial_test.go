package score

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/trace"
)

func intp(v int) *int { return &v }

// mkTrace builds a minimal trace with events at times; after[i] is s_i⁺
// and attrs[i] the event's Attrs (either may be nil).
func mkTrace(domain string, f float64, times []float64, after []string, attrs []map[string]string) *trace.Trace {
	tr := &trace.Trace{Schema: trace.Schema, ID: domain + "-test", Domain: domain, N: len(times), F: f, Duration: 24}
	state := "s0"
	for i, t := range times {
		a := "on"
		if after != nil {
			a = after[i]
		}
		e := trace.Event{T: t, Type: "event", Before: state, After: a, Count: i + 1}
		if attrs != nil {
			e.Attrs = attrs[i]
		}
		tr.Events = append(tr.Events, e)
		state = a
	}
	return tr
}

func approx(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }

// bounceTrial: N=4 at 1 Hz (δ = 0.5 s), truths 2,3,4,5 on walls
// left,right,top,bottom. Reports: 2.1 left (correct match), 3.2 "top"
// (matched, wrong wall), 4.7 (matches 5.0, no attribute), 9.0 (nothing
// near). K=3, M=4: P = R = F1 = 0.75, VOR = 1; truth 4.0 is missed and
// the 9.0 report hallucinated, but they are in different gaps (4.0 lies
// before the pair 5.0–4.7, 9.0 after it), so nothing is displaced.
func bounceTrial() (*trace.Trace, []Report) {
	walls := []string{"left", "right", "top", "bottom"}
	attrs := make([]map[string]string, 4)
	for i, w := range walls {
		attrs[i] = map[string]string{"wall": w}
	}
	tr := mkTrace("bounce_ball", 1.0, []float64{2, 3, 4, 5}, walls, attrs)
	reps := []Report{
		{T: 2.1, Attrs: map[string]string{"wall": "Left"}},
		{T: 3.2, Attrs: map[string]string{"wall": "top"}},
		{T: 4.7},
		{T: 9.0},
	}
	return tr, reps
}

func TestScoreTrialHandComputed(t *testing.T) {
	tr, reps := bounceTrial()
	s, err := ScoreTrial(tr, intp(4), reps, RateTolerance)
	if err != nil {
		t.Fatal(err)
	}
	if s.N != 4 || s.M != 4 || s.K != 3 || !s.Correct || !s.Eligible || s.Tolerance != 0.5 {
		t.Fatalf("N,M,K,correct,eligible,δ = %d,%d,%d,%v,%v,%v", s.N, s.M, s.K, s.Correct, s.Eligible, s.Tolerance)
	}
	if !approx(s.Precision, 0.75) || !approx(s.Recall, 0.75) || !approx(s.F1, 0.75) || !approx(s.VOR, 1) {
		t.Errorf("P,R,F1,VOR = %v,%v,%v,%v", s.Precision, s.Recall, s.F1, s.VOR)
	}
	if !samePairs(s.Pairs, [][2]int{{0, 0}, {1, 1}, {3, 2}}) {
		t.Errorf("pairs %v", pairIdx(s.Pairs))
	}
	want := Classes{Matched: 3, Missed: 1, Hallucinated: 1, Displaced: 0, Misidentified: 1}
	if s.Classes != want {
		t.Errorf("classes %+v, want %+v", s.Classes, want)
	}
	if !s.Accidental() || s.ReasoningFailure() {
		t.Errorf("correct count with F1 0.75 is accidental correctness, not a reasoning failure")
	}
}

// TestDisplaced: state_machine N=3 at 0.5 Hz (δ = 1 s), truths 4, 6, 8.
// Reports 4.2, 4.9, 8.0: 4.9 is 0.9 s from 4 but 1.1 s from 6. Max K = 2
// with least cost pairs 4–4.2 and 8–8.0; truth 6 and report 4.9 are left in
// the gap between those pairs, so 4.9 is the displaced report of event 2
// (1.1 s early). The 8.0 report names the wrong resulting state.
func TestDisplaced(t *testing.T) {
	tr := mkTrace("state_machine", 0.5, []float64{4, 6, 8}, []string{"B", "C", "A"}, []map[string]string{
		{"from": "A", "to": "B"}, {"from": "B", "to": "C"}, {"from": "C", "to": "A"},
	})
	reps := []Report{
		{T: 4.2, Attrs: map[string]string{"from": "A", "to": "B"}},
		{T: 4.9, Attrs: map[string]string{"to": "C"}},
		{T: 8.0, Attrs: map[string]string{"to": "B"}},
	}
	s, err := ScoreTrial(tr, intp(3), reps, RateTolerance)
	if err != nil {
		t.Fatal(err)
	}
	if s.K != 2 || !samePairs(s.Pairs, [][2]int{{0, 0}, {2, 2}}) {
		t.Fatalf("pairs %v", pairIdx(s.Pairs))
	}
	if !samePairs(s.Displaced, [][2]int{{1, 1}}) || !approx(s.Displaced[0].Deviation, -1.1) {
		t.Fatalf("displaced %+v", s.Displaced)
	}
	want := Classes{Matched: 2, Missed: 1, Hallucinated: 1, Displaced: 1, Misidentified: 1}
	if s.Classes != want {
		t.Errorf("classes %+v, want %+v", s.Classes, want)
	}
	if f1 := 2.0 / 3; !approx(s.Precision, f1) || !approx(s.Recall, f1) || !approx(s.F1, f1) {
		t.Errorf("P,R,F1 = %v,%v,%v, want 2/3 each", s.Precision, s.Recall, s.F1)
	}
}

// TestDisplacedGapOrder: blinking at 1 Hz, δ = 0.5 s, displaced window
// 2δ = 1 s; truths 2, 3, 4. Report 2.0 matches truth 2; the gap after it
// holds truths 3, 4 and one report.
//   - 4.9: 0.9 s after truth 4 (≤ 1 s), 1.9 s after truth 3: displaced,
//     paired with the nearer truth 4, not left-to-right with 3.
//   - 5.2: 1.2 s after truth 4 (> 1 s): not displaced (issue 11 changed
//     this case: the old unbounded order alignment called it displaced);
//     it stays a hallucination and both truths stay missed.
func TestDisplacedGapOrder(t *testing.T) {
	tr := mkTrace("blinking", 1.0, []float64{2, 3, 4}, nil, nil)
	for _, c := range []struct {
		far  float64
		want [][2]int
	}{{4.9, [][2]int{{2, 1}}}, {5.2, [][2]int{}}} {
		s, err := ScoreTrial(tr, intp(2), []Report{{T: 2.0}, {T: c.far}}, RateTolerance)
		if err != nil {
			t.Fatal(err)
		}
		if !samePairs(s.Displaced, c.want) || s.DisplacedWithin != 1 {
			t.Fatalf("report %v: displaced %v within %v, want %v within 1", c.far, pairIdx(s.Displaced), s.DisplacedWithin, c.want)
		}
		if s.Classes.Missed != 2 || s.Classes.Hallucinated != 1 || s.Classes.Displaced != len(c.want) {
			t.Errorf("report %v: classes %+v", c.far, s.Classes)
		}
	}
}

func TestWrongAccumulation(t *testing.T) {
	tr := mkTrace("blinking", 2.0, []float64{3, 3.5, 4, 4.5, 5}, nil, nil)
	var reps []Report
	for _, e := range tr.Events {
		reps = append(reps, Report{T: e.T + 0.1, Attrs: map[string]string{"after": "ON"}})
	}
	s, err := ScoreTrial(tr, intp(4), reps, RateTolerance)
	if err != nil {
		t.Fatal(err)
	}
	if s.F1 != 1 || s.Correct || !s.Classes.WrongAccumulation || !s.ReasoningFailure() || s.Classes.Misidentified != 0 {
		t.Errorf("F1=%v correct=%v classes=%+v", s.F1, s.Correct, s.Classes)
	}
	// A blink reported as "off" is not an on-pulse (issue 11; it used to
	// count as a misidentified match): it is excluded, so M = 4 reports
	// (3.6 … 5.1) match truths 3.5 … 5 (K = 4), truth 3 is missed, and
	// F1 = 2·4/(4+5) = 8/9 with the correct count 5.
	reps[0].Attrs = map[string]string{"after": "off", "colour": "red"}
	s, _ = ScoreTrial(tr, intp(5), reps, RateTolerance)
	want := Classes{Matched: 4, Missed: 1}
	if s.Classes != want || s.M != 4 || s.K != 4 || s.Excluded != 1 || !approx(s.F1, 8.0/9) || !s.Correct {
		t.Errorf("M=%d K=%d excluded=%d F1=%v classes %+v, want M=4 K=4 excluded=1 F1=8/9 %+v", s.M, s.K, s.Excluded, s.F1, s.Classes, want)
	}
}

// TestF1Threshold: K=4 of N=M=5 is F1 = 0.8 exactly, which is faithful
// (F1 ≥ 0.80), so a wrong count is a reasoning failure.
func TestF1Threshold(t *testing.T) {
	tr := mkTrace("blinking", 1.0, []float64{1, 2, 3, 4, 5}, nil, nil)
	reps := []Report{{T: 1}, {T: 2}, {T: 3}, {T: 4}, {T: 20}}
	s, err := ScoreTrial(tr, intp(6), reps, RateTolerance)
	if err != nil {
		t.Fatal(err)
	}
	if s.F1 != 0.8 || !s.Faithful() || !s.Classes.WrongAccumulation {
		t.Errorf("F1=%v faithful=%v classes=%+v", s.F1, s.Faithful(), s.Classes)
	}
	// K=3 of N=5, M=4: F1 = 6/9 < 0.8 and the correct count is accidental.
	s, _ = ScoreTrial(tr, intp(5), reps[1:], RateTolerance)
	if !approx(s.F1, 6.0/9) || s.Faithful() || !s.Accidental() {
		t.Errorf("F1=%v faithful=%v", s.F1, s.Faithful())
	}
}

func TestNoReportsAndNoEvents(t *testing.T) {
	tr := mkTrace("bounce_ball", 2.0, []float64{1, 1.5, 2}, nil, nil)
	s, err := ScoreTrial(tr, nil, nil, RateTolerance)
	if err != nil {
		t.Fatal(err)
	}
	if s.M != 0 || s.K != 0 || s.Precision != 0 || s.F1 != 0 || s.Recall != 0 || s.VOR != 0 || s.Correct || s.Count != nil {
		t.Errorf("M=0: %+v", s)
	}
	if s.Classes != (Classes{Missed: 3}) {
		t.Errorf("M=0 classes %+v", s.Classes)
	}

	ctrl := mkTrace("bounce_ball", 1.0, nil, nil, nil)
	s, err = ScoreTrial(ctrl, intp(0), []Report{{T: 3}}, RateTolerance)
	if err != nil {
		t.Fatal(err)
	}
	if s.Eligible || !s.Correct || s.N != 0 || s.M != 1 || s.Precision != 0 || s.VOR != 0 {
		t.Errorf("N=0 control: %+v", s)
	}
	if s.Classes != (Classes{Hallucinated: 1}) || s.Accidental() || s.ReasoningFailure() {
		t.Errorf("N=0 classes %+v", s.Classes)
	}
}

func TestScoreTrialErrors(t *testing.T) {
	unsorted := mkTrace("bounce_ball", 1.0, []float64{2, 3, 4}, nil, nil)
	unsorted.Events[1].T, unsorted.Events[2].T = 4, 3
	dup := mkTrace("bounce_ball", 1.0, []float64{2, 2, 4}, nil, nil)
	short := mkTrace("bounce_ball", 1.0, []float64{2, 3}, nil, nil)
	short.N = 3
	nan := mkTrace("bounce_ball", 1.0, []float64{2, math.NaN()}, nil, nil)
	zeroF := mkTrace("bounce_ball", 0, []float64{2}, nil, nil)
	ok := mkTrace("bounce_ball", 1.0, []float64{2}, nil, nil)

	cases := []struct {
		name string
		tr   *trace.Trace
		reps []Report
		tol  Tolerance
		is   error
		msg  string
	}{
		{"unsorted", unsorted, nil, RateTolerance, ErrTrace, "events are not sorted by time: event 3 at t=3 does not follow event 2 at t=4"},
		{"duplicate time", dup, nil, RateTolerance, ErrTrace, "not sorted"},
		{"n mismatch", short, nil, RateTolerance, ErrTrace, "n=3 but 2 events"},
		{"nan event", nan, nil, RateTolerance, ErrTrace, "non-finite time"},
		{"nil trace", nil, nil, RateTolerance, ErrTrace, "nil trace"},
		{"rate with F=0", zeroF, nil, RateTolerance, ErrTolerance, "positive, finite F"},
		{"zero fixed window", ok, nil, Tolerance{}, ErrTolerance, "positive, finite number of seconds"},
		{"nan report", ok, []Report{{T: math.NaN()}}, RateTolerance, ErrReport, "report 0 has non-finite time"},
	}
	for _, c := range cases {
		_, err := ScoreTrial(c.tr, intp(1), c.reps, c.tol)
		if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want %v containing %q", c.name, err, c.is, c.msg)
		}
	}
}

// TestScoreTrialOnValidatedTrace runs the scorer on a trace that passes
// trace.Validate, so the fixtures above are not hiding a format mismatch.
func TestScoreTrialOnValidatedTrace(t *testing.T) {
	tr := &trace.Trace{Schema: trace.Schema, ID: "sm", Domain: "state_machine", N: 2, F: 1.5, Duration: 24, FPS: 30,
		Width: 64, Height: 64, ActiveStart: 3, ActiveEnd: 3 + 1/1.5, InitialState: "A",
		Events: []trace.Event{
			{T: 3, Type: "transition", Before: "A", After: "B", Count: 1, Attrs: map[string]string{"from": "A", "to": "B"}},
			{T: 3 + 1/1.5, Type: "transition", Before: "B", After: "C", Count: 2, Attrs: map[string]string{"from": "B", "to": "C"}},
		}}
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := ScoreTrial(tr, intp(2), []Report{{T: 3.3, Attrs: map[string]string{"To": "b"}}, {T: 3.7, Attrs: map[string]string{"to": "C"}}}, RateTolerance)
	if err != nil {
		t.Fatal(err)
	}
	if s.K != 2 || s.F1 != 1 || s.Classes.Misidentified != 0 || !approx(s.Tolerance, 1/3.0) {
		t.Errorf("%+v", s)
	}
}
