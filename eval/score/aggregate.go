package score

import (
	"math"
	"sort"
)

// Z95 is the two-sided 95% normal quantile used for Wilson intervals (B.4).
const Z95 = 1.959963984540054

// Trial is one scored clip under one evaluation condition.
type Trial struct {
	Model  string     `json:"model"`
	Policy string     `json:"policy"`
	Prompt string     `json:"prompt"`
	Domain string     `json:"domain"`
	N      int        `json:"n"`
	F      float64    `json:"f"` // N = 0 controls carry the nominal 1.0 Hz
	Seed   int        `json:"seed"`
	Score  TrialScore `json:"score"`
	// Consistency is the reply's self-consistency (SelfConsistency), when
	// the caller has it; GroupConsistency skips trials without.
	Consistency *Consistency `json:"consistency,omitempty"`
}

// Wilson is a score interval for a binomial proportion, as fractions.
type Wilson struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// WilsonInterval is the Wilson score interval for k successes in n trials
// (low-frequency-trap B.4, Table 4; pass Z95 for two-sided 95%):
//
//	(p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n),  p̂ = k/n.
//
// n ≤ 0 carries no information and gives [0, 1]; k is clamped to [0, n].
func WilsonInterval(k, n int, z float64) Wilson {
	if n <= 0 {
		return Wilson{0, 1}
	}
	k = min(max(k, 0), n)
	nf := float64(n)
	p := float64(k) / nf
	z2 := z * z
	den := 1 + z2/nf
	center := (p + z2/(2*nf)) / den
	half := z / den * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return Wilson{Lo: max(0, center-half), Hi: min(1, center+half)}
}

// Totals are Table 8's event-level counts summed over eligible (N > 0)
// trials; WrongAccumulation and Videos count trials.
type Totals struct {
	TrueEvents        int `json:"true_events"`
	Reported          int `json:"reported"` // M: reported events of the domain
	Excluded          int `json:"excluded"` // reported lines that are not events of the domain
	Matched           int `json:"matched"`
	Missed            int `json:"missed"`
	Hallucinated      int `json:"hallucinated"`
	Displaced         int `json:"displaced"`
	Misidentified     int `json:"misidentified"`
	WrongAccumulation int `json:"wrong_accumulation"`
	Videos            int `json:"videos"`
}

// Summary aggregates trials as Table 1 does. EM (and its Wilson interval)
// is over all trials, N = 0 controls included; VOR, P, R, F1, ACR and RFR
// are means of per-trial values over the eligible (N > 0) trials, i.e. macro
// over videos (§3.2: "We average trace scores over eligible videos").
//
// With no eligible trial (only N = 0 controls or count-only clips, or no
// trial at all) VOR, P, R, F1, ACR and RFR are nil (JSON null): a mean over
// no trial is no number, and 0 would read as measured — for the failure
// rates ACR and RFR, as perfect.
type Summary struct {
	Trials     int      `json:"trials"`
	Correct    int      `json:"correct"`
	EM         float64  `json:"em"`
	EMInterval Wilson   `json:"em_interval"`
	VOR        *float64 `json:"vor"`
	Precision  *float64 `json:"precision"`
	Recall     *float64 `json:"recall"`
	F1         *float64 `json:"f1"`
	ACR        *float64 `json:"acr"`
	RFR        *float64 `json:"rfr"`
	Eligible   int      `json:"eligible"`
	Totals     Totals   `json:"totals"`
}

