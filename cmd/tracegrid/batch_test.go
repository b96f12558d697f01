package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/internal/fakemodel"
)

// TestEvalBatchRoundTrip: --batch-out writes the study's four trials as
// one batch file and sends nothing; a local stand-in answers the file;
// --batch-in records it; `tracegrid export` shows every trial once with
// its count and its cost at half price; a second --batch-in of the same
// file changes nothing.
func TestEvalBatchRoundTrip(t *testing.T) {
	manifest := renderSmall(t)
	fm := fakemodel.New(t, fakemodel.Always(fakemodel.Reply{PromptTokens: 1000, CompletionTokens: 10}))
	db := filepath.Join(t.TempDir(), "r.db")
	study := studyFile(t, manifest, fm.URL(), db, 2, 1, "")
	dir := filepath.Join(t.TempDir(), "batch")
	msg, code := run(t, "eval", "--config", study, "--batch-out", dir)
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if code != 0 || len(files) != 1 || filepath.Base(files[0]) != "cli-money.m.0001.jsonl" || fm.Requests() != 0 ||
		!strings.Contains(msg, "wrote 4 requests in 1 files") {
		t.Fatalf("batch-out: exit %d, files %v, %d requests:\n%s", code, files, fm.Requests(), msg)
	}
	in, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var answered bytes.Buffer
	err = fm.AnswerBatch(in, &answered)
	in.Close()
	if err != nil || fm.Requests() != 4 {
		t.Fatalf("answer: %v, %d requests", err, fm.Requests())
	}
	out := writeFile(t, "out.jsonl", answered.String())

	if msg, code := run(t, "eval", "--config", study, "--batch-in", out); code != 0 || !strings.Contains(msg, "4 lines: 4 trials recorded ($2.0000 at batch prices), 0 already recorded") {
		t.Fatalf("batch-in: exit %d\n%s", code, msg)
	}
	export := func() string {
		s, code := run(t, "export", "--db", db, "--format", "jsonl")
		if code != 0 {
			t.Fatalf("export: %s", s)
		}
		return s
	}
	first := export()
	lines := strings.Split(strings.TrimSpace(first), "\n")
	seen := map[string]bool{}
	for _, l := range lines {
		var row struct {
			Clip, Prompt string
			Repeat       int
			Count        *int
			Cost         float64
			BatchFile    string `json:"batch_file"`
		}
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatal(err)
		}
		key := row.Clip + "#" + string(rune('0'+row.Repeat))
		// (1000 tokens × $1000/M) × 0.5 = $0.50; output is free here.
		if seen[key] || row.Count == nil || *row.Count != 2 || row.Cost != 0.5 || row.BatchFile != "out.jsonl" {
			t.Errorf("row %s", l[:min(len(l), 300)])
		}
		seen[key] = true
	}
	if len(lines) != 4 || len(seen) != 4 {
		t.Fatalf("%d rows:\n%s", len(lines), first)
	}
	msg, code = run(t, "eval", "--config", study, "--batch-in", out)
	if code != 0 || !strings.Contains(msg, "0 trials recorded ($0.0000 at batch prices), 4 already recorded, 0 not recorded") || export() != first {
		t.Errorf("second batch-in: exit %d\n%s", code, msg)
	}
	// Every trial is answered: an online run sends nothing and exits 0.
	if msg, code := run(t, "eval", "--config", study); code != 0 || fm.Requests() != 4 {
		t.Errorf("online after the batch: exit %d, %d requests\n%s", code, fm.Requests(), msg)
	}
	// A line of another study is reported, and eval exits 1.
	bad := writeFile(t, "bad.jsonl", `{"custom_id":"other/m/x/uniform:2/time/direct#0","response":{"status_code":200,"body":{}},"error":null}`+"\n")
	if msg, code := run(t, "eval", "--config", study, "--batch-in", bad); code != 1 || !strings.Contains(msg, "unknown") {
		t.Errorf("unknown line: exit %d\n%s", code, msg)
	}
}

// TestEvalFlagModeEnvironment: without --base-url and --api-key-env, flag
// mode takes OPENAI_BASE_URL and the key in OPENAI_API_KEY.
func TestEvalFlagModeEnvironment(t *testing.T) {
	manifest := renderSmall(t)
	fm := fakemodel.New(t, fakemodel.Always(fakemodel.Reply{PromptTokens: 10}))
	t.Setenv("OPENAI_BASE_URL", fm.URL())
	t.Setenv("OPENAI_API_KEY", "sk-env-key")
	db := filepath.Join(t.TempDir(), "r.db")
	msg, code := run(t, "eval", "--manifest", manifest, "--model", "m", "--policy", "uniform:2", "--prompt", "direct", "--db", db)
	if code != 0 || fm.Requests() != 2 {
		t.Fatalf("exit %d, %d requests\n%s", code, fm.Requests(), msg)
	}
	for _, r := range fm.Received() {
		if r.Auth != "Bearer sk-env-key" {
			t.Errorf("Authorization %q", r.Auth)
		}
	}
	t.Setenv("OPENAI_BASE_URL", "")
	if msg, code := run(t, "eval", "--manifest", manifest, "--model", "m", "--policy", "uniform:2", "--prompt", "direct", "--db", db); code != 2 || !strings.Contains(msg, "OPENAI_BASE_URL") {
		t.Errorf("no base URL: exit %d\n%s", code, msg)
	}
}
