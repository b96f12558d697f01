package report

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"errors"
	"html"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/parse"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/score"
	"github.com/tracegrid/tracegrid/trace"
)

// The fixture: models alpha and beta, conditions A (native:1 ·
// structured_trace) and B (fps:4 (time labels) · structured_trace), the three domains,
// N ∈ {0, 1, 2, 4} × F ∈ {0.5, 1.0} (N = 0 at 1.0 only), seeds 0–4. Every
// answer is perfect (count N, every event reported at its true time)
// except where a rule below says otherwise, so the numbers of
// alpha · A · bounce_ball are known by hand:
//
//	cell (N, F)   outcome per seed                                   correct
//	(1, 0.5)      exact                                              5/5  (+ seed 5: a failed request, excluded)
//	(2, 0.5)      seeds 0,1 count 3 with an exact trace (RFR)        3/5
//	(4, 0.5)      exact (an isolated success after the failure)      5/5
//	(1, 1.0)      seeds 2,3 count 0, no events; seed 4 a reply that   2/5
//	              could not be parsed (KindParse, Count nil)
//	(2, 1.0)      count right, no events (ACR)                       5/5
//	(4, 1.0)      exact; seed 0 names the wrong wall (misidentified) 5/5
//	(0, 1.0)      seed 4 answered without a parseable count          4/5
//
// Elsewhere: alpha · A · blinking (1, 0.5) seed 0 reports phase "off"
// (a lamp turning off is not a blinking event: excluded, so that trial has
// M = 0, one miss and an accidentally correct count); alpha · A ·
// state_machine (2, 1.0) seed 0 reports its second event 0.9 s late
// (outside δ = 0.5 s: displaced); beta · B · blinking answers N + 1
// everywhere (no reliable region).

var (
	condA = Condition{"native:1", "time", "structured_trace"}
	condB = Condition{"fps:4", "time", "structured_trace"}
)

func intp(v int) *int { return &v }

func exactEvents(tr *trace.Trace) []parse.Event {
	var evs []parse.Event
	for _, e := range tr.Events {
		evs = append(evs, parse.Event{T: e.T, Text: "event"})
	}
	return evs
}

func newTrial(model string, c Condition, tr *trace.Trace, count *int, evs []parse.Event) results.Trial {
	raw, err := json.Marshal(tr)
	if err != nil {
		panic(err)
	}
	return results.Trial{Key: results.Key{Study: "fx", Model: model, Clip: tr.ID, Policy: c.Policy, Labels: c.Labels, Prompt: c.Prompt},
		Domain: tr.Domain, N: tr.N, F: tr.F, Seed: tr.Seed, Trace: raw, Count: count, Events: evs, Attempts: 1,
		Usage: results.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}, CostUSD: 0.001, LatencyMS: 1000}
}

func fixture() []results.Trial {
	var out []results.Trial
	for _, model := range []string{"alpha", "beta"} {
		for _, c := range []Condition{condA, condB} {
			for _, d := range []string{"bounce_ball", "blinking", "state_machine"} {
				for _, n := range []int{0, 1, 2, 4} {
					fs := []float64{0.5, 1.0}
					if n == 0 {
						fs = []float64{1.0}
					}
					for _, f := range fs {
						for s := range 5 {
							out = append(out, outcome(model, c, DemoTrace(d, n, f, s)))
						}
					}
				}
			}
		}
	}
	// A failed request: excluded from every accuracy.
	fail := newTrial("alpha", condA, DemoTrace("bounce_ball", 1, 0.5, 5), nil, nil)
	fail.Error, fail.ErrorKind, fail.Attempts = "request timed out", results.KindTimeout, 3
	return append(out, fail)
}

