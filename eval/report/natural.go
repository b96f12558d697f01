package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tracegrid/tracegrid/domain"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/score"
)

// The "Natural videos" section (low-frequency-trap §7, Figure 5): exact
// match by count bin on imported natural videos, per model × condition,
// with Wilson intervals; the share exactly one away, RepCount-A's OBO and
// normalised MAE, the absolute MAE and count histograms;
// trace measures under a fixed window where a clip's annotation gives its
// repetitions; and the same model's synthetic exact match in the same
// bins.

// DefaultNaturalBins are the lower edges of the default count bins: one
// bin per count for N ≤ 6, then 7–9, 10–14, 15–19, 20–29 and 30 or more.
// The paper's Figure 5 groups the 151 TransRAC clips by count, reports
// accuracy concentrated at N ≤ 4 and finds the data above six sparse: one
// bin per count keeps the region where accuracy falls legible, and above
// six the bins widen (each about as wide, relative to its counts, as the
// synthetic grid's steps 8, 10, 12) so that each holds enough clips for a
// Wilson interval narrower than the bin's accuracy.
var DefaultNaturalBins = []int{0, 1, 2, 3, 4, 5, 6, 7, 10, 15, 20, 30}

// NaturalBinRule states the default bins and why, for the page and
// summary.json.
const NaturalBinRule = "Default count bins: one per count for N ≤ 6, then 7–9, 10–14, 15–19, 20–29, ≥ 30. " +
	"The paper's Figure 5 groups its natural clips by count, with accuracy concentrated at N ≤ 4 and sparse data above six: " +
	"single-count bins show where accuracy falls, and the wider bins above six (widths growing with N, like the synthetic grid's 8, 10, 12) " +
	"hold enough clips each for a readable Wilson interval. Set other bins with the report's natural bins option (lower edges, e.g. 0,1,2,3,4,5,6,7,10,15,20,30)."

// DefaultNaturalTolerance is the fixed matching window of the natural
// section's trace measures, in seconds, when the report's tolerance is the
// rate-relative δ = 1/(2F): a natural video's rate is not controlled, so
// there is no F. 0.5 s is one of the paper's Table 9 windows and about half
// the shortest repetition period in RepCount-A-style clips (about one
// repetition a second), so a report matches only its own repetition. A
// fixed --tolerance applies here too.
const DefaultNaturalTolerance = 0.5

// NaturalRow is one count bin of one model × condition on natural videos:
// summary.json's "natural" array. Accuracy is exact match over the scored
// trials of the bin (an unparseable answer is wrong), with its two-sided
// 95 % Wilson interval.
type NaturalRow struct {
	Model    string  `json:"model"`
	Policy   string  `json:"policy"`
	Prompt   string  `json:"prompt"`
	Bin      string  `json:"bin"`
	Trials   int     `json:"trials"`
	Correct  int     `json:"correct"`
	Accuracy float64 `json:"accuracy"`
	CILow    float64 `json:"ci_low"`
	CIHigh   float64 `json:"ci_high"`

	labels string // the condition's label mode (NaturalCondition.Labels)
}

// NaturalSection is the rest of the section (summary.json
// "natural_section"): the bins, the clips, and per model × condition the
// measures beside the rows of "natural".
type NaturalSection struct {
	// Bins are the bin labels in order ("0", "7-9", "30+"); BinRule says
	// how they were chosen.
	Bins    []string `json:"bins"`
	BinRule string   `json:"bin_rule"`
	// Tolerance is the trace measures' matching window in seconds.
	Tolerance float64 `json:"tolerance"`
	// Clips counts the natural clips evaluated (failed and not applicable
	// trials' clips too), Traced those with a trace of their repetitions;
	// TrueCounts is their count histogram, each clip once.
	Clips      int                `json:"clips"`
	Traced     int                `json:"traced"`
	TrueCounts []HistogramBin     `json:"true_counts"`
	Conditions []NaturalCondition `json:"conditions"`
	// Synthetic is each model's synthetic exact match in the same bins
	// (its event domains pooled, all frequencies), under the model's
	// baseline condition.
	Synthetic []NaturalSynthetic `json:"synthetic"`
}

