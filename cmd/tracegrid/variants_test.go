package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// inProcess runs a command built by its constructor under the CLI's root
// (as main.go registers it) with args, and returns its standard output,
// its error and the exit status main would give.
func inProcess(t *testing.T, cmd *cobra.Command, args ...string) (string, error, int) {
	t.Helper()
	root := newRoot()
	if c, _, err := root.Find([]string{cmd.Name()}); err != nil || c == root {
		root.AddCommand(cmd) // not registered in main.go yet
		usageArgs(root)
	}
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{cmd.Name()}, args...))
	ctx := context.Background()
	err := root.ExecuteContext(ctx)
	code := exitOK
	if err != nil {
		code = exitCode(ctx, err)
	}
	return out.String(), err, code
}

// smallGrid renders three 4 s clips at 160×96 with the built binary.
func smallGrid(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	spec := writeFile(t, "grid.yaml", "grid: default\ndomains: [bounce_ball, blinking, state_machine]\ncounts: [2]\nfrequencies: [1.0]\nduration: 4\nwidth: 160\nheight: 96\n")
	if out, code := run(t, "render", "--spec", spec, "--out", dir); code != 0 {
		t.Fatalf("render: exit %d: %s", code, out)
	}
	return filepath.Join(dir, "manifest.jsonl")
}

func sameDir(t *testing.T, a, b string) {
	t.Helper()
	names := func(d string) []string {
		ents, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		var ns []string
		for _, e := range ents {
			ns = append(ns, e.Name())
		}
		return ns
	}
	na, nb := names(a), names(b)
	if !slices.Equal(na, nb) {
		t.Fatalf("%s: %v\n%s: %v", a, na, b, nb)
	}
	for _, n := range na {
		x, _ := os.ReadFile(filepath.Join(a, n))
		y, _ := os.ReadFile(filepath.Join(b, n))
		if n == "frames.json" {
			// The built binary carries its VCS revision in tool_version,
			// the test binary does not: everything else must agree.
			x, y = toolVersion.ReplaceAll(x, nil), toolVersion.ReplaceAll(y, nil)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs", n)
		}
	}
}

var toolVersion = regexp.MustCompile(`"tool_version": "[^"]*"`)

// TestVariantsCommand: `tracegrid variants` writes, for a clip and policy,
// byte for byte what `tracegrid frames` writes (PNG and JPEG), prints its
// summary line, and a rerun skips everything.
func TestVariantsCommand(t *testing.T) {
	manifest := smallGrid(t)
	for _, format := range []string{"png", "jpg"} {
		out := filepath.Join(t.TempDir(), "v")
		stdout, err, code := inProcess(t, newVariantsCmd(), "--manifest", manifest, "--policies", "fps:2,keyframes", "--policies", "shuffled:4",
			"--out", out, "--format", format, "--clips", "blinking_N02_F1.0_s00,bounce_ball_N02_F1.0_s00")
		if code != 0 {
			t.Fatalf("variants: exit %d: %v", code, err)
		}
		// 2 clips × (8 + 6 + 4 frames): 36 frames, plus 6 frames.json.
		if !strings.Contains(stdout, "variants: 6 made, 0 skipped (verified); 36 frames from ") || !strings.Contains(stdout, "42 files") {
			t.Errorf("summary: %q", stdout)
		}
		for _, pol := range []string{"fps:2", "keyframes", "shuffled:4"} {
			ref := filepath.Join(t.TempDir(), "f")
			if o, code := run(t, "frames", "--manifest", manifest, "--clip", "blinking_N02_F1.0_s00", "--policy", pol, "--format", format, "--out", ref); code != 0 {
				t.Fatalf("frames: %s", o)
			}
			dir := map[string]string{"fps:2": "fps_2", "keyframes": "keyframes_0.1", "shuffled:4": "shuffled_4"}[pol]
			sameDir(t, ref, filepath.Join(out, dir, "blinking_N02_F1.0_s00"))
		}
		stdout, _, code = inProcess(t, newVariantsCmd(), "--manifest", manifest, "--policies", "fps:2,keyframes,shuffled:4",
			"--out", out, "--format", format, "--clips", "blinking_N02_F1.0_s00,bounce_ball_N02_F1.0_s00")
		if code != 0 || !strings.Contains(stdout, "0 made, 6 skipped (verified); 0 frames") {
			t.Errorf("rerun: exit %d: %q", code, stdout)
		}
	}
}

