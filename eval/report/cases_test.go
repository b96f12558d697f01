package report

import (
	"encoding/json"
	"errors"
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

// caseTrials are hand-made trials of one condition, one per outcome class
// (bounce_ball, N = 4 at 0.5 Hz: true events every 2 s) plus extra
// faithful-correct ones, each with a reply that names its ledger.
func caseTrials() []results.Trial {
	cond := Condition{"fps:4", "time", "structured_trace"}
	var out []results.Trial
	add := func(seed int, count *int, evs func(tr *trace.Trace) []parse.Event, reply string) {
		tr := DemoTrace("bounce_ball", 4, 0.5, seed)
		es := evs(tr)
		// Each parsed event's source snippet is its ledger line, as the
		// parser records it.
		lines := strings.Split(reply, "\n")
		for i := range es {
			if i < len(lines)-1 {
				es[i].Text = lines[i]
			}
		}
		t := newTrial("alpha", cond, tr, count, es)
		t.Repeat = 0
		t.Responses = []string{reply}
		t.FrameTimes = []float64{0, 0.25, 0.5}
		out = append(out, t)
	}
	exact := exactEvents
	none := func(*trace.Trace) []parse.Event { return nil }
	first2 := func(tr *trace.Trace) []parse.Event { return exactEvents(tr)[:2] }
	extra := func(tr *trace.Trace) []parse.Event {
		evs := exactEvents(tr)
		// Six hallucinated reports in the first second, before the first
		// true event (outside δ = 1 s of it: the test checks the class).
		for k := range 6 {
			evs = append(evs, parse.Event{T: 0.05 + 0.15*float64(k), Text: "extra"})
		}
		return evs
	}
	ledger := func(counts ...int) string {
		var b strings.Builder
		for i, k := range counts {
			b.WriteString("00:0" + string(rune('1'+i)) + ".0 — contact with the top wall — running count " + itoa(k) + "\n")
		}
		return b.String()
	}
	add(0, intp(4), exact, ledger(1, 2, 3, 4)+"\\boxed{4}")             // faithful and correct
	add(1, intp(4), exact, ledger(1, 2, 3, 4)+"\\boxed{4}")             // faithful and correct
	add(2, intp(4), exact, ledger(1, 2, 3, 4)+"\\boxed{4}")             // faithful and correct
	add(3, intp(4), exact, ledger(1, 2, 3, 4)+"\\boxed{4}")             // faithful and correct (a fourth: not shown)
	add(4, intp(4), none, "I count four contacts. \\boxed{4}")          // accidental correctness (M = 0)
	add(5, intp(5), exact, ledger(1, 2, 3, 4)+"So five. \\boxed{5}")    // wrong accumulation; final ≠ running, ≠ listed
	add(6, intp(2), none, "Two, I think. \\boxed{2}")                   // no evidence
	add(7, intp(9), extra, ledger(1, 2, 3, 4, 5, 6, 7, 8)+"\\boxed{9}") // hallucinated extra events
	add(8, intp(2), first2, ledger(1, 2)+"\\boxed{2}")                  // missed events
	add(9, nil, first2, ledger(1, 2)+"Maybe 2 or 3.")                   // unparseable
	return out
}

func TestCasesOnePerClassAndCapped(t *testing.T) {
	trials := caseTrials()
	r, err := Build(trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[score.Outcome][]int{}
	for _, c := range r.Cases {
		seed := c.trial.trial.Seed
		got[c.Class] = append(got[c.Class], seed)
		if c.Labels != "time" || c.Policy != "fps:4" || c.Prompt != "structured_trace" || c.Model != "alpha" {
			t.Errorf("case %+v: wrong condition fields", c)
		}
	}
	want := map[score.Outcome][]int{
		score.OutcomeAccidentalCorrect: {4}, score.OutcomeWrongAccumulation: {5}, score.OutcomeNoEvidence: {6},
		score.OutcomeHallucinatedExtra: {7}, score.OutcomeMissedEvents: {8}, score.OutcomeUnparseable: {9},
	}
	for o, seeds := range want {
		if !slices.Equal(got[o], seeds) {
			t.Errorf("class %s: seeds %v, want %v", o, got[o], seeds)
		}
	}
	if fc := got[score.OutcomeFaithfulCorrect]; len(fc) != CasesPerClass {
		t.Errorf("faithful_correct: %d cases of 4 candidates, want %d", len(fc), CasesPerClass)
	}
	// Deterministic, whatever the input order.
	slices.Reverse(trials)
	r2, err := Build(trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	key := func(cs []Case) []string {
		var out []string
		for _, c := range cs {
			out = append(out, string(c.Class)+"/"+c.Clip)
		}
		return out
	}
	if !slices.Equal(key(r.Cases), key(r2.Cases)) {
		t.Errorf("case choice depends on input order:\n%v\n%v", key(r.Cases), key(r2.Cases))
	}
}

// TestConsistencyHandWorked: of the ten replies, seven state running
// counts; seed 5 ends with 5 after running count 4 and four listed events
// (disagrees with both); seed 7 lists 10 events (4 true + 6 extra) and
// running count 8 against \boxed{9} (disagrees with both); seed 9 has a
// ledger but no parseable count (unparseable); seeds 4 and 6 have no
// ledger. The listed events come from the stored events' snippets.
func TestConsistencyHandWorked(t *testing.T) {
	r, err := Build(caseTrials(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Consistency) != 1 {
		t.Fatalf("%d consistency rows, want 1", len(r.Consistency))
	}
	c := r.Consistency[0]
	if c.Trials != 10 || c.Running.Agree != 5 || c.Running.Disagree != 2 || c.Running.NoLedger != 2 || c.Running.Unparseable != 1 {
		t.Errorf("running check %+v, want 5 agree, 2 disagree, 2 no ledger, 1 unparseable of 10", c.Running)
	}
	if c.Running.Checked != 7 || !near(c.Running.DisagreeRate, 2.0/7) {
		t.Errorf("running rate %v of %d, want 2/7 of 7", c.Running.DisagreeRate, c.Running.Checked)
	}
	lo, hi := wilson(2, 7)
	if !near(c.Running.Interval.Lo, lo) || !near(c.Running.Interval.Hi, hi) {
		t.Errorf("running interval %+v, want [%v, %v]", c.Running.Interval, lo, hi)
	}
	// Accuracy beside it: seeds 0–4 are correct, 5 of 10.
	if !near(c.Accuracy, 0.5) {
		t.Errorf("accuracy %v, want 0.5", c.Accuracy)
	}
}

type fakeSheets struct{ calls int }

func (f *fakeSheets) Sheet(t *results.Trial) ([]byte, error) {
	f.calls++
	if t.Clip == DemoTrace("bounce_ball", 4, 0.5, 6).ID {
		return nil, errors.New("renderer unavailable")
	}
	return []byte("\x89PNG fake " + t.Clip), nil
}

func TestCasesWrittenWithSheets(t *testing.T) {
	r, err := Build(caseTrials(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var sheets fakeSheets
	if err := r.WriteWith(dir, WriteOptions{Sheets: &sheets}); err != nil {
		t.Fatal(err)
	}
	if sheets.calls != len(r.Cases) {
		t.Errorf("%d sheets drawn for %d cases", sheets.calls, len(r.Cases))
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Cases []map[string]any `json:"cases"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Cases) != len(r.Cases) {
		t.Fatalf("summary lists %d cases, want %d", len(sum.Cases), len(r.Cases))
	}
	html, _ := os.ReadFile(filepath.Join(dir, "cases.html"))
	if index, _ := os.ReadFile(filepath.Join(dir, "index.html")); !strings.Contains(string(index), `href="cases.html"`) {
		t.Errorf("index.html does not link cases.html")
	}
	for _, c := range sum.Cases {
		for _, k := range []string{"class", "model", "clip", "policy", "prompt", "labels", "repeat", "sheet"} {
			if _, ok := c[k]; !ok {
				t.Errorf("case %v lacks %q", c, k)
			}
		}
		sheet, _ := c["sheet"].(string)
		if c["class"] == string(score.OutcomeNoEvidence) {
			if sheet != "" || !strings.Contains(c["sheet_error"].(string), "renderer unavailable") {
				t.Errorf("a failed sheet: %v", c)
			}
			continue
		}
		if !strings.HasPrefix(sheet, "cases/") {
			t.Errorf("sheet %q", sheet)
			continue
		}
		png, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(sheet)))
		if err != nil || !strings.HasSuffix(string(png), c["clip"].(string)) {
			t.Errorf("sheet file %s: %v %q", sheet, err, png)
		}
		if !strings.Contains(string(html), `src="`+sheet+`"`) {
			t.Errorf("cases.html does not show %s", sheet)
		}
	}
	// The reply with its parsed events marked, the alignment as a table.
	if !strings.Contains(string(html), "<mark>") || !strings.Contains(string(html), "Reported time (s)") || !strings.Contains(string(html), `id="cases"`) {
		t.Errorf("cases.html lacks the case cards' reply marks or alignment tables")
	}
}
