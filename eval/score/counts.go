package score

import (
	"math"
	"sort"
)

// CountPrediction is one (true count, predicted count) outcome; Pred is nil
// when no integer could be extracted (CountVideoBench §5.1's NaN: refusals,
// "many", ambiguous answers).
type CountPrediction struct {
	Truth int  `json:"truth"`
	Pred  *int `json:"pred"`
}

// LocalExtreme is the largest local excess or deficit of a prediction
// histogram and the predicted value where it occurs. Defined is false when
// nothing was answered.
type LocalExtreme struct {
	Value   int  `json:"value"`
	Amount  int  `json:"amount"`
	Defined bool `json:"defined"`
}

// CardinalityStats are EM and Coverage at one true count (CountVideoBench
// §6.2, Figs. 3–4).
type CardinalityStats struct {
	N        int     `json:"n"`
	Trials   int     `json:"trials"`
	Answered int     `json:"answered"`
	Correct  int     `json:"correct"`
	EM       float64 `json:"em"`
	Coverage float64 `json:"coverage"`
}

// CountStats are CountVideoBench's metrics (§5.2, Table 2) over a set of
// predictions.
type CountStats struct {
	Trials   int `json:"trials"`
	Answered int `json:"answered"`
	// EM = #(ŷ = n)/Trials and Acc10 = #(|ŷ − n| ≤ 0.1·n)/Trials: an
	// abstention is a wrong answer (VideoLLaMA2-7B's EM is 0.1% at 1.2%
	// Coverage, so EM's denominator is every video).
	EM       float64 `json:"em"`
	Acc10    float64 `json:"acc10"`
	Coverage float64 `json:"coverage"` // Answered/Trials
	// MAE and RMSE are over answered trials only (§6.1); nil (JSON null)
	// when none was answered: there is no error to average, and 0 would
	// read as perfect.
	MAE  *float64 `json:"mae"`
	RMSE *float64 `json:"rmse"`
	// Support is |S|, the number of distinct predicted integers.
	Support int `json:"support"`
	// Perplexity is PP = exp(H) of the response distribution with every
	// abstention pooled into one extra outcome; PerplexityAnswered is the
	// same over answered predictions only (nil when none was answered:
	// no distribution). They agree when Coverage = 1.
	Perplexity         float64            `json:"perplexity"`
	PerplexityAnswered *float64           `json:"perplexity_answered"`
	Excess             LocalExtreme       `json:"excess"`
	Deficit            LocalExtreme       `json:"deficit"`
	ByCardinality      []CardinalityStats `json:"by_cardinality"`
}

// CountDistribution computes CountStats; see the package doc for the
// formulas and the choices the paper leaves open.
func CountDistribution(preds []CountPrediction) CountStats {
	var s CountStats
	hist := map[int]int{}
	byN := map[int]*CardinalityStats{}
	var correct, within int
	var absSum, sqSum float64
	for _, p := range preds {
		s.Trials++
		c := byN[p.Truth]
		if c == nil {
			c = &CardinalityStats{N: p.Truth}
			byN[p.Truth] = c
		}
		c.Trials++
		if p.Pred == nil {
			continue
		}
		y := *p.Pred
		s.Answered++
		c.Answered++
		hist[y]++
		d := float64(y) - float64(p.Truth)
		absSum += math.Abs(d)
		sqSum += d * d
		if y == p.Truth {
			correct++
			c.Correct++
		}
		// |ŷ − n| ≤ 0.1·n in integers (10·|ŷ − n| ≤ n, the first test
		// guarding the product against overflow), so 10% of n is never
		// misjudged by rounding: ±1 at n = 10, exact only at n ≤ 9.
		if dev, n := absInt(y-p.Truth), absInt(p.Truth); dev <= n && 10*dev <= n {
			within++
		}
	}
	if s.Trials > 0 {
		t := float64(s.Trials)
		s.EM, s.Acc10, s.Coverage = float64(correct)/t, float64(within)/t, float64(s.Answered)/t
	}
	if s.Answered > 0 {
		a := float64(s.Answered)
		mae, rmse := absSum/a, math.Sqrt(sqSum/a)
		s.MAE, s.RMSE = &mae, &rmse
	}
	s.Support = len(hist)
	// The entropy is summed in a fixed order (by predicted value), not the
	// map's: a different order changes the last bits of PP between runs.
	values := make([]int, 0, len(hist))
	for k := range hist {
		values = append(values, k)
	}
	sort.Ints(values)
	counts := make([]int, 0, len(hist)+1)
	for _, k := range values {
		counts = append(counts, hist[k])
	}
	if s.Answered > 0 {
		pa := perplexity(counts)
		s.PerplexityAnswered = &pa
	}
	if abstained := s.Trials - s.Answered; abstained > 0 {
		counts = append(counts, abstained)
	}
	s.Perplexity = perplexity(counts)
	s.Excess, s.Deficit = localExtremes(hist)

	ns := make([]int, 0, len(byN))
	for n := range byN {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	for _, n := range ns {
		c := *byN[n]
		c.EM = float64(c.Correct) / float64(c.Trials)
		c.Coverage = float64(c.Answered) / float64(c.Trials)
		s.ByCardinality = append(s.ByCardinality, c)
	}
	return s
}

// perplexity is exp(−Σ p ln p) of a histogram; 0 for an empty one (no
// distribution), 1 for a single outcome.
func perplexity(counts []int) float64 {
	total := 0
	for _, c := range counts {
		total += c
	}
	if total == 0 {
		return 0
	}
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(total)
			h -= p * math.Log(p)
		}
	}
	return math.Exp(h)
}

// localExtremes implements §5.2: with N_k the number of times k is
// predicted (0 off the support), L_k = max(N_{k−1}, N_{k−2}) and
// R_k = max(N_{k+1}, N_{k+2}), the local excess at k is N_k − max(L_k, R_k)
// and the local deficit min(L_k, R_k) − N_k. Both are maximised over the
// support (values predicted at least once); ties go to the smaller value.
// The deficit is reported as this positive amount; the paper's prose writes
// the same quantity with a minus sign ("−114 predictions below its flanking
// peaks").
func localExtremes(hist map[int]int) (excess, deficit LocalExtreme) {
	ks := make([]int, 0, len(hist))
	for k := range hist {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	for _, k := range ks {
		nk := hist[k]
		l := max(hist[k-1], hist[k-2])
		r := max(hist[k+1], hist[k+2])
		if e := nk - max(l, r); !excess.Defined || e > excess.Amount {
			excess = LocalExtreme{Value: k, Amount: e, Defined: true}
		}
		if d := min(l, r) - nk; !deficit.Defined || d > deficit.Amount {
			deficit = LocalExtreme{Value: k, Amount: d, Defined: true}
		}
	}
	return excess, deficit
}

// TopShare is the fraction of items whose true count is among the k most
// frequent true counts (CountVideoBench §3 uses k = 3: 3/26 ≈ 11.5% on a
// uniform design over 26 cardinalities). 0 for no items or k ≤ 0.
func TopShare(truths []int, k int) float64 {
	if len(truths) == 0 || k <= 0 {
		return 0
	}
	freq := map[int]int{}
	for _, n := range truths {
		freq[n]++
	}
	counts := make([]int, 0, len(freq))
	for _, c := range freq {
		counts = append(counts, c)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(counts)))
	top := 0
	for i := 0; i < k && i < len(counts); i++ {
		top += counts[i]
	}
	return float64(top) / float64(len(truths))
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