// NaturalCondition is one model × condition on natural videos.
type NaturalCondition struct {
	Model  string `json:"model"`
	Policy string `json:"policy"`
	Labels string `json:"labels"`
	Prompt string `json:"prompt"`
	// Trials are the scored trials (answers, parsed or not); Failed the
	// requests that failed, NotApplicable the trials never asked (keyframes
	// or single:best on a clip annotated with its count alone). Neither is
	// in any measure. Accuracy (exact match) and its Wilson interval are
	// over the scored trials, nil (JSON null) when there are none: 0 would
	// read as measured.
	Trials        int      `json:"trials"`
	Correct       int      `json:"correct"`
	Accuracy      *float64 `json:"accuracy"`
	CILow         *float64 `json:"ci_low"`
	CIHigh        *float64 `json:"ci_high"`
	Unparseable   int      `json:"unparseable"`
	Failed        int      `json:"failed"`
	NotApplicable int      `json:"not_applicable"`
	// OneAway counts the answers exactly one away from the truth
	// (|ĉ − c| = 1, exact answers not included); OneAwayRate is over the
	// scored trials, nil when there are none. Not the field's OBO (below).
	OneAway     int      `json:"exactly_one_away"`
	OneAwayRate *float64 `json:"exactly_one_away_rate"`
	// Answered counts the trials with a count; every measure below is over
	// them and nil (JSON null) when there are none: an error over no
	// answer is undefined, and 0 would read as perfect.
	Answered int `json:"answered"`
	// MAE is the absolute mean error Σ|ĉ − c|/A, in counts.
	MAE *float64 `json:"mae_absolute"`
	// OBO is RepCount-A's off-by-one accuracy (Hu et al., TransRAC, CVPR
	// 2022): the share of answered trials with |ĉ − c| ≤ 1, exact answers
	// included.
	OBO *float64 `json:"obo"`
	// NormMAE is the MAE normalised by the true count as TransRAC reports
	// it, Σ|ĉ − c|/c over the answered trials with c > 0. A clip with
	// c = 0 has no relative error: its answers are left out and counted
	// in NormMAEExcluded; NormMAE is nil when no answered trial has c > 0.
	NormMAE         *float64 `json:"mae_normalised"`
	NormMAEExcluded int      `json:"mae_normalised_excluded"`
	// Predicted is the histogram of the answered counts.
	Predicted []HistogramBin `json:"predicted"`
	// Traced counts the scored trials on clips with a trace of their
	// repetitions and N > 0; the trace measures are their means (P = K/M,
	// 0 when M = 0; R = K/N; F1 = 2K/(M+N); VOR = M/N), reported events
	// aligned one-to-one with the repetitions' events within Tolerance;
	// nil (JSON null) when Traced = 0: a mean over no trial is no number.
	Traced    int      `json:"traced"`
	Precision *float64 `json:"precision"`
	Recall    *float64 `json:"recall"`
	F1        *float64 `json:"f1"`
	VOR       *float64 `json:"vor"`
}

// NaturalSynthetic is one model's synthetic exact match by bin.
type NaturalSynthetic struct {
	Model  string            `json:"model"`
	Policy string            `json:"policy"`
	Labels string            `json:"labels"`
	Prompt string            `json:"prompt"`
	Bins   []NaturalSynthBin `json:"bins"`
}

// NaturalSynthBin is a bin of NaturalSynthetic: the synthetic counts it
// holds and their pooled exact match.
type NaturalSynthBin struct {
	Bin      string  `json:"bin"`
	Counts   []int   `json:"counts"`
	Trials   int     `json:"trials"`
	Correct  int     `json:"correct"`
	Accuracy float64 `json:"accuracy"`
	CILow    float64 `json:"ci_low"`
	CIHigh   float64 `json:"ci_high"`
}

