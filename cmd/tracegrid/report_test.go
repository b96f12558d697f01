package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/tracegrid/tracegrid/eval/report"
	"github.com/tracegrid/tracegrid/eval/results"
)

// reportDB stores trials in a new results database.
func reportDB(t *testing.T, trials ...results.Trial) string {
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

func reportTrial(study, clip string, swap bool) results.Trial {
	tr := report.DemoTrace("bounce_ball", 2, 1, 0)
	tr.ID = clip
	if swap {
		tr.Events[0].T, tr.Events[1].T = tr.Events[1].T, tr.Events[0].T
	}
	raw, _ := json.Marshal(tr)
	n := 2
	return results.Trial{Key: results.Key{Study: study, Model: "m", Clip: clip, Policy: "native:1", Labels: "time", Prompt: "direct"},
		Domain: tr.Domain, N: tr.N, F: tr.F, Trace: raw, Count: &n, Attempts: 1}
}

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "demo.sqlite")
	if out, code := run(t, "report-demo-db", "--out", db, "--seeds", "1"); code != 0 {
		t.Fatalf("report-demo-db: exit %d: %s", code, out)
	}
	out, code := run(t, "report", "--db", db, "--out", filepath.Join(dir, "rep"), "--tolerance", "0.5", "--tau", "0.6")
	if code != 0 || !strings.Contains(out, "index.html") {
		t.Fatalf("report: exit %d: %s", code, out)
	}
	var s struct {
		Study     string  `json:"study"`
		Tolerance string  `json:"tolerance"`
		Tau       float64 `json:"tau"`
		Surfaces  []any   `json:"surfaces"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "rep", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Study != report.DemoStudy || s.Tolerance != "0.5s" || s.Tau != 0.6 || len(s.Surfaces) == 0 {
		t.Errorf("summary: study %q tolerance %q tau %v, %d cells", s.Study, s.Tolerance, s.Tau, len(s.Surfaces))
	}
	for _, f := range []string{"index.html", "tables/surfaces.csv", "tables/table1_domains.csv"} {
		if _, err := os.Stat(filepath.Join(dir, "rep", f)); err != nil {
			t.Error(err)
		}
	}
	// The demo database is not overwritten.
	if out, code := run(t, "report-demo-db", "--out", db); code != 2 || !strings.Contains(out, "exists") {
		t.Errorf("report-demo-db over a file: exit %d: %s", code, out)
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	good := reportDB(t, reportTrial("s1", "clip_a", false))
	two := reportDB(t, reportTrial("s1", "clip_a", false), reportTrial("s2", "clip_a", false))
	unsorted := reportDB(t, reportTrial("s1", "clip_a", false), reportTrial("s1", "clip_unsorted", true))
	empty := reportDB(t)
	other := filepath.Join(dir, "other.sqlite")
	sdb, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sdb.Exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('x')`); err != nil {
		t.Fatal(err)
	}
	sdb.Close()
	text := writeFile(t, "notes.txt", "not a database\n")
	out := filepath.Join(dir, "out")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"report", "--out", out}, "--db is required"},
		{[]string{"report", "--db", good}, "--out is required"},
		{[]string{"report", "--db", filepath.Join(dir, "missing.sqlite"), "--out", out}, "does not exist"},
		{[]string{"report", "--db", dir, "--out", out}, "is a directory"},
		{[]string{"report", "--db", other, "--out", out}, "schema"},
		{[]string{"report", "--db", text, "--out", out}, "not an SQLite database"},
		{[]string{"report", "--db", empty, "--out", out}, "no trials"},
		{[]string{"report", "--db", good, "--study", "nope", "--out", out}, `study "nope": no trials`},
		{[]string{"report", "--db", two, "--out", out}, "choose one with --study"},
		{[]string{"report", "--db", good, "--out", out, "--tolerance", "wide"}, "--tolerance"},
		{[]string{"report", "--db", good, "--out", out, "--tolerance", "-1"}, "--tolerance"},
		{[]string{"report", "--db", good, "--out", out, "--tau", "0"}, "--tau"},
		{[]string{"report", "--db", good, "--out", out, "--tau", "1.5"}, "--tau"},
		{[]string{"report", "--db", unsorted, "--out", out}, "clip_unsorted"},
	}
	for _, c := range cases {
		got, code := run(t, c.args...)
		if code != 2 || !strings.Contains(got, c.want) {
			t.Errorf("tracegrid %s: exit %d, output %q; want exit 2 and %q", strings.Join(c.args, " "), code, got, c.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a failed report wrote %s", out)
	}
	// With the study named, a two-study database reports.
	if got, code := run(t, "report", "--db", two, "--study", "s2", "--out", out); code != 0 {
		t.Errorf("report --study s2: exit %d: %s", code, got)
	}
}
