package score

import (
	"math"
	"testing"
)

// TestWilsonTable4 reproduces low-frequency-trap Table 4 (B.4), whose
// bounds are printed to 0.1 percentage point.
func TestWilsonTable4(t *testing.T) {
	cases := []struct {
		k, n   int
		lo, hi float64 // percent, as printed
	}{
		{143, 730, 16.9, 22.6}, // native-video baseline, 19.6%
		{214, 730, 26.1, 32.7}, // 4-FPS sampling, 29.3%
		{501, 730, 65.2, 71.9}, // event-centred keyframes, 68.6%
	}
	for _, c := range cases {
		w := WilsonInterval(c.k, c.n, Z95)
		lo, hi := math.Round(w.Lo*1000)/10, math.Round(w.Hi*1000)/10
		if lo != c.lo || hi != c.hi {
			t.Errorf("Wilson(%d/%d) = [%.4f, %.4f] → %.1f–%.1f%%, want %.1f–%.1f%%", c.k, c.n, w.Lo, w.Hi, lo, hi, c.lo, c.hi)
		}
	}
	if Z95 != 1.959963984540054 || math.Abs(Z95-1.959963985) > 1e-9 {
		t.Errorf("Z95 = %v", Z95)
	}
}

func TestWilsonEdges(t *testing.T) {
	if w := WilsonInterval(0, 0, Z95); w != (Wilson{0, 1}) {
		t.Errorf("n=0: %+v", w)
	}
	w := WilsonInterval(0, 10, Z95)
	if w.Lo != 0 || !(w.Hi > 0.27 && w.Hi < 0.28) { // 0/10 → [0, 0.2775]
		t.Errorf("0/10: %+v", w)
	}
	w = WilsonInterval(10, 10, Z95)
	if math.Abs(w.Hi-1) > 1e-12 || !(w.Lo > 0.72 && w.Lo < 0.73) {
		t.Errorf("10/10: %+v", w)
	}
	if WilsonInterval(12, 10, Z95) != WilsonInterval(10, 10, Z95) {
		t.Error("k > n is not clamped")
	}
}

// scoredTrials are four hand-scored clips plus an N = 0 control:
//
//	bounce (bounceTrial)   N=4 M=4 K=3 count 4  P=R=F1=.75 VOR=1  correct, F1<.8 → ACR
//	wrong accumulation     N=5 M=5 K=5 count 4  P=R=F1=1   VOR=1  wrong, F1≥.8 → RFR
//	silent                 N=3 M=0 K=0 count -  P=R=F1=0   VOR=0  wrong
//	over-report            N=2 M=4 K=2 count 2  P=.5 R=1 F1=2/3 VOR=2 correct → ACR
//	control                N=0 M=1     count 0  correct, not eligible
func scoredTrials(t *testing.T) []Trial {
	t.Helper()
	var out []Trial
	add := func(tr Trial, err error) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tr)
	}
	score := func(domain string, f float64, times []float64, count *int, reps []Report) (Trial, error) {
		tr := mkTrace(domain, f, times, nil, nil)
		s, err := ScoreTrial(tr, count, reps, RateTolerance)
		return Trial{Domain: domain, N: tr.N, F: f, Score: s}, err
	}
	btr, breps := bounceTrial()
	s, err := ScoreTrial(btr, intp(4), breps, RateTolerance)
	add(Trial{Domain: "bounce_ball", N: 4, F: 1, Score: s}, err)
	add(score("blinking", 2.0, []float64{3, 3.5, 4, 4.5, 5}, intp(4),
		[]Report{{T: 3}, {T: 3.5}, {T: 4}, {T: 4.5}, {T: 5}}))
	add(score("blinking", 3.0, []float64{1, 1 + 1/3.0, 1 + 2/3.0}, nil, nil))
	add(score("state_machine", 0.5, []float64{2, 4}, intp(2),
		[]Report{{T: 2}, {T: 4}, {T: 10}, {T: 12}}))
	add(score("state_machine", 1.0, nil, intp(0), []Report{{T: 5}}))
	return out
}

