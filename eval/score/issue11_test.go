package score

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/parse"
)

// The hand case: blinking N = 2 at 0.5 Hz (δ = 1 s), on-pulses at
// 10.0 and 12.0 s. A correct ledger that also logs each turn-off:
//
//	00:10.0 on · 00:10.9 off · 00:12.0 on · 00:12.9 off · Final answer: 2
//
// Before issue 11: M = 4, K = 2 (the on lines), P = 0.5, R = 1,
// F1 = 2·2/(4+2) = 0.67 < 0.80 → accidental correctness. Now the off lines
// are excluded: M = 2, K = 2, P = R = F1 = 1, VOR = 1 → faithful and
// correct, ACR 0.
const blinkOffReply = `00:10.0 — the light turns on — running count 1
00:10.9 — the light turns off — running count 1
00:12.0 — the light turns on — running count 2
00:12.9 — the light turns off — running count 2
Final answer: 2`

func TestBlinkOffLinesNotReportedEvents(t *testing.T) {
	tr := mkTrace("blinking", 0.5, []float64{10, 12}, nil, nil)
	res := parse.Parse(blinkOffReply, "blinking")
	reps := FromParsed(res.Events)
	// The same reports as stored before the Excluded field existed: the
	// rule is re-derived from the phase ("after": "off").
	stored := make([]Report, len(reps))
	for i, r := range reps {
		stored[i] = Report{T: r.T, Attrs: r.Attrs}
	}
	for name, rs := range map[string][]Report{"parsed": reps, "stored": stored} {
		s, err := ScoreTrial(tr, res.Count, rs, RateTolerance)
		if err != nil {
			t.Fatal(err)
		}
		if s.M != 2 || s.K != 2 || s.Precision != 1 || s.Recall != 1 || s.F1 != 1 || s.VOR != 1 || !s.Correct {
			t.Errorf("%s: M=%d K=%d P=%v R=%v F1=%v VOR=%v correct=%v", name, s.M, s.K, s.Precision, s.Recall, s.F1, s.VOR, s.Correct)
		}
		if s.Excluded != 2 || !reflect.DeepEqual(s.ExcludedReports, []int{1, 3}) || !samePairs(s.Pairs, [][2]int{{0, 0}, {1, 2}}) {
			t.Errorf("%s: excluded %d %v pairs %v", name, s.Excluded, s.ExcludedReports, pairIdx(s.Pairs))
		}
		if s.Classes != (Classes{Matched: 2}) || s.Accidental() || s.Outcome() != OutcomeFaithfulCorrect {
			t.Errorf("%s: classes %+v accidental %v outcome %s", name, s.Classes, s.Accidental(), s.Outcome())
		}
	}
	// Scored as every line an event (the old rule), the same reply is the
	// paper's accidental correctness: M = 4, P = 0.5, F1 = 2/3.
	var all []Report
	for _, e := range res.Events {
		all = append(all, Report{T: e.T})
	}
	s, _ := ScoreTrial(tr, res.Count, all, RateTolerance)
	if s.M != 4 || s.K != 2 || s.Precision != 0.5 || !approx(s.F1, 2.0/3) || s.Outcome() != OutcomeAccidentalCorrect {
		t.Errorf("all lines: M=%d K=%d P=%v F1=%v outcome %s", s.M, s.K, s.Precision, s.F1, s.Outcome())
	}
}

func TestExclusion(t *testing.T) {
	cases := []struct {
		domain string
		r      Report
		want   string
	}{
		{"blinking", Report{Attrs: map[string]string{"after": "off"}}, parse.ExcludedOffPhase},
		{"blinking", Report{Attrs: map[string]string{"After": "OFF"}}, parse.ExcludedOffPhase},
		{"blinking", Report{Attrs: map[string]string{"after": "on"}}, ""},
		{"state_machine", Report{Attrs: map[string]string{"from": "B", "to": "B"}}, parse.ExcludedNoChange},
		{"state_machine", Report{Attrs: map[string]string{"from": "B", "to": "C"}}, ""},
		{"state_machine", Report{Attrs: map[string]string{"after": "off"}}, ""},
		{"bounce_ball", Report{Attrs: map[string]string{"after": "off", "wall": "left"}}, ""},
		{"bounce_ball", Report{Excluded: "custom"}, "custom"},
		{"objects", Report{}, ""},
	}
	for _, c := range cases {
		if got := Exclusion(c.domain, c.r); got != c.want {
			t.Errorf("Exclusion(%s, %+v) = %q, want %q", c.domain, c.r, got, c.want)
		}
	}
}

