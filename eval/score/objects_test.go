package score

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/scene"
	"github.com/tracegrid/tracegrid/trace"
)

// objectsTrace is a real static-object clip's trace (pure CPU): n objects
// of class cube-red, F = 0, no events.
func objectsTrace(t *testing.T, n, seed int) *trace.Trace {
	t.Helper()
	c, err := scene.New(scene.Params{Domain: "objects", N: n, Class: "cube-red", Seed: seed, Duration: 5, FPS: 30, Width: 320, Height: 180})
	if err != nil {
		t.Fatal(err)
	}
	tr := c.Trace()
	if err := tr.Validate(); err != nil || !tr.IsObjects() || tr.F != 0 || len(tr.Events) != 0 {
		t.Fatalf("objects trace: %v, objects %v, F %v, %d events", err, tr.IsObjects(), tr.F, len(tr.Events))
	}
	return tr
}

// TestScoreObjects: a static-object clip is scored on the count alone,
// under every tolerance, including rate-relative δ = 1/(2F) with F = 0.
func TestScoreObjects(t *testing.T) {
	tr := objectsTrace(t, 7, 1)
	for _, tol := range append(PaperTolerances(), Tolerance{Seconds: 3}) {
		s, err := ScoreTrial(tr, intp(7), nil, tol)
		if err != nil {
			t.Fatalf("%s: %v", tol, err)
		}
		if s.Count == nil || *s.Count != 7 || s.Pairs != nil || s.Displaced != nil || s.N != 7 || s.M != 0 || s.K != 0 ||
			!s.Correct || !s.CountOnly || s.Eligible || s.Tolerance != 0 ||
			s.Precision != 0 || s.Recall != 0 || s.F1 != 0 || s.VOR != 0 || s.Classes != (Classes{}) {
			t.Errorf("%s: %+v", tol, s)
		}
		if s.Accidental() || s.ReasoningFailure() {
			t.Errorf("%s: an objects trial entered ACR/RFR", tol)
		}
	}
	// A wrong count, a non-response, and a reply with a three-line ledger
	// (M = 3, nothing to align with).
	for _, c := range []struct {
		count   *int
		reports []Report
		correct bool
		m       int
	}{
		{intp(6), nil, false, 0},
		{intp(8), nil, false, 0},
		{nil, nil, false, 0},
		{intp(7), []Report{{T: 0.5}, {T: 1.5, Attrs: map[string]string{"wall": "left"}}, {T: 4}}, true, 3},
		{nil, []Report{{T: 2}}, false, 1},
	} {
		s, err := ScoreTrial(tr, c.count, c.reports, RateTolerance)
		if err != nil {
			t.Fatal(err)
		}
		if s.Correct != c.correct || s.M != c.m || s.K != 0 || s.Precision != 0 || s.Eligible || !s.CountOnly || s.Classes != (Classes{}) {
			t.Errorf("count %v, %d reports: %+v", c.count, len(c.reports), s)
		}
	}
}