// ParseNaturalBins reads count bins as their lower edges, comma-separated
// and rising from 0: "0,1,2,3,4,5,6,7,10,15,20,30" is the default; the
// last bin is open ("30+").
func ParseNaturalBins(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%w: natural bins %q: %q is not a whole number ≥ 0", ErrOptions, s, strings.TrimSpace(f))
		}
		out = append(out, v)
	}
	if err := checkNaturalBins(out); err != nil {
		return nil, err
	}
	return out, nil
}

func checkNaturalBins(edges []int) error {
	if len(edges) == 0 || edges[0] != 0 {
		return fmt.Errorf("%w: natural bins %v: the first lower edge must be 0, so that every count has a bin", ErrOptions, edges)
	}
	for i := 1; i < len(edges); i++ {
		if edges[i] <= edges[i-1] {
			return fmt.Errorf("%w: natural bins %v: lower edges must rise", ErrOptions, edges)
		}
	}
	return nil
}

// naturalBinLabels names the bins of lower edges edges: "3", "7-9", "30+".
func naturalBinLabels(edges []int) []string {
	out := make([]string, len(edges))
	for i, lo := range edges {
		switch {
		case i == len(edges)-1:
			out[i] = itoa(lo) + "+"
		case edges[i+1]-1 == lo:
			out[i] = itoa(lo)
		default:
			out[i] = itoa(lo) + "-" + itoa(edges[i+1]-1)
		}
	}
	return out
}

// naturalBin is the index of the bin that holds n.
func naturalBin(edges []int, n int) int {
	return max(0, sort.Search(len(edges), func(i int) bool { return edges[i] > n })-1)
}

// naturalDomain reports whether a domain's clips are imported videos (a
// registered domain without a scene: natural): they have the Natural
// videos section, not the CountVideoBench one.
func naturalDomain(d string) bool {
	s, ok := domain.Lookup(d)
	return ok && !s.Scene
}

// naturalTolerance is the section's matching window: the report's when it
// is fixed, else DefaultNaturalTolerance.
func naturalTolerance(tol score.Tolerance) float64 {
	if !tol.RateRelative && tol.Seconds > 0 {
		return tol.Seconds
	}
	return DefaultNaturalTolerance
}

// buildNatural fills Natural and NaturalSection from the natural-domain
// trials; a study without any leaves both empty (nothing changes in the
// report's output).
func buildNatural(r *Report, in *input) error {
	edges := in.naturalBins
	if edges == nil {
		edges = DefaultNaturalBins
	}
	if err := checkNaturalBins(edges); err != nil {
		return err
	}
	labels := naturalBinLabels(edges)
	tol := naturalTolerance(in.tol)
	sec := &NaturalSection{Bins: labels, BinRule: NaturalBinRule, Tolerance: tol, TrueCounts: []HistogramBin{}}
	if !slices.Equal(edges, DefaultNaturalBins) {
		sec.BinRule = "Count bins set for this report (lower edges " + joinInts(edges) + "); the default is one per count for N ≤ 6, then 7–9, 10–14, 15–19, 20–29, ≥ 30 (see docs/natural.md)."
	}
	clips := map[string]*clipTruth{}
	note := func(t *results.Trial, traced bool) {
		c := clips[t.Clip]
		if c == nil {
			c = &clipTruth{n: t.N}
			clips[t.Clip] = c
		}
		c.traced = c.traced || traced
	}
	found := false
	r.eachCondition(func(mi ModelInfo, c Condition) {
		for _, d := range mi.Domains {
			if !naturalDomain(d) {
				continue
			}
			k := rowKey{mi.Model, c, d}
			g, f, na := in.groups[k], in.failed[k], in.notApplicable[k]
			for _, t := range f {
				note(t, false)
			}
			for _, t := range na {
				note(t, false)
			}
			if len(g) == 0 && len(f) == 0 && len(na) == 0 {
				continue
			}
			found = true
			cond, rows := naturalCondition(k, g, edges, labels, tol)
			cond.Failed, cond.NotApplicable = len(f), len(na)
			for _, s := range g {
				note(s.src, len(s.input.Trace.Events) > 0)
			}
			sec.Conditions = append(sec.Conditions, cond)
			r.Natural = append(r.Natural, rows...)
		}
	})
	if !found {
		return nil
	}
	hist := map[int]int{}
	for _, c := range clips {
		hist[c.n]++
		if c.traced {
			sec.Traced++
		}
	}
	sec.Clips = len(clips)
	for v, n := range hist {
		sec.TrueCounts = append(sec.TrueCounts, HistogramBin{Value: v, Count: n})
	}
	sort.Slice(sec.TrueCounts, func(a, b int) bool { return sec.TrueCounts[a].Value < sec.TrueCounts[b].Value })
	for _, mi := range r.Models {
		if s, ok := naturalSynthetic(mi, in, edges, labels); ok {
			sec.Synthetic = append(sec.Synthetic, s)
		}
	}
	if sec.Synthetic == nil {
		sec.Synthetic = []NaturalSynthetic{}
	}
	r.NaturalSection = sec
	return nil
}

