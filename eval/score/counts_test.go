package score

import (
	"math"
	"testing"
)

// cvbCardinalities are CountVideoBench's 26 cardinalities (§4.2): each
// anchor in {5,10,20,30,40,50} with its ±2 neighbours, bounded to [5,50].
func cvbCardinalities() []int {
	var out []int
	seen := map[int]bool{}
	for _, a := range []int{5, 10, 20, 30, 40, 50} {
		for n := a - 2; n <= a+2; n++ {
			if n >= 5 && n <= 50 && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// uniformDesign is the benchmark's 100 videos per cardinality.
func uniformDesign() []int {
	var truths []int
	for _, n := range cvbCardinalities() {
		for range 100 {
			truths = append(truths, n)
		}
	}
	return truths
}

func TestCountVideoBenchDesign(t *testing.T) {
	truths := uniformDesign()
	if len(cvbCardinalities()) != 26 || len(truths) != 2600 {
		t.Fatalf("%d cardinalities, %d videos", len(cvbCardinalities()), len(truths))
	}
	// §3: the Top-3 share of a uniform design over 26 counts is 3/26 ≈ 11.5%.
	share := TopShare(truths, 3)
	if !approx(share, 3.0/26) || math.Round(share*1000)/10 != 11.5 {
		t.Errorf("Top-3 share %v, want 3/26 ≈ 11.5%%", share)
	}
	// A benchmark collapsed on three values has share 1.
	if s := TopShare([]int{3, 3, 4, 5, 5, 5}, 3); s != 1 {
		t.Errorf("three-value share %v", s)
	}
	if TopShare(nil, 3) != 0 || TopShare(truths, 0) != 0 {
		t.Error("empty TopShare is not 0")
	}
}

// TestOracle is Table 2's Oracle row: exact everywhere, |S| = 26, PP = 26.
func TestOracle(t *testing.T) {
	var preds []CountPrediction
	for _, n := range uniformDesign() {
		preds = append(preds, CountPrediction{Truth: n, Pred: intp(n)})
	}
	s := CountDistribution(preds)
	if s.EM != 1 || s.Acc10 != 1 || s.Coverage != 1 || val(s.MAE) != 0 || val(s.RMSE) != 0 || s.Support != 26 {
		t.Errorf("oracle %+v", s)
	}
	if math.Abs(s.Perplexity-26) > 1e-9 || math.Abs(val(s.PerplexityAnswered)-26) > 1e-9 {
		t.Errorf("oracle PP %v / %v, want 26", s.Perplexity, s.PerplexityAnswered)
	}
	if len(s.ByCardinality) != 26 || s.ByCardinality[0].N != 5 || s.ByCardinality[0].EM != 1 || s.ByCardinality[25].Coverage != 1 {
		t.Errorf("per-cardinality %+v", s.ByCardinality)
	}
	// Every value has the same count, so nothing stands out: the largest
	// excess is 0 (first at 5, whose right neighbours equal it) and the
	// largest deficit is 0 (first at 6, between two equal neighbours).
	if s.Excess != (LocalExtreme{Value: 5, Amount: 0, Defined: true}) || s.Deficit != (LocalExtreme{Value: 6, Amount: 0, Defined: true}) {
		t.Errorf("oracle excess %+v deficit %+v", s.Excess, s.Deficit)
	}
}

func TestCountDistributionHandComputed(t *testing.T) {
	p := func(truth int, pred *int) CountPrediction { return CountPrediction{Truth: truth, Pred: pred} }
	preds := []CountPrediction{
		p(10, intp(10)), // exact
		p(10, intp(11)), // within 10% (|1| ≤ 1)
		p(10, intp(12)), // outside
		p(5, intp(6)),   // outside: 10% of 5 is 0.5
		p(20, intp(18)), // within: |2| ≤ 2
		p(50, intp(55)), // within: |5| ≤ 5
		p(50, intp(56)), // outside
		p(20, nil),      // abstention
	}
	s := CountDistribution(preds)
	if s.Trials != 8 || s.Answered != 7 || !approx(s.EM, 1.0/8) || !approx(s.Acc10, 4.0/8) || !approx(s.Coverage, 7.0/8) {
		t.Errorf("trials %d answered %d EM %v Acc10 %v Coverage %v", s.Trials, s.Answered, s.EM, s.Acc10, s.Coverage)
	}
	// Errors of answered: 0,1,2,1,2,5,6 → MAE 17/7, RMSE √(71/7).
	if !approx(val(s.MAE), 17.0/7) || !approx(val(s.RMSE), math.Sqrt(71.0/7)) {
		t.Errorf("MAE %v RMSE %v", val(s.MAE), val(s.RMSE))
	}
	// Seven distinct predictions, once each; the abstention is an 8th
	// outcome: PP = 8 pooled, 7 answered-only.
	if s.Support != 7 || !approx(s.Perplexity, 8) || !approx(val(s.PerplexityAnswered), 7) {
		t.Errorf("|S| %d PP %v PPans %v", s.Support, s.Perplexity, val(s.PerplexityAnswered))
	}
	byN := map[int]CardinalityStats{}
	for _, c := range s.ByCardinality {
		byN[c.N] = c
	}
	if c := byN[10]; c.Trials != 3 || c.Correct != 1 || !approx(c.EM, 1.0/3) || c.Coverage != 1 {
		t.Errorf("n=10 %+v", c)
	}
	if c := byN[20]; c.Trials != 2 || c.Answered != 1 || c.EM != 0 || c.Coverage != 0.5 {
		t.Errorf("n=20 %+v", c)
	}
	if z := CountDistribution(nil); z.EM != 0 || z.Perplexity != 0 || z.Excess.Defined {
		t.Errorf("empty %+v", z)
	}
}

// TestLocalExtremes checks §5.2's definitions on a crafted histogram:
// N_10 = 5, N_11 = 1, N_12 = 6, N_20 = 3.
//
//	k=10: L=0, R=max(1,6)=6 → excess −1, deficit min(0,6)−5 = −5
//	k=11: L=5, R=6           → excess −5, deficit 5−1 = 4  (a valley)
//	k=12: L=max(1,5)=5, R=0  → excess 1,  deficit −6
//	k=20: L=R=0              → excess 3,  deficit −3        (isolated peak)
func TestLocalExtremes(t *testing.T) {
	var preds []CountPrediction
	for k, n := range map[int]int{10: 5, 11: 1, 12: 6, 20: 3} {
		for range n {
			preds = append(preds, CountPrediction{Truth: 10, Pred: intp(k)})
		}
	}
	s := CountDistribution(preds)
	if s.Excess != (LocalExtreme{Value: 20, Amount: 3, Defined: true}) {
		t.Errorf("excess %+v", s.Excess)
	}
	if s.Deficit != (LocalExtreme{Value: 11, Amount: 4, Defined: true}) {
		t.Errorf("deficit %+v", s.Deficit)
	}
	// The ±2 reach: a gap of one empty value still sees the far neighbour.
	preds = preds[:0]
	for k, n := range map[int]int{30: 2, 32: 9} {
		for range n {
			preds = append(preds, CountPrediction{Truth: 30, Pred: intp(k)})
		}
	}
	s = CountDistribution(preds)
	if s.Excess != (LocalExtreme{Value: 32, Amount: 7, Defined: true}) {
		t.Errorf("excess over a gap %+v", s.Excess)
	}
}

// TestPerplexityWithAbstentions pins the reading of PP that Table 2's
// VideoLLaMA2-7B row implies: 2,600 videos, 1.2% Coverage (31 answers),
// |S| = 5, PP = 1.1. Pooling abstentions as one outcome gives ≈ 1.1 for any
// split of the 31 answers; answered-only PP could not go below 1.75 (27,1,1,1,1 gives 1.757).
func TestPerplexityWithAbstentions(t *testing.T) {
	for _, split := range [][]int{{27, 1, 1, 1, 1}, {7, 6, 6, 6, 6}} {
		var preds []CountPrediction
		for v, n := range split {
			for range n {
				preds = append(preds, CountPrediction{Truth: 5, Pred: intp(5 + v)})
			}
		}
		for len(preds) < 2600 {
			preds = append(preds, CountPrediction{Truth: 20})
		}
		s := CountDistribution(preds)
		if s.Support != 5 || math.Round(s.Coverage*1000)/10 != 1.2 {
			t.Fatalf("|S| %d coverage %v", s.Support, s.Coverage)
		}
		if math.Round(s.Perplexity*10)/10 != 1.1 {
			t.Errorf("split %v: PP %v, want ≈ 1.1", split, s.Perplexity)
		}
		if val(s.PerplexityAnswered) < 1.75 {
			t.Errorf("split %v: answered-only PP %v", split, val(s.PerplexityAnswered))
		}
	}
}

// TestPerplexityDeterministic: the same predictions give bit-identical
// PP on every call (the histogram is a map; its order must not leak into
// the float sum).
func TestPerplexityDeterministic(t *testing.T) {
	var preds []CountPrediction
	for i := range 200 {
		v := (i*7919)%37 + 3
		preds = append(preds, CountPrediction{Truth: 20, Pred: &v})
	}
	first := CountDistribution(preds)
	for range 50 {
		s := CountDistribution(preds)
		if s.Perplexity != first.Perplexity || val(s.PerplexityAnswered) != val(first.PerplexityAnswered) {
			t.Fatalf("PP %v then %v", first.Perplexity, s.Perplexity)
		}
	}
}

// val is a measure's value, NaN when it is undefined (nil), so that no
// comparison with a number passes for an undefined measure.
func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// TestNothingAnswered: with no answered trial MAE, RMSE and the
// answered-only PP are undefined (nil, JSON null), not 0, which would read
// as perfect; EM and Coverage are 0 and PP pools the abstentions.
func TestNothingAnswered(t *testing.T) {
	s := CountDistribution([]CountPrediction{{Truth: 5}, {Truth: 7}})
	if s.MAE != nil || s.RMSE != nil || s.PerplexityAnswered != nil {
		t.Errorf("nothing answered: MAE %v RMSE %v PP answered %v, want nil", s.MAE, s.RMSE, s.PerplexityAnswered)
	}
	if s.Trials != 2 || s.Answered != 0 || s.EM != 0 || s.Coverage != 0 || s.Perplexity != 1 || s.Excess.Defined {
		t.Errorf("nothing answered: %+v", s)
	}
}