// TestExcludedEverywhere: a state_machine "B → B" line, an excluded line
// in an N = 0 control and in a static-object clip are never reported
// events.
func TestExcludedEverywhere(t *testing.T) {
	// state_machine N = 2 at 1 Hz (δ = 0.5): A→B at 2, B→C at 3. The
	// reply lists 2.0 A→B, 2.5 B→B, 3.0 B→C: M = 2, K = 2, F1 = 1.
	tr := mkTrace("state_machine", 1, []float64{2, 3}, []string{"B", "C"}, []map[string]string{{"from": "A", "to": "B"}, {"from": "B", "to": "C"}})
	res := parse.Parse("00:02.0 — A → B\n00:02.5 — B → B\n00:03.0 — B → C\nFinal count: 2", "state_machine")
	s, err := ScoreTrial(tr, res.Count, FromParsed(res.Events), RateTolerance)
	if err != nil {
		t.Fatal(err)
	}
	if s.M != 2 || s.K != 2 || s.F1 != 1 || s.Excluded != 1 || !samePairs(s.Pairs, [][2]int{{0, 0}, {1, 2}}) {
		t.Errorf("state_machine: M=%d K=%d F1=%v excluded=%d pairs %v", s.M, s.K, s.F1, s.Excluded, pairIdx(s.Pairs))
	}
	// An N = 0 blinking control with one "off" line: nothing hallucinated.
	ctrl := mkTrace("blinking", 1, nil, nil, nil)
	s, _ = ScoreTrial(ctrl, intp(0), []Report{{T: 5, Attrs: map[string]string{"after": "off"}}}, RateTolerance)
	if s.M != 0 || s.Classes != (Classes{}) || s.Excluded != 1 || s.Outcome() != OutcomeControl {
		t.Errorf("control: %+v", s)
	}
}

