package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The CLI is tested as a user runs it: the built binary, its output and its
// exit code.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tracegrid-cli")
	if err != nil {
		os.Stderr.WriteString(err.Error())
		os.Exit(1)
	}
	bin = filepath.Join(dir, "tracegrid")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func run(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBadInputExitCodes(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, "plain", "x")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"render", "--spec", writeFile(t, "a.yaml", "domains: [juggling]\n"), "--out", dir}, 2, `unknown domain "juggling"`},
		{[]string{"render", "--spec", writeFile(t, "b.yaml", "counts: [12]\nfrequencies: [0.4]\n"), "--out", dir}, 2, "longer than the 24 s clip"},
		{[]string{"render", "--spec", writeFile(t, "c.yaml", "frequencies: [0]\n"), "--out", dir}, 2, "must be positive"},
		{[]string{"render", "--spec", writeFile(t, "d.yaml", "width: 853\n"), "--out", dir}, 2, "odd"},
		{[]string{"render", "--spec", writeFile(t, "e.yaml", "fps: 0\n"), "--out", dir}, 2, "fps 0 out of range"},
		{[]string{"render", "--spec", writeFile(t, "f.yaml", "grid: default\nframerate: 30\n"), "--out", dir}, 2, "field framerate not found"},
		{[]string{"render", "--spec", "/nonexistent.yaml"}, 2, "no such file"},
		{[]string{"render", "--grid", "huge"}, 2, "unknown grid"},
		{[]string{"render", "--grid", "default", "--spec", "x.yaml"}, 2, "not both"},
		{[]string{"render", "--bogus"}, 2, "unknown flag"},
		{[]string{"render", "--spec", writeFile(t, "g.yaml", "grid: default\ncounts: [1]\nfrequencies: [1]\nduration: 2\nencoder: {codec: no_such_codec}\n"), "--out", dir}, 1, `encoder "no_such_codec" is not available`},
		{[]string{"render", "--spec", writeFile(t, "h.yaml", "grid: default\ncounts: [1]\nfrequencies: [1]\nduration: 2\n"), "--out", filepath.Join(file, "sub")}, 1, "is not writable"},
		{[]string{"trace", "replay", writeFile(t, "t.json", `{"schema":"tracegrid/trace/v0"}`)}, 2, "unknown schema"},
	}
	for _, c := range cases {
		out, code := run(t, c.args...)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("tracegrid %s: exit %d, output %q; want exit %d and %q", strings.Join(c.args, " "), code, out, c.code, c.want)
		}
		if strings.Contains(out, "panic") || strings.Contains(out, "goroutine ") {
			t.Errorf("tracegrid %s panicked: %s", strings.Join(c.args, " "), out)
		}
	}
}

func TestRenderThenReplay(t *testing.T) {
	out := t.TempDir()
	spec := writeFile(t, "s.yaml", "grid: default\ndomains: [state_machine]\ncounts: [3]\nfrequencies: [1.0]\nduration: 4\nwidth: 128\nheight: 96\n")
	if msg, code := run(t, "render", "--spec", spec, "--out", out); code != 0 {
		t.Fatalf("render: exit %d: %s", code, msg)
	}
	tr := filepath.Join(out, "clips", "state_machine_N03_F1.0_s00.trace.json")
	msg, code := run(t, "trace", "replay", tr, "--at", "4")
	if code != 0 || !strings.Contains(msg, "final count c_N = 3") || !strings.Contains(msg, "count 3") {
		t.Errorf("replay: exit %d: %s", code, msg)
	}
	msg, code = run(t, "trace", "replay", tr, "--at", "0", "--json")
	if code != 0 || !strings.Contains(msg, `"count_at":0`) || !strings.Contains(msg, `"final_count":3`) {
		t.Errorf("replay --json: exit %d: %s", code, msg)
	}
	if msg, code = run(t, "trace", "replay", tr, "--at", "99"); code != 2 || !strings.Contains(msg, "outside the clip") {
		t.Errorf("replay --at 99: exit %d: %s", code, msg)
	}
	// A second run finds everything complete.
	if msg, code = run(t, "render", "--spec", spec, "--out", out); code != 0 || !strings.Contains(msg, "skipped=1") {
		t.Errorf("rerun: exit %d: %s", code, msg)
	}
}

