package score

import (
	"errors"
	"testing"
)

// TestSensitivity re-scores one 4 Hz clip (truths 5.0, 5.25) with reports
// 5.3 and 5.6 under Table 9's four windows:
//
//	δ = 1.0 s  → both pair (5.0–5.3, 5.25–5.6)  K=2
//	δ = 0.5 s  → the same                        K=2
//	δ = 0.25 s → only 5.25–5.3                   K=1
//	δ = 1/(2F) = 0.125 s → only 5.25–5.3         K=1
//
// plus an N=0 control, which only moves EM.
func TestSensitivity(t *testing.T) {
	inputs := []TrialInput{
		{Model: "m", Trace: mkTrace("bounce_ball", 4.0, []float64{5, 5.25}, nil, nil), Count: intp(2),
			Reports: []Report{{T: 5.3}, {T: 5.6}}},
		{Model: "m", Trace: mkTrace("bounce_ball", 1.0, nil, nil, nil), Count: intp(1)},
	}
	rows, err := Sensitivity(inputs, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantK := []float64{1, 1, 0.5, 0.5} // recall = K/2
	wantLabel := []string{"fixed δ=1.0 s", "fixed δ=0.5 s", "fixed δ=0.25 s", "rate-relative δ=1/(2F)"}
	if len(rows) != 4 {
		t.Fatalf("%d rows", len(rows))
	}
	for i, r := range rows {
		s := r.Summary
		if r.Label != wantLabel[i] || s.Trials != 2 || s.Eligible != 1 || s.EM != 0.5 || val(s.VOR) != 1 {
			t.Errorf("row %d: %s %+v", i, r.Label, s)
		}
		if val(s.Recall) != wantK[i] || val(s.Precision) != wantK[i] || val(s.F1) != wantK[i] {
			t.Errorf("row %d (%s): P %v R %v F1 %v, want %v", i, r.Label, val(s.Precision), val(s.Recall), val(s.F1), wantK[i])
		}
		// Correct count: accidental only when the window is too tight.
		if wantACR := map[bool]float64{true: 0, false: 1}[wantK[i] == 1]; val(s.ACR) != wantACR {
			t.Errorf("row %d: ACR %v, want %v", i, val(s.ACR), wantACR)
		}
	}
	trials, err := ScoreAll(inputs, RateTolerance)
	if err != nil || trials[0].Domain != "bounce_ball" || trials[0].N != 2 || trials[0].F != 4 || trials[0].Model != "m" {
		t.Errorf("ScoreAll metadata %+v, %v", trials, err)
	}
}

func TestSensitivityError(t *testing.T) {
	bad := mkTrace("blinking", 1.0, []float64{3, 2}, nil, nil)
	_, err := Sensitivity([]TrialInput{{Trace: bad}}, []Tolerance{{Seconds: 0.5}})
	if !errors.Is(err, ErrTrace) {
		t.Fatalf("error %v, want ErrTrace", err)
	}
	t.Log(err)
}
