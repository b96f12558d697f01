package report

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"html"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/scene"
	"github.com/tracegrid/tracegrid/trace"
)

// condC is CountVideoBench's protocol.
var condC = Condition{"uniform:10", "time", "countvideobench"}

// objectsTrace is a real objects clip's trace (scene, pure CPU).
func objectsTrace(t *testing.T, n, seed int) *trace.Trace {
	t.Helper()
	c, err := scene.New(scene.Params{Domain: "objects", N: n, Class: "cube-red", Seed: seed, Duration: 5, FPS: 30, Width: 320, Height: 180})
	if err != nil {
		t.Fatal(err)
	}
	return c.Trace()
}

// objectsFixture: alpha under condC on six objects clips with known
// predictions, one failed request, and two objects trials under condA
// (which alpha also ran on the event domains):
//
//	N = 5:  s0 → 5, s1 → 5          EM 2/2, Coverage 2/2
//	N = 6:  s0 → 5, s1 → no number  EM 0/2, Coverage 1/2
//	N = 10: s0 → 9, s1 → 12         EM 0/2, Coverage 2/2 (9 is within 10 %)
//	        s2 → request timed out (excluded; its clip still counts in the view statistics)
//	condA:  N = 5 s0 → 5, N = 6 s0 → 6
//
// condC over the six scored trials: EM 2/6, Acc@10% 3/6 (5, 5, 9),
// Coverage 5/6, MAE (0+0+1+1+2)/5 = 0.8, RMSE √(6/5), |S| = 3 (5 ×3,
// 9, 12), PP = exp(H(3/6, 1/6, 1/6, 1/6 abstained)) = √12, answered-only
// PP = exp(H(3/5, 1/5, 1/5)); largest local excess +3 at 5; no valley, so
// the largest deficit is −1 (at 9, the smaller of the tied 9 and 12).
func objectsFixture(t *testing.T) ([]results.Trial, []*trace.Trace) {
	t.Helper()
	var out []results.Trial
	clips := map[string]*trace.Trace{}
	add := func(c Condition, n, seed int, count *int) *results.Trial {
		tr := objectsTrace(t, n, seed)
		clips[tr.ID] = tr
		tl := newTrial("alpha", c, tr, count, nil)
		if count == nil {
			tl.Responses, tl.ParseFlags = []string{"There are many red cubes."}, []string{"unparseable_count"}
		}
		out = append(out, tl)
		return &out[len(out)-1]
	}
	add(condC, 5, 0, intp(5))
	add(condC, 5, 1, intp(5))
	add(condC, 6, 0, intp(5))
	add(condC, 6, 1, nil)
	add(condC, 10, 0, intp(9))
	add(condC, 10, 1, intp(12))
	f := add(condC, 10, 2, nil)
	f.Error, f.ErrorKind, f.Attempts = "request timed out", results.KindTimeout, 3
	add(condA, 5, 0, intp(5))
	add(condA, 6, 0, intp(6))
	var trs []*trace.Trace
	for _, tr := range clips {
		trs = append(trs, tr)
	}
	return out, trs
}