// waitForManifestLines polls until the manifest has n lines.
func waitForManifestLines(t *testing.T, path string, n int, exited <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			t.Fatalf("render exited before writing %d manifest lines", n)
		default:
		}
		b, _ := os.ReadFile(path)
		if strings.Count(string(b), "\n") >= n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("manifest never reached %d lines", n)
}

func TestInterruptAndKillLoseNothing(t *testing.T) {
	spec := writeFile(t, "s.yaml", "grid: default\ncounts: [0, 2, 6]\nfrequencies: [1.0, 3.0]\nduration: 8\nwidth: 320\nheight: 180\n")
	for _, sig := range []os.Signal{os.Interrupt, os.Kill} {
		out := t.TempDir()
		cmd := exec.Command(bin, "render", "--spec", spec, "--out", out, "--workers", "1")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		manifest := filepath.Join(out, "manifest.jsonl")
		exited := make(chan struct{})
		var err error
		go func() { err = cmd.Wait(); close(exited) }()
		waitForManifestLines(t, manifest, 2, exited)
		cmd.Process.Signal(sig)
		<-exited
		code := cmd.ProcessState.ExitCode()
		if sig == os.Interrupt && (code != 130 || !strings.Contains(stderr.String(), "interrupted")) {
			t.Errorf("SIGINT: exit %d (%v), stderr %s", code, err, stderr.String())
		}
		if sig == os.Interrupt {
			files, _ := os.ReadDir(filepath.Join(out, "clips"))
			for _, f := range files {
				if strings.Contains(f.Name(), ".tmp") {
					t.Errorf("SIGINT left a partial file: %s", f.Name())
				}
			}
		}
		// Every clip in the manifest is whole; the rerun completes the rest.
		b, _ := os.ReadFile(manifest)
		done := strings.Count(string(b), "\n")
		msg, code := run(t, "render", "--spec", spec, "--out", out)
		if code != 0 || !strings.Contains(msg, "rendered="+strconv.Itoa(15-done)) {
			t.Errorf("after %v with %d clips done, rerun: exit %d: %s", sig, done, code, msg)
		}
		files, _ := os.ReadDir(filepath.Join(out, "clips"))
		if len(files) != 30 {
			t.Errorf("after %v and rerun: %d files in clips/, want 30", sig, len(files))
		}
	}
}

// TestMissingEGL hides every EGL vendor library from glvnd, as on a machine
// without Mesa's EGL or a GPU driver: the run stops with a clear error.
func TestMissingEGL(t *testing.T) {
	cmd := exec.Command(bin, "render", "--grid", "default", "--out", t.TempDir())
	cmd.Env = append(os.Environ(), "__EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent.json")
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(out), "no EGL display") || !strings.Contains(string(out), "libgl1-mesa-dri") {
		t.Errorf("exit %d, output %s", code, out)
	}
}

