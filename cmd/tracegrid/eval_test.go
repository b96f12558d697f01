package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
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

// naturalManifest imports a 2 s gray clip as a natural video and returns
// the manifest with its video path replaced by video (a hand-edited
// manifest: an external clip's path may name any file).
func naturalManifest(t *testing.T, video string) string {
	t.Helper()
	dir := t.TempDir()
	videos := filepath.Join(dir, "videos")
	if err := os.MkdirAll(videos, 0o755); err != nil {
		t.Fatal(err)
	}
	grayClip(t, filepath.Join(videos, "a.mp4"))
	ann := writeFile(t, "ann.csv", "name,count\na.mp4,2\n")
	out := filepath.Join(dir, "out")
	if msg, code := run(t, "import", "--videos", videos, "--annotations", ann, "--out", out); code != 0 {
		t.Fatalf("import: exit %d: %s", code, msg)
	}
	manifest := filepath.Join(out, "manifest.jsonl")
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var e map[string]any
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	e["video"] = video
	line, _ := json.Marshal(e)
	if err := os.WriteFile(manifest, append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	return manifest
}

// runFor runs the binary for at most limit and returns its output, exit
// code and time; a run past limit is killed and reported.
func runFor(t *testing.T, limit time.Duration, args ...string) (string, int, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Errorf("tracegrid %s ran past %s (killed): %s", strings.Join(args, " "), limit, out)
		return string(out), -1, took
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode(), took
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0, took
}

// TestEvalRefusesFilesThatAreNotRegular: issue 31, item 12. A manifest
// whose video is /dev/zero or a FIFO used to hang eval (hashing forever,
// or blocked opening the FIFO), deaf to signals, even under --dry-run.
// Such paths, and a --manifest that is a directory (item 14), are bad
// input: exit 2 at once, with no request sent.
func TestEvalRefusesFilesThatAreNotRegular(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"\\boxed{2}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`)
	}))
	defer srv.Close()
	fifo := filepath.Join(t.TempDir(), "clip.mp4")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// A rendered clip's MP4 replaced by a FIFO (read for native video).
	rendered := renderSmall(t)
	mp4 := filepath.Join(filepath.Dir(rendered), "clips", "state_machine_N02_F1.0_s00.mp4")
	if err := os.Remove(mp4); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(mp4, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, manifest, want string
	}{
		{"/dev/zero", naturalManifest(t, "/dev/zero"), "clip a: video /dev/zero is not a regular file (a character device)"},
		{"a FIFO", naturalManifest(t, fifo), "clip a: video " + fifo + " is not a regular file (a named pipe)"},
		{"a rendered clip's FIFO", rendered, "video " + mp4 + " is not a regular file (a named pipe)"},
		{"a directory", filepath.Dir(rendered), "the manifest " + filepath.Dir(rendered) + " is a directory: give the manifest.jsonl file in it"},
	} {
		for _, mode := range []string{"--dry-run", "--concurrency=1"} {
			args := []string{"eval", "--manifest", c.manifest, "--base-url", srv.URL + "/v1", "--model", "m", "--policy", "fps:1",
				"--prompt", "direct", "--db", filepath.Join(t.TempDir(), "r.db"), mode}
			msg, code, took := runFor(t, time.Minute, args...)
			if code != 2 || !strings.Contains(msg, c.want) || took > 30*time.Second {
				t.Errorf("%s %s: exit %d after %s: %s\nwant exit 2 at once and %q", c.name, mode, code, took.Round(time.Millisecond), msg, c.want)
			}
			noPanic(t, args, msg)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// TestEvalSignalDuringLongRead: a long read before the run (hashing a
// 1 TiB sparse video, a regular file) ends on SIGTERM or SIGINT with exit
// 130 within seconds; it used to ignore both (issue 31, item 12).
func TestEvalSignalDuringLongRead(t *testing.T) {
	huge := filepath.Join(t.TempDir(), "huge.mp4")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Truncate(1 << 40)
	f.Close()
	if err != nil {
		t.Skipf("no sparse 1 TiB file here: %v", err)
	}
	manifest := naturalManifest(t, huge)
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		for _, mode := range []string{"--dry-run", "--concurrency=1"} {
			cmd := exec.Command(bin, "eval", "--manifest", manifest, "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
				"--policy", "fps:1", "--prompt", "direct", "--db", filepath.Join(t.TempDir(), "r.db"), mode)
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second) // reading the video by now
			sent := time.Now()
			cmd.Process.Signal(sig)
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case err := <-exited:
				ee, _ := err.(*exec.ExitError)
				if ee == nil || ee.ExitCode() != 130 || time.Since(sent) > 10*time.Second {
					t.Errorf("%v %s: %v after %s: %s; want exit 130", sig, mode, err, time.Since(sent).Round(time.Millisecond), out.String())
				}
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				<-exited
				t.Errorf("%v %s: still reading 20 s after the signal: %s", sig, mode, out.String())
			}
		}
	}
}

// TestEvalJSON: issue 31, item 18. --dry-run --json prints the estimate as
// one JSON object; a run with --json ends with a {"summary": …} line:
// answered, failed, not applicable, unanswered by kind, spend.
func TestEvalJSON(t *testing.T) {
	manifest := renderSmall(t)
	base := []string{"eval", "--manifest", manifest, "--model", "m", "--policy", "uniform:2", "--prompt", "direct", "--json"}
	msg, code := run(t, append(base, "--base-url", "http://127.0.0.1:9/v1", "--dry-run")...)
	var est struct {
		Estimates []struct {
			Model, Policy, Prompt string
			Requests, Images      int
		}
		Total struct{ Requests, Images int }
	}
	if err := json.Unmarshal([]byte(msg), &est); code != 0 || err != nil || len(est.Estimates) != 1 || est.Estimates[0].Policy != "uniform:2" ||
		est.Estimates[0].Requests != 2 || est.Estimates[0].Images != 4 || est.Total.Requests != 2 || est.Total.Images != 4 {
		t.Fatalf("--dry-run --json: exit %d, %v: %s", code, err, msg)
	}
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 { // the first trial is rejected: no answer, kind invalid_request
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":{"message":"no","type":"invalid_request_error"}}`)
			return
		}
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"\\boxed{2}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`)
	}))
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "r.db")
	cmd := exec.Command(bin, append(base, "--base-url", srv.URL+"/v1", "--db", db, "--concurrency", "1")...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("run: %v: %s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(stdout)), "\n")
	want := `{"summary":{"study":"cli","db":"` + db + `","trials":2,"skipped":0,"answered":1,"failed":1,"not_applicable":0,"unanswered":{"invalid_request":1},"cost_usd":0,"study_spend_usd":0,"max_usd":0,"stopped_by_budget":false,"interrupted":false,"elapsed_s":`
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, want) {
		t.Errorf("last line:\n%s\nwant it to start with\n%s", last, want)
	}
	// A rerun finds both trials stored: the rejected one is a permanent
	// failure, not sent again, and still without an answer.
	out, err := exec.Command(bin, append(base, "--base-url", srv.URL+"/v1", "--db", db, "--concurrency", "1")...).Output()
	want = `{"summary":{"study":"cli","db":"` + db + `","trials":2,"skipped":2,"answered":0,"failed":0,"not_applicable":0,"unanswered":{"invalid_request":1},`
	if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); calls.Load() != 2 || !strings.HasPrefix(lines[len(lines)-1], want) {
		t.Errorf("rerun: %v: %s\nwant a last line starting with %s", err, out, want)
	}
}