// TestObjectsSection builds the event fixture plus the objects trials
// through a results database and checks the CountVideoBench section by
// hand, and that no event-domain table changed.
func TestObjectsSection(t *testing.T) {
	objects, clips := objectsFixture(t)
	if len(clips) != 7 {
		t.Fatalf("%d distinct clips, want 7", len(clips))
	}
	base, err := Build(readDB(t, writeDB(t, fixture()), "fx"), Options{Study: "fx"})
	if err != nil {
		t.Fatal(err)
	}
	trials := readDB(t, writeDB(t, append(fixture(), objects...)), "fx")
	r, err := Build(trials, Options{Study: "fx"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "report")
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}

	// The event-domain tables are exactly those of the event trials.
	for name, pair := range map[string][2]any{
		"surfaces": {base.Surfaces, r.Surfaces}, "domains": {base.Domains, r.Domains}, "macro": {base.Macro, r.Macro},
		"regions": {base.Regions, r.Regions}, "wilson": {base.Wilson, r.Wilson}, "boundaries": {base.Boundaries, r.Boundaries},
		"curves": {base.Curves, r.Curves}, "taxonomy": {base.Taxonomy, r.Taxonomy}, "sensitivity": {base.Sensitivity, r.Sensitivity},
		"count_distributions": {base.CountDistributions, r.CountDistributions}, "paper_reference": {base.PaperReference, r.PaperReference},
		"frame_principles": {base.FramePrinciples, r.FramePrinciples},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("%s changed when objects trials were added", name)
		}
	}
	alpha := r.Models[0]
	if alpha.Model != "alpha" || alpha.Baseline != condA || !reflect.DeepEqual(alpha.Domains, []string{"bounce_ball", "blinking", "state_machine", "objects"}) ||
		len(alpha.Conditions) != 3 || alpha.Conditions[2] != condC {
		t.Errorf("alpha: %+v", alpha)
	}
	if r.Totals.Trials != len(fixture())+9 || r.Totals.Failed != 2 || r.Totals.Unparseable != base.Totals.Unparseable+1 {
		t.Errorf("totals %+v (event fixture %+v)", r.Totals, base.Totals)
	}

	s := loadSummary(t, dir)
	cvb := s["countvideobench"].(map[string]any)
	s["cvb_rows"] = cvb["rows"]
	c := one(t, s, "cvb_rows", map[string]any{"model": "alpha", "policy": "uniform:10"})
	for k, want := range map[string]float64{"trials": 6, "answered": 5, "abstentions": 1, "em": 2.0 / 6, "acc10": 0.5, "coverage": 5.0 / 6,
		"mae": 0.8, "rmse": math.Sqrt(6.0 / 5), "support": 3, "perplexity": math.Sqrt(12), "top3_share": 1,
		"perplexity_answered": math.Exp(-(0.6*math.Log(0.6) + 0.4*math.Log(0.2)))} {
		checkNum(t, "cvb alpha·C", c, k, want)
	}
	if ex := c["excess"].(map[string]any); ex["value"] != 5.0 || ex["amount"] != 3.0 {
		t.Errorf("excess %v", ex)
	}
	if de := c["deficit"].(map[string]any); de["value"] != 9.0 || de["amount"] != -1.0 {
		t.Errorf("deficit %v", de)
	}
	if h, _ := json.Marshal(c["histogram"]); string(h) != `[{"count":3,"value":5},{"count":1,"value":9},{"count":1,"value":12}]` {
		t.Errorf("histogram %s", h)
	}
	byN, _ := json.Marshal(c["by_cardinality"])
	if want := `[{"answered":2,"correct":2,"coverage":1,"em":1,"n":5,"trials":2},{"answered":1,"correct":0,"coverage":0.5,"em":0,"n":6,"trials":2},` +
		`{"answered":2,"correct":0,"coverage":1,"em":0,"n":10,"trials":2}]`; string(byN) != want {
		t.Errorf("by cardinality\n got %s\nwant %s", byN, want)
	}
	a := one(t, s, "cvb_rows", map[string]any{"model": "alpha", "policy": "native:1"})
	checkNum(t, "cvb alpha·A", a, "trials", 2)
	checkNum(t, "cvb alpha·A", a, "em", 1)
	if n := len(cvb["rows"].([]any)); n != 2 {
		t.Errorf("%d countvideobench rows, want 2", n)
	}

	// View statistics: the seven distinct clips, the failed one included.
	want := trace.SummarizeViews(clips)
	if r.CountVideoBench.Views != want || want.Clips != 7 {
		t.Errorf("views %+v, want %+v", r.CountVideoBench.Views, want)
	}
	if r.CountVideoBench.PaperShareLeaving != 0.83 || r.CountVideoBench.PaperMeanLeaving != 3.29 {
		t.Errorf("paper views %v %v", r.CountVideoBench.PaperShareLeaving, r.CountVideoBench.PaperMeanLeaving)
	}
	// The paper's figures, as its text prints them.
	ref := r.CountVideoBench.Reference
	if len(ref) != 4 || *ref[0].EMPercent != 27.6 || *ref[0].Support != 55 || *ref[0].Perplexity != 38.9 ||
		*ref[1].EMPercent != 25.7 || *ref[1].Acc10 != 70.5 || *ref[1].Support != 48 || *ref[1].Perplexity != 30.6 || ref[1].Excess.Amount != 126 ||
		ref[1].Deficit.Value != 30 || ref[2].Videos != 104 || *ref[2].EMPercent != 90.8 || *ref[3].Support != 26 || *ref[3].Perplexity != 26 {
		t.Errorf("reference %+v", ref)
	}

	// The objects failure is listed with its domain.
	fr := one(t, s, "failures", map[string]any{"model": "alpha", "policy": "uniform:10", "domain": "objects"})
	checkNum(t, "objects failures", fr, "failed", 1)
	checkNum(t, "objects failures", fr, "total", 7)
	// The envelope names the objects result.
	env := one(t, s, "reliability", map[string]any{"model": "alpha"})["text"].(string)
	for _, w := range []string{"On static objects (CountVideoBench), alpha: under native:1 (time labels) · structured_trace exact match 100.0%",
		"; under uniform:10 (time labels) · countvideobench exact match 33.3%, Acc@10% 50.0%, coverage 83.3% over 6 trials (|S| = 3, PP = 3.46).",
		"2 of 220 requests failed"} {
		if !strings.Contains(env, w) {
			t.Errorf("envelope lacks %q:\n%s", w, env)
		}
	}
	if strings.Contains(env, "uniform:10 (time labels) · countvideobench: no data") {
		t.Errorf("envelope lists the objects condition among the event ones:\n%s", env)
	}

	// CSV.
	rows := readCSV(t, filepath.Join(dir, "tables", "cvb_distribution.csv"))
	if strings.Join(rows[0], ",") != "model,policy,labels,prompt,trials,answered,abstentions,em,acc10,coverage,mae,rmse,support,perplexity,perplexity_answered,excess_value,excess_amount,deficit_value,deficit_amount,top3_share" ||
		len(rows) != 3 || strings.Join(rows[2][:13], ",") != "alpha,uniform:10,time,countvideobench,6,5,1,0.3333333333333333,0.5,0.8333333333333334,0.8,1.0954451150103321,3" ||
		strings.Join(rows[2][15:19], ",") != "5,3,9,-1" {
		t.Errorf("cvb_distribution.csv: %q", rows)
	}
	rows = readCSV(t, filepath.Join(dir, "tables", "cvb_by_cardinality.csv"))
	if len(rows) != 1+2+3 || strings.Join(rows[4], ",") != "alpha,uniform:10,time,countvideobench,6,2,1,0,0,0.5" {
		t.Errorf("cvb_by_cardinality.csv: %q", rows)
	}
	rows = readCSV(t, filepath.Join(dir, "tables", "cvb_views.csv"))
	if len(rows) != 2 || rows[1][0] != "7" || rows[1][4] != "0.83" || rows[1][5] != "3.29" {
		t.Errorf("cvb_views.csv: %q", rows)
	}
	rows = readCSV(t, filepath.Join(dir, "tables", "cvb_reference.csv"))
	if len(rows) != 5 || strings.Join(rows[2][:10], ",") != "GPT-5.4 (paper),2600,25.7,70.5,48,30.6,39,126,30,114" {
		t.Errorf("cvb_reference.csv: %q", rows)
	}
	for _, name := range []string{"count_distribution.csv", "count_histogram.csv", "count_by_cardinality.csv", "cvb_histogram.csv"} {
		if _, err := os.Stat(filepath.Join(dir, "tables", name)); err != nil {
			t.Error(err)
		}
	}

	// Figures: an objects histogram per CVB row and the two by-count plots.
	kinds := map[string]int{}
	for _, f := range r.Figures {
		if f.Domain == ObjectsDomain {
			kinds[f.Kind]++
		}
	}
	if kinds[KindHistogram] != 2 || kinds[KindCardinalityEM] != 1 || kinds[KindCardinalityCoverage] != 1 || len(r.Figures) != len(base.Figures)+4 {
		t.Errorf("objects figures %v (%d figures, %d without objects)", kinds, len(r.Figures), len(base.Figures))
	}

	// The page: the section, the paper's figures, none of it in the event
	// tables.
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	text := html.UnescapeString(string(page)) // "+3" is written &#43;3
	for _, w := range []string{`<h2 id="cvb">CountVideoBench (objects)</h2>`, `<a href="#cvb">CountVideoBench (objects)</a>`,
		"<td class=\"t\">alpha · uniform:10 (time labels) · countvideobench</td><td>6</td><td>33.3</td><td>50.0</td><td>83.3</td><td>0.80</td><td>1.10</td><td>3</td><td>3.46</td><td>+3 at 5</td><td class=\"t\">none</td>",
		"Gemini-3.1-pro (paper)", "<td>27.6</td>", "<td>+126 at 39</td>", "<td>−114 at 30</td>", "<td>90.8</td>",
		"CountVideoBench (§4.3)", "<td>83.0</td><td>3.29</td>", "Objects leaving the view", "cvb-cardinality"} {
		if !strings.Contains(text, w) {
			t.Errorf("index.html lacks %q", w)
		}
	}
	if strings.Contains(text, "Part C. Trace Diagnosis of Objects") || strings.Contains(text, "Objects EM (%)") ||
		regexp.MustCompile(`<tr class="section"><td colspan="\d+">Objects</td>`).MatchString(text) {
		t.Errorf("objects leaked into an event table")
	}
}