// ratio is sum/n as an optional measure (n > 0).
func ratio(sum float64, n int) *float64 {
	v := sum / float64(n)
	return &v
}

type clipTruth struct {
	n      int
	traced bool
}

// naturalCondition measures one model × condition's scored natural trials
// and splits them into count bins (every bin listed, empty ones with 0
// trials).
func naturalCondition(k rowKey, g []*scored, edges []int, labels []string, tol float64) (NaturalCondition, []NaturalRow) {
	c := NaturalCondition{Model: k.model, Policy: k.cond.Policy, Labels: k.cond.labels(), Prompt: k.cond.Prompt, Predicted: []HistogramBin{}}
	type tally struct{ trials, correct int }
	bins := make([]tally, len(edges))
	pred := map[int]int{}
	var absErr, relErr float64
	var obo, relN int
	var p, rc, f1, vor float64
	for _, s := range g {
		t := s.src
		n := t.N
		c.Trials++
		b := naturalBin(edges, n)
		bins[b].trials++
		if t.Count == nil {
			c.Unparseable++
		} else {
			y := *t.Count
			c.Answered++
			pred[y]++
			d := math.Abs(float64(y - n))
			absErr += d
			if n > 0 {
				relErr += d / float64(n)
				relN++
			} else {
				c.NormMAEExcluded++
			}
			if d == 0 {
				c.Correct++
				bins[b].correct++
			}
			if d == 1 {
				c.OneAway++
			}
			if d <= 1 {
				obo++
			}
		}
		tr := s.input.Trace
		if len(tr.Events) == 0 || tr.N == 0 {
			continue
		}
		var rep []float64
		for _, r := range s.input.Reports {
			if score.Exclusion(tr.Domain, r) == "" {
				rep = append(rep, r.T)
			}
		}
		kk := float64(len(score.Align(tr.Times(), rep, tol)))
		m, nn := float64(len(rep)), float64(tr.N)
		c.Traced++
		if m > 0 {
			p += kk / m
		}
		rc += kk / nn
		if kk > 0 {
			f1 += 2 * kk / (m + nn)
		}
		vor += m / nn
	}
	if c.Trials > 0 {
		c.Accuracy = ratio(float64(c.Correct), c.Trials)
		w := score.WilsonInterval(c.Correct, c.Trials, score.Z95)
		c.CILow, c.CIHigh = &w.Lo, &w.Hi
		c.OneAwayRate = ratio(float64(c.OneAway), c.Trials)
	}
	if c.Answered > 0 {
		c.MAE, c.OBO = ratio(absErr, c.Answered), ratio(float64(obo), c.Answered)
	}
	if relN > 0 {
		c.NormMAE = ratio(relErr, relN)
	}
	if c.Traced > 0 {
		n := c.Traced
		c.Precision, c.Recall, c.F1, c.VOR = ratio(p, n), ratio(rc, n), ratio(f1, n), ratio(vor, n)
	}
	for v, n := range pred {
		c.Predicted = append(c.Predicted, HistogramBin{Value: v, Count: n})
	}
	sort.Slice(c.Predicted, func(a, b int) bool { return c.Predicted[a].Value < c.Predicted[b].Value })
	rows := make([]NaturalRow, len(edges))
	for i, b := range bins {
		row := NaturalRow{Model: k.model, Policy: k.cond.Policy, Prompt: k.cond.Prompt, Bin: labels[i], Trials: b.trials, Correct: b.correct,
			labels: k.cond.labels()}
		if b.trials > 0 {
			row.Accuracy = float64(b.correct) / float64(b.trials)
		}
		w := score.WilsonInterval(b.correct, b.trials, score.Z95)
		row.CILow, row.CIHigh = w.Lo, w.Hi
		rows[i] = row
	}
	return c, rows
}

