package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// renderSmall renders two 4-second state-machine clips for eval tests.
func renderSmall(t *testing.T) string {
	t.Helper()
	out := t.TempDir()
	spec := writeFile(t, "s.yaml", "grid: default\ndomains: [state_machine]\ncounts: [2]\nfrequencies: [1.0]\nseeds: 2\nduration: 4\nwidth: 160\nheight: 96\n")
	if msg, code := run(t, "render", "--spec", spec, "--out", out); code != 0 {
		t.Fatalf("render: %s", msg)
	}
	return filepath.Join(out, "manifest.jsonl")
}

func TestEvalDryRunAndBadInput(t *testing.T) {
	manifest := renderSmall(t)
	msg, code := run(t, "eval", "--manifest", manifest, "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
		"--policy", "fps:4", "--policy", "keyframes", "--prompt", "direct", "--dry-run")
	// 2 clips × (fps:4 → 16 images, keyframes → 6 images).
	if code != 0 || !strings.Contains(msg, "fps:4") || !strings.Contains(msg, "keyframes") || !strings.Contains(msg, "32") || !strings.Contains(msg, "12") {
		t.Errorf("dry run: exit %d:\n%s", code, msg)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--policy", "fps:0", "--prompt", "direct"}, "fps:0"},
		{[]string{"--policy", "fps:4", "--prompt", "shouting"}, "shouting"},
		{[]string{"--policy", "fps:4"}, "--prompt"},
		{[]string{"--policy", "fps:4", "--prompt", "direct", "--api-key-env", "TRACEGRID_TEST_UNSET_KEY"}, "TRACEGRID_TEST_UNSET_KEY"},
	} {
		args := append([]string{"eval", "--manifest", manifest, "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--db", filepath.Join(t.TempDir(), "r.db")}, c.args...)
		msg, code := run(t, args...)
		if code == 0 || !strings.Contains(msg, c.want) {
			t.Errorf("%v: exit %d: %s", c.args, code, msg)
		}
	}
}

// TestEvalNeverWritesTheKey runs a study against a local server that
// requires a bearer key and checks the key is nowhere in the database, the
// export or the output — also when the server echoes it in an error.
func TestEvalNeverWritesTheKey(t *testing.T) {
	const secret = "sk-test-VERY-SECRET-4242"
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+secret {
			w.WriteHeader(401)
			return
		}
		if n == 1 { // one rejected request that echoes the key
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":{"message":"bad request from key %s","type":"invalid_request_error"}}`, secret)
			return
		}
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"\\boxed{2}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`)
	}))
	defer srv.Close()
	manifest := renderSmall(t)
	db := filepath.Join(t.TempDir(), "r.db")
	cmd := exec.Command(bin, "eval", "--manifest", manifest, "--base-url", srv.URL+"/v1", "--model", "m", "--api-key-env", "TRACEGRID_TEST_KEY",
		"--policy", "uniform:2", "--prompt", "direct", "--db", db, "--concurrency", "1", "-v")
	cmd.Env = append(os.Environ(), "TRACEGRID_TEST_KEY="+secret)
	out, err := cmd.CombinedOutput()
	// The rejected request leaves a trial without an answer: exit 1 with
	// the count by kind (issue 12, finding 8).
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "1 of 2 trials have no answer: invalid_request 1") {
		t.Fatalf("eval: %v\n%s", err, out)
	}
	exp, code := run(t, "export", "--db", db, "--format", "jsonl")
	if code != 0 || strings.Count(exp, "\n") != 2 || !strings.Contains(exp, `"invalid_request"`) {
		t.Fatalf("export: %d\n%s", code, exp)
	}
	files, _ := filepath.Glob(db + "*")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if strings.Contains(string(b), "VERY-SECRET") {
			t.Errorf("the API key is in %s", f)
		}
	}
	if strings.Contains(string(out), "VERY-SECRET") || strings.Contains(exp, "VERY-SECRET") {
		t.Errorf("the API key leaked into the output or the export")
	}
}

// TestEvalKilledResumesToTheSameTable kills `tracegrid eval` with SIGKILL
// mid-run, reruns it, and compares the final table with an uninterrupted
// run's: the same rows, and no finished trial requested again (only the
// requests in flight at the kill, at most --concurrency, are repeated).
func TestEvalKilledResumesToTheSameTable(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		time.Sleep(40 * time.Millisecond)
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"00:01.0 — A → B — running count 1\n\\boxed{1}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`)
	}))
	defer srv.Close()
	manifest := renderSmall(t)
	args := func(db string) []string {
		return []string{"eval", "--manifest", manifest, "--base-url", srv.URL + "/v1", "--model", "m", "--policy", "uniform:2", "--policy", "fps:1",
			"--policy", "keyframes", "--prompt", "structured_trace", "--repeats", "5", "--concurrency", "2", "--db", db}
	}
	// 2 clips × 3 policies × 5 repeats = 30 trials.
	clean := filepath.Join(t.TempDir(), "clean.db")
	if msg, code := run(t, args(clean)...); code != 0 {
		t.Fatalf("clean run: %s", msg)
	}
	calls.Store(0)
	killed := filepath.Join(t.TempDir(), "killed.db")
	cmd := exec.Command(bin, args(killed)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for calls.Load() < 10 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	before := calls.Load()
	if msg, code := run(t, args(killed)...); code != 0 {
		t.Fatalf("resume: %s", msg)
	}
	if total := calls.Load(); total > 30+2 || before >= 30 {
		t.Errorf("%d requests for 30 trials (%d before the kill)", total, before)
	}
	table := func(db string) string {
		out, code := run(t, "export", "--db", db, "--format", "csv")
		if code != 0 {
			t.Fatal(out)
		}
		// Keep the columns that do not depend on timing.
		var rows []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Split(line, ",")
			rows = append(rows, strings.Join(f[:12], ","))
		}
		return strings.Join(rows, "\n")
	}
	if a, b := table(clean), table(killed); a != b {
		t.Errorf("tables differ:\nclean:\n%s\nkilled+resumed:\n%s", a, b)
	}
}
