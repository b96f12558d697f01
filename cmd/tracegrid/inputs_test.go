package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tracegrid/tracegrid/encode"
)

// Issue 12: bad input is a clear error with exit 2, never a crash, a
// truncation or a silent skip. These tests run the binary as a user does.

// runIn runs the binary in dir (for checks on the current directory).
func runIn(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

func noPanic(t *testing.T, args []string, out string) {
	t.Helper()
	if strings.Contains(out, "panic") || strings.Contains(out, "goroutine ") || strings.Contains(out, "fatal error") {
		t.Errorf("tracegrid %s crashed: %s", strings.Join(args, " "), out)
	}
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestSpecInputErrors: #10 and #12 on the render side. Each spec used to
// be accepted (an empty file rendered the 2,190-clip paper grid; floats
// were truncated; a second document was ignored) or to grow without bound.
func TestSpecInputErrors(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"empty file", "", "the spec is empty; name at least its grid"},
		{"comments only", "# grid: default\n", "the spec is empty"},
		{"two documents", "grid: default\ncounts: [1]\n---\ngrid: paper\n", "line 3: a second YAML document"},
		{"float fps", "grid: default\nfps: 10.9\n", "line 2, field fps: 10.9 is not a whole number"},
		{"float count", "grid: default\ncounts: [2.9]\n", "line 2, field counts[0]: 2.9 is not a whole number"},
		{"float width", "grid: default\nwidth: 64.5\n", "line 2, field width: 64.5 is not a whole number"},
		{"a billion seeds", "grid: default\nseeds: 1000000000\n", "the spec plans 39000000000 clips (seeds 1000000000), more than the limit of 1000000"},
	}
	for _, c := range cases {
		out := filepath.Join(t.TempDir(), "out")
		spec := writeFile(t, "s.yaml", c.yaml)
		args := []string{"render", "--spec", spec, "--out", out}
		msg, code := run(t, args...)
		if code != 2 || !strings.Contains(msg, spec+": invalid spec: ") || !strings.Contains(msg, c.want) {
			t.Errorf("%s: exit %d: %s\nwant exit 2, the file name and %q", c.name, code, msg, c.want)
		}
		noPanic(t, args, msg)
		if es := entries(t, out); len(es) != 0 {
			t.Errorf("%s: the refused spec wrote %v", c.name, es)
		}
	}
	args := []string{"render", "--spec", "/dev/zero", "--out", t.TempDir()}
	if msg, code := run(t, args...); code != 2 || !strings.Contains(msg, "/dev/zero: invalid spec: the file is larger than 1048576 bytes") {
		t.Errorf("--spec /dev/zero: exit %d: %s", code, msg)
	}
	// --seeds is checked the same way.
	if msg, code := run(t, "render", "--grid", "default", "--seeds", "1000000000", "--out", t.TempDir()); code != 2 || !strings.Contains(msg, "more than the limit of 1000000 clips") {
		t.Errorf("--seeds 1e9: exit %d: %s", code, msg)
	}
}

// TestPlanConfirmation: #12. A plan of more than 10,000 clips needs --yes;
// the built-in grids do not. An unwritable --out stops each run right
// after the check, so nothing is rendered.
func TestPlanConfirmation(t *testing.T) {
	blocked := filepath.Join(writeFile(t, "plain", "x"), "sub")
	// --grid paper --seeds 50: 3 domains × 73 cells × 50 seeds = 10,950 clips.
	for _, cmd := range []string{"render", "run"} {
		msg, code := run(t, cmd, "--grid", "paper", "--seeds", "50", "--out", blocked)
		if code != 2 || !strings.Contains(msg, "the plan has 10950 clips, more than 10000 (the paper grid has 2,190): pass --yes") {
			t.Errorf("%s of 10,950 clips without --yes: exit %d: %s", cmd, code, msg)
		}
	}
	if msg, code := run(t, "render", "--grid", "paper", "--seeds", "50", "--yes", "--out", blocked); code != 1 || !strings.Contains(msg, "not writable") {
		t.Errorf("render of 10,950 clips with --yes: exit %d: %s", code, msg)
	}
	if msg, code := run(t, "render", "--grid", "paper", "--out", blocked); code != 1 || !strings.Contains(msg, "clips=2190") || !strings.Contains(msg, "not writable") {
		t.Errorf("the paper grid without --yes: exit %d: %s", code, msg)
	}
}

