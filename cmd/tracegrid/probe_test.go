package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/internal/fakemodel"
)

// auditStudy writes a study of one 24 s clip (10 fps, 160×96) for a
// vLLM-like model at url: native:2, 64 tokens a video frame given as the
// server's rule (image_tokens.audit) when audit is set; three repetitions.
func auditStudy(t *testing.T, url string, audit bool) (cfg, db string) {
	t.Helper()
	out := t.TempDir()
	spec := writeFile(t, "s.yaml", "grid: default\ndomains: [blinking]\ncounts: [3]\nfrequencies: [0.5]\nseeds: 1\nduration: 24\nfps: 10\nwidth: 160\nheight: 96\n")
	if msg, code := run(t, "render", "--spec", spec, "--out", out); code != 0 {
		t.Fatalf("render: %s", msg)
	}
	yaml := fmt.Sprintf(`name: audit
manifest: %s
db: %s
repetitions: 3
models:
  - name: qwen
    base_url: %s
    model_id: Qwen/Qwen3-VL-8B-Instruct
    concurrency: 1
    max_retries: 0
    video: {supported: true, tokens_per_frame: 64}
    extra_body: {mm_processor_kwargs: {fps: 2}}
    image_tokens: {rule: fixed, fixed: 256, audit: %v}
conditions:
  - policy: native:2
    prompt: direct
`, filepath.Join(out, "manifest.jsonl"), filepath.Join(out, "results.db"), url, audit)
	return writeFile(t, "study.yaml", yaml), filepath.Join(out, "results.db")
}

func runErr(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var e strings.Builder
	cmd.Stderr = &e
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), e.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), e.String(), 0
}

// TestEvalInputMismatchExit: a server with vLLM's defaults keeps 32 of the
// 48 frames native:2 claims on a 24 s clip: eval stops after 3 mismatches
// in a row with the cause and the fix on stderr, exit 1; the trials are
// exported as input_mismatch with both figures; --accept-input-mismatch
// keeps them, marked, exit 0.
func TestEvalInputMismatchExit(t *testing.T) {
	fm := fakemodel.New(t, (&fakemodel.VLLM{}).Respond)
	cfg, db := auditStudy(t, fm.URL(), true)
	_, stderr, code := runErr(t, "eval", "--config", cfg)
	if code != 1 || !strings.Contains(stderr, "the server kept about") || !strings.Contains(stderr, "of 48 frames") ||
		!strings.Contains(stderr, `--media-io-kwargs '{"video": {"num_frames": -1}}'`) || fm.Requests() != 3 {
		t.Fatalf("exit %d, %d requests:\n%s", code, fm.Requests(), stderr)
	}
	out, _, code := runErr(t, "export", "--db", db, "--format", "jsonl")
	if code != 0 || strings.Count(out, `"error_kind":"input_mismatch"`) != 3 || strings.Count(out, `"input_audit":"mismatch"`) != 3 || !strings.Contains(out, `"expected_prompt_tokens":`) {
		t.Errorf("export: exit %d\n%s", code, out)
	}
	_, stderr, code = runErr(t, "eval", "--config", cfg, "--accept-input-mismatch")
	if code != 0 || fm.Requests() != 6 {
		t.Errorf("--accept-input-mismatch: exit %d, %d requests\n%s", code, fm.Requests(), stderr)
	}
}

// TestProbeCommand: probe --dry-run prints the two requests and their
// cost and sends nothing; probe measures 64 tokens a video frame and
// stores it, so that eval (with no rule in the study) stops at the frame
// cap; an unknown --model is bad input.
func TestProbeCommand(t *testing.T) {
	fm := fakemodel.New(t, (&fakemodel.VLLM{}).Respond)
	cfg, _ := auditStudy(t, fm.URL(), false)
	out, stderr, code := runErr(t, "probe", "--config", cfg, "--dry-run")
	if code != 0 || fm.Requests() != 0 || strings.Count(out, "qwen") != 2 || !strings.Contains(out, "total") || !strings.Contains(out, "2 requests") {
		t.Fatalf("--dry-run: exit %d, %d requests:\n%s%s", code, fm.Requests(), out, stderr)
	}
	if _, stderr, code := runErr(t, "probe", "--config", cfg, "--model", "nope", "--dry-run"); code != 2 || !strings.Contains(stderr, "nope") {
		t.Errorf("unknown model: exit %d %s", code, stderr)
	}
	out, stderr, code = runErr(t, "probe", "--config", cfg)
	if code != 0 || fm.Requests() != 2 || !strings.Contains(out, "video 160x96") || !strings.Contains(out, "64.") {
		t.Fatalf("probe: exit %d, %d requests:\n%s%s", code, fm.Requests(), out, stderr)
	}
	if _, stderr, code := runErr(t, "eval", "--config", cfg); code != 1 || !strings.Contains(stderr, "of 48 frames") || fm.Requests() != 5 {
		t.Errorf("eval after probe: exit %d, %d requests\n%s", code, fm.Requests(), stderr)
	}
}

// TestEvalAsVideoFlags: in flag mode, --as video --server vllm sends
// fps:2 of a 24 s clip as one video of 48 frames with vLLM's fields, which
// the stand-in with vLLM's defaults then decodes whole; --as with a
// policy that is not evenly spaced is bad input, nothing sent.
func TestEvalAsVideoFlags(t *testing.T) {
	v := &fakemodel.VLLM{}
	fm := fakemodel.New(t, v.Respond)
	cfg, _ := auditStudy(t, fm.URL(), false)
	manifest := strings.TrimSpace(strings.TrimPrefix(strings.Split(readFile(t, cfg), "\n")[1], "manifest:"))
	db := filepath.Join(t.TempDir(), "r.db")
	flags := []string{"eval", "--manifest", manifest, "--base-url", fm.URL(), "--model", "qwen", "--prompt", "direct", "--db", db, "--as", "video", "--server", "vllm"}
	if _, stderr, code := runErr(t, append(flags, "--policy", "keyframes")...); code != 2 || !strings.Contains(stderr, "as: video needs evenly spaced samples") || fm.Requests() != 0 {
		t.Fatalf("keyframes as video: exit %d, %d requests\n%s", code, fm.Requests(), stderr)
	}
	if _, stderr, code := runErr(t, append(flags, "--policy", "fps:2")...); code != 0 || fm.Requests() != 1 {
		t.Fatalf("exit %d, %d requests\n%s", code, fm.Requests(), stderr)
	}
	r := fm.Received()[0]
	if r.Videos != 1 || r.Images != 0 || !r.Has("media_io_kwargs") {
		t.Errorf("request: %d videos, %d images, body keys %v", r.Videos, r.Images, r.Body)
	}
	if seen := v.Seen(); len(seen) != 1 || seen[0].VideoFrames != 48 {
		t.Errorf("the server saw %+v, want 48 video frames", seen)
	}
}