// TestDisplacedNarrowRule: a pair in a gap is displaced only within 2δ.
func TestDisplacedNarrowRule(t *testing.T) {
	cases := []struct {
		name      string
		f         float64
		tol       Tolerance
		truth     []float64
		rep       []float64
		displaced [][2]int
		within    float64
	}{
		// The far case: bounce_ball at 1 Hz (δ = 0.5 s), truths 2,
		// 3, 4; reports 2.0, 3.0 match; truth 4 is missed and a report
		// at 14.0 is 10 s away: a hallucination, not a displaced event.
		{"hallucination 10 s from a miss", 1, RateTolerance, []float64{2, 3, 4}, []float64{2.0, 3.0, 14.0}, [][2]int{}, 1},
		// 0.5 Hz (δ = 1 s, 2δ = 1/F = 2 s): truths 4, 6; reports 4.2
		// (matches 4), 7.9 (1.9 s after 6: displaced), and at 8.1 (2.1 s
		// after 6: not).
		{"within one period", 0.5, RateTolerance, []float64{4, 6}, []float64{4.2, 7.9}, [][2]int{{1, 1}}, 2},
		{"just past one period", 0.5, RateTolerance, []float64{4, 6}, []float64{4.2, 8.1}, [][2]int{}, 2},
		// Fixed T = 0.25 s: window 2T = 0.5 s. Truths 2, 3 at 2 Hz; report
		// 2.0 matches 2; 3.4 is 0.4 s late (displaced), 3.6 is 0.6 s late
		// (hallucinated).
		{"fixed T, within 2T", 2, Tolerance{Seconds: 0.25}, []float64{2, 3}, []float64{2.0, 3.4}, [][2]int{{1, 1}}, 0.5},
		{"fixed T, past 2T", 2, Tolerance{Seconds: 0.25}, []float64{2, 3}, []float64{2.0, 3.6}, [][2]int{}, 0.5},
		// A report before the first event: 1.3 s early at 1 Hz is past
		// 2δ = 1 s; 0.8 s early is displaced.
		{"early, far", 1, RateTolerance, []float64{5, 6}, []float64{3.7, 6.0}, [][2]int{}, 1},
		{"early, near", 1, RateTolerance, []float64{5, 6}, []float64{4.2, 6.0}, [][2]int{{0, 0}}, 1},
		// Two misses and two reports in one gap, paired in order within
		// 2δ. 0.5 Hz (δ = 1, 2δ = 2); truths 2, 4, 6, 8; reports 2.0 and
		// 8.0 match (2.5 and 7.5 are as close to 2 and 8, but farther);
		// the gap holds truths 4, 6 and reports 2.5, 7.5, each 1.5 s from
		// its partner: 4↔2.5 and 6↔7.5.
		{"two in one gap", 0.5, RateTolerance, []float64{2, 4, 6, 8}, []float64{2.0, 2.5, 7.5, 8.0}, [][2]int{{1, 1}, {2, 2}}, 2},
	}
	for _, c := range cases {
		tr := mkTrace("bounce_ball", c.f, c.truth, nil, nil)
		var reps []Report
		for _, r := range c.rep {
			reps = append(reps, Report{T: r})
		}
		s, err := ScoreTrial(tr, intp(len(c.truth)), reps, c.tol)
		if err != nil {
			t.Fatal(err)
		}
		if !samePairs(s.Displaced, c.displaced) || s.Classes.Displaced != len(c.displaced) || !approx(s.DisplacedWithin, c.within) {
			t.Errorf("%s: displaced %v (within %v), want %v (within %v)", c.name, pairIdx(s.Displaced), s.DisplacedWithin, c.displaced, c.within)
		}
		for _, p := range s.Displaced {
			if d := math.Abs(p.Deviation); d <= s.Tolerance || d > s.DisplacedWithin+timeSlack {
				t.Errorf("%s: displaced pair %+v outside (δ, 2δ]", c.name, p)
			}
		}
	}
	if !strings.Contains(DisplacedRule, "2δ") || !strings.Contains(DisplacedRule, "1/F") {
		t.Errorf("DisplacedRule does not state the window: %q", DisplacedRule)
	}
}