func outcome(model string, c Condition, tr *trace.Trace) results.Trial {
	n, f, s := tr.N, tr.F, tr.Seed
	t := newTrial(model, c, tr, intp(n), exactEvents(tr))
	if model == "beta" && c == condB && tr.Domain == "blinking" {
		t.Count = intp(n + 1)
	}
	if model != "alpha" || c != condA {
		return t
	}
	switch tr.Domain {
	case "bounce_ball":
		switch {
		case n == 2 && f == 0.5 && s < 2:
			t.Count = intp(3)
		case n == 1 && f == 1.0 && (s == 2 || s == 3):
			t.Count, t.Events = intp(0), nil
		case n == 1 && f == 1.0 && s == 4:
			t.Count, t.Events = nil, nil
			t.Error, t.ErrorKind = "no count in reply", results.KindParse
		case n == 2 && f == 1.0:
			t.Events = nil
		case n == 4 && f == 1.0 && s == 0:
			t.Events[0].Attrs = map[string]string{"wall": "nowhere"}
		case n == 0 && s == 4:
			t.Count = nil
		}
	case "blinking":
		if n == 1 && f == 0.5 && s == 0 {
			t.Events[0].Attrs = map[string]string{"phase": "off"}
		}
		if n == 1 && f == 0.5 && s == 1 {
			t.Events[0].Attrs = map[string]string{"phase": "on"}
		}
	case "state_machine":
		if n == 2 && f == 1.0 && s == 0 {
			t.Events[1].T += 0.9
		}
	}
	return t
}

// wilson is the Wilson score interval written out independently of the
// score package (B.4).
func wilson(k, n float64) (float64, float64) {
	z := 1.959963984540054
	p := k / n
	den := 1 + z*z/n
	c := (p + z*z/(2*n)) / den
	h := z / den * math.Sqrt(p*(1-p)/n+z*z/(4*n*n))
	return c - h, c + h
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }

