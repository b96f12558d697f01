package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/internal/fakemodel"
)

// answerFile answers a batch input file with the stand-in and writes the
// output file beside it.
func answerFile(t *testing.T, fm *fakemodel.Server, in string) string {
	t.Helper()
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	if err := fm.AnswerBatch(f, &out); err != nil {
		t.Fatal(err)
	}
	path := strings.TrimSuffix(in, ".jsonl") + ".out.jsonl"
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func batchOpts(st *study.Study, db *results.DB) Options {
	return Options{Study: st, Prompts: prompts.Default(), DB: db, Renderer: testRenderer}
}

// TestBatchRoundTrip: the pending trials are written as OpenAI Batch
// lines (the body the online request would be); an online run meanwhile
// leaves them alone; the stand-in answers the file offline; reading it
// back records every trial once, at the batch price, with its count; a
// second reading changes nothing.
func TestBatchRoundTrip(t *testing.T) {
	fm := fakemodel.New(t, fakemodel.Always(fakemodel.Reply{PromptTokens: 1000, CompletionTokens: 10, RequestID: "req-b"}))
	st := standIn(t, fm, 2, 1, direct, study.Condition{Policy: "fps:1", Prompt: "structured_trace"}, study.Condition{Policy: "uniform:2", Prompt: "multi_turn_verification"})
	db := openDB(t)
	dir := t.TempDir()
	out, err := WriteBatch(context.Background(), batchOpts(st, db), dir)
	if err != nil {
		t.Fatal(err)
	}
	// 2 clips × 2 single-turn conditions × 2 repetitions; the two-turn
	// condition is left for an online run.
	if out.Lines != 8 || len(out.Files) != 1 || filepath.Base(out.Files[0]) != "money.fake.0001.jsonl" || fm.Requests() != 0 ||
		out.Skipped["two-turn template (its second turn needs the first reply); run it online"] != 4 || out.EstimatedUSD <= 0 {
		t.Fatalf("%+v, %d requests", out, fm.Requests())
	}
	b, _ := os.ReadFile(out.Files[0])
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var l struct {
			CustomID string         `json:"custom_id"`
			Method   string         `json:"method"`
			URL      string         `json:"url"`
			Body     map[string]any `json:"body"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		if l.Method != "POST" || l.URL != "/v1/chat/completions" || l.Body["model"] != "fake-1" || l.Body["stream"] != false {
			t.Errorf("line %s", line[:min(len(line), 200)])
		}
		ids = append(ids, l.CustomID)
	}
	if !slices.Contains(ids, trialKey(st, st.Models[0], manifestIDs(t)[0], direct, 1).String()) {
		t.Errorf("custom_ids %v", ids)
	}
	// An online run now sends only the two-turn trials.
	sum, err := runStudy(t, context.Background(), st, db)
	if err != nil || fm.Requests() != 8 || sum.Done != 4 || sum.Unanswered[results.KindBatchPending] != 8 || len(sum.Unanswered) != 1 {
		t.Fatalf("online run during the batch: %+v %v, %d requests", sum, err, fm.Requests())
	}
	outFile := answerFile(t, fm, out.Files[0])
	in, err := ReadBatch(context.Background(), batchOpts(st, db), []string{outFile})
	if err != nil || in.Lines != 8 || in.Recorded != 8 || in.AlreadyRecorded != 0 || len(in.Problems) != 0 {
		t.Fatalf("read: %+v %v", in, err)
	}
	// $1000/M in, $2000/M out, × 0.5.
	perTrial := (1000*1000 + 10*2000) / 1e6 * 0.5
	if math.Abs(in.CostUSD-8*perTrial) > 1e-9 {
		t.Errorf("cost %v, want %v", in.CostUSD, 8*perTrial)
	}
	before, _ := db.Trials(context.Background(), results.Filter{Study: st.Name})
	if len(before) != 12 {
		t.Fatalf("%d trials", len(before))
	}
	seen := map[results.Key]int{}
	for _, tr := range before {
		seen[tr.Key]++
		if tr.Prompt == "multi_turn_verification" {
			continue
		}
		if tr.Count == nil || *tr.Count != 2 || tr.BatchFile != filepath.Base(outFile) || math.Abs(tr.CostUSD-perTrial) > 1e-12 ||
			strings.Join(tr.RequestIDs, ",") != "req-b" || tr.Images == 0 || tr.PromptHash == "" || tr.TemplateHash == "" || len(tr.FrameTimes) != tr.Images {
			t.Errorf("%v: %+v", tr.Key, tr)
		}
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%v stored %d times", k, n)
		}
	}
	again, err := ReadBatch(context.Background(), batchOpts(st, db), []string{outFile})
	if err != nil || again.Recorded != 0 || again.AlreadyRecorded != 8 || len(again.Problems) != 0 {
		t.Errorf("second read: %+v %v", again, err)
	}
	after, _ := db.Trials(context.Background(), results.Filter{Study: st.Name})
	if !reflect.DeepEqual(before, after) {
		t.Errorf("the second read changed the database")
	}
	// Everything answered: a rerun sends nothing, a new batch has no line.
	if sum, err := runStudy(t, context.Background(), st, db); err != nil || !sum.Answered() || fm.Requests() != 16 {
		t.Errorf("rerun: %+v %v, %d requests", sum, err, fm.Requests())
	}
	if out, err := WriteBatch(context.Background(), batchOpts(st, db), dir); err != nil || out.Lines != 0 || len(out.Removed) != 1 {
		t.Errorf("second write: %+v %v", out, err)
	}
	if _, err := os.Stat(out.Files[0]); !os.IsNotExist(err) {
		t.Errorf("stale batch file kept: %v", err)
	}
}

// TestBatchProblems: failed lines, unknown custom_ids and malformed lines
// are reported and not stored; a failed line's trial may be sent again
// (online), and so may a reply recorded as a failure (impossible usage);
// a second reading changes nothing.
func TestBatchProblems(t *testing.T) {
	fm := fakemodel.New(t, func(r fakemodel.Request) fakemodel.Reply {
		if r.N == 2 {
			return fakemodel.Reply{Status: 500}
		}
		if r.N == 3 {
			return fakemodel.Reply{Status: 400, Body: `{"error":{"message":"too many images"}}`}
		}
		if r.N == 4 {
			return fakemodel.Reply{PromptTokens: -5}
		}
		return fakemodel.Reply{PromptTokens: 100}
	})
	st := standIn(t, fm, 2, 1, direct)
	db := openDB(t)
	out, err := WriteBatch(context.Background(), batchOpts(st, db), t.TempDir())
	if err != nil || out.Lines != 4 {
		t.Fatalf("%+v %v", out, err)
	}
	outFile := answerFile(t, fm, out.Files[0])
	b, _ := os.ReadFile(outFile)
	extra := `{"custom_id":"money/fake/nope/uniform:2/time/direct#0","response":{"status_code":200,"body":{}},"error":null}` + "\nnot json\n"
	if err := os.WriteFile(outFile, append(b, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := ReadBatch(context.Background(), batchOpts(st, db), []string{outFile})
	if err != nil || in.Recorded != 2 || in.Lines != 6 {
		t.Fatalf("%+v %v", in, err)
	}
	kinds := map[string]int{}
	for _, p := range in.Problems {
		kinds[p.Kind]++
		if p.File != outFile || p.Line == 0 {
			t.Errorf("problem %+v", p)
		}
	}
	if kinds["failed"] != 2 || kinds["unknown"] != 1 || kinds["malformed"] != 1 || !strings.Contains(in.Problems[1].Message, "too many images") {
		t.Errorf("problems %+v", in.Problems)
	}
	before, _ := db.Trials(context.Background(), results.Filter{Study: st.Name})
	again, err := ReadBatch(context.Background(), batchOpts(st, db), []string{outFile})
	after, _ := db.Trials(context.Background(), results.Filter{Study: st.Name})
	if err != nil || again.Recorded != 0 || again.AlreadyRecorded != 2 || len(again.Problems) != 4 || !reflect.DeepEqual(before, after) {
		t.Errorf("second read: %+v %v", again, err)
	}
	var bad int
	for _, tr := range after {
		if tr.ErrorKind == results.KindBadUsage && tr.BatchFile != "" {
			bad++
		}
	}
	// The two failed trials and the one with impossible usage are sent
	// online; the answered one is not.
	sum, err := runStudy(t, context.Background(), st, db)
	if err != nil || bad != 1 || sum.Done != 3 || sum.Skipped != 1 || fm.Requests() != 7 {
		t.Errorf("online after the batch: %+v %v, %d requests, %d bad usage", sum, err, fm.Requests(), bad)
	}
}

// TestBatchSplitsFiles: a file never passes the line or byte limit; each
// file holds one model's requests.
func TestBatchSplitsFiles(t *testing.T) {
	defer func(l int, b int64) { batchLineLimit, batchByteLimit = l, b }(batchLineLimit, batchByteLimit)
	fm := fakemodel.New(t, fakemodel.Always(dollar))
	st := standIn(t, fm, 3, 1, direct) // 6 trials
	st.Models = append(st.Models, st.Models[0])
	st.Models[1].Name = "other"
	db := openDB(t)
	dir := t.TempDir()
	batchLineLimit = 4
	out, err := WriteBatch(context.Background(), batchOpts(st, db), dir)
	if err != nil || out.Lines != 12 || len(out.Files) != 4 {
		t.Fatalf("line limit 4: %+v %v", out, err)
	}
	lines := func(f string) []string {
		fh, _ := os.Open(f)
		defer fh.Close()
		var ls []string
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			ls = append(ls, sc.Text())
		}
		return ls
	}
	for i, want := range []struct {
		name  string
		lines int
	}{{"money.fake.0001.jsonl", 4}, {"money.fake.0002.jsonl", 2}, {"money.other.0001.jsonl", 4}, {"money.other.0002.jsonl", 2}} {
		ls := lines(out.Files[i])
		if filepath.Base(out.Files[i]) != want.name || len(ls) != want.lines {
			t.Errorf("file %d: %s with %d lines, want %s with %d", i, out.Files[i], len(ls), want.name, want.lines)
		}
		model := strings.Split(want.name, ".")[1]
		for _, l := range ls {
			if !strings.HasPrefix(l, `{"custom_id":"money/`+model+`/`) {
				t.Errorf("%s holds %s", want.name, l[:40])
			}
		}
	}
	// A byte limit of two lines' worth: files of at most 2 lines.
	size := int64(len(lines(out.Files[0])[0]))
	batchLineLimit, batchByteLimit = MaxBatchLines, 2*size+2+size/2
	out, err = WriteBatch(context.Background(), batchOpts(st, db), dir)
	if err != nil || out.Lines != 12 || len(out.Files) != 6 || len(out.Removed) != 0 {
		t.Fatalf("byte limit: %+v %v", out, err)
	}
	for _, f := range out.Files {
		fi, _ := os.Stat(f)
		if fi.Size() > batchByteLimit || len(lines(f)) != 2 {
			t.Errorf("%s: %d bytes, %d lines", f, fi.Size(), len(lines(f)))
		}
	}
}