// TestRenderOutputErrors: #14. --out "" used to write into the current
// directory; a different spec rendered into a directory used to keep the
// old clips in the new manifest.
func TestRenderOutputErrors(t *testing.T) {
	cwd := t.TempDir()
	spec := writeFile(t, "s.yaml", "grid: default\ndomains: [state_machine]\ncounts: [0, 2]\nfrequencies: [1.0]\nduration: 3\nwidth: 96\nheight: 64\n")
	if msg, code := runIn(t, cwd, "render", "--spec", spec, "--out", ""); code != 2 || !strings.Contains(msg, "--out is empty") {
		t.Errorf(`render --out "": exit %d: %s`, code, msg)
	}
	if es := entries(t, cwd); len(es) != 0 {
		t.Errorf(`render --out "" wrote %v into the current directory`, es)
	}
	out := t.TempDir()
	if msg, code := run(t, "render", "--spec", spec, "--out", out); code != 0 {
		t.Fatalf("render: exit %d: %s", code, msg)
	}
	manifest := filepath.Join(out, "manifest.jsonl")
	before, _ := os.ReadFile(manifest)
	other := writeFile(t, "o.yaml", "grid: default\ndomains: [state_machine]\ncounts: [2]\nfrequencies: [1.0]\nduration: 3\nwidth: 96\nheight: 64\n")
	msg, code := run(t, "render", "--spec", other, "--out", out)
	if code != 2 || !strings.Contains(msg, out+" records 2 clips, 1 of them not in this plan (state_machine_N00_F1.0_s00)") || !strings.Contains(msg, "new --out") {
		t.Errorf("another plan: exit %d: %s", code, msg)
	}
	if after, _ := os.ReadFile(manifest); string(after) != string(before) {
		t.Errorf("the refused render changed the manifest:\n%s\nwas\n%s", after, before)
	}
}

// TestFramesInputErrors: #9 and #14 on the frames side. fps:1e9 used to
// run out of memory and uniform:100000 on a 40-frame clip to write
// 100,000 files; --quality 0 and --out "" were accepted.
func TestFramesInputErrors(t *testing.T) {
	render := t.TempDir()
	// One clip of 4 s at 10 fps: 40 frames.
	spec := writeFile(t, "s.yaml", "grid: default\ndomains: [blinking]\ncounts: [2]\nfrequencies: [1.0]\nduration: 4\nfps: 10\nwidth: 96\nheight: 64\n")
	if msg, code := run(t, "render", "--spec", spec, "--out", render); code != 0 {
		t.Fatalf("render: exit %d: %s", code, msg)
	}
	manifest := filepath.Join(render, "manifest.jsonl")
	id := "blinking_N02_F1.0_s00"
	video := filepath.Join(render, "clips", id+".mp4")
	clip := []string{"--manifest", manifest, "--clip", id}
	cases := []struct {
		args []string
		want string
	}{
		{append(clip, "--policy", "fps:1e9"), `invalid sampling policy "fps:1e9": 1e9 is above the limit of 1000 frames per second`},
		{append(clip, "--policy", "uniform:100000"), "100000 is above the limit of 10000 frames per plan"},
		{append(clip, "--policy", "uniform:41"), "41 frames from a clip of 40 frames would repeat clip frames (at most 40 here"},
		{append(clip, "--policy", "fps:11"), "11 samples/s is faster than the clip's own 10 fps"},
		{append(clip, "--policy", "fps:1001", "--exact"), "above the limit of 1000 frames per second"},
		{[]string{"--video", video, "--policy", "fps:12"}, "12 samples/s is faster than the clip's own 10 fps"},
		{append(clip, "--policy", "fps:1", "--quality", "0"), "--quality 0 out of range: JPEG quality is 1–100"},
		{append(clip, "--policy", "fps:1", "--quality", "101"), "--quality 101 out of range"},
		{append(clip, "--policy", "fps:1", "--max-images", "-1"), "--max-images -1"},
	}
	for _, c := range cases {
		fdir := filepath.Join(t.TempDir(), "f")
		args := append([]string{"frames", "--out", fdir}, c.args...)
		msg, code := run(t, args...)
		if code != 2 || !strings.Contains(msg, c.want) {
			t.Errorf("tracegrid %s: exit %d: %s\nwant exit 2 and %q", strings.Join(args, " "), code, msg, c.want)
		}
		noPanic(t, args, msg)
		if es := entries(t, fdir); len(es) != 0 {
			t.Errorf("tracegrid %s wrote %d files", strings.Join(args, " "), len(es))
		}
	}
	// At the bounds: the clip's own rate, its frame count, and --exact
	// between frames (4 s × 20/s = 80 frames of a 40-frame clip).
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(clip, "--policy", "fps:10"), "40 frames (fps:10)"},
		{append(clip, "--policy", "uniform:40"), "40 frames (uniform:40)"},
		{append(clip, "--policy", "fps:20", "--exact"), "80 frames (fps:20)"},
	} {
		args := append([]string{"frames", "--out", t.TempDir()}, c.args...)
		if msg, code := run(t, args...); code != 0 || !strings.Contains(msg, c.want) {
			t.Errorf("tracegrid %s: exit %d: %s", strings.Join(args, " "), code, msg)
		}
	}
	cwd := t.TempDir()
	if msg, code := runIn(t, cwd, append([]string{"frames", "--out", "", "--policy", "fps:1"}, clip...)...); code != 2 || !strings.Contains(msg, "--out is empty") {
		t.Errorf(`frames --out "": exit %d: %s`, code, msg)
	}
	if es := entries(t, cwd); len(es) != 0 {
		t.Errorf(`frames --out "" wrote %v into the current directory`, es)
	}
}