// naturalSynthetic is model mi's synthetic exact match in the natural
// bins, pooled over its event domains under its baseline condition.
func naturalSynthetic(mi ModelInfo, in *input, edges []int, labels []string) (NaturalSynthetic, bool) {
	c := mi.Baseline
	s := NaturalSynthetic{Model: mi.Model, Policy: c.Policy, Labels: c.labels(), Prompt: c.Prompt, Bins: make([]NaturalSynthBin, len(edges))}
	counts := make([]map[int]bool, len(edges))
	for i := range s.Bins {
		s.Bins[i] = NaturalSynthBin{Bin: labels[i], Counts: []int{}}
		counts[i] = map[int]bool{}
	}
	found := false
	for _, g := range in.eventGroupsOf(mi, c) {
		for _, sc := range g.scored {
			b := naturalBin(edges, sc.trial.N)
			s.Bins[b].Trials++
			if sc.trial.Score.Correct {
				s.Bins[b].Correct++
			}
			counts[b][sc.trial.N] = true
			found = true
		}
	}
	if !found {
		return s, false
	}
	for i := range s.Bins {
		b := &s.Bins[i]
		for n := range counts[i] {
			b.Counts = append(b.Counts, n)
		}
		sort.Ints(b.Counts)
		if b.Trials > 0 {
			b.Accuracy = float64(b.Correct) / float64(b.Trials)
		}
		w := score.WilsonInterval(b.Correct, b.Trials, score.Z95)
		b.CILow, b.CIHigh = w.Lo, w.Hi
	}
	return s, true
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = itoa(x)
	}
	return strings.Join(s, ",")
}