func TestSummarizeHandComputed(t *testing.T) {
	s := Summarize(scoredTrials(t))
	if s.Trials != 5 || s.Correct != 3 || s.Eligible != 4 || !approx(s.EM, 0.6) {
		t.Fatalf("trials %d correct %d eligible %d EM %v", s.Trials, s.Correct, s.Eligible, s.EM)
	}
	want := map[string][2]float64{
		"VOR":       {val(s.VOR), (1 + 1 + 0 + 2) / 4.0},
		"Precision": {val(s.Precision), (0.75 + 1 + 0 + 0.5) / 4},
		"Recall":    {val(s.Recall), (0.75 + 1 + 0 + 1) / 4},
		"F1":        {val(s.F1), (0.75 + 1 + 0 + 2.0/3) / 4},
		"ACR":       {val(s.ACR), 2.0 / 4},
		"RFR":       {val(s.RFR), 1.0 / 4},
	}
	for name, v := range want {
		if !approx(v[0], v[1]) {
			t.Errorf("%s = %v, want %v", name, v[0], v[1])
		}
	}
	if s.EMInterval != WilsonInterval(3, 5, Z95) {
		t.Errorf("EM interval %+v", s.EMInterval)
	}
	wantTotals := Totals{TrueEvents: 14, Reported: 13, Matched: 10, Missed: 4, Hallucinated: 3,
		Displaced: 0, Misidentified: 1, WrongAccumulation: 1, Videos: 4}
	if s.Totals != wantTotals {
		t.Errorf("totals %+v, want %+v", s.Totals, wantTotals)
	}
	if z := Summarize(nil); z.EM != 0 || z.F1 != nil || z.EMInterval != (Wilson{0, 1}) {
		t.Errorf("empty summary %+v", z)
	}
}

// TestSummarizeNoEligible: N = 0 controls alone give EM but no trace mean,
// ACR or RFR (nil, JSON null): 0 would read as measured, and for the
// failure rates as perfect.
func TestSummarizeNoEligible(t *testing.T) {
	var controls []Trial
	for _, tr := range scoredTrials(t) {
		if !tr.Score.Eligible {
			controls = append(controls, tr)
		}
	}
	if len(controls) == 0 {
		t.Fatal("fixture has no N = 0 control")
	}
	s := Summarize(controls)
	if s.Trials != len(controls) || s.Eligible != 0 || s.Correct != s.Trials || s.EM != 1 {
		t.Errorf("controls: %+v", s)
	}
	for name, v := range map[string]*float64{"VOR": s.VOR, "P": s.Precision, "R": s.Recall, "F1": s.F1, "ACR": s.ACR, "RFR": s.RFR} {
		if v != nil {
			t.Errorf("%s = %v over no eligible trial, want nil", name, *v)
		}
	}
}

func TestGroupSummaries(t *testing.T) {
	gs := GroupSummaries(scoredTrials(t), func(tr Trial) string { return tr.Domain })
	if len(gs) != 3 || gs[0].Key != "blinking" || gs[1].Key != "bounce_ball" || gs[2].Key != "state_machine" {
		t.Fatalf("groups %+v", gs)
	}
	sm := gs[2].Summary // over-report + control
	if sm.Trials != 2 || sm.Correct != 2 || sm.Eligible != 1 || !approx(val(sm.VOR), 2) || !approx(val(sm.ACR), 1) {
		t.Errorf("state_machine %+v", sm)
	}
}

func TestRegion(t *testing.T) {
	cases := []struct {
		n    int
		f    float64
		want string
	}{
		{1, 0.5, LowCountLowFreq}, {3, 2.0, LowCountLowFreq}, {0, 1.0, LowCountLowFreq},
		{5, 0.5, HighCountLowFreq}, {12, 2.0, HighCountLowFreq},
		{3, 2.5, LowCountHighFreq}, {1, 4.0, LowCountHighFreq},
		{5, 2.5, HighCountHighFreq}, {12, 4.0, HighCountHighFreq},
		{4, 1.0, ""}, {4, 3.0, ""}, {2, 2.25, ""}, {-1, 1.0, ""}, {2, 0, ""}, {2, math.NaN(), ""}, {2, math.Inf(1), ""},
		{2, 2.0000000001, LowCountLowFreq}, // rounding noise stays in its cell's region
	}
	for _, c := range cases {
		if got := Region(c.n, c.f); got != c.want {
			t.Errorf("Region(%d, %v) = %q, want %q", c.n, c.f, got, c.want)
		}
	}
}

func TestSummarizeRegions(t *testing.T) {
	gs := SummarizeRegions(scoredTrials(t))
	// bounce N=4 has no region; blinking N=5 F=2 is high/low; blinking N=3
	// F=3 is low/high; state_machine N=2 F=.5 and the control are low/low.
	want := []struct {
		key    string
		trials int
	}{{LowCountLowFreq, 2}, {HighCountLowFreq, 1}, {LowCountHighFreq, 1}}
	if len(gs) != len(want) {
		t.Fatalf("regions %+v", gs)
	}
	for i, w := range want {
		if gs[i].Key != w.key || gs[i].Summary.Trials != w.trials {
			t.Errorf("region %d = %s with %d trials, want %s with %d", i, gs[i].Key, gs[i].Summary.Trials, w.key, w.trials)
		}
	}
}