// writeDB stores trials in a fresh results database and returns its path.
func writeDB(t *testing.T, trials []results.Trial) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.sqlite")
	db, err := results.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trials {
		if err := db.Put(context.Background(), tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func readDB(t *testing.T, path, study string) []results.Trial {
	t.Helper()
	db, err := results.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	trials, err := db.Trials(context.Background(), results.Filter{Study: study})
	if err != nil {
		t.Fatal(err)
	}
	return trials
}

// buildFixture round-trips the fixture through a results database, builds
// the report and writes it.
func buildFixture(t *testing.T) (*Report, string) {
	t.Helper()
	trials := readDB(t, writeDB(t, fixture()), "fx")
	if len(trials) != len(fixture()) {
		t.Fatalf("read %d trials, stored %d", len(trials), len(fixture()))
	}
	r, err := Build(trials, Options{Study: "fx"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "report")
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	return r, dir
}

func loadSummary(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// find returns the entries of summary[key] whose fields equal want.
func find(t *testing.T, summary map[string]any, key string, want map[string]any) []map[string]any {
	t.Helper()
	list, ok := summary[key].([]any)
	if !ok {
		t.Fatalf("summary.json has no list %q", key)
	}
	var out []map[string]any
	for _, e := range list {
		m := e.(map[string]any)
		match := true
		for k, v := range want {
			if m[k] != v {
				match = false
			}
		}
		if match {
			out = append(out, m)
		}
	}
	return out
}

func one(t *testing.T, summary map[string]any, key string, want map[string]any) map[string]any {
	t.Helper()
	got := find(t, summary, key, want)
	if len(got) != 1 {
		t.Fatalf("%s %v: %d entries, want 1", key, want, len(got))
	}
	return got[0]
}

func checkNum(t *testing.T, what string, m map[string]any, key string, want float64) {
	t.Helper()
	got, ok := m[key].(float64)
	if !ok || !near(got, want) {
		t.Errorf("%s: %s = %v, want %v", what, key, m[key], want)
	}
}

func TestSummaryHandComputed(t *testing.T) {
	_, dir := buildFixture(t)
	s := loadSummary(t, dir)
	abb := map[string]any{"model": "alpha", "policy": "native:1", "prompt": "structured_trace", "domain": "bounce_ball"}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range abb {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}

	// Totals: 2 models × 2 conditions × 3 domains × 35 clips + 1 failure.
	tot := s["totals"].(map[string]any)
	checkNum(t, "totals", tot, "trials", 421)
	checkNum(t, "totals", tot, "scored", 420)
	checkNum(t, "totals", tot, "failed", 1)
	checkNum(t, "totals", tot, "unparseable", 2)

	// Cells (Eq. 1) with their Wilson intervals.
	cells := []struct {
		n          int
		f          float64
		trials, ok int
	}{{1, 0.5, 5, 5}, {2, 0.5, 5, 3}, {4, 0.5, 5, 5}, {1, 1.0, 5, 2}, {2, 1.0, 5, 5}, {4, 1.0, 5, 5}, {0, 1.0, 5, 4}}
	for _, c := range cells {
		e := one(t, s, "surfaces", with(map[string]any{"n": float64(c.n), "f": c.f}))
		what := "cell " + string(rune('0'+c.n))
		checkNum(t, what, e, "trials", float64(c.trials))
		checkNum(t, what, e, "correct", float64(c.ok))
		checkNum(t, what, e, "accuracy", float64(c.ok)/float64(c.trials))
		lo, hi := wilson(float64(c.ok), float64(c.trials))
		checkNum(t, what, e, "wilson_lo", lo)
		checkNum(t, what, e, "wilson_hi", min(hi, 1))
	}
	if n := len(find(t, s, "surfaces", abb)); n != 7 {
		t.Errorf("alpha · A · bounce_ball has %d cells, want 7", n)
	}
	if n := len(find(t, s, "surfaces", map[string]any{})); n != 2*2*3*7 {
		t.Errorf("%d surface cells, want %d", n, 2*2*3*7)
	}

	// Table 1 Part A: 35 scored trials, 29 correct; 30 eligible with
	// ΣP = ΣR = ΣF1 = ΣVOR = 5+5+5+2+0+5 = 22; ACR 5/30 (the (2, 1.0) row),
	// RFR 2/30.
	d := one(t, s, "domains", abb)
	checkNum(t, "domain", d, "trials", 35)
	checkNum(t, "domain", d, "correct", 29)
	checkNum(t, "domain", d, "em", 29.0/35)
	lo, hi := wilson(29, 35)
	checkNum(t, "domain", d, "em_lo", lo)
	checkNum(t, "domain", d, "em_hi", hi)
	checkNum(t, "domain", d, "eligible", 30)
	for _, k := range []string{"vor", "precision", "recall", "f1"} {
		checkNum(t, "domain", d, k, 22.0/30)
	}
	checkNum(t, "domain", d, "acr", 5.0/30)
	checkNum(t, "domain", d, "rfr", 2.0/30)
	checkNum(t, "domain", d, "unparseable", 2)
	checkNum(t, "domain", d, "failed", 1)

	// Macro average: the mean of the three domain rows.
	m := one(t, s, "macro", map[string]any{"model": "alpha", "policy": "native:1"})
	checkNum(t, "macro", m, "em", (29.0/35+1+1)/3)

	// Part B: N = 4 is in no region, so only low count, low frequency has
	// trials: bounce 19/25, blinking and state machine 25/25.
	regs := find(t, s, "regions", map[string]any{"model": "alpha", "policy": "native:1"})
	if len(regs) != 1 || regs[0]["region"] != "low_count_low_freq" {
		t.Fatalf("regions %v", regs)
	}
	checkNum(t, "region", regs[0], "em", 69.0/75)

	// Boundaries: N = 1 reliable at 0.5 Hz, N = 2 fails there, so the
	// isolated success at N = 4 does not count; at 1.0 Hz N = 1 already
	// fails: "< 1".
	b := one(t, s, "boundaries", abb)
	count := b["count"].([]any)
	if len(count) != 2 {
		t.Fatalf("count boundaries %v", count)
	}
	c05, c10 := count[0].(map[string]any), count[1].(map[string]any)
	if c05["f"] != 0.5 || c05["value"] != 1.0 || c05["below"] != false || c05["label"] != "1" {
		t.Errorf("N*(0.5) = %v, want 1", c05)
	}
	if c10["f"] != 1.0 || c10["value"] != 1.0 || c10["below"] != true || c10["label"] != "< 1" {
		t.Errorf("N*(1.0) = %v, want < 1", c10)
	}
	freq := b["frequency"].([]any)
	wantF := []struct {
		n     float64
		label string
	}{{1, "0.5 Hz"}, {2, "< 0.5 Hz"}, {4, "1.0 Hz"}}
	if len(freq) != len(wantF) {
		t.Fatalf("frequency boundaries %v", freq)
	}
	for i, w := range wantF {
		e := freq[i].(map[string]any)
		if e["n"] != w.n || e["label"] != w.label {
			t.Errorf("F*(%v) = %v, want %s", w.n, e, w.label)
		}
	}
	if mc := b["max_count"].(map[string]any); mc["label"] != "1" {
		t.Errorf("max count boundary %v", mc)
	}
	ctl := b["control"].(map[string]any)
	checkNum(t, "control", ctl, "trials", 5)
	checkNum(t, "control", ctl, "accuracy", 0.8)
	// beta · B · blinking is always wrong: "< 1" at every frequency.
	bb := one(t, s, "boundaries", map[string]any{"model": "beta", "policy": "fps:4", "domain": "blinking"})
	for _, e := range bb["count"].([]any) {
		if e.(map[string]any)["label"] != "< 1" {
			t.Errorf("beta blinking count boundary %v", e)
		}
	}

	// Intervention curve: mean cell accuracy over F at each N.
	for n, want := range map[float64]float64{0: 0.8, 1: 0.7, 2: 0.8, 4: 1} {
		e := one(t, s, "curves", with(map[string]any{"n": n}))
		checkNum(t, "curve", e, "accuracy", want)
	}

	// Table 4: pooled over domains, alpha · A has 29 + 35 + 35 = 99 of 105.
	w := one(t, s, "wilson", map[string]any{"model": "alpha", "policy": "native:1", "domain": "all"})
	checkNum(t, "wilson all", w, "correct", 99)
	checkNum(t, "wilson all", w, "trials", 105)
	lo, hi = wilson(99, 105)
	checkNum(t, "wilson all", w, "lo", lo)
	checkNum(t, "wilson all", w, "hi", hi)

	// Table 8: 70 true events, 57 matched (5+10+20+2+0+20), one
	// misidentified wall, two wrong accumulations, 30 videos.
	x := one(t, s, "taxonomy", abb)
	for k, v := range map[string]float64{"true_events": 70, "matched": 57, "missed": 13, "hallucinated": 0, "displaced": 0,
		"misidentified": 1, "wrong_accumulation": 2, "videos": 30, "merged": 0} {
		checkNum(t, "taxonomy", x, k, v)
	}
	// The blink reported "off" is no blinking event (excluded): not
	// misidentified, and its true pulse is missed.
	xb := one(t, s, "taxonomy", map[string]any{"model": "alpha", "policy": "native:1", "domain": "blinking"})
	checkNum(t, "taxonomy blinking", xb, "misidentified", 0)
	// The state-machine report 0.9 s late is displaced (outside δ = 0.5 s).
	xs := one(t, s, "taxonomy", map[string]any{"model": "alpha", "policy": "native:1", "domain": "state_machine"})
	checkNum(t, "taxonomy state", xs, "displaced", 1)
	checkNum(t, "taxonomy state", xs, "hallucinated", 1)

	// Table 9: EM does not depend on the window; the 1.0 s window
	// recovers the late report.
	rate := one(t, s, "sensitivity", map[string]any{"model": "alpha", "policy": "native:1", "tolerance": "rate"})
	fixed := one(t, s, "sensitivity", map[string]any{"model": "alpha", "policy": "native:1", "tolerance": "1s"})
	if rate["selected"] != true || fixed["selected"] != false {
		t.Errorf("selected: rate %v, 1s %v", rate["selected"], fixed["selected"])
	}
	checkNum(t, "sensitivity", fixed, "em", 99.0/105)
	if !(fixed["recall"].(float64) > rate["recall"].(float64)) {
		t.Errorf("recall under 1.0 s (%v) should exceed rate-relative (%v)", fixed["recall"], rate["recall"])
	}

	// CountVideoBench: 105 trials, 2 without a count.
	cd := one(t, s, "count_distributions", map[string]any{"model": "alpha", "policy": "native:1"})
	checkNum(t, "counts", cd, "trials", 105)
	checkNum(t, "counts", cd, "answered", 103)
	checkNum(t, "counts", cd, "abstentions", 2)
	checkNum(t, "counts", cd, "em", 99.0/105)
	checkNum(t, "counts", cd, "coverage", 103.0/105)

	// Failures.
	fr := one(t, s, "failures", abb)
	checkNum(t, "failures", fr, "failed", 1)
	checkNum(t, "failures", fr, "total", 36)
	if k := fr["by_kind"].(map[string]any); k["timeout"] != 1.0 {
		t.Errorf("by_kind %v", k)
	}

	// Reliability envelopes.
	env := one(t, s, "reliability", map[string]any{"model": "alpha"})["text"].(string)
	for _, want := range []string{"under native:1 (time labels) · structured_trace", "on Bounce Ball up to N = 1 at 0.5 Hz (N < 1 at 1.0 Hz)",
		"fps:4 (time labels) · structured_trace: N = 4", "1 of 211 requests failed"} {
		if !strings.Contains(env, want) {
			t.Errorf("alpha envelope lacks %q:\n%s", want, env)
		}
	}
	envB := one(t, s, "reliability", map[string]any{"model": "beta"})["text"].(string)
	if !strings.Contains(envB, "fps:4 (time labels) · structured_trace: N = 4") {
		t.Errorf("beta envelope: %s", envB)
	}
}

func TestSummaryKeys(t *testing.T) {
	_, dir := buildFixture(t)
	s := loadSummary(t, dir)
	for _, k := range []string{"schema", "study", "tolerance", "tau", "totals", "models", "surfaces", "domains", "macro", "regions", "wilson",
		"boundaries", "curves", "taxonomy", "sensitivity", "count_distributions", "countvideobench", "frame_principles", "reliability", "failures", "cost", "figures"} {
		if _, ok := s[k]; !ok {
			t.Errorf("summary.json lacks %q", k)
		}
	}
	need := map[string][]string{
		"surfaces":   {"model", "policy", "prompt", "domain", "n", "f", "trials", "correct", "accuracy"},
		"domains":    {"model", "policy", "prompt", "domain", "em", "vor", "precision", "recall", "f1", "acr", "rfr"},
		"boundaries": {"model", "policy", "prompt", "domain", "count", "frequency", "max_count"},
	}
	for key, fields := range need {
		for i, e := range s[key].([]any) {
			for _, f := range fields {
				if _, ok := e.(map[string]any)[f]; !ok {
					t.Fatalf("%s[%d] lacks %q", key, i, f)
				}
			}
		}
	}
	if got := len(s["domains"].([]any)); got != 12 {
		t.Errorf("%d domain rows, want 12 (2 models × 2 conditions × 3 domains)", got)
	}
	if s["tolerance"] != "rate" || s["tau"] != 0.8 {
		t.Errorf("tolerance %v, tau %v", s["tolerance"], s["tau"])
	}
}

func TestCSVTables(t *testing.T) {
	r, dir := buildFixture(t)
	want := map[string]string{
		"surfaces.csv":           "model,policy,labels,prompt,domain,n,f,trials,correct,accuracy,wilson_lo,wilson_hi,reliable,not_applicable",
		"table1_domains.csv":     "model,policy,labels,prompt,domain,trials,correct,em,em_lo,em_hi,eligible,vor,precision,recall,f1,acr,rfr,unparseable,failed",
		"table4_wilson.csv":      "model,policy,labels,prompt,domain,correct,trials,accuracy,lo,hi",
		"boundaries_count.csv":   "model,policy,labels,prompt,domain,tau,f,value,below,label",
		"table8_taxonomy.csv":    "model,policy,labels,prompt,domain,true_events,reported,matched,missed,merged,hallucinated,displaced,misidentified,wrong_accumulation,videos",
		"table9_sensitivity.csv": "model,policy,labels,prompt,tolerance,label,selected,trials,correct,em,em_lo,em_hi,eligible,vor,precision,recall,f1,acr,rfr",
	}
	for _, tb := range r.Tables() {
		f, err := os.Open(filepath.Join(dir, "tables", tb.Name))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", tb.Name, err)
		}
		if len(recs) == 0 || len(recs[0]) == 0 {
			t.Fatalf("%s has no header", tb.Name)
		}
		if h, ok := want[tb.Name]; ok && strings.Join(recs[0], ",") != h {
			t.Errorf("%s header %q, want %q", tb.Name, strings.Join(recs[0], ","), h)
		}
		delete(want, tb.Name)
	}
	for name := range want {
		t.Errorf("no table %s", name)
	}
	// The hand-computed cell, as CSV.
	b, _ := os.ReadFile(filepath.Join(dir, "tables", "surfaces.csv"))
	if !strings.Contains(string(b), "alpha,native:1,time,structured_trace,bounce_ball,2,0.5,5,3,0.6,") {
		t.Errorf("surfaces.csv lacks the (2, 0.5) cell of alpha · A · bounce_ball")
	}
}

func TestFiguresAndHTML(t *testing.T) {
	r, dir := buildFixture(t)
	heatmaps := 0
	for _, f := range r.Figures {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.File)))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", f.File, err)
		}
		if img.Bounds().Dx() < 200 || img.Bounds().Dy() < 150 {
			t.Errorf("%s is %v", f.File, img.Bounds())
		}
		if f.Kind == KindHeatmap {
			heatmaps++
		}
	}
	// A heatmap per model × condition × domain, curves per model × domain,
	// a histogram per model × condition.
	if heatmaps != 12 || len(r.Figures) != 12+6+4 {
		t.Errorf("%d figures, %d heatmaps", len(r.Figures), heatmaps)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)
	for _, bad := range []string{"http://", "https://", "//cdn", "<script", "<link"} {
		if strings.Contains(page, bad) {
			t.Errorf("index.html contains %q: it must not reach the network", bad)
		}
	}
	// Every src is a data URI, and the heatmaps are the files written.
	srcs := regexp.MustCompile(`src="([^"]*)"`).FindAllStringSubmatch(page, -1)
	if len(srcs) != len(r.Figures) {
		t.Errorf("%d images in the page, %d figures", len(srcs), len(r.Figures))
	}
	embedded := map[string]bool{}
	for _, m := range srcs {
		data, ok := strings.CutPrefix(html.UnescapeString(m[1]), "data:image/png;base64,")
		if !ok {
			t.Fatalf("image source %.40q is not an embedded PNG", m[1])
		}
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			t.Fatal(err)
		}
		embedded[string(b)] = true
	}
	for _, f := range r.Figures {
		b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.File)))
		if !embedded[string(b)] {
			t.Errorf("%s is not embedded in index.html", f.File)
		}
	}
	for _, want := range []string{"<h2 id=\"m-alpha\">alpha</h2>", "<h2 id=\"m-beta\">beta</h2>", "Part A. Trace Evaluation by Task Domain",
		"Part B. Trace Evaluation across", "Part C. Trace Diagnosis of Bounce Ball Interventions", "Lower Interval (%)",
		"Hallucinated events", "Matching Tolerance Strategy", "Max. count boundary", "Reliability envelopes", "request timed out"} {
		if !strings.Contains(page, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	// Written files are readable by others (the atomic writer's temporary
	// file is private).
	if fi, err := os.Stat(filepath.Join(dir, "index.html")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("index.html mode %v, %v", fi.Mode(), err)
	}
}

func TestFramePrinciples(t *testing.T) {
	// single:random 1/4, single:best 2/4, uniform:4 3/4, shuffled:4 2/4
	// on the same four clips (plus a fifth clip only shuffled saw, which
	// matching leaves out).
	outcomes := map[string][]bool{
		"single:random": {true, false, false, false},
		"single:best":   {true, true, false, false},
		"uniform:4":     {true, true, true, false},
		"shuffled:4":    {true, true, false, false, true},
	}
	var trials []results.Trial
	for policy, oks := range outcomes {
		for s, ok := range oks {
			tr := DemoTrace("bounce_ball", 1, 0.5, s)
			count := 1
			if !ok {
				count = 2
			}
			trials = append(trials, newTrial("gamma", Condition{policy, "time", "direct"}, tr, intp(count), nil))
		}
	}
	r, err := Build(trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		from, to string
		value    float64
	}{
		"multi_frame_gain_random": {"single:random", "uniform:4", 2},
		"multi_frame_gain_best":   {"single:best", "uniform:4", 0.5},
		"order_sensitivity":       {"shuffled:4", "uniform:4", 0.5},
		"information_disparity":   {"single:random", "single:best", 1},
	}
	got := 0
	for _, f := range r.FramePrinciples {
		if f.Domain != "bounce_ball" {
			continue
		}
		got++
		w, ok := want[f.Measure]
		if !ok || f.From.Policy != w.from || f.To.Policy != w.to || !f.Defined || !near(f.Value, w.value) || f.Clips != 4 {
			t.Errorf("%s: %+v, want %+v", f.Measure, f, w)
		}
	}
	if got != 4 || len(r.FramePrinciples) != 4 {
		t.Errorf("%d frame principles on bounce_ball, %d in all; want 4 (one domain: no pooled rows)", got, len(r.FramePrinciples))
	}
	// Baseline: no native·structured_trace condition, so the one with the
	// most scored trials (shuffled:4) is the baseline and comes first.
	if mi := r.Models[0]; mi.Baseline.Policy != "shuffled:4" || mi.Conditions[0] != mi.Baseline {
		t.Errorf("baseline %v, conditions %v", mi.Baseline, mi.Conditions)
	}
}

func TestBadInput(t *testing.T) {
	// No trials at all, and an empty database.
	if _, err := Build(nil, Options{Study: "s"}); !errors.Is(err, ErrNoTrials) || !strings.Contains(err.Error(), "no trials") {
		t.Errorf("no trials: %v", err)
	}
	if _, err := Build(readDB(t, writeDB(t, nil), ""), Options{}); !errors.Is(err, ErrNoTrials) {
		t.Errorf("empty database: %v", err)
	}
	// A study the database does not hold.
	if _, err := Build(readDB(t, writeDB(t, fixture()[:3]), "other"), Options{Study: "other"}); !errors.Is(err, ErrNoTrials) {
		t.Errorf("empty study: %v", err)
	}
	// Options.
	ok := fixture()[:3]
	for _, o := range []Options{{Tau: 1.5}, {Tau: -0.1}, {Tau: math.NaN()}, {Tolerance: score.Tolerance{Seconds: -1}}} {
		if _, err := Build(ok, o); !errors.Is(err, ErrOptions) {
			t.Errorf("options %+v: %v", o, err)
		}
	}
	// A trace whose events are not sorted: the score package's error,
	// naming the clip.
	tr := DemoTrace("bounce_ball", 2, 0.5, 0)
	tr.ID = "unsorted_clip"
	tr.Events[0].T, tr.Events[1].T = tr.Events[1].T, tr.Events[0].T
	bad := newTrial("alpha", condA, tr, intp(2), nil)
	trials := readDB(t, writeDB(t, append(fixture()[:3], bad)), "fx")
	_, err := Build(trials, Options{})
	if !errors.Is(err, score.ErrTrace) || !strings.Contains(err.Error(), "unsorted_clip") || !strings.Contains(err.Error(), "not sorted") {
		t.Errorf("unsorted trace: %v", err)
	}
	// No trace, or one that is not a trace.
	nt := newTrial("alpha", condA, DemoTrace("blinking", 1, 1, 0), intp(1), nil)
	nt.Trace = nil
	if _, err := Build([]results.Trial{nt}, Options{}); !errors.Is(err, ErrTrial) {
		t.Errorf("no trace: %v", err)
	}
	nt.Trace = json.RawMessage(`{"n": "three"}`)
	if _, err := Build([]results.Trial{nt}, Options{}); !errors.Is(err, ErrTrial) {
		t.Errorf("bad trace: %v", err)
	}
}

func TestWrongSchema(t *testing.T) {
	// Not an SQLite file at all.
	path := filepath.Join(t.TempDir(), "notes.sqlite")
	if err := os.WriteFile(path, []byte("not a database\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := results.OpenReadOnly(path); !errors.Is(err, results.ErrNotDatabase) && !errors.Is(err, results.ErrSchema) {
		t.Errorf("text file: %v", err)
	}
}

func TestDemoTrialsBuild(t *testing.T) {
	trials := DemoTrials(2)
	for _, tr := range trials[:50] {
		var x trace.Trace
		if err := json.Unmarshal(tr.Trace, &x); err != nil || x.Validate() != nil {
			t.Fatalf("demo trace %s: %v %v", tr.Clip, err, x.Validate())
		}
	}
	r, err := Build(trials, Options{Study: DemoStudy})
	if err != nil {
		t.Fatal(err)
	}
	if r.Totals.Failed == 0 || r.Totals.Unparseable == 0 || len(r.FramePrinciples) == 0 || len(r.Models) != 2 {
		t.Errorf("demo study lacks variety: %+v, %d frame rows", r.Totals, len(r.FramePrinciples))
	}
	// CountVideoBench: 26 cardinalities × 4 clips, both models, under
	// uniform:10 (time labels) · countvideobench; the objects traces are valid too.
	if v := r.CountVideoBench.Views; len(r.CountVideoBench.Rows) != 2 || v.Clips != 26*4 || r.CountVideoBench.Rows[0].Policy != "uniform:10" {
		t.Errorf("demo objects: %d rows, views %+v", len(r.CountVideoBench.Rows), v)
	}
	var x trace.Trace
	last := trials[len(trials)-1]
	if err := json.Unmarshal(last.Trace, &x); err != nil || x.Validate() != nil || !x.IsObjects() {
		t.Errorf("demo objects trace %s: %v %v", last.Clip, err, x.Validate())
	}
}

func TestCountPhrase(t *testing.T) {
	b := BoundaryRow{}
	for i, l := range []string{"12", "12", "2", "< 1", "1", "< 1", "1"} {
		f := 0.5 * float64(i+1)
		cb := CountBoundary{F: f, Boundary: score.Boundary{Label: l}}
		if strings.HasPrefix(l, "<") {
			cb.Below, cb.Value = true, 1
		} else {
			cb.Value = map[string]float64{"12": 12, "2": 2, "1": 1}[l]
		}
		b.Count = append(b.Count, cb)
	}
	want := "up to N = 12 at 0.5–1.0 Hz, N = 2 at 1.5 Hz, N = 1 at 2.5 and 3.5 Hz (N < 1 at 2.0 and 3.0 Hz)"
	if got := countPhrase(b); got != want {
		t.Errorf("countPhrase:\n got %s\nwant %s", got, want)
	}
	for i := range b.Count {
		b.Count[i].Below, b.Count[i].Label = true, "< 1"
	}
	if got := countPhrase(b); got != "" {
		t.Errorf("no reliable region: %q", got)
	}
}

// TestPaperReference: the published numbers are in summary.json exactly as
// printed in the paper, and the HTML shows them beside the study.
func TestPaperReference(t *testing.T) {
	r, err := Build(DemoTrials(2), Options{Study: DemoStudy})
	if err != nil {
		t.Fatal(err)
	}
	pr := r.PaperReference
	if len(pr.Table1A) != 3 || pr.Table1A[2].Domain != "state_machine" || pr.Table1A[2].EM != 37.1 || pr.Table1A[0].F1 != 36.6 || pr.Table1A[1].RFR != 0.3 {
		t.Errorf("Table 1 Part A: %+v", pr.Table1A)
	}
	sm := pr.CountBoundary["state_machine"]
	if len(sm) != 8 || sm[0].N != 12 || sm[1].N != 12 || sm[2].N != 2 || sm[7].Label != "< 1" {
		t.Errorf("state machine boundaries: %+v", sm)
	}
	if bb := pr.CountBoundary["bounce_ball"]; bb[0].N != 10 || bb[1].Label != "< 1" {
		t.Errorf("bounce ball boundaries: %+v", bb)
	}
	if len(pr.ComparedTo) == 0 {
		t.Errorf("nothing compared")
	}
	var buf bytes.Buffer
	if err := r.writeHTML(&buf, map[string][]byte{}); err != nil {
		t.Fatal(err)
	}
	if html := buf.String(); !strings.Contains(html, "Against the paper") || !strings.Contains(html, "37.1") || !strings.Contains(html, PaperModel) {
		t.Errorf("paper section missing from the page")
	}
}