// naturalTables are the section's CSV tables (only when it has rows).
func (r *Report) naturalTables() []Table {
	sec := r.NaturalSection
	if sec == nil {
		return nil
	}
	bins := Table{Name: "natural_bins.csv", Header: []string{"model", "policy", "labels", "prompt", "bin", "trials", "correct", "accuracy", "ci_low", "ci_high"}}
	for _, n := range r.Natural {
		bins.Rows = append(bins.Rows, []string{n.Model, n.Policy, n.labels, n.Prompt, n.Bin, itoa(n.Trials), itoa(n.Correct), f64(n.Accuracy), f64(n.CILow), f64(n.CIHigh)})
	}
	conds := Table{Name: "natural_conditions.csv", Header: []string{"model", "policy", "labels", "prompt", "trials", "correct", "accuracy", "ci_low", "ci_high",
		"unparseable", "failed", "not_applicable", "exactly_one_away", "exactly_one_away_rate", "answered", "mae_absolute", "obo", "mae_normalised", "mae_normalised_excluded",
		"traced", "precision", "recall", "f1", "vor", "tolerance"}}
	hist := Table{Name: "natural_histogram.csv", Header: []string{"model", "policy", "labels", "prompt", "value", "count"}}
	for _, c := range sec.Conditions {
		conds.Rows = append(conds.Rows, []string{c.Model, c.Policy, c.Labels, c.Prompt, itoa(c.Trials), itoa(c.Correct), f64p(c.Accuracy), f64p(c.CILow), f64p(c.CIHigh),
			itoa(c.Unparseable), itoa(c.Failed), itoa(c.NotApplicable), itoa(c.OneAway), f64p(c.OneAwayRate), itoa(c.Answered), f64p(c.MAE),
			f64p(c.OBO), f64p(c.NormMAE), itoa(c.NormMAEExcluded), itoa(c.Traced), f64p(c.Precision), f64p(c.Recall), f64p(c.F1), f64p(c.VOR), f64(sec.Tolerance)})
		for _, h := range c.Predicted {
			hist.Rows = append(hist.Rows, []string{c.Model, c.Policy, c.Labels, c.Prompt, itoa(h.Value), itoa(h.Count)})
		}
	}
	for _, h := range sec.TrueCounts {
		hist.Rows = append(hist.Rows, []string{"(true counts)", "", "", "", itoa(h.Value), itoa(h.Count)})
	}
	syn := Table{Name: "natural_synthetic.csv", Header: []string{"model", "policy", "labels", "prompt", "bin", "counts", "trials", "correct", "accuracy", "ci_low", "ci_high"}}
	for _, s := range sec.Synthetic {
		for _, b := range s.Bins {
			syn.Rows = append(syn.Rows, []string{s.Model, s.Policy, s.Labels, s.Prompt, b.Bin, joinInts(b.Counts), itoa(b.Trials), itoa(b.Correct), f64(b.Accuracy), f64(b.CILow), f64(b.CIHigh)})
		}
	}
	return []Table{bins, conds, hist, syn}
}

// htmlNatural is the Natural videos section of the page.
type htmlNatural struct {
	Intro      string
	Bins       htmlTable
	Measures   htmlTable
	Counts     htmlTable
	BinRule    string
	Tolerance  string
	TraceNote  string
	Conditions int
}