// TestObjectsOnlyModel: a model evaluated on objects clips alone gets the
// CountVideoBench rows and no event-domain rows, and the page says so.
func TestObjectsOnlyModel(t *testing.T) {
	var trials []results.Trial
	for i, n := range []int{5, 6, 7} {
		tl := newTrial("delta", condC, objectsTrace(t, n, i), intp(6), nil)
		trials = append(trials, tl)
	}
	r, err := Build(trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Domains) != 0 || len(r.Surfaces) != 0 || len(r.Boundaries) != 0 || len(r.Wilson) != 0 || len(r.Taxonomy) != 0 ||
		len(r.Sensitivity) != 0 || len(r.CountDistributions) != 0 || len(r.Macro) != 0 || len(r.PaperReference.ComparedTo) != 0 {
		t.Errorf("event rows from objects trials: %d domains, %d surfaces, %d wilson, %d sensitivity", len(r.Domains), len(r.Surfaces), len(r.Wilson), len(r.Sensitivity))
	}
	if len(r.CountVideoBench.Rows) != 1 || r.CountVideoBench.Rows[0].EM != 1.0/3 || !ptrNear(r.CountVideoBench.Rows[0].MAE, 2.0/3) || r.Models[0].Baseline != condC {
		t.Errorf("cvb %+v, models %+v", r.CountVideoBench.Rows, r.Models)
	}
	if env := r.Reliability[0].Text; env != "On static objects (CountVideoBench), delta: under uniform:10 (time labels) · countvideobench exact match 33.3%, Acc@10% 33.3%, coverage 100.0% over 3 trials (|S| = 1, PP = 1.00)." {
		t.Errorf("envelope %q", env)
	}
	var buf strings.Builder
	if err := r.writeHTML(&buf, map[string][]byte{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "Evaluated on objects clips only") || strings.Contains(buf.String(), "<h3>Table 1</h3>") {
		t.Errorf("objects-only model page")
	}
}

// TestObjectsTraceMismatch: a row whose trace disagrees with its domain
// about being an objects clip is refused, naming the clip.
func TestObjectsTraceMismatch(t *testing.T) {
	tr := objectsTrace(t, 5, 0)
	tr.Objects = nil
	tl := newTrial("alpha", condC, tr, intp(5), nil)
	if _, err := Build([]results.Trial{tl}, Options{}); !errors.Is(err, ErrTrial) || !strings.Contains(err.Error(), tr.ID) || !strings.Contains(err.Error(), "has no objects section") {
		t.Errorf("objects without objects: %v", err)
	}
	ev := DemoTrace("bounce_ball", 1, 1, 0)
	ev.Objects = objectsTrace(t, 1, 0).Objects
	tl = newTrial("alpha", condA, ev, intp(1), nil)
	if _, err := Build([]results.Trial{tl}, Options{}); !errors.Is(err, ErrTrial) || !strings.Contains(err.Error(), "has an objects section") {
		t.Errorf("events with objects: %v", err)
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

// TestNothingAnsweredShownEmpty: a condition without an answered trial has
// no MAE, RMSE or answered-only PP. The CountVideoBench table and the
// event domains' count-distribution table show "–", summary.json null and
// the CSV an empty cell — never 0.00, which reads as perfect.
func TestNothingAnsweredShownEmpty(t *testing.T) {
	var trials []results.Trial
	for i, n := range []int{5, 6} {
		tl := newTrial("delta", condC, objectsTrace(t, n, i), nil, nil)
		tl.Responses, tl.ParseFlags = []string{"Several cubes."}, []string{"unparseable_count"}
		trials = append(trials, tl)
		tr := DemoTrace("blinking", n, 0.5, i)
		trials = append(trials, newTrial("delta", condA, tr, nil, nil))
	}
	r, err := Build(trials, Options{Study: "fx"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "report")
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	s := loadSummary(t, dir)
	rows := append(s["count_distributions"].([]any), s["countvideobench"].(map[string]any)["rows"].([]any)...)
	if len(rows) != 2 {
		t.Fatalf("%d count rows, want one per section", len(rows))
	}
	for _, row := range rows {
		m := row.(map[string]any)
		for _, k := range []string{"mae", "rmse", "perplexity_answered"} {
			if v, ok := m[k]; !ok || v != nil {
				t.Errorf("summary.json %s %s = %v (present %v), want null", m["policy"], k, v, ok)
			}
		}
	}
	for _, name := range []string{"cvb_distribution.csv", "count_distribution.csv"} {
		b, err := os.ReadFile(filepath.Join(dir, "tables", name))
		if err != nil {
			t.Fatal(err)
		}
		// trials, answered, abstentions, em, acc10, coverage, mae, rmse,
		// support, perplexity, perplexity_answered.
		if !strings.Contains(string(b), ",2,0,2,0,0,0,,,0,1,,") {
			t.Errorf("%s: MAE, RMSE, answered-only PP not empty:\n%s", name, b)
		}
	}
	page, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	if n := strings.Count(string(page), "<td>0.0</td><td>0.0</td><td>0.0</td><td>–</td><td>–</td><td>0</td>"); n != 2 {
		t.Errorf("index.html: %d count rows with – for MAE and RMSE, want 2 (CountVideoBench and count distribution)", n)
	}
	if strings.Contains(string(page), "<td>0.00</td><td>0.00</td>") {
		t.Errorf("index.html shows MAE and RMSE 0.00 for a condition with no answer")
	}
}
