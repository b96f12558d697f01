package report

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/parse"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/score"
	"github.com/tracegrid/tracegrid/trace"
)

// naturalTrace is a natural clip of 10 s at 25 fps: with ends, one
// repetition per end time (each starting 1 s before it), else the count
// alone.
func naturalTrace(id string, n int, ends ...float64) *trace.Trace {
	tr := &trace.Trace{Schema: trace.Schema, ID: id, Domain: "natural", N: n, Duration: 10, FPS: 25, Width: 320, Height: 240,
		ActiveEnd: 10, Nuisance: map[string]any{}, Events: []trace.Event{},
		Natural: &trace.Natural{Video: id + ".mp4", FrameRate: 25, Frames: 250}}
	if len(ends) > 0 {
		var reps []trace.Repetition
		for _, e := range ends {
			reps = append(reps, trace.Repetition{Start: int(math.Round((e - 1) * 25)), End: int(math.Round(e * 25)), StartT: e - 1, EndT: e})
		}
		tr.Natural.EventAt, tr.Natural.Repetitions = trace.EventAtEnd, reps
		tr.Events = trace.NaturalEvents(reps, trace.EventAtEnd)
		tr.ActiveStart, tr.ActiveEnd = reps[0].StartT, reps[len(reps)-1].EndT
	}
	if err := tr.Validate(); err != nil {
		panic(err)
	}
	return tr
}

func atTimes(ts ...float64) []parse.Event {
	var out []parse.Event
	for _, t := range ts {
		out = append(out, parse.Event{T: t, Text: "repetition"})
	}
	return out
}

var (
	condNat = Condition{"fps:2", "time", "zero_shot"}
	condKey = Condition{"keyframes:0.1", "position", "natural_direct"}
	condSyn = Condition{"native:1", "time", "structured_trace"}
)

// naturalFixture: model alpha on five natural clips under fps:2 ·
// zero_shot, one failed request, a keyframes trial that is not
// applicable, and synthetic blinking trials under native:1 ·
// structured_trace (its baseline):
//
//	clip  N   trace           answer               outcome
//	c1    1   end at 2.0 s    1, event at 2.2 s    correct; K=1, M=1: P 1, R 1, F1 1, VOR 1
//	c2    2   ends 2.0, 4.0   3, events 2, 4, 6    off by one; K=2, M=3: P 2/3, R 1, F1 4/5, VOR 3/2
//	c3    3   count only      3                    correct
//	c4    8   count only      5                    |error| 3
//	c5    8   count only      no count             unparseable (wrong)
//	c6    12  count only      timeout              failed: in no measure
//	under keyframes: c1 answered 1 (correct), c3 not applicable.
//	synthetic: N=1 seeds 0, 1 correct; N=8 seed 0 correct, seed 1 answers 7.
func naturalFixture() []results.Trial {
	c1, c2 := naturalTrace("c1", 1, 2.0), naturalTrace("c2", 2, 2.0, 4.0)
	c3, c4, c5, c6 := naturalTrace("c3", 3), naturalTrace("c4", 8), naturalTrace("c5", 8), naturalTrace("c6", 12)
	out := []results.Trial{
		newTrial("alpha", condNat, c1, intp(1), atTimes(2.2)),
		newTrial("alpha", condNat, c2, intp(3), atTimes(2, 4, 6)),
		newTrial("alpha", condNat, c3, intp(3), nil),
		newTrial("alpha", condNat, c4, intp(5), nil),
		newTrial("alpha", condNat, c5, nil, nil),
	}
	fail := newTrial("alpha", condNat, c6, nil, nil)
	fail.Error, fail.ErrorKind = "timed out", results.KindTimeout
	na := newTrial("alpha", condKey, c3, nil, nil)
	na.Error, na.ErrorKind = "not applicable: count alone", results.KindNotApplicable
	out = append(out, fail, na, newTrial("alpha", condKey, c1, intp(1), nil))
	for _, c := range []struct {
		n, seed, answer int
	}{{1, 0, 1}, {1, 1, 1}, {8, 0, 8}, {8, 1, 7}} {
		tr := DemoTrace("blinking", c.n, 0.5, c.seed)
		out = append(out, newTrial("alpha", condSyn, tr, intp(c.answer), exactEvents(tr)))
	}
	return out
}

