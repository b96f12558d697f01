package score

import (
	"fmt"
	"math"
	"strings"

	"github.com/tracegrid/tracegrid/domain"
	"github.com/tracegrid/tracegrid/eval/parse"
	"github.com/tracegrid/tracegrid/trace"
)

// FaithfulF1 is the trace-F1 threshold of ACR, RFR and wrong accumulation
// (low-frequency-trap §3.2 Eq. 4, Table 7).
const FaithfulF1 = 0.80

// Report is one event the model reported: its time in seconds from the
// start of the clip and the attributes it stated (keys as in the truth:
// "wall", "from", "to", "before", "after"; see truthAttrs).
type Report struct {
	T     float64           `json:"t"`
	Attrs map[string]string `json:"attrs,omitempty"`
	// Excluded is why the reported line is not an event of the clip's
	// domain (parse.ExcludedOffPhase, parse.ExcludedNoChange); "" when it
	// is, unless its attributes say otherwise (see Exclusion). Excluded
	// reports are not reported events: they are left out of M, the
	// alignment and the taxonomy.
	Excluded string `json:"excluded,omitempty"`
}

// Exclusion is why report r is not a reported event of domain: r.Excluded
// when set, else parse.ExclusionReason on its attributes (the blink phase,
// keyed "after" here, is the parser's "phase"), so that reports stored
// without the Excluded field score the same: blinking "after" = off, a
// state_machine report with from = to. "" for a counted report.
func Exclusion(dom string, r Report) string {
	if r.Excluded != "" {
		return r.Excluded
	}
	if len(r.Attrs) == 0 {
		return ""
	}
	a := map[string]string{}
	for k, v := range r.Attrs {
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "after":
			if dom == domain.Blinking {
				a["phase"] = v
			}
		case "from":
			a["from"] = v
		case "to":
			a["to"] = v
		}
	}
	return parse.ExclusionReason(dom, a)
}

// Classes counts one trial's events by the taxonomy of Table 7 (C.16).
// The counts overlap by design, as Table 8's do: Matched+Missed = N and
// Matched+Hallucinated = M; Misidentified ⊆ Matched; Displaced counts
// order-aligned (missed truth, hallucinated report) pairs, so it is at most
// min(Missed, Hallucinated). Correct matches are Matched − Misidentified.
// Merged events are never inferred (the paper assigns them only from
// explicit text, and reports zero).
type Classes struct {
	Matched           int  `json:"matched"`
	Missed            int  `json:"missed"`
	Hallucinated      int  `json:"hallucinated"`
	Displaced         int  `json:"displaced"`
	Misidentified     int  `json:"misidentified"`
	WrongAccumulation bool `json:"wrong_accumulation"`
}

// TrialScore is one clip's final-answer and trace score (§3.2 Eq. 3).
type TrialScore struct {
	N     int  `json:"n"`     // true events
	M     int  `json:"m"`     // reported events (excluded reports not counted)
	K     int  `json:"k"`     // aligned pairs
	Count *int `json:"count"` // reported final count ŷ; nil when unparseable
	// Correct is Acc = I[ŷ = N]; an unparseable answer is incorrect (§3.3).
	Correct bool `json:"correct"`
	// Precision = K/M (0 when M = 0), Recall = K/N, F1 = 2PR/(P+R) (0 when
	// M = 0 or K = 0), VOR = M/N. For N = 0 Recall, F1 and VOR are 0 and
	// Precision is 0: no report can be supported.
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	VOR       float64 `json:"vor"`
	// Eligible is N > 0 on an event clip: only such trials enter trace
	// ratios, ACR and RFR; N = 0 controls and static-object clips count
	// only in final-answer accuracy (§3.1).
	Eligible bool `json:"eligible"`
	// CountOnly marks a clip of a count-only domain (domain.Spec.CountOnly:
	// the static-object clips of CountVideoBench):
	// it has no events, so only Count and Correct are scored; M is the
	// number of reported events, K and every ratio are 0, and there are no
	// pairs and no taxonomy.
	CountOnly bool    `json:"count_only,omitempty"`
	Tolerance float64 `json:"tolerance"` // δ used, seconds; 0 for CountOnly
	// DisplacedWithin is the displaced window 2δ (one event period 1/F
	// under the rate-relative δ; 2T under a fixed T); 0 for CountOnly.
	DisplacedWithin float64 `json:"displaced_within,omitempty"`
	Pairs           []Pair  `json:"pairs"`
	// Displaced are the order-aligned pairs outside δ but within
	// DisplacedWithin behind Classes.Displaced (DisplacedRule).
	Displaced []Pair  `json:"displaced,omitempty"`
	Classes   Classes `json:"classes"`
	// Excluded counts the reports that are not events of the domain
	// (Exclusion); ExcludedReports are their indices in the reports given.
	// They are in neither M nor any pair.
	Excluded        int   `json:"excluded,omitempty"`
	ExcludedReports []int `json:"excluded_reports,omitempty"`
}

