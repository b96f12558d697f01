package report

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/results"
)

// noEligibleTrials: model gamma under condA, where state_machine has only
// N = 0 controls (both answered 0, correct) and the other two domains have
// N = 2 at 0.5 Hz, seeds 0 and 1:
//
//	bounce_ball  seed 0 exact; seed 1 count 2, no events (accidental)
//	             VOR ½, P ½, R ½, F1 ½, ACR ½, RFR 0, EM 1
//	blinking     seed 0 count 3 with an exact trace (RFR); seed 1 exact
//	             VOR 1, P 1, R 1, F1 1, ACR 0, RFR ½, EM ½
//	state_machine  EM 1; no eligible trial: VOR … RFR undefined
//
// so the macro average is EM (1 + ½ + 1)/3 = 5/6 and, over the two domains
// that define them, VOR = P = R = F1 = (½ + 1)/2 = ¾, ACR = (½ + 0)/2 = ¼,
// RFR = (0 + ½)/2 = ¼ — not (½ + 1 + 0)/3 = ½, which counting the control
// domain as 0 gives. Model delta has only N = 0 controls (bounce_ball and
// blinking): every trace measure of its domain, region, sensitivity and
// macro rows is undefined.
func noEligibleTrials() []results.Trial {
	var out []results.Trial
	for s := range 2 {
		bb := DemoTrace("bounce_ball", 2, 0.5, s)
		t := newTrial("gamma", condA, bb, intp(2), exactEvents(bb))
		if s == 1 {
			t.Events = nil
		}
		out = append(out, t)
		bl := DemoTrace("blinking", 2, 0.5, s)
		t = newTrial("gamma", condA, bl, intp(2), exactEvents(bl))
		if s == 0 {
			t.Count = intp(3)
		}
		out = append(out, t)
		out = append(out, newTrial("gamma", condA, DemoTrace("state_machine", 0, 1.0, s), intp(0), nil))
		for _, d := range []string{"bounce_ball", "blinking"} {
			out = append(out, newTrial("delta", condA, DemoTrace(d, 0, 1.0, s), intp(0), nil))
		}
	}
	return out
}

var undefinedKeys = []string{"vor", "precision", "recall", "f1", "acr", "rfr"}