// TestAlignmentTable: bounce_ball at 1 Hz (δ = 0.5, 2δ = 1); truths 2
// (left), 3 (right), 4 (top), 9 (bottom). Reports: 2.1 left (matched),
// 3.2 top (matched, wrong wall), 4.8 (displaced: 0.8 s after 4), 20.0
// (hallucinated), and an excluded line at 5.0 (the trace is bounce_ball
// but the report carries the parser's reason). Truth 9 is missed.
func TestAlignmentTable(t *testing.T) {
	walls := []string{"left", "right", "top", "bottom"}
	attrs := make([]map[string]string, 4)
	for i, w := range walls {
		attrs[i] = map[string]string{"wall": w}
	}
	tr := mkTrace("bounce_ball", 1, []float64{2, 3, 4, 9}, walls, attrs)
	reps := []Report{
		{T: 20.0},
		{T: 2.1, Attrs: map[string]string{"wall": "left"}},
		{T: 3.2, Attrs: map[string]string{"wall": "top"}},
		{T: 4.8},
		{T: 5.0, Excluded: "custom"},
	}
	s, err := ScoreTrial(tr, intp(4), reps, RateTolerance)
	if err != nil {
		t.Fatal(err)
	}
	rows := AlignmentTable(tr, reps, s)
	type row struct {
		class         string
		truth, report int
		dev           float64 // NaN when none
	}
	want := []row{
		{RowMatched, 0, 1, 0.1},
		{RowMisidentified, 1, 2, 0.2},
		{RowDisplaced, 2, 3, 0.8},
		{RowExcluded, -1, 4, math.NaN()},
		{RowMissed, 3, -1, math.NaN()},
		{RowHallucinated, -1, 0, math.NaN()},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v", rows)
	}
	for i, w := range want {
		r := rows[i]
		devOK := (r.Deviation == nil) == math.IsNaN(w.dev) && (r.Deviation == nil || approx(*r.Deviation, w.dev))
		if r.Class != w.class || r.Truth != w.truth || r.Report != w.report || !devOK {
			t.Errorf("row %d = %+v, want %+v", i, r, w)
		}
		if (r.Truth >= 0) != (r.TruthT != nil) || (r.Report >= 0) != (r.ReportT != nil) {
			t.Errorf("row %d times %v %v do not match its sides", i, r.TruthT, r.ReportT)
		}
	}
	if rows[3].Excluded != "custom" {
		t.Errorf("excluded row reason %q", rows[3].Excluded)
	}
	// K=2, M=4 (2.1, 3.2, 4.8, 20), N=4: F1 = 4/8 = 0.5, correct count →
	// accidental correctness.
	if s.K != 2 || s.M != 4 || s.F1 != 0.5 || s.Outcome() != OutcomeAccidentalCorrect {
		t.Errorf("K=%d M=%d F1=%v outcome %s", s.K, s.M, s.F1, s.Outcome())
	}
	if AlignmentTable(nil, reps, s) != nil || AlignmentTable(tr, reps, TrialScore{CountOnly: true}) != nil {
		t.Error("nil trace or count-only trial has an alignment table")
	}
	// A score that does not belong to the reports never panics.
	if rows := AlignmentTable(tr, reps[:1], s); len(rows) == 0 {
		t.Error("mismatched score gave no rows")
	}
}

// TestOutcomes: one hand-scored trial per class; N = 5 truths at 1 Hz
// (δ = 0.5) at 1…5 s unless stated.
func TestOutcomes(t *testing.T) {
	times := []float64{1, 2, 3, 4, 5}
	at := func(ts ...float64) []Report {
		var out []Report
		for _, x := range ts {
			out = append(out, Report{T: x})
		}
		return out
	}
	cases := []struct {
		name  string
		count *int
		reps  []Report
		want  Outcome
	}{
		{"all five, count 5: F1 = 1", intp(5), at(1, 2, 3, 4, 5), OutcomeFaithfulCorrect},
		{"four of five, count 5: F1 = 8/9", intp(5), at(1, 2, 3, 4), OutcomeFaithfulCorrect},
		{"two of five, count 5: F1 = 4/7", intp(5), at(1, 2), OutcomeAccidentalCorrect},
		{"no trace, count 5: F1 = 0", intp(5), nil, OutcomeAccidentalCorrect},
		{"all five, count 4: F1 = 1", intp(4), at(1, 2, 3, 4, 5), OutcomeWrongAccumulation},
		{"four matched + one far, count 6: F1 = 0.8", intp(6), at(1, 2, 3, 4, 20), OutcomeWrongAccumulation},
		{"no trace, count 3", intp(3), nil, OutcomeNoEvidence},
		{"two right + five far, count 7: M = 7 > 5, F1 = 4/12", intp(7), at(1, 2, 10, 11, 12, 13, 14), OutcomeHallucinatedExtra},
		{"two of five, count 2: M = 2 ≤ 5, F1 = 4/7", intp(2), at(1, 2), OutcomeMissedEvents},
		{"five far, count 4: M = N = 5, F1 = 0", intp(4), at(11, 12, 13, 14, 15), OutcomeMissedEvents},
		{"no count, faithful trace", nil, at(1, 2, 3, 4, 5), OutcomeUnparseable},
		{"no count, no trace", nil, nil, OutcomeUnparseable},
	}
	tr := mkTrace("bounce_ball", 1, times, nil, nil)
	seen := map[Outcome]bool{}
	for _, c := range cases {
		s, err := ScoreTrial(tr, c.count, c.reps, RateTolerance)
		if err != nil {
			t.Fatal(err)
		}
		got := s.Outcome()
		if got != c.want {
			t.Errorf("%s: %s (F1 %v, M %d), want %s", c.name, got, s.F1, s.M, c.want)
		}
		seen[got] = true
		// The classes agree with the paper's indicators.
		if (got == OutcomeAccidentalCorrect) != s.Accidental() {
			t.Errorf("%s: accidental_correct ≠ ACR indicator", c.name)
		}
		if s.Count != nil && (got == OutcomeWrongAccumulation) != s.ReasoningFailure() {
			t.Errorf("%s: wrong_accumulation ≠ RFR indicator", c.name)
		}
	}
	for _, o := range Outcomes() {
		if !seen[o] {
			t.Errorf("no case for %s", o)
		}
		if o.Definition() == "" {
			t.Errorf("%s has no definition", o)
		}
	}
	// Not eligible.
	ctrl := mkTrace("bounce_ball", 1, nil, nil, nil)
	if s, _ := ScoreTrial(ctrl, nil, at(3), RateTolerance); s.Outcome() != OutcomeControl {
		t.Errorf("control: %s", s.Outcome())
	}
	if o := (TrialScore{CountOnly: true, N: 7}).Outcome(); o != OutcomeCountOnly || o.Definition() == "" || OutcomeControl.Definition() == "" {
		t.Errorf("count-only: %s", o)
	}
	if Outcome("bogus").Definition() != "" || len(AllOutcomes()) != 9 {
		t.Error("outcome list")
	}
}