// Faithful reports whether the trace meets the F1 ≥ 0.80 criterion of
// ACR/RFR. F1 = 2K/(M+N) exactly, so a slack of 1e-12 only absorbs rounding.
func (s TrialScore) Faithful() bool { return s.F1 >= FaithfulF1-1e-12 }

// Accidental is ACR's per-trial indicator: correct count, unfaithful trace.
func (s TrialScore) Accidental() bool { return s.Eligible && s.Correct && !s.Faithful() }

// ReasoningFailure is RFR's per-trial indicator: wrong count, faithful trace.
func (s TrialScore) ReasoningFailure() bool { return s.Eligible && !s.Correct && s.Faithful() }

// ScoreTrial aligns the reported events with the trace under tol and
// computes Acc, P, R, F1, VOR and the taxonomy. count is the parsed final
// answer (nil if unparseable). It returns an error, and no score, when the
// trace's events are not strictly increasing finite times or disagree with
// N, when the tolerance is unusable for the clip, or when a report time is
// not finite (a parser bug, better surfaced than silently unmatched).
//
// A clip of a count-only domain (domain.Spec.CountOnly: the static-object
// clips, which have no events and F = 0) is scored on the count alone
// (CountOnly, never Eligible), so a rate-relative tolerance, which needs
// F > 0, does not apply to it. A trace must have an objects section exactly
// when its domain's truth is objects.
func ScoreTrial(tr *trace.Trace, count *int, reported []Report, tol Tolerance) (TrialScore, error) {
	if tr == nil {
		return TrialScore{}, fmt.Errorf("%w: nil trace", ErrTrace)
	}
	if err := tol.validate(); err != nil {
		return TrialScore{}, fmt.Errorf("trace %s: %w", tr.ID, err)
	}
	spec := domain.Of(tr.Domain)
	if objects := spec.Truth == domain.TruthObjects; objects != (tr.Objects != nil) {
		return TrialScore{}, fmt.Errorf("%w: trace %s of domain %s: an objects section is required exactly for static-object domains", ErrTrace, tr.ID, tr.Domain)
	}
	if spec.CountOnly {
		return scoreCountOnly(tr, count, reported)
	}
	if err := checkEvents(tr); err != nil {
		return TrialScore{}, err
	}
	delta := tol.Delta(tr.F)
	if tol.RateRelative && delta == 0 {
		return TrialScore{}, fmt.Errorf("%w: trace %s: rate-relative δ = 1/(2F) needs a positive, finite F, got %v", ErrTolerance, tr.ID, tr.F)
	}
	if err := checkReports(tr, reported); err != nil {
		return TrialScore{}, err
	}
	// Only counted reports are reported events; ci maps their positions
	// back to indices in reported.
	var rt []float64
	var ci, excluded []int
	for j, r := range reported {
		if Exclusion(tr.Domain, r) != "" {
			excluded = append(excluded, j)
			continue
		}
		rt = append(rt, r.T)
		ci = append(ci, j)
	}
	tt := tr.Times()

	s := TrialScore{N: tr.N, M: len(rt), Count: count, Tolerance: delta, DisplacedWithin: 2 * delta, Eligible: tr.N > 0,
		Excluded: len(excluded), ExcludedReports: excluded}
	s.Correct = count != nil && *count == tr.N
	s.Pairs = Align(tt, rt, delta)
	s.K = len(s.Pairs)
	if s.M > 0 {
		s.Precision = float64(s.K) / float64(s.M)
	}
	if s.N > 0 {
		s.Recall = float64(s.K) / float64(s.N)
		s.VOR = float64(s.M) / float64(s.N)
	}
	if s.M > 0 && s.K > 0 {
		// 2PR/(P+R) with P = K/M, R = K/N simplifies to 2K/(M+N); the
		// integer form avoids rounding at the 0.80 threshold.
		s.F1 = 2 * float64(s.K) / float64(s.M+s.N)
	}

	s.Displaced = orderAlign(tt, rt, s.Pairs, s.DisplacedWithin)
	for _, ps := range [][]Pair{s.Pairs, s.Displaced} {
		for k := range ps {
			ps[k].Report = ci[ps[k].Report]
		}
	}
	s.Classes = Classes{
		Matched:      s.K,
		Missed:       s.N - s.K,
		Hallucinated: s.M - s.K,
		Displaced:    len(s.Displaced),
	}
	for _, p := range s.Pairs {
		if misidentified(tr.Events[p.Truth], reported[p.Report].Attrs) {
			s.Classes.Misidentified++
		}
	}
	s.Classes.WrongAccumulation = s.ReasoningFailure()
	return s, nil
}

