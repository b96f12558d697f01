package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunCLI: `run` hands its flags to job.Run (whose end-to-end test is
// job.TestRunEndToEnd), prints where the report is, logs the job's lines
// and exits 0; a rerun keeps every trial; an empty --out is a usage
// error. One domain, two short clips at a small size.
func TestRunCLI(t *testing.T) {
	out := t.TempDir()
	spec := writeFile(t, "s.yaml", "grid: default\ndomains: [blinking]\ncounts: [0, 2]\nfrequencies: [1.0]\nduration: 3\nwidth: 160\nheight: 96\n")
	msg, code := run(t, "run", "--spec", spec, "--out", out)
	index, summary := filepath.Join(out, "report", "index.html"), filepath.Join(out, "report", "summary.json")
	if code != 0 || !strings.Contains(msg, "report: "+index+"\n") || !strings.Contains(msg, "summary: "+summary+"\n") ||
		!strings.Contains(msg, "1/3 render") || !strings.Contains(msg, "3/3 report") {
		t.Fatalf("run: exit %d:\n%s", code, msg)
	}
	for _, p := range []string{index, summary, filepath.Join(out, "results.sqlite"), filepath.Join(out, "render", "manifest.jsonl")} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
	// 2 clips × 4 policies, all kept.
	if msg, code := run(t, "run", "--spec", spec, "--out", out); code != 0 || !strings.Contains(msg, "kept=8") {
		t.Errorf("rerun: exit %d:\n%s", code, msg)
	}
	if msg, code := run(t, "run", "--spec", spec, "--out", ""); code != 2 || !strings.Contains(msg, "--out is empty") {
		t.Errorf(`run --out "": exit %d:\n%s`, code, msg)
	}
}