func TestCountOutcomes(t *testing.T) {
	got := CountOutcomes(scoredTrials(t))
	// scoredTrials: bounce (correct, F1 .75 → accidental), wrong
	// accumulation, silent (no count → unparseable), over-report (correct,
	// F1 2/3 → accidental), control.
	want := map[Outcome]int{OutcomeAccidentalCorrect: 2, OutcomeWrongAccumulation: 1, OutcomeUnparseable: 1, OutcomeControl: 1}
	for _, o := range AllOutcomes() {
		if got[o] != want[o] {
			t.Errorf("%s: %d, want %d", o, got[o], want[o])
		}
	}
}

func TestSelfConsistency(t *testing.T) {
	cases := []struct {
		count, last   *int
		listed        int
		running, list Check
	}{
		{intp(3), intp(3), 3, CheckAgree, CheckAgree},
		{intp(4), intp(3), 3, CheckDisagree, CheckDisagree}, // wrong accumulation
		{intp(3), intp(2), 3, CheckDisagree, CheckAgree},    // ledger lists 3, last running count says 2
		{intp(3), nil, 3, CheckNoLedger, CheckAgree},        // no running counts
		{intp(3), nil, 0, CheckNoLedger, CheckNoLedger},     // no ledger: not a disagreement
		{nil, intp(3), 3, CheckUnparseable, CheckUnparseable},
		{nil, nil, 0, CheckNoLedger, CheckNoLedger}, // no_ledger is decided first
		{intp(0), nil, 0, CheckNoLedger, CheckNoLedger},
		{intp(2), intp(1), 0, CheckDisagree, CheckNoLedger}, // running counts on excluded lines only
	}
	for _, c := range cases {
		got := SelfConsistency(c.count, c.last, c.listed)
		if got.Running != c.running || got.Listed != c.list || got.LedgerEvents != c.listed {
			t.Errorf("SelfConsistency(%v, %v, %d) = %+v, want %s/%s", deref(c.count), deref(c.last), c.listed, got, c.running, c.list)
		}
	}
	// From a parsed reply: the blink ledger with off lines lists 2 counted
	// events, last running count 2, final answer 2 → both agree; a
	// five-line ledger ending "Final answer: 4" disagrees both ways.
	if c := ConsistencyOf(parse.Parse(blinkOffReply, "blinking")); c.Running != CheckAgree || c.Listed != CheckAgree {
		t.Errorf("blink ledger: %+v", c)
	}
	c := ConsistencyOf(parse.Parse("t=1.0: bounce (count 1)\nt=2.0: bounce (count 2)\nt=3.0: bounce (count 3)\nt=4.0: bounce (count 4)\nt=5.0: bounce (count 5)\nFinal answer: 4", "bounce_ball"))
	if c.Running != CheckDisagree || c.Listed != CheckDisagree || *c.LastRunningCount != 5 || c.LedgerEvents != 5 {
		t.Errorf("wrong accumulation: %+v", c)
	}
	if c := ConsistencyOf(parse.Parse("Final answer: 4", "bounce_ball")); c.Running != CheckNoLedger || c.Listed != CheckNoLedger {
		t.Errorf("direct answer: %+v", c)
	}
}