// scoreCountOnly scores a clip of a count-only domain: Correct = I[ŷ = N],
// nothing else (CountVideoBench §5.2 scores the count; the trace has no
// events to align). The reports are only counted (M), after the same
// finiteness check as event clips. A natural video is count-only here too:
// its trace, when annotations give repetition boundaries, has one event per
// repetition (or none), which the report's natural section measures with
// a fixed window rather than the synthetic tables.
func scoreCountOnly(tr *trace.Trace, count *int, reported []Report) (TrialScore, error) {
	objects := 0
	if tr.Objects != nil {
		objects = len(tr.Objects.Items)
	}
	if spec := domain.Of(tr.Domain); spec.EventType != "" {
		// A count-only domain whose clips may carry events (natural: the
		// annotated repetitions, measured in the report's own section):
		// the count is scored, the events are not.
		if tr.N < 0 || len(tr.Events) != 0 && len(tr.Events) != tr.N {
			return TrialScore{}, fmt.Errorf("%w: trace %s: n=%d but %d events", ErrTrace, tr.ID, tr.N, len(tr.Events))
		}
	} else if len(tr.Events) != 0 || tr.N < 1 || tr.Objects != nil && tr.N != objects {
		return TrialScore{}, fmt.Errorf("%w: trace %s: a static-object clip needs n ≥ 1 objects and no events, got n=%d, %d objects, %d events",
			ErrTrace, tr.ID, tr.N, objects, len(tr.Events))
	}
	if err := checkReports(tr, reported); err != nil {
		return TrialScore{}, err
	}
	s := TrialScore{N: tr.N, Count: count, Correct: count != nil && *count == tr.N, CountOnly: true}
	for j, r := range reported {
		if Exclusion(tr.Domain, r) != "" {
			s.ExcludedReports = append(s.ExcludedReports, j)
			continue
		}
		s.M++
	}
	s.Excluded = len(s.ExcludedReports)
	return s, nil
}

// checkReports rejects a non-finite report time (a parser bug, better
// surfaced than silently unmatched), excluded reports included.
func checkReports(tr *trace.Trace, reported []Report) error {
	for j, r := range reported {
		if math.IsNaN(r.T) || math.IsInf(r.T, 0) {
			return fmt.Errorf("%w: trace %s: report %d has non-finite time %v", ErrReport, tr.ID, j, r.T)
		}
	}
	return nil
}

// checkEvents verifies what scoring relies on; trace.Validate checks more
// (schema, states, spacing), which hand-built or foreign traces may lack.
func checkEvents(tr *trace.Trace) error {
	if tr.N != len(tr.Events) {
		return fmt.Errorf("%w: trace %s: n=%d but %d events", ErrTrace, tr.ID, tr.N, len(tr.Events))
	}
	for i, e := range tr.Events {
		if math.IsNaN(e.T) || math.IsInf(e.T, 0) {
			return fmt.Errorf("%w: trace %s: event %d has non-finite time %v", ErrTrace, tr.ID, i+1, e.T)
		}
		if i > 0 && e.T <= tr.Events[i-1].T {
			return fmt.Errorf("%w: trace %s: events are not sorted by time: event %d at t=%v does not follow event %d at t=%v",
				ErrTrace, tr.ID, i+1, e.T, i, tr.Events[i-1].T)
		}
	}
	return nil
}