// TestNoEligibleTrialShownEmpty: a Table 1 row with no N > 0 trial has no
// VOR, P, R, F1, ACR or RFR: null in summary.json, an empty CSV cell, "–"
// on the page, never 0 (which reads as measured, and for the failure
// rates ACR and RFR as perfect); the macro average skips such rows.
func TestNoEligibleTrialShownEmpty(t *testing.T) {
	r, err := Build(noEligibleTrials(), Options{Study: "fx"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "report")
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	s := loadSummary(t, dir)
	isNull := func(what string, m map[string]any) {
		t.Helper()
		for _, k := range undefinedKeys {
			if v, ok := m[k]; !ok || v != nil {
				t.Errorf("summary.json %s: %s = %v (present %v), want null", what, k, v, ok)
			}
		}
	}

	// Domain rows.
	sm := one(t, s, "domains", map[string]any{"model": "gamma", "domain": "state_machine"})
	checkNum(t, "gamma state_machine", sm, "em", 1)
	checkNum(t, "gamma state_machine", sm, "eligible", 0)
	isNull("gamma state_machine", sm)
	for _, d := range []string{"bounce_ball", "blinking"} {
		isNull("delta "+d, one(t, s, "domains", map[string]any{"model": "delta", "domain": d}))
	}
	bb := one(t, s, "domains", map[string]any{"model": "gamma", "domain": "bounce_ball"})
	for k, want := range map[string]float64{"vor": 0.5, "precision": 0.5, "recall": 0.5, "f1": 0.5, "acr": 0.5, "rfr": 0} {
		checkNum(t, "gamma bounce_ball", bb, k, want)
	}
	bl := one(t, s, "domains", map[string]any{"model": "gamma", "domain": "blinking"})
	for k, want := range map[string]float64{"em": 0.5, "vor": 1, "precision": 1, "recall": 1, "f1": 1, "acr": 0, "rfr": 0.5} {
		checkNum(t, "gamma blinking", bl, k, want)
	}

	// Macro averages: gamma's over the two domains that define the
	// measures (worked by hand above); delta's undefined.
	mg := one(t, s, "macro", map[string]any{"model": "gamma"})
	for k, want := range map[string]float64{"domains": 3, "em": 5.0 / 6, "vor": 0.75, "precision": 0.75, "recall": 0.75, "f1": 0.75, "acr": 0.25, "rfr": 0.25} {
		checkNum(t, "gamma macro", mg, k, want)
	}
	md := one(t, s, "macro", map[string]any{"model": "delta"})
	checkNum(t, "delta macro", md, "em", 1)
	isNull("delta macro", md)

	// Region and sensitivity rows of delta (controls only).
	regions := find(t, s, "regions", map[string]any{"model": "delta"})
	if len(regions) != 1 || regions[0]["region"] != "low_count_low_freq" {
		t.Fatalf("delta regions %v, want low_count_low_freq alone", regions)
	}
	isNull("delta region", regions[0])
	sens := find(t, s, "sensitivity", map[string]any{"model": "delta"})
	if len(sens) == 0 {
		t.Fatal("no sensitivity rows for delta")
	}
	for _, row := range sens {
		isNull("delta sensitivity "+row["label"].(string), row)
	}

	// CSV: the same cells empty.
	readCSV := func(name string) [][]string {
		t.Helper()
		f, err := os.Open(filepath.Join(dir, "tables", name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		recs, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	rowWhere := func(name string, match map[string]string) (map[string]string, bool) {
		recs := readCSV(name)
		for _, rec := range recs[1:] {
			m := map[string]string{}
			for i, h := range recs[0] {
				m[h] = rec[i]
			}
			ok := true
			for k, v := range match {
				ok = ok && m[k] == v
			}
			if ok {
				return m, true
			}
		}
		return nil, false
	}
	csvEmpty := func(name string, match map[string]string) {
		t.Helper()
		m, ok := rowWhere(name, match)
		if !ok {
			t.Errorf("%s: no row %v", name, match)
			return
		}
		for _, k := range undefinedKeys {
			if m[k] != "" {
				t.Errorf("%s %v: %s = %q, want empty", name, match, k, m[k])
			}
		}
	}
	csvEmpty("table1_domains.csv", map[string]string{"model": "gamma", "domain": "state_machine"})
	csvEmpty("table1_macro.csv", map[string]string{"model": "delta"})
	csvEmpty("table1_regions.csv", map[string]string{"model": "delta", "region": "low_count_low_freq"})
	csvEmpty("table9_sensitivity.csv", map[string]string{"model": "delta", "selected": "true"})
	if m, ok := rowWhere("table1_macro.csv", map[string]string{"model": "gamma"}); !ok || m["vor"] != "0.75" || m["acr"] != "0.25" || m["rfr"] != "0.25" {
		t.Errorf("table1_macro.csv gamma: %v, want vor 0.75, acr 0.25, rfr 0.25", m)
	}

	// The page: "–" in the six cells of the control-only rows.
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	dash6 := strings.Repeat("<td>–</td>", 6)
	for _, label := range []string{DomainTitle("state_machine"), "Macro Average", regionTitles["low_count_low_freq"]} {
		if !strings.Contains(string(page), `<td class="t">`+label+`</td><td>100.0</td>`+dash6+"</tr>") {
			t.Errorf("index.html: no %s row with EM 100.0 and – for VOR, P, R, F1, ACR, RFR", label)
		}
	}
	// Table 9 has no RFR column: five dashes after Acc.
	if !strings.Contains(string(page), "(used)</td><td>100.0</td>"+strings.Repeat("<td>–</td>", 5)+"</tr>") {
		t.Errorf("index.html: no Table 9 row of delta with – for VOR, P, R, F1, ACR")
	}
	if strings.Contains(string(page), `<td class="t">`+DomainTitle("state_machine")+`</td><td>100.0</td><td>0.00</td>`) {
		t.Errorf("index.html shows VOR 0.00 for a domain with no N > 0 trial")
	}
	if !strings.Contains(string(page), `<td class="t">Macro Average</td><td>83.3</td><td>0.75</td><td>75.0</td><td>75.0</td><td>75.0</td><td>25.0</td><td>25.0</td></tr>`) {
		t.Errorf("index.html: gamma's macro average is not 83.3, 0.75, 75.0, 75.0, 75.0, 25.0, 25.0")
	}
}

// TestNaturalNothingToMeasure: a natural condition with no scored trial
// (only a failed request) has no exact match or interval, and one whose
// clips have no trace (count-only annotations, traced = 0) has no trace
// measures: null in summary.json, empty in natural_conditions.csv, "–" on
// the page — never 0.
func TestNaturalNothingToMeasure(t *testing.T) {
	condFail := Condition{"fps:4", "time", "zero_shot"}
	trials := naturalFixture()
	fail := newTrial("alpha", condFail, naturalTrace("c1", 1, 2.0), nil, nil)
	fail.Error, fail.ErrorKind = "timed out", results.KindTimeout
	trials = append(trials, fail)
	for _, c := range []struct {
		id    string
		n, ok int
	}{{"c3", 3, 3}, {"c4", 8, 8}} {
		trials = append(trials, newTrial("alpha", Condition{"fps:1", "time", "zero_shot"}, naturalTrace(c.id, c.n), intp(c.ok), nil))
	}
	r, err := Build(trials, Options{Study: "fx"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "report")
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	sec := loadSummary(t, dir)["natural_section"].(map[string]any)
	failed := one(t, sec, "conditions", map[string]any{"policy": "fps:4"})
	checkNum(t, "fps:4", failed, "trials", 0)
	checkNum(t, "fps:4", failed, "failed", 1)
	for _, k := range []string{"accuracy", "ci_low", "ci_high", "precision", "recall", "f1", "vor"} {
		if v, ok := failed[k]; !ok || v != nil {
			t.Errorf("summary.json natural fps:4 (no scored trial): %s = %v (present %v), want null", k, v, ok)
		}
	}
	untraced := one(t, sec, "conditions", map[string]any{"policy": "fps:1"})
	checkNum(t, "fps:1", untraced, "traced", 0)
	checkNum(t, "fps:1", untraced, "accuracy", 1)
	for _, k := range []string{"precision", "recall", "f1", "vor"} {
		if v, ok := untraced[k]; !ok || v != nil {
			t.Errorf("summary.json natural fps:1 (traced = 0): %s = %v (present %v), want null", k, v, ok)
		}
	}

	f, err := os.Open(filepath.Join(dir, "tables", "natural_conditions.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(h string) int { return slices.Index(recs[0], h) }
	seen := 0
	for _, rec := range recs[1:] {
		var empty []string
		switch rec[col("policy")] {
		case "fps:4":
			empty = []string{"accuracy", "ci_low", "ci_high", "precision", "recall", "f1", "vor"}
		case "fps:1":
			empty = []string{"precision", "recall", "f1", "vor"}
		default:
			continue
		}
		seen++
		for _, h := range empty {
			if v := rec[col(h)]; v != "" {
				t.Errorf("natural_conditions.csv %s: %s = %q, want empty", rec[col("policy")], h, v)
			}
		}
	}
	if seen != 2 {
		t.Errorf("natural_conditions.csv: %d of the fps:4 and fps:1 rows, want 2", seen)
	}

	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	label := "alpha · " + condFail.Label()
	if !strings.Contains(string(page), `<td class="t">`+label+`</td><td>0</td><td>–</td>`) {
		t.Errorf("index.html: no natural row %q with 0 trials and EM –", label)
	}
}
