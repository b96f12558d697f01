package main

import (
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracegrid/tracegrid/eval/parse"
	"github.com/tracegrid/tracegrid/eval/results"
)

// exportDB writes a results database with three trials: two in study
// "main" (one answered correctly, one rate-limited) and one in "pilot".
func exportDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.db")
	db, err := results.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	three := 3
	ok := results.Trial{
		Key:    results.Key{Study: "main", Model: "ref", Clip: "bounce_ball-n3-f1.0-s0", Policy: "fps4", Labels: "time", Prompt: "direct"},
		Domain: "bounce_ball", N: 3, F: 1, Seed: 0, Trace: []byte(`{"schema":"tracegrid/trace/v1","n":3}`),
		FrameTimes: []float64{0, 0.25}, Images: 2, ImageBytes: 5000, PromptHash: "h1",
		Responses: []string{"Bounces at 1.0 s, 2.0 s, 3.0 s.\nFinal answer: 3"}, Count: &three, CountSource: "final_answer",
		Events:     []parse.Event{{T: 1, Text: "1.0 s"}, {T: 2, Attrs: map[string]string{"wall": "left"}, Text: "2.0 s"}},
		ParseFlags: []string{}, Usage: results.Usage{PromptTokens: 900, CompletionTokens: 30, TotalTokens: 930},
		LatencyMS: 1200, CostUSD: 0.002, Attempts: 1, FinishedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	failed := ok
	failed.Clip, failed.Count, failed.Responses, failed.Events = "blinking-n2-f2.0-s1", nil, nil, nil
	failed.Error, failed.ErrorKind, failed.Attempts = "HTTP 429", results.KindRateLimited, 4
	pilot := ok
	pilot.Study = "pilot"
	for _, tr := range []results.Trial{ok, failed, pilot} {
		if err := db.Put(context.Background(), tr); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func TestExportFormats(t *testing.T) {
	db := exportDB(t)
	dir := t.TempDir()

	// JSONL to a file, replacing what was there, leaving no temp file.
	out := filepath.Join(dir, "main.jsonl")
	os.WriteFile(out, []byte("stale\n"), 0o644)
	if msg, code := run(t, "export", "--db", db, "--format", "jsonl", "--out", out, "--study", "main"); code != 0 || !strings.Contains(msg, "exported 2 trials") {
		t.Fatalf("exit %d: %s", code, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines: %s", len(lines), b)
	}
	var rows []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, m)
	}
	// Ordered by clip: blinking before bounce_ball.
	if rows[0]["clip"] != "blinking-n2-f2.0-s1" || rows[0]["count"] != nil || rows[0]["correct"] != nil ||
		rows[0]["error_kind"] != "rate_limited" || rows[0]["attempts"] != 4.0 || rows[0]["done"] != false {
		t.Errorf("row 0: %v", rows[0])
	}
	r := rows[1]
	if r["study"] != "main" || r["model"] != "ref" || r["clip"] != "bounce_ball-n3-f1.0-s0" || r["policy"] != "fps4" || r["prompt"] != "direct" ||
		r["repeat"] != 0.0 || r["n"] != 3.0 || r["f"] != 1.0 || r["count"] != 3.0 || r["correct"] != true || r["cost"] != 0.002 ||
		r["error"] != "" || r["finished_at"] != "2026-01-02T03:04:05Z" || r["image_bytes"] != 5000.0 || r["prompt_hash"] != "h1" {
		t.Errorf("row 1: %v", r)
	}
	if ev, _ := json.Marshal(r["events"]); string(ev) != `[{"t":1,"text":"1.0 s"},{"attrs":{"wall":"left"},"t":2,"text":"2.0 s"}]` {
		t.Errorf("events %s", ev)
	}
	if u, _ := json.Marshal(r["usage"]); string(u) != `{"completion_tokens":30,"prompt_tokens":900,"total_tokens":930}` {
		t.Errorf("usage %s", u)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files in the output directory: %v", ents)
	}

	// CSV to stdout, all studies, one model.
	msg, code := run(t, "export", "--db", db, "--format", "csv", "--out", "-", "--model", "ref")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	recs, err := csv.NewReader(strings.NewReader(msg)).ReadAll()
	if err != nil {
		t.Fatalf("%v: %s", err, msg)
	}
	if len(recs) != 4 || strings.Join(recs[0], ",") != strings.Join(results.ExportColumns(), ",") {
		t.Fatalf("%d records: %v", len(recs), recs)
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	for i, want := range []struct{ study, clip, count, correct, responses string }{
		{"main", "blinking-n2-f2.0-s1", "", "", "[]"},
		{"main", "bounce_ball-n3-f1.0-s0", "3", "true", `["Bounces at 1.0 s, 2.0 s, 3.0 s.\nFinal answer: 3"]`},
		{"pilot", "bounce_ball-n3-f1.0-s0", "3", "true", `["Bounces at 1.0 s, 2.0 s, 3.0 s.\nFinal answer: 3"]`},
	} {
		rec := recs[i+1]
		if rec[col["study"]] != want.study || rec[col["clip"]] != want.clip || rec[col["count"]] != want.count ||
			rec[col["correct"]] != want.correct || rec[col["responses"]] != want.responses {
			t.Errorf("CSV row %d: %v", i, rec)
		}
	}
	if got := recs[2][col["trace"]]; got != `{"schema":"tracegrid/trace/v1","n":3}` {
		t.Errorf("trace cell %q", got)
	}
}

func TestExportBadInput(t *testing.T) {
	db := exportDB(t)
	dir := t.TempDir()
	other := filepath.Join(dir, "v7.db")
	raw, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("PRAGMA user_version = 7; CREATE TABLE x (y)"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	missing := filepath.Join(dir, "missing.db")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--db", db, "--format", "xml"}, `unknown --format "xml"`},
		{[]string{"--format", "csv"}, "--db is required"},
		{[]string{"--db", missing}, "no such file"},
		{[]string{"--db", other}, "schema version 7"},
		{[]string{"--db", writeFile(t, "notes.txt", "not a database\n")}, "not an SQLite database"},
		{[]string{"--db", db, "--study", "nope"}, `studies: main, pilot`},
		{[]string{"--db", db, "--limit", "3"}, "unknown flag"},
	}
	for _, c := range cases {
		out := filepath.Join(dir, "out.jsonl")
		msg, code := run(t, append([]string{"export", "--out", out}, c.args...)...)
		if code != 2 || !strings.Contains(msg, c.want) {
			t.Errorf("%v: exit %d, want 2 with %q:\n%s", c.args, code, c.want, msg)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s", c.args, out)
		}
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("export created the missing database")
	}
}