// TestEvalPolicyBounds: #9 reaches eval: the dry run and a study
// condition refuse the same plans, before anything is sent.
func TestEvalPolicyBounds(t *testing.T) {
	manifest := renderSmall(t) // 4 s clips at 30 fps: 120 frames
	base := []string{"eval", "--manifest", manifest, "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--prompt", "direct", "--dry-run"}
	for _, c := range []struct{ policy, want string }{
		{"fps:1e9", "above the limit of 1000 frames per second"},
		{"uniform:100000", "above the limit of 10000 frames per plan"},
		{"fps:60", "60 samples/s is faster than the clip's own 30 fps"},
		{"uniform:121", "121 frames from a clip of 120 frames"},
	} {
		args := append(append([]string{}, base...), "--policy", c.policy)
		msg, code := run(t, args...)
		if code != 2 || !strings.Contains(msg, c.want) {
			t.Errorf("eval --dry-run --policy %s: exit %d: %s", c.policy, code, msg)
		}
		noPanic(t, args, msg)
	}
	study := writeFile(t, "study.yaml", "name: s\nmanifest: "+manifest+"\nmodels: [{name: m, base_url: 'http://127.0.0.1:9/v1'}]\nconditions: [{policy: 'fps:1e9', prompt: direct}]\n")
	for _, dry := range []bool{true, false} {
		args := []string{"eval", "--config", study, "--db", filepath.Join(t.TempDir(), "r.db")}
		if dry {
			args = append(args, "--dry-run")
		}
		msg, code := run(t, args...)
		if code != 2 || !strings.Contains(msg, "above the limit of 1000 frames per second") {
			t.Errorf("study condition fps:1e9 (dry run %v): exit %d: %s", dry, code, msg)
		}
		noPanic(t, args, msg)
	}
}

// TestTraceInputErrors: #14 on the trace side. JSON errors exited 1; an
// unknown domain, a negative pulse, a wrong active span, fps 1e9 and
// trailing garbage were accepted; --at NaN printed a state.
func TestTraceInputErrors(t *testing.T) {
	// The hand-worked trace of TestScoreHandWorked: N=3 at 1 Hz, events at
	// 2, 3, 4 s, active span [1.5, 4.5].
	good := `{"schema":"tracegrid/trace/v1","id":"bounce_ball_N03_F1.0_s00","domain":"bounce_ball","n":3,"f":1,"seed":0,"duration":24,"fps":30,"width":854,"height":480,"active_start":1.5,"active_end":4.5,"initial_state":"none","nuisance":{},
"events":[{"t":2,"type":"wall_contact","before":"none","after":"left","count":1},{"t":3,"type":"wall_contact","before":"left","after":"right","count":2},{"t":4,"type":"wall_contact","before":"right","after":"left","count":3}]}
`
	if msg, code := run(t, "trace", "replay", writeFile(t, "good.json", good)); code != 0 {
		t.Fatalf("the good trace: exit %d: %s", code, msg)
	}
	edit := func(old, new string) string {
		if !strings.Contains(good, old) {
			t.Fatalf("%q not in the trace", old)
		}
		return strings.Replace(good, old, new, 1)
	}
	cases := []struct {
		name, text, want string
	}{
		{"syntax error", edit(`"n":3,`, `"n":3,,`), "trace: malformed JSON: line 1, column"},
		{"truncated", good[:100], "the file ends inside the JSON object"},
		{"trailing garbage", good + "}garbage", "line 3, column 1: data after the trace's JSON object"},
		{"unknown domain", edit(`"domain":"bounce_ball"`, `"domain":"juggling"`), `unknown domain "juggling"`},
		{"negative pulse", edit(`"nuisance":{}`, `"nuisance":{},"pulse":-0.2`), "pulse -0.2 must be a non-negative number"},
		{"span misses events", edit(`"active_start":1.5`, `"active_start":2.5`), "active span [2.5, 4.5] does not hold the events"},
		{"span too long", edit(`"active_start":1.5`, `"active_start":0`), "is 4.5 s long, more than N/F = 3 s"},
		{"fps 1e9", edit(`"fps":30`, `"fps":1000000000`), "fps 1000000000 out of range [1, 240]"},
		{"objects class on events", edit(`"nuisance":{}`, `"nuisance":{},"class":"cube-red"`), "has events, not objects"},
	}
	for _, c := range cases {
		path := writeFile(t, "t.json", c.text)
		args := []string{"trace", "replay", path}
		msg, code := run(t, args...)
		if code != 2 || !strings.Contains(msg, path) || !strings.Contains(msg, c.want) {
			t.Errorf("%s: exit %d: %s\nwant exit 2, the path and %q", c.name, code, msg, c.want)
		}
		noPanic(t, args, msg)
	}
	// A file above the 64 MiB limit (sparse, so the test writes little).
	big := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(big, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 64<<20+1); err != nil {
		t.Fatal(err)
	}
	if msg, code := run(t, "trace", "replay", big); code != 2 || !strings.Contains(msg, "file too large: more than 67108864 bytes (the limit is 64 MiB)") {
		t.Errorf("a 64 MiB + 1 trace: exit %d: %s", code, msg)
	}
	gp := writeFile(t, "good.json", good)
	for _, at := range []string{"NaN", "-Inf", "+Inf", "-0.5"} {
		msg, code := run(t, "trace", "replay", gp, "--at", at)
		if code != 2 || strings.Contains(msg, "state") {
			t.Errorf("--at %s: exit %d: %s", at, code, msg)
		}
	}
}