func TestFramesCommand(t *testing.T) {
	out := t.TempDir()
	spec := writeFile(t, "s.yaml", "grid: default\ndomains: [blinking]\ncounts: [3]\nfrequencies: [1.0]\nduration: 6\nwidth: 160\nheight: 96\n")
	if msg, code := run(t, "render", "--spec", spec, "--out", out); code != 0 {
		t.Fatalf("render: %s", msg)
	}
	manifest := filepath.Join(out, "manifest.jsonl")
	id := "blinking_N03_F1.0_s00"
	fdir := filepath.Join(t.TempDir(), "frames")
	msg, code := run(t, "frames", "--manifest", manifest, "--clip", id, "--policy", "keyframes", "--out", fdir, "--sheet", "--format", "png")
	if code != 0 || !strings.Contains(msg, "9 frames") {
		t.Fatalf("frames: exit %d: %s", code, msg)
	}
	var idx struct {
		Frames []struct {
			Index, Position int
			T               float64
			File            string
		}
		Sheet string
	}
	b, _ := os.ReadFile(filepath.Join(fdir, "frames.json"))
	if err := json.Unmarshal(b, &idx); err != nil || len(idx.Frames) != 9 || idx.Sheet != "sheet.png" {
		t.Fatalf("frames.json: %v %s", err, b)
	}
	for _, f := range idx.Frames {
		if _, err := os.Stat(filepath.Join(fdir, f.File)); err != nil {
			t.Errorf("frame file %s: %v", f.File, err)
		}
	}
	// The clip's own MP4 as an external video: fps:2 over 6 s → 12 frames.
	vdir := filepath.Join(t.TempDir(), "v")
	if msg, code := run(t, "frames", "--video", filepath.Join(out, "clips", id+".mp4"), "--policy", "fps:2", "--out", vdir); code != 0 || !strings.Contains(msg, "12 frames") {
		t.Errorf("frames --video: exit %d: %s", code, msg)
	}
	// Over the cap: refused by default, thinned (and recorded) on request.
	if msg, code := run(t, "frames", "--manifest", manifest, "--clip", id, "--policy", "fps:4", "--max-images", "10", "--out", t.TempDir()); code != 2 || !strings.Contains(msg, "more than max_images 10") {
		t.Errorf("cap refuse: exit %d: %s", code, msg)
	}
	tdir := t.TempDir()
	if msg, code := run(t, "frames", "--manifest", manifest, "--clip", id, "--policy", "fps:4", "--max-images", "10", "--limit-mode", "thin", "--out", tdir); code != 0 || !strings.Contains(msg, "10 frames") {
		t.Errorf("cap thin: exit %d: %s", code, msg)
	}
	if b, _ := os.ReadFile(filepath.Join(tdir, "frames.json")); !strings.Contains(string(b), `"before": 24`) {
		t.Errorf("thinning not recorded: %s", b)
	}
	bad := []struct {
		args []string
		want string
	}{
		{[]string{"--manifest", manifest, "--clip", id, "--policy", "fps:0"}, "not a positive number"},
		{[]string{"--manifest", manifest, "--clip", id, "--policy", "sometimes"}, "unknown policy"},
		{[]string{"--manifest", manifest, "--clip", id, "--policy", "uniform:-3"}, "not a positive whole number"},
		{[]string{"--manifest", manifest, "--clip", "nope_N01", "--policy", "fps:1"}, "clip not in manifest"},
		{[]string{"--manifest", manifest, "--clip", id, "--policy", "fps:1", "--format", "gif"}, "gif"},
		{[]string{"--video", writeFile(t, "x.mp4", "not a video"), "--policy", "fps:1"}, "x.mp4"},
		{[]string{"--video", "/no/such.mp4", "--policy", "fps:1"}, "no such"},
		{[]string{"--policy", "fps:1"}, "give --manifest and --clip, or --video"},
	}
	for _, c := range bad {
		args := append([]string{"frames", "--out", t.TempDir()}, c.args...)
		msg, code := run(t, args...)
		if code != 2 || !strings.Contains(strings.ToLower(msg), strings.ToLower(c.want)) || strings.Contains(msg, "goroutine ") {
			t.Errorf("tracegrid %s: exit %d: %s (want %q)", strings.Join(args, " "), code, msg, c.want)
		}
	}
}

