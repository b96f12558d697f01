package results_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracegrid/tracegrid/eval/parse"
	"github.com/tracegrid/tracegrid/eval/results"
)

// writerEnv makes the test binary a writer that puts trials until killed
// (TestKilledWriter).
const writerEnv = "TRACEGRID_RESULTS_TEST_WRITER"

func TestMain(m *testing.M) {
	if path := os.Getenv(writerEnv); path != "" {
		os.Exit(writer(path))
	}
	if path := os.Getenv(lockHolderEnv); path != "" {
		os.Exit(holdLock(path))
	}
	os.Exit(m.Run())
}

// writer puts sample(0), sample(1), … and prints each index once Put has
// returned, until it is killed.
func writer(path string) int {
	db, err := results.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for i := 0; ; i++ {
		if err := db.Put(context.Background(), sample(i)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(i)
	}
}

func intp(v int) *int { return &v }

// sample is a trial with every field set, different for each i; its clip
// is "clip-%05d" with i.
func sample(i int) results.Trial {
	trace := fmt.Sprintf(`{"schema":"tracegrid/trace/v1","id":"clip-%05d","domain":"bounce_ball","n":3,"f":1.5,"seed":%d,"events":[{"t":3.2,"type":"wall_contact","before":"moving","after":"moving","count":1,"attrs":{"wall":"left"}}],"nuisance":{"pad":%q}}`,
		i, i, strings.Repeat("x", 2000))
	return results.Trial{
		Key:         results.Key{Study: "kill", Model: "gpt-x", Clip: fmt.Sprintf("clip-%05d", i), Policy: "fps4", Labels: "time", Prompt: "direct", Repeat: i % 3},
		Domain:      "bounce_ball",
		N:           3,
		F:           1.5,
		Seed:        i,
		Trace:       []byte(trace),
		FrameTimes:  []float64{0, 0.25, 0.5, float64(i)},
		Images:      4,
		ImageBytes:  int64(1000 + i),
		PromptHash:  fmt.Sprintf("sha256:%064x", i),
		Responses:   []string{strings.Repeat("The ball hits the wall at 3.2 s. ", 50), fmt.Sprintf("Final answer: %d", i)},
		Count:       intp(i),
		CountSource: parse.SourceFinalAnswer,
		Events:      []parse.Event{{T: 3.2, Attrs: map[string]string{"wall": "left"}, Text: "at 3.2 s"}},
		ParseFlags:  []string{"dropped_duplicates:1"},
		Usage:       results.Usage{PromptTokens: 100 + i, CompletionTokens: 20, TotalTokens: 120 + i},
		LatencyMS:   int64(10 * i),
		CostUSD:     0.001 * float64(i),
		Error:       "",
		ErrorKind:   "",
		Attempts:    1,
		FinishedAt:  time.Date(2026, 3, 1, 12, 0, i%60, 123456789, time.UTC),
	}
}

// full is a trial with every field non-zero.
func full() results.Trial {
	loc := time.FixedZone("CEST", 2*3600)
	return results.Trial{
		Key:         results.Key{Study: "s1", Model: "qwen2.5-vl", Clip: "bounce_ball-n3-f1.5-s2", Policy: "keyframes", Labels: "time", Prompt: "multi_turn_verification", Repeat: 2},
		Domain:      "bounce_ball",
		N:           3,
		F:           1.5,
		Seed:        2,
		Trace:       []byte(`{"schema": "tracegrid/trace/v1", "n": 3,` + "\n" + ` "events": [{"t": 2.5}]}`),
		FrameTimes:  []float64{2.4, 2.5, 2.6, 1e-7},
		Images:      4,
		ImageBytes:  1 << 40,
		PromptHash:  "sha256:abc",
		Responses:   []string{"At 0:02.5 it hits <left> & \"bounces\"", "Yes.\nFinal answer: \\boxed{3}\x00é"},
		Count:       intp(3),
		CountSource: parse.SourceBoxed,
		Events: []parse.Event{
			{T: 2.5, Attrs: map[string]string{"wall": "left", "phase": "x"}, Text: "At 0:02.5"},
			{T: 7.25, Text: "then at 7.25 s"},
		},
		ParseFlags:           []string{"time_ranges:1", "timestamps_out_of_order"},
		Usage:                results.Usage{PromptTokens: 1500, CompletionTokens: 60, TotalTokens: 1560, ReasoningTokens: 12},
		LatencyMS:            2345,
		CostUSD:              0.0123,
		Error:                "first turn: 429 then ok",
		ErrorKind:            results.KindParse,
		Attempts:             3,
		FinishedAt:           time.Date(2026, 4, 5, 6, 7, 8, 9, loc),
		FinishReasons:        []string{"stop", "length"},
		ServedModel:          "Qwen/Qwen2.5-VL-7B-Instruct",
		Reasoning:            []string{"", "I look at frame 2 <again> & \"count\"\x00é"},
		RequestIDs:           []string{"req-1", "chatcmpl-2"},
		TemplateHash:         "th-1",
		BatchFile:            "batch_out.jsonl",
		InputAudit:           results.AuditAccepted,
		ExpectedPromptTokens: 1600,
		AuditNote:            "reported 1500 < expected 1600",
	}
}

func open(t *testing.T) (*results.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.db")
	db, err := results.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func TestRoundTripEveryField(t *testing.T) {
	in := full()
	// The test covers every field: a new field left zero here (and so
	// perhaps not stored) fails it.
	v := reflect.ValueOf(in)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("full() leaves %s zero", v.Type().Field(i).Name)
		}
	}
	for i := range v.Field(0).NumField() {
		if v.Field(0).Field(i).IsZero() {
			t.Fatalf("full() leaves Key.%s zero", v.Field(0).Type().Field(i).Name)
		}
	}

	db, path := open(t)
	ctx := context.Background()
	if err := db.Put(ctx, in); err != nil {
		t.Fatal(err)
	}
	want := in
	want.FinishedAt = in.FinishedAt.UTC()
	got, ok, err := db.Get(ctx, in.Key)
	if err != nil || !ok {
		t.Fatalf("Get: ok=%v err=%v", ok, err)
	}
	if !got.FinishedAt.Equal(in.FinishedAt) {
		t.Errorf("FinishedAt %v, want %v", got.FinishedAt, in.FinishedAt)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %#v\nwant %#v", got, want)
	}
	if string(got.Trace) != string(in.Trace) {
		t.Errorf("trace not byte for byte: %s", got.Trace)
	}

	// The zero outcome round-trips too: nil lists stay nil, a nil count stays nil.
	zero := results.Trial{Key: results.Key{Study: "s1", Model: "m", Clip: "c", Policy: "p", Labels: "time", Prompt: "q"}}
	if err := db.Put(ctx, zero); err != nil {
		t.Fatal(err)
	}
	if got, _, err := db.Get(ctx, zero.Key); err != nil || !reflect.DeepEqual(got, zero) {
		t.Errorf("zero trial: got %#v err %v", got, err)
	}

	// Reopened, and read-only, the rows are the same.
	db.Close()
	ro, err := results.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	all, err := ro.Trials(ctx, results.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || !reflect.DeepEqual(all[0], zero) || !reflect.DeepEqual(all[1], want) {
		t.Errorf("Trials after reopen: %#v", all)
	}
	if _, ok, err := ro.Get(ctx, results.Key{Study: "none"}); ok || err != nil {
		t.Errorf("Get of a missing key: ok=%v err=%v", ok, err)
	}
}

func TestUpsertReplaces(t *testing.T) {
	db, _ := open(t)
	ctx := context.Background()
	first := full()
	first.Error, first.ErrorKind, first.Count, first.Responses = "429 Too Many Requests", results.KindRateLimited, nil, nil
	if err := db.Put(ctx, first); err != nil {
		t.Fatal(err)
	}
	second := full()
	second.Attempts = 2
	second.Events = nil
	second.FinishedAt = second.FinishedAt.UTC()
	if err := db.Put(ctx, second); err != nil {
		t.Fatal(err)
	}
	all, err := db.Trials(ctx, results.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || !reflect.DeepEqual(all[0], second) {
		t.Fatalf("after upsert: %d rows, %#v", len(all), all)
	}
}

func TestDoneSet(t *testing.T) {
	db, _ := open(t)
	ctx := context.Background()
	cases := []struct {
		err, kind string
		done      bool
	}{
		{"", "", true},
		{"HTTP 400: image too large", results.KindInvalidRequest, true},
		{"reply has no count", results.KindParse, true},
		{"HTTP 429", results.KindRateLimited, false},
		{"HTTP 503", results.KindServer, false},
		{"context deadline exceeded", results.KindTimeout, false},
		{"connection reset", "", false}, // unclassified: retried
	}
	want := map[results.Key]bool{}
	for i, c := range cases {
		tr := full()
		tr.Repeat = i
		tr.Error, tr.ErrorKind = c.err, c.kind
		if tr.Done() != c.done {
			t.Errorf("%q/%q: Done() = %v", c.err, c.kind, tr.Done())
		}
		if c.done {
			want[tr.Key] = true
		}
		if err := db.Put(ctx, tr); err != nil {
			t.Fatal(err)
		}
	}
	other := full()
	other.Study = "s2"
	if err := db.Put(ctx, other); err != nil {
		t.Fatal(err)
	}
	got, err := db.Done(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Done(s1) = %v, want %v", got, want)
	}
	all, err := db.Done(ctx, "")
	if err != nil || len(all) != len(want)+1 || !all[other.Key] {
		t.Errorf("Done(\"\") = %v, %v", all, err)
	}
	if none, err := db.Done(ctx, "nope"); err != nil || len(none) != 0 {
		t.Errorf("Done(nope) = %v, %v", none, err)
	}
	// A retried trial that then succeeds joins the set.
	retry := full()
	retry.Repeat = 3
	retry.Error, retry.ErrorKind = "", ""
	if err := db.Put(ctx, retry); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Done(ctx, "s1"); !got[retry.Key] {
		t.Error("a successful rerun of a rate-limited trial is not done")
	}
}

func TestTrialsOrderFilterStudies(t *testing.T) {
	db, _ := open(t)
	ctx := context.Background()
	var keys []results.Key
	for _, s := range []string{"b", "a"} {
		for _, m := range []string{"m2", "m1"} {
			for _, c := range []string{"c2", "c10", "c1"} {
				for r := 11; r >= 9; r-- {
					tr := full()
					tr.Key = results.Key{Study: s, Model: m, Clip: c, Policy: "fps1", Labels: "time", Prompt: "direct", Repeat: r}
					keys = append(keys, tr.Key)
					if err := db.Put(ctx, tr); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	all, err := db.Trials(ctx, results.Filter{})
	if err != nil || len(all) != len(keys) {
		t.Fatalf("%d trials, %v", len(all), err)
	}
	for i := 1; i < len(all); i++ {
		a, b := all[i-1].Key, all[i].Key
		less := a.Study < b.Study || a.Study == b.Study && (a.Model < b.Model || a.Model == b.Model && (a.Clip < b.Clip || a.Clip == b.Clip && a.Repeat < b.Repeat))
		if !less {
			t.Fatalf("order: %v before %v", a, b)
		}
	}
	sel, err := db.Trials(ctx, results.Filter{Study: "a", Model: "m2"})
	if err != nil || len(sel) != 9 {
		t.Fatalf("filter: %d, %v", len(sel), err)
	}
	for _, tr := range sel {
		if tr.Study != "a" || tr.Model != "m2" {
			t.Errorf("filter returned %v", tr.Key)
		}
	}
	if sel, _ := db.Trials(ctx, results.Filter{Model: "m1"}); len(sel) != 18 {
		t.Errorf("model filter: %d", len(sel))
	}
	studies, err := db.Studies(ctx)
	if err != nil || !reflect.DeepEqual(studies, []string{"a", "b"}) {
		t.Errorf("Studies = %v, %v", studies, err)
	}
}

func TestPutRefusesBadTrials(t *testing.T) {
	db, _ := open(t)
	ctx := context.Background()
	for name, mod := range map[string]func(*results.Trial){
		"empty study":  func(t *results.Trial) { t.Study = "" },
		"empty prompt": func(t *results.Trial) { t.Prompt = "" },
		"neg repeat":   func(t *results.Trial) { t.Repeat = -1 },
		"bad trace":    func(t *results.Trial) { t.Trace = []byte("{") },
		"nan cost":     func(t *results.Trial) { t.CostUSD = nanf() },
		"nan event":    func(t *results.Trial) { t.Events = []parse.Event{{T: nanf()}} },
	} {
		tr := full()
		mod(&tr)
		if err := db.Put(ctx, tr); err == nil {
			t.Errorf("%s: Put accepted it", name)
		}
	}
	if all, _ := db.Trials(ctx, results.Filter{}); len(all) != 0 {
		t.Errorf("%d rows after refused puts", len(all))
	}
}

func nanf() float64 { z := 0.0; return z / z }

func TestOtherSchemaVersion(t *testing.T) {
	db, path := open(t)
	db.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("PRAGMA user_version = 7"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	for name, openf := range map[string]func(string) (*results.DB, error){"Open": results.Open, "OpenReadOnly": results.OpenReadOnly} {
		_, err := openf(path)
		if !errors.Is(err, results.ErrSchema) {
			t.Fatalf("%s: err = %v, want ErrSchema", name, err)
		}
		msg := err.Error()
		for _, s := range []string{"schema version 7", "reads version 4", "newer tracegrid", path} {
			if !strings.Contains(msg, s) {
				t.Errorf("%s: message %q lacks %q", name, msg, s)
			}
		}
	}
}

func TestForeignSQLiteDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('hi')"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	before, _ := os.ReadFile(path)
	_, err = results.Open(path)
	if !errors.Is(err, results.ErrSchema) || !strings.Contains(err.Error(), "not a tracegrid results store") || !strings.Contains(err.Error(), "notes") {
		t.Fatalf("err = %v", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("Open changed a database that is not ours")
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Error("Open left a WAL beside a database that is not ours")
	}
}

func TestTextFileIsNotADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	text := "study,model\nthis is a CSV, not a database\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, openf := range map[string]func(string) (*results.DB, error){"Open": results.Open, "OpenReadOnly": results.OpenReadOnly} {
		_, err := openf(path)
		if !errors.Is(err, results.ErrNotDatabase) {
			t.Fatalf("%s: err = %v, want ErrNotDatabase", name, err)
		}
		if msg := err.Error(); !strings.Contains(msg, "not an SQLite database") || !strings.Contains(msg, "notes.txt") || !strings.Contains(msg, "study,model") {
			t.Errorf("%s: message %q", name, msg)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != text {
		t.Error("the text file was changed")
	}
	// A file with the SQLite header but garbage after it.
	bad := filepath.Join(t.TempDir(), "bad.db")
	if err := os.WriteFile(bad, append([]byte("SQLite format 3\x00"), make([]byte, 200)...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := results.Open(bad); err == nil {
		t.Error("a corrupt header opened")
	}
	// A directory.
	if _, err := results.Open(t.TempDir()); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("directory: %v", err)
	}
}

func TestOpenReadOnlyMissing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "missing.db")
	db, err := results.OpenReadOnly(path)
	if err == nil {
		db.Close()
		t.Fatal("OpenReadOnly created a database")
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err = %v, want fs.ErrNotExist", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files left: %v", ents)
	}
	// Open does not create directories either.
	if _, err := results.Open(filepath.Join(dir, "no", "such", "x.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open in a missing directory: %v", err)
	}
	// An empty file is an empty database: Open adopts it, OpenReadOnly refuses it.
	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o644)
	if _, err := results.OpenReadOnly(empty); !errors.Is(err, results.ErrSchema) {
		t.Errorf("OpenReadOnly(empty) = %v", err)
	}
	db, err = results.Open(empty)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
}

func TestReadOnlyBesideWriter(t *testing.T) {
	db, path := open(t)
	ctx := context.Background()
	if err := db.Put(ctx, full()); err != nil {
		t.Fatal(err)
	}
	ro, err := results.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if err := ro.Put(ctx, full()); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("Put on a read-only DB: %v", err)
	}
	tr := full()
	tr.Repeat = 9
	if err := db.Put(ctx, tr); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := ro.Get(ctx, tr.Key); !ok || err != nil {
		t.Errorf("reader does not see the writer's commit: %v %v", ok, err)
	}
	// Close is idempotent and nil-safe; a closed DB returns errors.
	if err := ro.Close(); err != nil {
		t.Error(err)
	}
	if err := ro.Close(); err != nil {
		t.Error(err)
	}
	if _, err := ro.Trials(ctx, results.Filter{}); err == nil {
		t.Error("Trials on a closed DB")
	}
	var nilDB *results.DB
	if err := nilDB.Close(); err != nil {
		t.Error(err)
	}
}

// Two handles (as two processes would have) with four goroutines each put
// trials at once; none may fail with "database is locked".
func TestConcurrentPut(t *testing.T) {
	db1, path := open(t)
	db2, err := results.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	const goroutines, per = 8, 40
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*per)
	for g := range goroutines {
		db := db1
		if g%2 == 1 {
			db = db2
		}
		wg.Go(func() {
			for i := range per {
				tr := sample(g*per + i)
				tr.Study = "conc"
				if err := db.Put(ctx, tr); err != nil {
					errs <- err
				}
				// Everyone also rewrites one shared key.
				shared := sample(0)
				shared.Study, shared.Clip, shared.Attempts = "conc", "shared", g*per+i
				if err := db.Put(ctx, shared); err != nil {
					errs <- err
				}
				if _, err := db.Done(ctx, "conc"); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	all, err := db1.Trials(ctx, results.Filter{Study: "conc"})
	if err != nil || len(all) != goroutines*per+1 {
		t.Fatalf("%d rows, %v", len(all), err)
	}
}

// A writer killed with SIGKILL while putting trials leaves a database that
// opens, passes SQLite's integrity check, holds every trial whose Put had
// returned, and only whole rows.
func TestKilledWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "killed.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), writerEnv+"="+path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	last := -1
	sc := bufio.NewScanner(stdout)
	for last < 150 && sc.Scan() {
		if last, err = strconv.Atoi(sc.Text()); err != nil {
			t.Fatal(err)
		}
	}
	// Kill at an arbitrary point inside the next puts.
	time.Sleep(time.Duration(time.Now().UnixNano()%7) * time.Millisecond)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		last, _ = strconv.Atoi(sc.Text())
	}
	cmd.Wait()
	if last < 150 {
		t.Fatalf("writer stopped at %d: %s", last, stderr.String())
	}

	raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var check string
	if err := raw.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check: %q %v", check, err)
	}
	raw.Close()

	for name, openf := range map[string]func(string) (*results.DB, error){"OpenReadOnly": results.OpenReadOnly, "Open": results.Open} {
		db, err := openf(path)
		if err != nil {
			t.Fatalf("%s after kill: %v", name, err)
		}
		all, err := db.Trials(context.Background(), results.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		for _, got := range all {
			i, err := strconv.Atoi(strings.TrimPrefix(got.Clip, "clip-"))
			if err != nil {
				t.Fatalf("row %v", got.Key)
			}
			if !reflect.DeepEqual(got, sample(i)) {
				t.Errorf("%s: row %d is not whole", name, i)
			}
			seen[i] = true
		}
		for i := 0; i <= last; i++ {
			if !seen[i] {
				t.Errorf("%s: trial %d was acknowledged but is lost", name, i)
			}
		}
		if len(all) > last+2 {
			t.Errorf("%s: %d rows, only %d acknowledged", name, len(all), last+1)
		}
		db.Close()
	}
	t.Logf("killed after %d acknowledged puts", last+1)
}