// TestConsistencyAggregates: ten replies — running check: 6 agree, 2
// disagree, 1 no ledger, 1 unparseable → 2/8 = 25% disagree, Wilson
// 95% [0.0715, 0.5907]; listed check: 7 agree, 1 disagree, 1 no ledger, 1
// unparseable → 1/8.
func TestConsistencyAggregates(t *testing.T) {
	var cs []Consistency
	add := func(n int, count, last *int, listed int) {
		for range n {
			cs = append(cs, SelfConsistency(count, last, listed))
		}
	}
	add(6, intp(3), intp(3), 3)
	add(1, intp(3), intp(2), 3) // running disagrees, listed agrees
	add(1, intp(4), intp(3), 3) // both disagree
	add(1, intp(3), nil, 0)     // no ledger
	add(1, nil, intp(3), 3)     // unparseable
	s := SummarizeConsistency(cs)
	if s.Trials != 10 {
		t.Fatalf("trials %d", s.Trials)
	}
	r := s.Running
	if r.Agree != 6 || r.Disagree != 2 || r.NoLedger != 1 || r.Unparseable != 1 || r.Checked != 8 || r.DisagreeRate != 0.25 {
		t.Errorf("running %+v", r)
	}
	// Wilson 2/8: p̂ = .25, z² = 3.8415; centre (.25 + .2401)/1.4802 = .3311,
	// half 1.96/1.4802·√(.0234375 + .0150061) = .2596 → [.0715, .5907].
	if math.Abs(r.Interval.Lo-0.0715) > 5e-4 || math.Abs(r.Interval.Hi-0.5907) > 5e-4 || r.Interval != WilsonInterval(2, 8, Z95) {
		t.Errorf("running interval %+v", r.Interval)
	}
	l := s.Listed
	if l.Agree != 7 || l.Disagree != 1 || l.NoLedger != 1 || l.Unparseable != 1 || l.Checked != 8 || l.DisagreeRate != 0.125 {
		t.Errorf("listed %+v", l)
	}
	if z := SummarizeConsistency(nil); z.Running.Interval != (Wilson{0, 1}) || z.Running.DisagreeRate != 0 {
		t.Errorf("empty %+v", z)
	}

	// Grouped per key; trials without a Consistency are left out.
	trials := []Trial{
		{Model: "a", Consistency: &cs[0]}, {Model: "a", Consistency: &cs[7]},
		{Model: "b", Consistency: &cs[8]}, {Model: "b"},
	}
	gs := GroupConsistency(trials, func(t Trial) string { return t.Model })
	if len(gs) != 2 || gs[0].Key != "a" || gs[0].Summary.Trials != 2 || gs[0].Summary.Running.Disagree != 1 ||
		gs[1].Key != "b" || gs[1].Summary.Trials != 1 || gs[1].Summary.Listed.NoLedger != 1 {
		t.Errorf("groups %+v", gs)
	}
	// ScoreAll carries the input's Consistency.
	tr := mkTrace("bounce_ball", 1, []float64{2}, nil, nil)
	out, err := ScoreAll([]TrialInput{{Trace: tr, Count: intp(1), Consistency: &cs[0]}}, RateTolerance)
	if err != nil || out[0].Consistency == nil || *out[0].Consistency != cs[0] {
		t.Errorf("ScoreAll consistency %+v %v", out, err)
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
