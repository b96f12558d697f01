package report

import (
	"testing"

	"github.com/tracegrid/tracegrid/eval/results"
)

// TestNotApplicableControls: keyframes on the N = 0 controls give no
// frames; those trials are recorded not applicable and must not read as a
// 0 % control column. Hand case: blinking at 0.5 Hz, N ∈ {1, 2} × 2 seeds
// answered exactly (4 trials, all correct) and N = 0 × 3 seeds not
// applicable.
func TestNotApplicableControls(t *testing.T) {
	cond := Condition{"keyframes", "position", "structured_trace"}
	var trials []results.Trial
	for _, n := range []int{1, 2} {
		for s := range 2 {
			tr := DemoTrace("blinking", n, 0.5, s)
			trials = append(trials, newTrial("alpha", cond, tr, intp(n), exactEvents(tr)))
		}
	}
	for s := range 3 {
		t0 := newTrial("alpha", cond, DemoTrace("blinking", 0, 1, s), nil, nil)
		t0.Error, t0.ErrorKind, t0.Attempts = "not applicable: policy keyframes:0.1 on clip …: no events", results.KindNotApplicable, 0
		t0.CostUSD, t0.Usage = 0, results.Usage{}
		trials = append(trials, t0)
	}
	r, err := Build(trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Totals.Trials != 7 || r.Totals.Scored != 4 || r.Totals.Failed != 0 || r.Totals.NotApplicable != 3 {
		t.Errorf("totals %+v, want 7 trials, 4 scored, 0 failed, 3 not applicable", r.Totals)
	}
	if len(r.Domains) != 1 || r.Domains[0].Trials != 4 || r.Domains[0].EM != 1 {
		t.Errorf("domain rows %+v, want one row of 4 trials at EM 1", r.Domains)
	}
	if len(r.Failures) != 0 || len(r.FailedTrials) != 0 {
		t.Errorf("not-applicable trials listed as failures: %+v", r.Failures)
	}
	var na, scored int
	for _, c := range r.Surfaces {
		switch {
		case c.NotApplicable:
			na++
			if c.N != 0 || c.Trials != 0 || c.Labels != "position" {
				t.Errorf("n/a cell %+v", c)
			}
		default:
			scored++
			if c.N == 0 {
				t.Errorf("a scored control cell %+v", c)
			}
		}
	}
	if na != 1 || scored != 2 {
		t.Errorf("%d n/a and %d scored cells, want 1 and 2", na, scored)
	}
	for _, b := range r.Boundaries {
		if b.Control != nil {
			t.Errorf("boundary row has a control %+v from not-applicable trials", b.Control)
		}
	}
	if len(r.Cost) != 1 || r.Cost[0].Trials != 4 {
		t.Errorf("cost rows %+v, want 4 trials (not-applicable ones cost nothing and are not counted)", r.Cost)
	}
	// The heatmap draws the n/a cell.
	for _, f := range r.Figures {
		if f.Kind == KindHeatmap {
			if _, err := r.RenderFigure(f); err != nil {
				t.Fatal(err)
			}
		}
	}
}