// TestScoreHandWorked: truths at 2, 3, 4 s (walls left, right, left) at
// 1 Hz; the reply reports 2.1 (left), 3.7 (right), 5.0 (top) and "3".
// Rate tolerance δ = 0.5 s: 2.1↔2 and 3.7↔4 match (K=2; 3.7 says right,
// the truth at 4 is left: misidentified), 3 is missed, 5.0 hallucinated.
// Fixed δ = 1.0 s: 2.1↔2, 3.7↔3, 5.0↔4 (K=3, the most pairs; 5.0 says
// top at a left contact: misidentified).
func TestScoreHandWorked(t *testing.T) {
	tr := writeFile(t, "t.json", `{"schema":"tracegrid/trace/v1","id":"bounce_ball_N03_F1.0_s00","domain":"bounce_ball","n":3,"f":1,"seed":0,"duration":24,"fps":30,"width":854,"height":480,"active_start":1.5,"active_end":4.5,"initial_state":"none","nuisance":{},
"events":[{"t":2,"type":"wall_contact","before":"none","after":"left","count":1,"attrs":{"wall":"left"}},{"t":3,"type":"wall_contact","before":"left","after":"right","count":2,"attrs":{"wall":"right"}},{"t":4,"type":"wall_contact","before":"right","after":"left","count":3,"attrs":{"wall":"left"}}]}`)
	resp := writeFile(t, "r.txt", "00:02.1 — the ball hits the left wall (count 1)\n00:03.7 — the ball hits the right wall (count 2)\n00:05.0 — the ball hits the top wall (count 3)\nFinal answer: 3\n")
	type out struct {
		Count             *int
		Correct           bool
		N, M, K           int
		Precision, Recall float64
		F1, VOR           float64
		Tolerance         float64
		Events            []struct{ T float64 }
		Pairs             []struct{ Truth, Report, Deviation float64 }
		Classes           struct {
			Matched, Missed, Hallucinated, Displaced, Misidentified int
			WrongAccumulation                                       bool `json:"wrong_accumulation"`
		}
	}
	for _, c := range []struct {
		tol               string
		k, missed, halluc int
		p, f1, delta      float64
		truths            []float64
	}{{"rate", 2, 1, 1, 2.0 / 3, 2.0 / 3, 0.5, []float64{2, 4}}, {"1.0", 3, 0, 0, 1, 1, 1, []float64{2, 3, 4}}} {
		msg, code := run(t, "score", "--trace", tr, "--response", resp, "--tolerance", c.tol)
		if code != 0 {
			t.Fatalf("score: exit %d: %s", code, msg)
		}
		var o out
		if err := json.Unmarshal([]byte(msg), &o); err != nil {
			t.Fatalf("%v: %s", err, msg)
		}
		if o.Count == nil || *o.Count != 3 || !o.Correct || o.N != 3 || o.M != 3 || o.K != c.k || o.Tolerance != c.delta || len(o.Events) != 3 {
			t.Errorf("tolerance %s: %+v", c.tol, o)
		}
		if math.Abs(o.Precision-c.p) > 1e-12 || math.Abs(o.F1-c.f1) > 1e-12 || o.VOR != 1 {
			t.Errorf("tolerance %s: P=%v F1=%v VOR=%v", c.tol, o.Precision, o.F1, o.VOR)
		}
		if o.Classes.Matched != c.k || o.Classes.Missed != c.missed || o.Classes.Hallucinated != c.halluc || o.Classes.Misidentified != 1 || o.Classes.WrongAccumulation {
			t.Errorf("tolerance %s: classes %+v", c.tol, o.Classes)
		}
		for i, p := range o.Pairs {
			if p.Truth != c.truths[i] {
				t.Errorf("tolerance %s: pair %d truth %v, want %v", c.tol, i, p.Truth, c.truths[i])
			}
		}
	}
	if msg, code := run(t, "score", "--trace", tr, "--response", resp, "--tolerance", "-1"); code != 2 {
		t.Errorf("bad tolerance: exit %d: %s", code, msg)
	}
	unsorted := writeFile(t, "u.json", strings.Replace(string(must(os.ReadFile(tr))), `"t":3,`, `"t":5,`, 1))
	// A bounce contact 2 s off its place on the schedule (contacts may be
	// half a frame off it: they sit on frames).
	if msg, code := run(t, "score", "--trace", unsorted, "--response", resp); code != 2 || !strings.Contains(msg, "inconsistent events: event 2 at t=5 is 2.000000 s from t_1+(i−1)/F") {
		t.Errorf("unsorted trace: exit %d: %s", code, msg)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