// TestFramesVideoUprightAndBadVideos: issue 31, items 13 and 14.
// `frames --video` of a video tagged rotate=90 writes the upright frames
// eval sends for it (the displayed size, the top-left marker turned to
// the top right), not the coded sideways ones; a file that is not a
// decodable video (an MP4 whose frames are zeros, a FIFO) is bad input,
// exit 2.
func TestFramesVideoUprightAndBadVideos(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "marker.mp4")
	w, err := encode.Create(src, encode.Options{Width: 64, Height: 48, FPS: 10, Preset: "ultrafast", Lossless: true})
	if err != nil {
		t.Fatal(err)
	}
	img := encode.Image{Width: 64, Height: 48, Stride: 256, Pix: make([]byte, 256*48)}
	for y := range 48 {
		for x := range 64 {
			v := byte(0)
			if x < 16 && y < 16 {
				v = 255
			}
			copy(img.Pix[y*256+4*x:], []byte{v, v, v, 255})
		}
	}
	for range 10 {
		if err := w.WriteRGBA(img); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rot := filepath.Join(dir, "rot90.mp4")
	if err := encode.Remux(rot, src, encode.RemuxOptions{Rotation: 90}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "frames")
	if msg, code := run(t, "frames", "--video", rot, "--policy", "uniform:1", "--format", "png", "--out", out); code != 0 {
		t.Fatalf("frames --video: exit %d: %s", code, msg)
	}
	var idx struct {
		Width, Height int
		Frames        []struct{ File string }
	}
	b, err := os.ReadFile(filepath.Join(out, "frames.json"))
	if err == nil {
		err = json.Unmarshal(b, &idx)
	}
	if err != nil || len(idx.Frames) != 1 || idx.Width != 48 || idx.Height != 64 {
		t.Fatalf("frames.json: %v: %s", err, b)
	}
	f, err := os.Open(filepath.Join(out, idx.Frames[0].File))
	if err != nil {
		t.Fatal(err)
	}
	pic, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	lum := func(x, y int) uint32 { r, _, _, _ := pic.At(x, y).RGBA(); return r >> 8 }
	if bb := pic.Bounds(); bb.Dx() != 48 || bb.Dy() != 64 || lum(44, 4) < 200 || lum(4, 4) > 40 {
		t.Errorf("frame %dx%d, top right %d, top left %d: want 48x64 with the marker top right", bb.Dx(), bb.Dy(), lum(44, 4), lum(4, 4))
	}

	// An MP4 whose index is intact and whose frame data is zeros.
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	mdat, moov := bytes.Index(data, []byte("mdat")), bytes.Index(data, []byte("moov"))
	if mdat < 0 || moov < mdat {
		t.Fatalf("mdat at %d, moov at %d", mdat, moov)
	}
	clear(data[mdat+4 : moov-4])
	zeros := filepath.Join(dir, "zeros.mp4")
	if err := os.WriteFile(zeros, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.mp4")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ video, want string }{
		{zeros, zeros + ": Invalid data found when processing input"},
		{fifo, fifo + " is not a regular file"},
	} {
		args := []string{"frames", "--video", c.video, "--policy", "uniform:4", "--out", filepath.Join(dir, "bad")}
		msg, code := run(t, args...)
		if code != 2 || !strings.Contains(msg, c.want) {
			t.Errorf("frames --video %s: exit %d: %s\nwant exit 2 and %q", c.video, code, msg, c.want)
		}
		noPanic(t, args, msg)
	}
}
