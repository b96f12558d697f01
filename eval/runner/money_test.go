package runner

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/internal/fakemodel"
	"github.com/tracegrid/tracegrid/pipeline"
)

// dollar is the stand-in's usage that costs exactly $1 at the test prices
// ($1000 per million input tokens): 1000 prompt tokens, no completion.
var dollar = fakemodel.Reply{PromptTokens: 1000}

// standIn makes a one-model study against the stand-in: the two clips of
// TestMain's manifest, the given conditions, reps repetitions, the given
// concurrency, $1000/M input and $2000/M output.
func standIn(t *testing.T, fm *fakemodel.Server, reps, concurrency int, conds ...study.Condition) *study.Study {
	t.Helper()
	st := &study.Study{Name: "money", Manifest: manifest, Repetitions: reps, Conditions: conds,
		Models: []study.Model{{Name: "fake", BaseURL: fm.URL(), ModelID: "fake-1", Concurrency: concurrency, MaxRetries: 0,
			Prices: study.Prices{InputPerMTok: 1000, OutputPerMTok: 2000}}}}
	st.SetDefaults()
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
	return st
}

var direct = study.Condition{Policy: "uniform:2", Prompt: "direct"}

// manifestVariant writes, beside TestMain's manifest (so that its paths
// resolve), a manifest whose lines are edit(the original lines).
func manifestVariant(t *testing.T, edit func(lines []string) []string) string {
	t.Helper()
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	p := filepath.Join(filepath.Dir(manifest), strings.ReplaceAll(t.Name(), "/", "_")+".jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(edit(lines), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(p) })
	return p
}

func manifestIDs(t *testing.T) []string {
	t.Helper()
	entries, err := pipeline.LoadManifest(manifest)
	if err != nil || len(entries) != 2 {
		t.Fatalf("%d entries, %v", len(entries), err)
	}
	return []string{entries[0].ID, entries[1].ID}
}

func storedClips(t *testing.T, db *results.DB, name string) []string {
	t.Helper()
	trials, err := db.Trials(context.Background(), results.Filter{Study: name})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tr := range trials {
		if !slices.Contains(out, tr.Clip) {
			out = append(out, tr.Clip)
		}
	}
	slices.Sort(out)
	return out
}

// TestClipsSubsetSendsExactlyItsClips (issue 12, finding 3): a study's
// clips: subset is evaluated — and paid for — alone, whichever order the
// manifest lists the clips in, and the dry run counts the same requests.
func TestClipsSubsetSendsExactlyItsClips(t *testing.T) {
	ids := manifestIDs(t)
	reversed := manifestVariant(t, func(l []string) []string { return []string{l[1], l[0]} })
	for _, m := range []string{manifest, reversed} {
		for _, subset := range [][]string{{ids[0]}, {ids[1]}} {
			fm := fakemodel.New(t, fakemodel.Always(dollar))
			st := standIn(t, fm, 2, 1, direct, study.Condition{Policy: "fps:1", Prompt: "direct"})
			st.Manifest, st.Clips = m, subset
			db := openDB(t)
			sum, err := runStudy(t, context.Background(), st, db)
			// 1 clip × 2 conditions × 2 repetitions.
			if err != nil || sum.Total != 4 || sum.Done != 4 || fm.Requests() != 4 {
				t.Errorf("%s, clips %v: %+v %v, %d requests; want 4 trials, 4 requests", filepath.Base(m), subset, sum, err, fm.Requests())
			}
			if got := storedClips(t, db, st.Name); !slices.Equal(got, subset) {
				t.Errorf("%s, clips %v: stored clips %v", filepath.Base(m), subset, got)
			}
			infos, err := ClipInfos(st)
			if err != nil {
				t.Fatal(err)
			}
			es, err := st.DryRun(infos, prompts.Default())
			if err != nil {
				t.Fatal(err)
			}
			if n := es[0].Requests + es[1].Requests; len(infos) != 1 || infos[0].ID != subset[0] || n != fm.Requests() {
				t.Errorf("%s, clips %v: dry run %d clips, %d requests; the run sent %d", filepath.Base(m), subset, len(infos), n, fm.Requests())
			}
		}
	}
}

// TestClipsNotInManifestRefused (finding 10): an id of clips: that the
// manifest lacks stops the run before anything is sent, naming the field.
func TestClipsNotInManifestRefused(t *testing.T) {
	fm := fakemodel.New(t, fakemodel.Always(dollar))
	st := standIn(t, fm, 1, 1, direct)
	st.Clips = []string{manifestIDs(t)[0], "blinking_N09_F9.0_s99"}
	_, err := runStudy(t, context.Background(), st, openDB(t))
	if !errors.Is(err, study.ErrStudy) || !errors.Is(err, pipeline.ErrNoClip) || !strings.Contains(err.Error(), `clips[1]: "blinking_N09_F9.0_s99": clip not in manifest: `) || fm.Requests() != 0 {
		t.Errorf("%v, %d requests", err, fm.Requests())
	}
	if _, err := ClipInfos(st); !errors.Is(err, pipeline.ErrNoClip) {
		t.Errorf("dry run: %v", err)
	}
}

// TestBadManifestRefused (findings 10 and 11): a manifest line that is
// not an entry, and a trace path that leaves the manifest's directory,
// stop the run before anything is sent; the message quotes no file.
func TestBadManifestRefused(t *testing.T) {
	for name, edit := range map[string]func([]string) []string{
		"garbage line": func(l []string) []string { return []string{l[0], "not json", l[1]} },
		"missing field": func(l []string) []string {
			return []string{l[0], strings.Replace(l[1], `"domain":"blinking",`, "", 1)}
		},
		"trace outside": func(l []string) []string {
			return []string{l[0], strings.Replace(l[1], `"trace":"clips/`, `"trace":"../../../../../../../../etc/passwd#`, 1)}
		},
	} {
		fm := fakemodel.New(t, fakemodel.Always(dollar))
		st := standIn(t, fm, 1, 1, direct)
		st.Manifest = manifestVariant(t, edit)
		_, err := runStudy(t, context.Background(), st, openDB(t))
		if !errors.Is(err, pipeline.ErrManifest) || fm.Requests() != 0 || strings.Contains(err.Error(), "root:") {
			t.Errorf("%s: %v, %d requests", name, err, fm.Requests())
		}
	}
}

// TestSpendingCapExact (finding 5): every request costs exactly $1. With
// one request in flight, a $3.50 cap admits trials while the recorded
// spend is below it — at $0, $1, $2, $3 — so exactly 4 are sent and $4
// spent: over the cap by at most the one trial in flight.
func TestSpendingCapExact(t *testing.T) {
	fm := fakemodel.New(t, fakemodel.Always(dollar))
	st := standIn(t, fm, 4, 1, direct)
	st.MaxUSD = 3.5
	db := openDB(t)
	sum, err := runStudy(t, context.Background(), st, db)
	if !errors.Is(err, ErrBudget) || !sum.StoppedByBudget || fm.Requests() != 4 || sum.Done != 4 || math.Abs(sum.CostUSD-4) > 1e-9 {
		t.Fatalf("%+v %v, %d requests; want ErrBudget after 4 requests, $4", sum, err, fm.Requests())
	}
	if sum.Unanswered[NotRun] != 4 || sum.Answered() {
		t.Errorf("unanswered %v; want 4 not run", sum.Unanswered)
	}
	// A rerun under the same cap sends nothing.
	if _, err := runStudy(t, context.Background(), st, db); !errors.Is(err, ErrBudget) || fm.Requests() != 4 {
		t.Errorf("rerun: %v, %d requests", err, fm.Requests())
	}
}

// TestSpendingCapConcurrent: two requests in flight, $1 each, a trial of
// the same model and condition already observed at $1 (stored by an
// earlier run, and counted in the spend). A trial starts only while spend
// + expected cost in flight < $4.50: 1 + 4 admitted trials, never more,
// whatever the timing; $5 spent.
func TestSpendingCapConcurrent(t *testing.T) {
	fm := fakemodel.New(t, fakemodel.Always(dollar))
	st := standIn(t, fm, 4, 2, direct)
	st.MaxUSD = 4.5
	db := openDB(t)
	earlier := results.Trial{Key: trialKey(st, st.Models[0], "an-earlier-clip", direct, 0), Domain: "blinking", N: 2, F: 1,
		Responses: []string{"\\boxed{2}"}, CostUSD: 1, Attempts: 1}
	if err := db.Put(context.Background(), earlier); err != nil {
		t.Fatal(err)
	}
	sum, err := runStudy(t, context.Background(), st, db)
	if !errors.Is(err, ErrBudget) || fm.Requests() != 4 || math.Abs(sum.PriorUSD+sum.CostUSD-5) > 1e-9 {
		t.Errorf("%+v %v, %d requests; want 4 requests, $5 in all", sum, err, fm.Requests())
	}
}

// TestSpendingCapBoundFromEstimate: with nothing observed yet, the first
// trials start on the dry-run estimate; whatever it is, the overshoot is
// bounded by the requests in flight: spend ≤ cap + concurrency × $1.
func TestSpendingCapBoundFromEstimate(t *testing.T) {
	fm := fakemodel.New(t, fakemodel.Always(dollar))
	st := standIn(t, fm, 8, 3, direct)
	st.MaxUSD = 2.5
	sum, err := runStudy(t, context.Background(), st, openDB(t))
	if !errors.Is(err, ErrBudget) || sum.CostUSD > 2.5+3 || sum.CostUSD < 2.5 || float64(fm.Requests()) != sum.CostUSD {
		t.Errorf("%+v %v, %d requests", sum, err, fm.Requests())
	}
}

// TestImpossibleUsageIsAProviderError (finding 5): negative usage, or more
// completion tokens than max_tokens allowed, is stored as bad_usage with
// the usage clamped — never negative spend.
func TestImpossibleUsageIsAProviderError(t *testing.T) {
	for _, c := range []struct {
		name             string
		rep              fakemodel.Reply
		prompt, complete int
		want             string
	}{
		{"negative", fakemodel.Reply{PromptTokens: -1000000, CompletionTokens: 10}, 0, 10, "a negative token count"},
		{"above max_tokens", fakemodel.Reply{PromptTokens: 100, CompletionTokens: 5000}, 100, 64, "completion_tokens above max_tokens 64"},
		{"above the ceiling", fakemodel.Reply{PromptTokens: 2e9, CompletionTokens: 1}, MaxPromptTokens, 1, "prompt_tokens above the 10000000 ceiling"},
	} {
		fm := fakemodel.New(t, fakemodel.Always(c.rep))
		st := standIn(t, fm, 1, 1, direct)
		st.Decoding.MaxTokens = 64
		db := openDB(t)
		sum, err := runStudy(t, context.Background(), st, db)
		if err != nil || sum.Failed != 2 || sum.Unanswered[results.KindBadUsage] != 2 {
			t.Errorf("%s: %+v %v", c.name, sum, err)
		}
		trials, _ := db.Trials(context.Background(), results.Filter{})
		for _, tr := range trials {
			cost := (float64(c.prompt)*1000 + float64(c.complete)*2000) / 1e6
			if tr.ErrorKind != results.KindBadUsage || !strings.Contains(tr.Error, c.want) || tr.Usage.PromptTokens != c.prompt ||
				tr.Usage.CompletionTokens != c.complete || math.Abs(tr.CostUSD-cost) > 1e-9 || tr.Count != nil {
				t.Errorf("%s: %+v", c.name, tr)
			}
		}
	}
}

// TestSecondRunOnTheStudyRefused (finding 4): while a run holds the study,
// a second run of it on the same database is refused before sending
// anything; each trial is sent exactly once.
func TestSecondRunOnTheStudyRefused(t *testing.T) {
	hold := make(chan struct{})
	fm := fakemodel.New(t, func(r fakemodel.Request) fakemodel.Reply {
		if r.N == 1 {
			return fakemodel.Reply{PromptTokens: 1000, Hold: hold}
		}
		return dollar
	})
	st := standIn(t, fm, 2, 1, direct)
	path := filepath.Join(t.TempDir(), "shared.db")
	open := func() *results.DB {
		db, err := results.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	first := make(chan error, 1)
	go func() {
		_, err := runStudy(t, context.Background(), st, open())
		first <- err
	}()
	<-fm.Arrivals() // the first run holds the study and has a request in flight
	_, err := runStudy(t, context.Background(), st, open())
	if !errors.Is(err, results.ErrBusy) || !strings.Contains(err.Error(), "pid") || fm.Requests() != 1 {
		t.Errorf("second run: %v, %d requests", err, fm.Requests())
	}
	close(hold)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	// 2 clips × 2 repetitions, each sent once; then the study is free.
	if fm.Requests() != 4 {
		t.Errorf("%d requests for 4 trials", fm.Requests())
	}
	if sum, err := runStudy(t, context.Background(), st, open()); err != nil || sum.Skipped != 4 || fm.Requests() != 4 {
		t.Errorf("after the first run: %+v %v", sum, err)
	}
}

// TestDrainStoresRepliesInFlight (finding 6): ending Drain while two
// requests are in flight starts nothing new, waits for both replies and
// stores them; Run reports the interruption.
func TestDrainStoresRepliesInFlight(t *testing.T) {
	hold := make(chan struct{})
	fm := fakemodel.New(t, fakemodel.Always(fakemodel.Reply{PromptTokens: 1000, Hold: hold}))
	st := standIn(t, fm, 3, 2, direct)
	db := openDB(t)
	drain, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	var sum Summary
	var err error
	go func() {
		sum, err = Run(context.Background(), Options{Study: st, Prompts: prompts.Default(), DB: db, Renderer: testRenderer, Drain: drain})
		close(done)
	}()
	<-fm.Arrivals()
	<-fm.Arrivals()
	stop()
	close(hold)
	<-done
	if !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.Canceled) || !sum.Interrupted || fm.Requests() != 2 || sum.Done != 2 {
		t.Fatalf("%+v %v, %d requests; want 2 replies stored and ErrInterrupted", sum, err, fm.Requests())
	}
	trials, _ := db.Trials(context.Background(), results.Filter{})
	if len(trials) != 2 || trials[0].Count == nil || trials[1].Count == nil || sum.Unanswered[NotRun] != 4 {
		t.Errorf("%d trials stored, unanswered %v", len(trials), sum.Unanswered)
	}
}

// TestRetryAfterCappedPerModel (finding 7): a Retry-After of 100000 s is
// waited only max_retry_wait_seconds; with a deadline the wait would pass,
// the request is not retried and the failure says so.
func TestRetryAfterCappedPerModel(t *testing.T) {
	fm := fakemodel.New(t, func(r fakemodel.Request) fakemodel.Reply {
		if r.N == 1 {
			return fakemodel.Reply{Status: 429, Header: map[string]string{"Retry-After": "100000"}, Body: `{"error":{"message":"slow down"}}`}
		}
		return dollar
	})
	st := standIn(t, fm, 1, 1, direct)
	st.Clips = manifestIDs(t)[:1]
	st.Models[0].MaxRetries, st.Models[0].MaxRetryWaitSeconds = 1, 0.05
	db := openDB(t)
	if sum, err := runStudy(t, context.Background(), st, db); err != nil || sum.Done != 1 || fm.Requests() != 2 {
		t.Fatalf("%+v %v, %d requests", sum, err, fm.Requests())
	}
	tr, _, _ := db.Get(context.Background(), trialKey(st, st.Models[0], st.Clips[0], direct, 0))
	if tr.Attempts != 2 || tr.Error != "" {
		t.Errorf("trial %+v", tr)
	}

	always := fakemodel.New(t, fakemodel.Always(fakemodel.Reply{Status: 429, Header: map[string]string{"Retry-After": "100000"}, Body: `{"error":{"message":"slow down"}}`}))
	st = standIn(t, always, 1, 1, direct)
	st.Models[0].MaxRetries, st.Models[0].MaxRetryWaitSeconds, st.Models[0].DeadlineSeconds = 3, 60, 5
	db = openDB(t)
	sum, err := runStudy(t, context.Background(), st, db)
	if err != nil || sum.Unanswered[results.KindRateLimited] != 2 || always.Requests() != 2 {
		t.Fatalf("%+v %v, %d requests", sum, err, always.Requests())
	}
	trials, _ := db.Trials(context.Background(), results.Filter{})
	for _, tr := range trials {
		if !strings.Contains(tr.Error, "would pass the request's deadline") || tr.Attempts != 1 {
			t.Errorf("%v: %q, %d attempts", tr.Key, tr.Error, tr.Attempts)
		}
	}
}

// TestUnansweredByKind (finding 8): failed trials are counted by kind —
// this run's and, when permanent, an earlier run's.
func TestUnansweredByKind(t *testing.T) {
	for _, c := range []struct {
		rep  fakemodel.Reply
		kind string
	}{
		{fakemodel.Reply{Status: 401, Body: `{"error":{"message":"no key"}}`}, "auth"},
		{fakemodel.Reply{Status: 500, Body: "boom"}, "server"},
		{fakemodel.Reply{Status: 400, Body: `{"error":{"message":"bad"}}`}, "invalid_request"},
	} {
		fm := fakemodel.New(t, fakemodel.Always(c.rep))
		st := standIn(t, fm, 1, 1, direct)
		db := openDB(t)
		sum, err := runStudy(t, context.Background(), st, db)
		if err != nil || sum.Answered() || len(sum.Unanswered) != 1 || sum.Unanswered[c.kind] != 2 {
			t.Errorf("%s: %+v %v", c.kind, sum, err)
		}
		// A rerun skips permanent failures but still reports them.
		sum, err = runStudy(t, context.Background(), st, db)
		if err != nil || sum.Unanswered[c.kind] != 2 {
			t.Errorf("%s rerun: %+v %v", c.kind, sum, err)
		}
	}
	fm := fakemodel.New(t, fakemodel.Always(dollar))
	if sum, err := runStudy(t, context.Background(), standIn(t, fm, 1, 1, direct), openDB(t)); err != nil || !sum.Answered() || sum.Unanswered != nil {
		t.Errorf("all answered: %+v %v", sum, err)
	}
}

// TestSpendingCapWrongEstimate (issue 31 item 8): the server bills $30 a
// trial, far above the dry-run estimate (a few dollars: below a third of
// the $10 cap, so three estimates fit under it), and three workers could
// start trials together. Until a trial of a model × condition has shown
// its real cost, only one such trial is in flight: the first one costs
// $30 and stops the run, so exactly one request is sent and the spend is
// within the cap plus one trial. With two conditions, neither observed,
// still one request: one trial whose cost is unknown is in flight at a
// time in the whole run.
func TestSpendingCapWrongEstimate(t *testing.T) {
	thirty := fakemodel.Reply{PromptTokens: 30_000} // $30 at $1000/M
	for _, conds := range [][]study.Condition{{direct}, {direct, {Policy: "fps:1", Prompt: "direct"}}} {
		// Each reply is held until three requests are in flight or 300 ms
		// have passed, so that trials admitted together are in flight
		// together whatever the scheduling.
		var mu sync.Mutex
		arrived, gate := 0, make(chan struct{})
		fm := fakemodel.New(t, func(fakemodel.Request) fakemodel.Reply {
			mu.Lock()
			if arrived++; arrived == 3 {
				close(gate)
			}
			mu.Unlock()
			hold := make(chan struct{})
			go func() {
				select {
				case <-gate:
				case <-time.After(300 * time.Millisecond):
				}
				close(hold)
			}()
			r := thirty
			r.Hold = hold
			return r
		})
		st := standIn(t, fm, 4, 3, conds...)
		st.MaxUSD = 10
		clips, err := loadClips(st)
		if err != nil {
			t.Fatal(err)
		}
		for k, e := range estimates(st, clips, prompts.Default(), slog.New(slog.DiscardHandler)) {
			if e <= 0 || e >= st.MaxUSD/3 {
				t.Fatalf("%v: estimate $%.4f; the test needs one below a third of the cap", k, e)
			}
		}
		sum, err := runStudy(t, context.Background(), st, openDB(t))
		if !errors.Is(err, ErrBudget) || fm.Requests() != 1 || sum.Done != 1 || math.Abs(sum.CostUSD-30) > 1e-9 {
			t.Errorf("%d conditions: %+v %v, %d requests; want ErrBudget after exactly 1 request, $30 (cap $10 + one trial)",
				len(conds), sum, err, fm.Requests())
		}
	}
}

// TestBudgetReservesLargerOfEstimateAndObserved (issue 31 item 8): once a
// condition's cost is observed, a trial reserves the larger of the dry-run
// estimate and the largest observed cost; before that, one trial whose
// cost is unknown is in flight at a time.
func TestBudgetReservesLargerOfEstimateAndObserved(t *testing.T) {
	a, b := results.Key{Study: "s", Model: "m", Policy: "fps:1"}, results.Key{Study: "s", Model: "m", Policy: "fps:4"}
	bg := newBudget(100, 0, nil, map[results.Key]float64{a: 3, b: 2})
	ctx := context.Background()
	s1, err := bg.admit(ctx, ctx, a)
	if err != nil || s1 != (slot{reserved: 3, probe: true}) {
		t.Fatalf("first trial of a: %+v %v", s1, err)
	}
	// A second trial of an unobserved condition, a's or b's, waits.
	for _, k := range []results.Key{a, b} {
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		if s, err := bg.admit(short, ctx, k); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s admitted beside a probe: %+v %v", k.Policy, s, err)
		}
		cancel()
	}
	bg.release(a, s1, 1, true) // observed below the estimate
	for _, c := range []struct {
		observed, want float64
	}{{0, 3}, {5, 5}, {4, 5}} {
		if c.observed > 0 {
			bg.release(a, slot{}, c.observed, true)
		}
		s, err := bg.admit(ctx, ctx, a)
		if err != nil || s != (slot{reserved: c.want}) {
			t.Errorf("after $%v observed: %+v %v; want $%v reserved, no probe", c.observed, s, err, c.want)
		}
		bg.release(a, s, 0, false)
	}
}