// TestSummarizeWithObjects: objects trials enter EM and nothing else. One
// event trial (N = 2 at 1 Hz, both events reported exactly, count 2) and
// three objects trials (N = 7: counts 7, 6, none):
//
//	EM = 2/4; Eligible = 1; VOR = P = R = F1 = 1 (the event trial's);
//	ACR = RFR = 0; Totals: 2 true events, 2 reported, 2 matched, 1 video.
func TestSummarizeWithObjects(t *testing.T) {
	ev := mkTrace("bounce_ball", 1.0, []float64{2, 3}, nil, nil)
	obj := objectsTrace(t, 7, 2)
	inputs := []TrialInput{
		{Model: "m", Policy: "uniform:10", Prompt: "p", Trace: ev, Count: intp(2), Reports: []Report{{T: 2}, {T: 3}}},
		{Model: "m", Policy: "uniform:10", Prompt: "p", Trace: obj, Count: intp(7)},
		{Model: "m", Policy: "uniform:10", Prompt: "p", Trace: obj, Count: intp(6), Reports: []Report{{T: 1}}},
		{Model: "m", Policy: "uniform:10", Prompt: "p", Trace: obj},
	}
	trials, err := ScoreAll(inputs, RateTolerance)
	if err != nil {
		t.Fatal(err)
	}
	if trials[1].Domain != "objects" || trials[1].N != 7 || trials[1].F != 0 {
		t.Errorf("objects trial %+v", trials[1])
	}
	s := Summarize(trials)
	want := Summary{Trials: 4, Correct: 2, EM: 0.5, EMInterval: WilsonInterval(2, 4, Z95), Eligible: 1, Totals: Totals{TrueEvents: 2, Reported: 2, Matched: 2, Videos: 1}}
	// The trace means and rates are pointers: compare their values.
	measures := []*float64{s.VOR, s.Precision, s.Recall, s.F1, s.ACR, s.RFR}
	wantMeasures := []float64{1, 1, 1, 1, 0, 0}
	for i, p := range measures {
		if val(p) != wantMeasures[i] {
			t.Errorf("measure %d (VOR, P, R, F1, ACR, RFR) = %v, want %v", i, val(p), wantMeasures[i])
		}
	}
	s.VOR, s.Precision, s.Recall, s.F1, s.ACR, s.RFR = nil, nil, nil, nil, nil, nil
	if s != want {
		t.Errorf("summary\n got %+v\nwant %+v", s, want)
	}
	// Regions leave objects out (F = 0 is in no region).
	for _, g := range SummarizeRegions(trials) {
		if g.Summary.Trials != 1 {
			t.Errorf("region %s has %d trials", g.Key, g.Summary.Trials)
		}
	}
	// Every window of Table 9 scores them; EM stays 2/4.
	rows, err := Sensitivity(inputs, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Summary.EM != 0.5 || r.Summary.Eligible != 1 {
			t.Errorf("%s: %+v", r.Label, r.Summary)
		}
	}
	// CVB's metrics over the objects trials: EM 1/3, Coverage 2/3, MAE =
	// RMSE = (0 + 1)/2 over the answered.
	var preds []CountPrediction
	for _, tr := range trials[1:] {
		preds = append(preds, CountPrediction{Truth: tr.N, Pred: tr.Score.Count})
	}
	cs := CountDistribution(preds)
	if !approx(cs.EM, 1.0/3) || !approx(cs.Coverage, 2.0/3) || val(cs.MAE) != 0.5 || !approx(val(cs.RMSE), 0.7071067811865476) || cs.Support != 2 {
		t.Errorf("count stats %+v", cs)
	}
}

func TestScoreObjectsErrors(t *testing.T) {
	withEvent := objectsTrace(t, 5, 0)
	withEvent.Events = []trace.Event{{T: 1, Count: 1}}
	withEvent.N = 1
	mismatch := objectsTrace(t, 5, 0)
	mismatch.N = 6
	ok := objectsTrace(t, 5, 0)
	for _, c := range []struct {
		name string
		tr   *trace.Trace
		reps []Report
		tol  Tolerance
		is   error
		msg  string
	}{
		{"event in an objects clip", withEvent, nil, RateTolerance, ErrTrace, "needs n ≥ 1 objects and no events, got n=1, 5 objects, 1 events"},
		{"n disagrees with the objects", mismatch, nil, RateTolerance, ErrTrace, "got n=6, 5 objects, 0 events"},
		{"bad window", ok, nil, Tolerance{Seconds: -1}, ErrTolerance, "positive, finite number of seconds"},
		{"infinite report", ok, []Report{{T: 1}, {T: math.Inf(1)}}, RateTolerance, ErrReport, "report 1 has non-finite time +Inf"},
	} {
		_, err := ScoreTrial(c.tr, intp(5), c.reps, c.tol)
		if !errors.Is(err, c.is) || err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want %v containing %q", c.name, err, c.is, c.msg)
		}
	}
}