// Summarize computes a Summary; with no trials EM is 0, and with no
// eligible ones the trace means, ACR and RFR are nil.
func Summarize(trials []Trial) Summary {
	var s Summary
	var vor, p, r, f1 float64
	var acr, rfr int
	for _, t := range trials {
		sc := t.Score
		s.Trials++
		if sc.Correct {
			s.Correct++
		}
		if !sc.Eligible {
			continue
		}
		s.Eligible++
		vor += sc.VOR
		p += sc.Precision
		r += sc.Recall
		f1 += sc.F1
		if sc.Accidental() {
			acr++
		}
		if sc.ReasoningFailure() {
			rfr++
		}
		s.Totals.TrueEvents += sc.N
		s.Totals.Reported += sc.M
		s.Totals.Excluded += sc.Excluded
		s.Totals.Matched += sc.Classes.Matched
		s.Totals.Missed += sc.Classes.Missed
		s.Totals.Hallucinated += sc.Classes.Hallucinated
		s.Totals.Displaced += sc.Classes.Displaced
		s.Totals.Misidentified += sc.Classes.Misidentified
		if sc.Classes.WrongAccumulation {
			s.Totals.WrongAccumulation++
		}
		s.Totals.Videos++
	}
	if s.Trials > 0 {
		s.EM = float64(s.Correct) / float64(s.Trials)
	}
	s.EMInterval = WilsonInterval(s.Correct, s.Trials, Z95)
	if e := s.Eligible; e > 0 {
		s.VOR, s.Precision, s.Recall, s.F1 = mean(vor, e), mean(p, e), mean(r, e), mean(f1, e)
		s.ACR, s.RFR = mean(float64(acr), e), mean(float64(rfr), e)
	}
	return s
}

// mean is sum/n as an optional measure; callers pass n > 0.
func mean(sum float64, n int) *float64 {
	v := sum / float64(n)
	return &v
}

// Group is the Summary of the trials sharing one key.
type Group struct {
	Key     string  `json:"key"`
	Summary Summary `json:"summary"`
}

// GroupSummaries summarizes trials per key (e.g. by Domain for Table 1 Part
// A, by Policy or Prompt for Part C), sorted by key. Trials whose key is ""
// are left out, so a key function can also filter.
func GroupSummaries(trials []Trial, key func(Trial) string) []Group {
	by := map[string][]Trial{}
	for _, t := range trials {
		if k := key(t); k != "" {
			by[k] = append(by[k], t)
		}
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Group, len(keys))
	for i, k := range keys {
		out[i] = Group{Key: k, Summary: Summarize(by[k])}
	}
	return out
}

// Region names of Table 1 Part B.
const (
	LowCountLowFreq   = "low_count_low_freq"
	HighCountLowFreq  = "high_count_low_freq"
	LowCountHighFreq  = "low_count_high_freq"
	HighCountHighFreq = "high_count_high_freq"
)

// Regions returns the four region names in Table 1's row order.
func Regions() []string {
	return []string{LowCountLowFreq, HighCountLowFreq, LowCountHighFreq, HighCountHighFreq}
}

// Region places (n, f) in Table 1 Part B: low count N ≤ 3, high count
// N ≥ 5, low frequency F ≤ 2.0 Hz, high frequency F ≥ 2.5 Hz. The paper
// leaves N = 4 (and any F strictly between 2.0 and 2.5) out, so they get "".
// N = 0 controls (F = 1.0) fall in low_count_low_freq: the caption says final
// EM includes them, and their trace ratios are excluded anyway (Eligible).
func Region(n int, f float64) string {
	const eps = 1e-9
	if !(f > 0) || math.IsInf(f, 0) {
		return ""
	}
	var count, freq string
	switch {
	case n >= 0 && n <= 3:
		count = "low_count"
	case n >= 5:
		count = "high_count"
	default:
		return ""
	}
	switch {
	case f <= 2.0+eps:
		freq = "low_freq"
	case f >= 2.5-eps:
		freq = "high_freq"
	default:
		return ""
	}
	return count + "_" + freq
}

// SummarizeRegions is Table 1 Part B: one Group per region that has trials,
// in Regions() order.
func SummarizeRegions(trials []Trial) []Group {
	byKey := map[string]Summary{}
	for _, g := range GroupSummaries(trials, func(t Trial) string { return Region(t.N, t.F) }) {
		byKey[g.Key] = g.Summary
	}
	var out []Group
	for _, r := range Regions() {
		if s, ok := byKey[r]; ok {
			out = append(out, Group{Key: r, Summary: s})
		}
	}
	return out
}