// naturalHTML lays out the section; nil when the report has none.
func (r *Report) naturalHTML() *htmlNatural {
	sec := r.NaturalSection
	if sec == nil {
		return nil
	}
	h := &htmlNatural{BinRule: sec.BinRule, Tolerance: num(sec.Tolerance), Conditions: len(sec.Conditions),
		Intro: fmt.Sprintf("%d natural clips (%d with a trace of their repetitions), imported with tracegrid import (low-frequency-trap §7: a count-pattern check; frequency is not controlled). "+
			"Final-answer exact match by true-count bin per model × condition, with two-sided 95%% Wilson intervals; beside it, the same model's synthetic exact match in the same bins (its event domains pooled over frequencies, baseline condition).",
			sec.Clips, sec.Traced)}
	// Exact match by bin: one row per bin, one column per model ×
	// condition, then each model's synthetic column.
	head := []string{"Count bin"}
	for _, c := range sec.Conditions {
		head = append(head, c.Model+" · "+Condition{c.Policy, c.Labels, c.Prompt}.Label())
	}
	for _, s := range sec.Synthetic {
		head = append(head, s.Model+" · synthetic ("+Condition{s.Policy, s.Labels, s.Prompt}.Label()+")")
	}
	h.Bins = htmlTable{ID: "natural-bins", Head: head,
		Caption: "Exact match (%) [95% Wilson interval] (correct/trials) by true-count bin. Synthetic columns name the synthetic counts each bin holds.",
		Note:    "– : no trial in the bin."}
	cell := func(correct, trials int, lo, hi float64) string {
		if trials == 0 {
			return "–"
		}
		return fmt.Sprintf("%s [%s–%s] (%d/%d)", pct1(float64(correct)/float64(trials)), pct1(lo), pct1(hi), correct, trials)
	}
	for b, label := range sec.Bins {
		cells := []string{label}
		for ci := range sec.Conditions {
			row := r.Natural[ci*len(sec.Bins)+b]
			cells = append(cells, cell(row.Correct, row.Trials, row.CILow, row.CIHigh))
		}
		for _, s := range sec.Synthetic {
			sb := s.Bins[b]
			v := cell(sb.Correct, sb.Trials, sb.CILow, sb.CIHigh)
			if len(sb.Counts) > 0 {
				v += " N=" + joinInts(sb.Counts)
			}
			cells = append(cells, v)
		}
		h.Bins.Rows = append(h.Bins.Rows, htmlRow{Cells: cells})
	}
	h.Measures = htmlTable{ID: "natural-measures",
		Head: []string{"Model · Condition", "Trials", "EM (%) [95% CI]", "Exactly one away (%)", "OBO (%)", "MAE (counts)", "MAE / true count", "Answered", "Unparseable", "Failed", "n/a", "Traced", "Trace P (%)", "Trace R (%)", "Trace F1 (%)", "VOR"},
		Caption: "Per model × condition: exact match over the scored trials (an unparseable answer is wrong) and the share of them exactly one away from the truth; " +
			"over the answered trials, RepCount-A/TransRAC's measures (Hu et al., CVPR 2022): OBO, the share with |error| ≤ 1 (exact answers included), and the MAE normalised by the true count, mean |ĉ − c|/c " +
			"(clips with c = 0 left out; their number is in tables/natural_conditions.csv), beside the absolute MAE in counts; – : no trial to measure. " +
			"Failed requests and trials that are not applicable (keyframes or single:best on a clip annotated with its count alone) are in no measure. " +
			"Trace measures average the trials on clips with a trace of their repetitions (N > 0): reported events align one-to-one with the repetitions' events within the fixed window below."}
	for _, c := range sec.Conditions {
		tr := []string{pct1p(c.Precision), pct1p(c.Recall), pct1p(c.F1), fix2p(c.VOR)}
		em := "–"
		if c.Accuracy != nil {
			em = fmt.Sprintf("%s [%s–%s]", pct1p(c.Accuracy), pct1p(c.CILow), pct1p(c.CIHigh))
		}
		h.Measures.Rows = append(h.Measures.Rows, htmlRow{Cells: append([]string{c.Model + " · " + Condition{c.Policy, c.Labels, c.Prompt}.Label(), itoa(c.Trials), em,
			pct1p(c.OneAwayRate), pct1p(c.OBO), fix2p(c.MAE), fix2p(c.NormMAE), itoa(c.Answered), itoa(c.Unparseable), itoa(c.Failed), itoa(c.NotApplicable), itoa(c.Traced)}, tr...)})
	}
	h.Counts = htmlTable{ID: "natural-counts", Head: []string{"Count", "Clips"}, Caption: "True counts of the natural clips (each clip once); the predicted counts per condition are in tables/natural_histogram.csv."}
	for _, b := range sec.TrueCounts {
		h.Counts.Rows = append(h.Counts.Rows, htmlRow{Cells: []string{itoa(b.Value), itoa(b.Count)}})
	}
	h.TraceNote = "Trace measures use a fixed window of " + num(sec.Tolerance) + " s: a natural video's repetition rate is not controlled, so the rate-relative δ = 1/(2F) does not apply " +
		"(the default window, 0.5 s, is one of the paper's Table 9 windows and about half the shortest repetition period; a fixed --tolerance replaces it). " +
		"Each repetition's event is where tracegrid import put it (its end frame by default; docs/natural.md)."
	return h
}

// naturalNote is the Definitions entry of a report with natural videos.
const naturalNote = "Natural videos (low-frequency-trap §7) are scored on the final count in their own section only: exact match by count bin, the share exactly one away, RepCount-A's OBO and normalised MAE, the absolute MAE and, where the annotation gives every repetition's boundaries, trace measures under a fixed window. They enter no surface, boundary, region or Table 1–9 of the synthetic domains."
