package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunEndToEnd is the whole path on a small grid: render → the
// reference perceiver served on loopback → eval → score → report, checked
// through summary.json. With fps:16 the frames hold every event, so the
// perceiver must count every clip right and recover every event; with
// keyframes it recovers every event of the positive clips (N = 0 gets no
// frames and no answer).
func TestRunEndToEnd(t *testing.T) {
	out := t.TempDir()
	spec := writeFile(t, "s.yaml", "grid: default\ncounts: [0, 3]\nfrequencies: [1.0, 2.5]\nduration: 4\nwidth: 320\nheight: 180\n")
	msg, code := run(t, "run", "--spec", spec, "--out", out)
	if code != 0 || !strings.Contains(msg, filepath.Join(out, "report", "index.html")) {
		t.Fatalf("run: exit %d:\n%s", code, msg)
	}
	b, err := os.ReadFile(filepath.Join(out, "report", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Totals  struct{ Trials, Scored, Failed int }
		Domains []struct {
			Policy, Domain string
			EM, F1         float64
			Eligible       int
		}
		Surfaces []struct {
			Policy, Domain string
			N              int
			Accuracy       float64
		}
		PaperReference struct {
			Table1A []struct{ Domain string } `json:"table1_part_a"`
		} `json:"paper_reference"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	// 3 domains × (N=0 + N=3 at 2 frequencies) × 4 policies.
	if sum.Totals.Trials != 36 || sum.Totals.Failed != 0 || len(sum.PaperReference.Table1A) != 3 {
		t.Fatalf("totals %+v, paper rows %d", sum.Totals, len(sum.PaperReference.Table1A))
	}
	seen := 0
	for _, d := range sum.Domains {
		switch d.Policy {
		case "fps:16":
			seen++
			if d.EM != 1 || d.F1 != 1 {
				t.Errorf("fps:16 %s: EM %v F1 %v, want 1 and 1", d.Domain, d.EM, d.F1)
			}
		case "keyframes":
			seen++
			if d.F1 != 1 {
				t.Errorf("keyframes %s: F1 %v, want 1", d.Domain, d.F1)
			}
		}
	}
	if seen != 6 {
		t.Errorf("%d fps:16/keyframes domain rows, want 6", seen)
	}
	// A rerun keeps every clip and trial.
	if msg, code := run(t, "run", "--spec", spec, "--out", out); code != 0 || !strings.Contains(msg, "kept=36") {
		t.Errorf("rerun: exit %d:\n%s", code, msg)
	}
}