// DisplacedRule defines a temporally displaced event as this package
// counts it, in words a report can print next to the taxonomy.
const DisplacedRule = "A displaced event is a reported event that corresponds, in order, to a true event but lies outside the matching window δ. " +
	"The matched pairs cut the true and the reported events into gaps; inside each gap the unmatched true events and unmatched reports are paired in time order " +
	"(the most pairs, then the least total deviation, as in the alignment itself) using a window of 2δ — one event period 1/F under the rate-relative δ = 1/(2F), 2T under a fixed T — " +
	"so a pair is displaced only when its deviation is more than δ and at most 2δ. Farther reports stay hallucinated and farther true events stay missed. " +
	"A displaced pair is also counted as one missed and one hallucinated event, as in the paper's Table 8."

// orderAlign finds the temporally displaced events (Table 7: the report
// corresponds to the appropriate event in the sequence but falls outside
// the tolerance; DisplacedRule). The matched pairs are monotone in time
// (alignSorted), so they cut both sequences into gaps: before the first
// pair, between consecutive pairs, after the last. Within each gap the
// unmatched truths and unmatched reports are paired by the same exact
// matcher with the window within (2δ), which respects sequence order and
// pairs as many as possible at least total distance. Every such pair is
// outside δ, otherwise K would not have been maximal (a pair inside a gap
// crosses no matched pair). Pair.Report indexes reported.
func orderAlign(truth, reported []float64, pairs []Pair, within float64) []Pair {
	if !(within > 0) {
		return nil
	}
	ti := sortedFinite(truth)
	ri := sortedFinite(reported)
	tpos := make([]int, len(truth)) // sorted position of each truth
	for k, i := range ti {
		tpos[i] = k
	}
	rpos := make([]int, len(reported))
	for k, j := range ri {
		rpos[j] = k
	}
	var out []Pair
	gap := func(t0, t1, r0, r1 int) { // sorted positions [t0,t1) × [r0,r1)
		if t1 <= t0 || r1 <= r0 {
			return
		}
		ts := make([]float64, 0, t1-t0)
		for k := t0; k < t1; k++ {
			ts = append(ts, truth[ti[k]])
		}
		rs := make([]float64, 0, r1-r0)
		for k := r0; k < r1; k++ {
			rs = append(rs, reported[ri[k]])
		}
		for _, p := range alignSorted(ts, rs, within) {
			i, j := ti[t0+p[0]], ri[r0+p[1]]
			out = append(out, Pair{Truth: i, Report: j, TruthT: truth[i], ReportT: reported[j], Deviation: reported[j] - truth[i]})
		}
	}
	t0, r0 := 0, 0
	for _, p := range pairs {
		tp, rp := tpos[p.Truth], rpos[p.Report]
		gap(t0, tp, r0, rp)
		t0, r0 = tp+1, rp+1
	}
	gap(t0, len(ti), r0, len(ri))
	return out
}

// truthAttrs lists the attributes a true event makes available: its Attrs
// ("wall" for bounce_ball, "from"/"to" for state_machine) plus "before" and
// "after" (s⁻, s⁺; the blink phase and the resulting state). Attrs win on a
// key clash.
func truthAttrs(e trace.Event) map[string]string {
	a := map[string]string{"before": e.Before, "after": e.After}
	for k, v := range e.Attrs {
		a[k] = v
	}
	return a
}

// misidentified reports whether a matched report states an attribute the
// truth makes available with a different value (Table 7). Keys and values
// compare case-insensitively after trimming; empty values and keys the
// truth lacks are "not stated" and cannot misidentify.
func misidentified(e trace.Event, stated map[string]string) bool {
	if len(stated) == 0 {
		return false
	}
	truth := truthAttrs(e)
	for k, v := range stated {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		want, ok := lookupFold(truth, strings.TrimSpace(k))
		if !ok || want == "" {
			continue
		}
		if !strings.EqualFold(v, strings.TrimSpace(want)) {
			return true
		}
	}
	return false
}

// lookupFold finds key exactly, else case-insensitively; among several
// case-variants it takes the smallest key so the result never depends on
// map order.
func lookupFold(m map[string]string, key string) (string, bool) {
	if v, ok := m[key]; ok {
		return v, true
	}
	found, best := false, ""
	for k := range m {
		if strings.EqualFold(k, key) && (!found || k < best) {
			found, best = true, k
		}
	}
	return m[best], found
}