// TestVariantsBadInput: bad input is exit status 2 with a message, an
// unusable output directory 1.
func TestVariantsBadInput(t *testing.T) {
	manifest := smallGrid(t)
	file := writeFile(t, "plain", "x")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--manifest", manifest, "--policies", "fps:abc", "--out", t.TempDir()}, 2, `"abc" is not a positive number`},
		{[]string{"--manifest", manifest, "--policies", "sometimes", "--out", t.TempDir()}, 2, `unknown policy "sometimes"`},
		{[]string{"--manifest", manifest, "--policies", "fps:4,keyframes", "--as", "video", "--out", t.TempDir()}, 2, "keyframes:0.1 has no constant frame rate"},
		{[]string{"--manifest", manifest, "--policies", "fps:4", "--as", "gif", "--out", t.TempDir()}, 2, `--as "gif"`},
		{[]string{"--manifest", manifest, "--policies", "fps:4", "--clips", "nope", "--out", t.TempDir()}, 2, "nope not in"},
		{[]string{"--manifest", manifest, "--policies", "fps:4", "--labels", "position", "--out", t.TempDir()}, 2, "give --dataset too"},
		{[]string{"--manifest", manifest, "--policies", "fps:4", "--dataset", "--labels", "sideways", "--out", t.TempDir()}, 2, "--labels"},
		{[]string{"--manifest", manifest, "--policies", "fps:4", "--out", file}, 2, "is a file"},
		{[]string{"--manifest", manifest, "--policies", "fps:4", "--out", manifest}, 2, "is a file"},
		{[]string{"--manifest", filepath.Join(t.TempDir(), "none.jsonl"), "--policies", "fps:4", "--out", t.TempDir()}, 2, "none.jsonl"},
		{[]string{"--policies", "fps:4", "--out", t.TempDir()}, 2, `"manifest" not set`},
	}
	for _, c := range cases {
		_, err, code := inProcess(t, newVariantsCmd(), c.args...)
		if code != c.code || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, %v; want %d with %q", c.args, code, err, c.code, c.want)
		}
	}
}

// TestIngestReportRoundTrip: another harness's answers to a variants
// dataset, ingested, are trials `tracegrid report` scores: every row a
// trial, the right ones correct.
func TestIngestReportRoundTrip(t *testing.T) {
	manifest := smallGrid(t)
	out := filepath.Join(t.TempDir(), "v")
	stdout, err, code := inProcess(t, newVariantsCmd(), "--manifest", manifest, "--policies", "fps:2,fps:4", "--out", out, "--dataset",
		"--prompts", "structured_trace,direct")
	if code != 0 || !strings.Contains(stdout, "dataset: 12 rows") {
		t.Fatalf("variants: exit %d %v: %q", code, err, stdout)
	}
	b, err := os.ReadFile(filepath.Join(out, "dataset.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// An lmms-eval --log_samples file: doc_id is the row's index, target
	// its answer. Even rows answered right, odd rows one too many.
	var preds bytes.Buffer
	correct := 0
	for i, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var row struct {
			Index  int `json:"index"`
			Answer int `json:"answer"`
		}
		if err := json.Unmarshal(line, &row); err != nil {
			t.Fatal(err)
		}
		say := row.Answer
		if i%2 == 1 {
			say++
		} else {
			correct++
		}
		fmt.Fprintf(&preds, `{"doc_id": %d, "target": "%d", "resps": [["I count them. Final answer: \\boxed{%d}"]], "filtered_resps": ["I count them. Final answer: \\boxed{%d}"]}`+"\n", row.Index, row.Answer, say, say)
	}
	predPath := writeFile(t, "20260101_samples_tracegrid.jsonl", preds.String())
	db := filepath.Join(t.TempDir(), "results.db")
	stdout, err, code = inProcess(t, newIngestCmd(), "--dataset", filepath.Join(out, "dataset.jsonl"), "--predictions", predPath, "--db", db, "--study", "lmms", "--model", "qwen")
	if code != 0 || !strings.Contains(stdout, "ingest: 12 trials stored, 0 unchanged, 0 not applicable (no frames), 0 of 12 rows without an answer (study lmms, model qwen)") {
		t.Fatalf("ingest: exit %d %v: %q", code, err, stdout)
	}
	rep := filepath.Join(t.TempDir(), "rep")
	if o, code := run(t, "report", "--db", db, "--out", rep); code != 0 {
		t.Fatalf("report: exit %d: %s", code, o)
	}
	var s struct {
		Study  string `json:"study"`
		Totals struct {
			Trials, Scored, Failed int
		} `json:"totals"`
		Surfaces []struct {
			Model   string `json:"model"`
			Policy  string `json:"policy"`
			Trials  int    `json:"trials"`
			Correct int    `json:"correct"`
		} `json:"surfaces"`
	}
	sb, err := os.ReadFile(filepath.Join(rep, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(sb, &s); err != nil {
		t.Fatal(err)
	}
	trials, right := 0, 0
	for _, c := range s.Surfaces {
		if c.Model != "qwen" || (c.Policy != "fps:2" && c.Policy != "fps:4") {
			t.Errorf("cell %+v", c)
		}
		trials += c.Trials
		right += c.Correct
	}
	if s.Study != "lmms" || s.Totals.Trials != 12 || s.Totals.Scored != 12 || s.Totals.Failed != 0 || trials != 12 || right != correct {
		t.Errorf("report: study %q totals %+v, surfaces %d trials %d correct (want 12, %d)", s.Study, s.Totals, trials, right, correct)
	}
	// The same file again changes nothing; a file for another dataset is
	// refused (exit 2).
	stdout, _, code = inProcess(t, newIngestCmd(), "--dataset", filepath.Join(out, "dataset.jsonl"), "--predictions", predPath, "--db", db, "--study", "lmms", "--model", "qwen")
	if code != 0 || !strings.Contains(stdout, "0 trials stored, 12 unchanged") {
		t.Errorf("again: exit %d %q", code, stdout)
	}
	wrong := writeFile(t, "w.jsonl", `{"doc_id": 0, "target": "7", "resps": ["7"]}`+"\n")
	if _, err, code := inProcess(t, newIngestCmd(), "--dataset", filepath.Join(out, "dataset.jsonl"), "--predictions", wrong, "--db", db); code != 2 || !strings.Contains(err.Error(), "another dataset") {
		t.Errorf("wrong dataset: exit %d %v", code, err)
	}
}