// TestNaturalSection: the section's numbers, worked by hand above, in
// summary.json, the page and the CSV tables; natural trials stay out of
// the CountVideoBench section and the synthetic tables.
func TestNaturalSection(t *testing.T) {
	r, err := Build(naturalFixture(), Options{Study: "fx"})
	if err != nil {
		t.Fatal(err)
	}
	// Every model with natural trials gets its envelope sentence.
	for _, e := range r.Reliability {
		if !strings.Contains(e.Text, "On natural videos (repetition counting), "+e.Model+": under ") {
			t.Errorf("envelope of %s lacks its natural videos: %q", e.Model, e.Text)
		}
	}
	dir := filepath.Join(t.TempDir(), "report")
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	s := loadSummary(t, dir)
	rows := find(t, s, "natural", map[string]any{"model": "alpha", "policy": "fps:2", "prompt": "zero_shot"})
	if len(rows) != len(DefaultNaturalBins) {
		t.Fatalf("%d natural rows for alpha · fps:2 · zero_shot, want one per bin (%d)", len(rows), len(DefaultNaturalBins))
	}
	keys := make([]string, 0, 9)
	for k := range rows[0] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"accuracy", "bin", "ci_high", "ci_low", "correct", "model", "policy", "prompt", "trials"}; !slices.Equal(keys, want) {
		t.Errorf("natural row keys %v, want %v", keys, want)
	}
	want := map[string][2]int{"0": {0, 0}, "1": {1, 1}, "2": {0, 1}, "3": {1, 1}, "4": {0, 0}, "5": {0, 0}, "6": {0, 0},
		"7-9": {0, 2}, "10-14": {0, 0}, "15-19": {0, 0}, "20-29": {0, 0}, "30+": {0, 0}}
	for _, row := range rows {
		w, ok := want[row["bin"].(string)]
		if !ok {
			t.Errorf("unexpected bin %v", row["bin"])
			continue
		}
		what := "bin " + row["bin"].(string)
		checkNum(t, what, row, "correct", float64(w[0]))
		checkNum(t, what, row, "trials", float64(w[1]))
		lo, hi := wilson(float64(w[0]), float64(w[1]))
		if w[1] == 0 {
			lo, hi = 0, 1
		}
		checkNum(t, what, row, "ci_low", lo)
		checkNum(t, what, row, "ci_high", hi)
		if w[1] > 0 {
			checkNum(t, what, row, "accuracy", float64(w[0])/float64(w[1]))
		}
	}
	if got := one(t, s, "natural", map[string]any{"policy": "keyframes:0.1", "bin": "1"}); got["trials"] != 1.0 || got["correct"] != 1.0 {
		t.Errorf("keyframes bin 1: %v", got)
	}
	if got := one(t, s, "natural", map[string]any{"policy": "keyframes:0.1", "bin": "3"}); got["trials"] != 0.0 {
		t.Errorf("keyframes bin 3 (its only clip not applicable): %v", got)
	}

	sec := r.NaturalSection
	if sec == nil || sec.Clips != 6 || sec.Traced != 2 || sec.Tolerance != 0.5 || len(sec.Bins) != 12 || sec.BinRule != NaturalBinRule {
		t.Fatalf("section %+v", sec)
	}
	if got := sec.TrueCounts; len(got) != 5 || got[3] != (HistogramBin{8, 2}) || got[4] != (HistogramBin{12, 1}) {
		t.Errorf("true counts %v, want 1:1 2:1 3:1 8:2 12:1", got)
	}
	var c NaturalCondition
	for _, x := range sec.Conditions {
		if x.Policy == "fps:2" {
			c = x
		}
	}
	wlo, whi := wilson(2, 5)
	if c.Trials != 5 || c.Correct != 2 || !ptrNear(c.Accuracy, 0.4) || !ptrNear(c.CILow, wlo) || !ptrNear(c.CIHigh, whi) ||
		c.Unparseable != 1 || c.Failed != 1 || c.NotApplicable != 0 || c.OneAway != 1 || !ptrNear(c.OneAwayRate, 0.2) ||
		c.Answered != 4 || !ptrNear(c.MAE, 1) || c.Traced != 2 {
		t.Errorf("condition %+v", c)
	}
	// RepCount-A's measures over the 4 answers (errors 0, 1, 0, 3 at
	// truths 1, 2, 3, 8): OBO 3/4 (|error| ≤ 1, exact included); normalised
	// MAE (0/1 + 1/2 + 0/3 + 3/8)/4 = 0.21875; no truth of 0 left out.
	if !ptrNear(c.OBO, 0.75) || !ptrNear(c.NormMAE, 0.21875) || c.NormMAEExcluded != 0 {
		t.Errorf("OBO %v, normalised MAE %v (%d left out); want 0.75, 0.21875 (0)", val(c.OBO), val(c.NormMAE), c.NormMAEExcluded)
	}
	cj := one(t, s["natural_section"].(map[string]any), "conditions", map[string]any{"policy": "fps:2"})
	for k, want := range map[string]float64{"exactly_one_away": 1, "exactly_one_away_rate": 0.2, "answered": 4, "mae_absolute": 1,
		"obo": 0.75, "mae_normalised": 0.21875, "mae_normalised_excluded": 0} {
		checkNum(t, "summary.json natural_section.conditions fps:2", cj, k, want)
	}
	for _, gone := range []string{"off_by_one", "off_by_one_rate", "mae"} {
		if _, ok := cj[gone]; ok {
			t.Errorf("summary.json natural condition still has the ambiguous %q", gone)
		}
	}
	if !ptrNear(c.Precision, (1+2.0/3)/2) || !ptrNear(c.Recall, 1) || !ptrNear(c.F1, (1+0.8)/2) || !ptrNear(c.VOR, 1.25) {
		t.Errorf("trace measures P %v R %v F1 %v VOR %v; want 5/6, 1, 0.9, 1.25", val(c.Precision), val(c.Recall), val(c.F1), val(c.VOR))
	}
	if got := c.Predicted; len(got) != 3 || got[0] != (HistogramBin{1, 1}) || got[1] != (HistogramBin{3, 2}) || got[2] != (HistogramBin{5, 1}) {
		t.Errorf("predicted %v", got)
	}
	var kf NaturalCondition
	for _, x := range sec.Conditions {
		if x.Policy == "keyframes:0.1" {
			kf = x
		}
	}
	if kf.NotApplicable != 1 || kf.Trials != 1 || kf.Correct != 1 || kf.Traced != 1 || !ptrNear(kf.Recall, 0) {
		t.Errorf("keyframes condition %+v", kf)
	}
	if len(sec.Synthetic) != 1 {
		t.Fatalf("synthetic %+v", sec.Synthetic)
	}
	syn := sec.Synthetic[0]
	if syn.Policy != "native:1" || syn.Bins[1].Trials != 2 || syn.Bins[1].Correct != 2 || !slices.Equal(syn.Bins[1].Counts, []int{1}) ||
		syn.Bins[7].Trials != 2 || syn.Bins[7].Correct != 1 || !slices.Equal(syn.Bins[7].Counts, []int{8}) || syn.Bins[3].Trials != 0 {
		t.Errorf("synthetic %+v", syn)
	}

	// Out of the CountVideoBench section and of the synthetic tables; in
	// the failure table; the model lists the domain.
	if len(r.CountVideoBench.Rows) != 0 {
		t.Errorf("natural trials in the CountVideoBench section: %+v", r.CountVideoBench.Rows)
	}
	for _, d := range r.Domains {
		if d.Domain == "natural" {
			t.Errorf("natural in Table 1: %+v", d)
		}
	}
	for _, c := range r.Surfaces {
		if c.Domain == "natural" {
			t.Errorf("natural in a surface: %+v", c)
		}
	}
	failed := false
	for _, f := range r.Failures {
		failed = failed || f.Domain == "natural" && f.Failed == 1 && f.Total == 6
	}
	if !failed {
		t.Errorf("failures %+v", r.Failures)
	}
	if len(r.Models) != 1 || !slices.Contains(r.Models[0].Domains, "natural") || r.Models[0].Baseline != condSyn {
		t.Errorf("models %+v", r.Models)
	}

	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<h2 id="natural">Natural videos</h2>`, `<a href="#natural">Natural videos</a>`, "6 natural clips (2 with a trace",
		"40.0 [", "(1/1)", "(0/2)", "fixed window of 0.5 s", "One per count for N ≤ 6"} {
		if !strings.Contains(string(page), want) && !strings.Contains(strings.ToLower(string(page)), strings.ToLower(want)) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	for _, name := range []string{"natural_bins.csv", "natural_conditions.csv", "natural_histogram.csv", "natural_synthetic.csv"} {
		if _, err := os.Stat(filepath.Join(dir, "tables", name)); err != nil {
			t.Error(err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "tables", "natural_bins.csv"))
	if !strings.Contains(string(b), "alpha,fps:2,time,zero_shot,7-9,2,0,0,0,") {
		t.Errorf("natural_bins.csv:\n%s", b)
	}
	b, _ = os.ReadFile(filepath.Join(dir, "tables", "natural_conditions.csv"))
	if !strings.Contains(string(b), ",unparseable,failed,not_applicable,exactly_one_away,exactly_one_away_rate,answered,mae_absolute,obo,mae_normalised,mae_normalised_excluded,traced,") ||
		!strings.Contains(string(b), ",1,1,0,1,0.2,4,1,0.75,0.21875,0,2,") {
		t.Errorf("natural_conditions.csv:\n%s", b)
	}
	for _, want := range []string{"<th>Exactly one away (%)</th><th>OBO (%)</th><th>MAE (counts)</th><th>MAE / true count</th>",
		"<td>20.0</td><td>75.0</td><td>1.00</td><td>0.22</td><td>4</td>"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
}

// TestNaturalEmptyAndZero: hand-worked RepCount-A measures where the true
// count is 0 (no relative error: left out of the normalised MAE, counted)
// and, for a condition with no answered trial, measures that are
// undefined: null in summary.json, empty in the CSV, "–" in the page —
// never 0, which would read as perfect.
//
//	clip  N  answer      error  |error|/N
//	z1    0  1           1      (left out)
//	z2    0  0           0      (left out)
//	z3    4  2           2      0.5
//	z4    5  no count    –      –
//
// fps:2: OBO 2/3 (errors 1, 0 ≤ 1), MAE 3/3 = 1, normalised MAE 0.5 over
// one trial, 2 left out; exactly one away 1 of 4 scored. keyframes: only
// the unparseable answer on z4.
func TestNaturalEmptyAndZero(t *testing.T) {
	z1, z2, z3, z4 := naturalTrace("z1", 0), naturalTrace("z2", 0), naturalTrace("z3", 4), naturalTrace("z4", 5)
	trials := []results.Trial{
		newTrial("alpha", condNat, z1, intp(1), nil),
		newTrial("alpha", condNat, z2, intp(0), nil),
		newTrial("alpha", condNat, z3, intp(2), nil),
		newTrial("alpha", condNat, z4, nil, nil),
		newTrial("alpha", condKey, z4, nil, nil),
	}
	r, err := Build(trials, Options{Study: "fx"})
	if err != nil {
		t.Fatal(err)
	}
	var nat, kf NaturalCondition
	for _, c := range r.NaturalSection.Conditions {
		switch c.Policy {
		case condNat.Policy:
			nat = c
		case condKey.Policy:
			kf = c
		}
	}
	if nat.Answered != 3 || !ptrNear(nat.OBO, 2.0/3) || !ptrNear(nat.MAE, 1) || !ptrNear(nat.NormMAE, 0.5) || nat.NormMAEExcluded != 2 ||
		nat.OneAway != 1 || !ptrNear(nat.OneAwayRate, 0.25) {
		t.Errorf("fps:2: answered %d, OBO %v, MAE %v, normalised %v (%d left out), one away %d (%v)",
			nat.Answered, val(nat.OBO), val(nat.MAE), val(nat.NormMAE), nat.NormMAEExcluded, nat.OneAway, val(nat.OneAwayRate))
	}
	if kf.Trials != 1 || kf.Answered != 0 || kf.MAE != nil || kf.OBO != nil || kf.NormMAE != nil || !ptrNear(kf.OneAwayRate, 0) {
		t.Errorf("keyframes (nothing answered): %+v", kf)
	}
	dir := filepath.Join(t.TempDir(), "report")
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	s := loadSummary(t, dir)
	cj := one(t, s["natural_section"].(map[string]any), "conditions", map[string]any{"policy": condKey.Policy})
	for _, k := range []string{"mae_absolute", "obo", "mae_normalised"} {
		if v, ok := cj[k]; !ok || v != nil {
			t.Errorf("summary.json keyframes %s = %v (present %v), want null", k, v, ok)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "tables", "natural_conditions.csv"))
	if !strings.Contains(string(b), "alpha,keyframes:0.1,position,natural_direct,1,0,0,") || !strings.Contains(string(b), ",0,0,0,0,0,,,,0,0,") {
		t.Errorf("natural_conditions.csv (keyframes: empty measures):\n%s", b)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	if !strings.Contains(string(page), "<td>0.0</td><td>–</td><td>–</td><td>–</td><td>0</td>") {
		t.Errorf("index.html: the keyframes row does not show – for its empty measures")
	}
	if !strings.Contains(string(page), "exactly one away 0.0%, no answer with a count") {
		t.Errorf("index.html: the envelope does not say the keyframes condition has no answer")
	}
}

func ptrNear(p *float64, want float64) bool { return p != nil && near(*p, want) }

// val is a measure's value, NaN when it is undefined.
func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// TestNaturalBins: bins are lower edges from 0 up; the labels name their
// counts; custom bins change the rows and say so.
func TestNaturalBins(t *testing.T) {
	if got := naturalBinLabels(DefaultNaturalBins); !slices.Equal(got, []string{"0", "1", "2", "3", "4", "5", "6", "7-9", "10-14", "15-19", "20-29", "30+"}) {
		t.Errorf("default labels %v", got)
	}
	for _, c := range []struct {
		n, bin int
	}{{0, 0}, {6, 6}, {7, 7}, {9, 7}, {10, 8}, {29, 10}, {30, 11}, {500, 11}} {
		if got := naturalBin(DefaultNaturalBins, c.n); got != c.bin {
			t.Errorf("bin of %d = %d, want %d", c.n, got, c.bin)
		}
	}
	edges, err := ParseNaturalBins("0, 2,5")
	if err != nil || !slices.Equal(edges, []int{0, 2, 5}) {
		t.Fatalf("%v %v", edges, err)
	}
	for _, bad := range []string{"1,2", "0,3,3", "0,x", "", "0,-1"} {
		if _, err := ParseNaturalBins(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	r, err := Build(naturalFixture(), Options{Study: "fx", NaturalBins: edges, Tolerance: score.Tolerance{Seconds: 0.1}})
	if err != nil {
		t.Fatal(err)
	}
	var bins []string
	for _, row := range r.Natural {
		if row.Policy == "fps:2" {
			bins = append(bins, row.Bin+":"+itoa(row.Correct)+"/"+itoa(row.Trials))
		}
	}
	if !slices.Equal(bins, []string{"0-1:1/1", "2-4:1/2", "5+:0/2"}) {
		t.Errorf("custom bins %v", bins)
	}
	sec := r.NaturalSection
	if !strings.Contains(sec.BinRule, "0,2,5") || sec.Tolerance != 0.1 {
		t.Errorf("rule %q, tolerance %v", sec.BinRule, sec.Tolerance)
	}
	// At 0.1 s, c1's report 0.2 s late no longer matches: P and R of c1
	// are 0, c2's stay 2/3 and 1.
	for _, c := range sec.Conditions {
		if c.Policy == "fps:2" && (!ptrNear(c.Precision, 1.0/3) || !ptrNear(c.Recall, 0.5)) {
			t.Errorf("at 0.1 s: P %v R %v, want 1/3, 1/2", val(c.Precision), val(c.Recall))
		}
	}
	b, err := json.Marshal(r)
	if err != nil || !strings.Contains(string(b), `"natural":[`) {
		t.Errorf("summary: %v", err)
	}
}

// TestNoNaturalNoSection: a study without natural videos has neither key
// in summary.json (the golden test checks the bytes).
func TestNoNaturalNoSection(t *testing.T) {
	r, err := Build(fixture(), Options{Study: "fx"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), `"natural`) || r.NaturalSection != nil {
		t.Error("a study without natural videos has a natural section")
	}
}
