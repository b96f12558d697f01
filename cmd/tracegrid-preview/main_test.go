package main

// These tests run the built binaries. The window tests run under Xvfb
// (xvfb-run, Debian packages xvfb and xauth, installed by make deps); they
// never skip: without xvfb-run they fail and say what to install.

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/go-gl/glfw/v3.3/glfw"

	"github.com/tracegrid/tracegrid/pipeline"
	"github.com/tracegrid/tracegrid/preview"
)

var binDir string // tracegrid and tracegrid-preview, built by TestMain

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tracegrid-preview-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	for _, b := range []struct{ name, pkg string }{
		{"tracegrid-preview", "github.com/tracegrid/tracegrid/cmd/tracegrid-preview"},
		{"tracegrid", "github.com/tracegrid/tracegrid/cmd/tracegrid"},
	} {
		cmd := exec.Command(goTool(), "build", "-o", filepath.Join(dir, b.name), b.pkg)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n", b.pkg, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func bin(name string) string { return filepath.Join(binDir, name) }

type result struct {
	stdout, stderr string
	code           int
	signaled       bool
}

// runEnv runs a command with env (nil: this process's environment).
func runEnv(t *testing.T, env []string, name string, args ...string) result {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.signaled = true
		}
	default:
		t.Fatalf("running %s: %v", name, err)
	}
	return r
}

// xvfb runs a command under a virtual X server.
func xvfb(t *testing.T, name string, args ...string) result {
	t.Helper()
	xr, err := exec.LookPath("xvfb-run")
	if err != nil {
		t.Fatal("xvfb-run not found: the window tests need a virtual X server; install Debian's xvfb and xauth (make deps)")
	}
	if _, err := exec.LookPath("xauth"); err != nil {
		t.Fatal("xauth not found: xvfb-run needs it; install Debian's xauth (make deps)")
	}
	return runEnv(t, nil, xr, append([]string{"-a", "-s", "-screen 0 1280x1024x24", name}, args...)...)
}

func mustOK(t *testing.T, what string, r result) {
	t.Helper()
	if r.code != 0 || r.signaled {
		t.Fatalf("%s: exit %d (signaled %v)\nstdout: %s\nstderr: %s", what, r.code, r.signaled, r.stdout, r.stderr)
	}
}

// envWithout is this process's environment without the named variables.
func envWithout(names ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, n := range names {
			drop = drop || k == n
		}
		if !drop {
			env = append(env, kv)
		}
	}
	return env
}

// The test clip: bounce_ball N=3 at F=1 Hz over 3 s at 30 fps, 320x180.
// N/F fills the clip, so the events are at 1/(2F) = 0.5 s, 1.5 s and
// 2.5 s (clip frames 15, 45, 75 of 90), whatever the seed.
const (
	testID   = "bounce_ball_N03_F1.0_s00"
	testSpec = "grid: default\ndomains: [bounce_ball]\ncounts: [3]\nfrequencies: [1.0]\nseeds: 1\nduration: 3\nfps: 30\nwidth: 320\nheight: 180\n"
)

var testParams = []string{"--domain", "bounce_ball", "--n", "3", "--f", "1", "--duration", "3", "--size", "320x180"}

// renderTestClip renders the test clip with tracegrid render and returns
// its manifest.
func renderTestClip(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(spec, []byte(testSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	mustOK(t, "render", runEnv(t, nil, bin("tracegrid"), "render", "--spec", spec, "--out", filepath.Join(dir, "out"), "--workers", "1"))
	return filepath.Join(dir, "out", pipeline.ManifestName)
}

// framesPNG writes the frames of policy with tracegrid frames and returns
// the file of the frame sampled at t.
func framesPNG(t *testing.T, manifest, policy string, exact bool, at float64) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "frames")
	args := []string{"frames", "--manifest", manifest, "--clip", testID, "--policy", policy, "--format", "png", "--out", out}
	if exact {
		args = append(args, "--exact")
	}
	mustOK(t, "frames", runEnv(t, nil, bin("tracegrid"), args...))
	b, err := os.ReadFile(filepath.Join(out, "frames.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Frames []struct {
			T    float64 `json:"t"`
			File string  `json:"file"`
		} `json:"frames"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	for _, f := range idx.Frames {
		if f.T == at {
			return filepath.Join(out, f.File)
		}
	}
	t.Fatalf("frames --policy %s has no frame at t=%v: %s", policy, at, b)
	return ""
}

func readPNG(t *testing.T, path string) *image.NRGBA {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := image.NewNRGBA(img.Bounds())
	draw.Draw(out, out.Bounds(), img, img.Bounds().Min, draw.Src)
	return out
}

// diff is the mean absolute difference per RGB channel over the pixels of
// a and b inside r (or outside, with outside set) and the largest one.
func diff(t *testing.T, a, b *image.NRGBA, in func(x, y int) bool) (mean [3]float64, most int) {
	t.Helper()
	if a.Bounds() != b.Bounds() {
		t.Fatalf("sizes differ: %v vs %v", a.Bounds(), b.Bounds())
	}
	n := 0
	for y := a.Rect.Min.Y; y < a.Rect.Max.Y; y++ {
		for x := a.Rect.Min.X; x < a.Rect.Max.X; x++ {
			if !in(x, y) {
				continue
			}
			n++
			pa, pb := a.PixOffset(x, y), b.PixOffset(x, y)
			for c := range 3 {
				d := int(a.Pix[pa+c]) - int(b.Pix[pb+c])
				if d < 0 {
					d = -d
				}
				mean[c] += float64(d)
				most = max(most, d)
			}
		}
	}
	if n == 0 {
		t.Fatal("no pixels compared")
	}
	for c := range mean {
		mean[c] /= float64(n)
	}
	return mean, most
}

func all(int, int) bool { return true }

func below1(m [3]float64) bool { return m[0] < 1 && m[1] < 1 && m[2] < 1 }

// A screenshot at an event time holds the pixels tracegrid frames renders
// for that time; the overlay changes its own rectangles and nothing else;
// the window shows the same pixels; a window of another shape letterboxes
// the scene and leaves the screenshot at the clip's resolution.
func TestScreenshot(t *testing.T) {
	manifest := renderTestClip(t)
	// single:best samples the middle event t_⌈3/2⌉ = t_2 = 1.5 s.
	ref := readPNG(t, framesPNG(t, manifest, "single:best", true, 1.5))
	if ref.Bounds() != image.Rect(0, 0, 320, 180) {
		t.Fatalf("frames image %v, want 320x180", ref.Bounds())
	}
	dir := t.TempDir()
	plain, over, dump := filepath.Join(dir, "plain.png"), filepath.Join(dir, "overlay.png"), filepath.Join(dir, "window.png")
	mustOK(t, "screenshot --no-overlay", xvfb(t, bin("tracegrid-preview"), "--manifest", manifest, "--clip", testID,
		"--screenshot", plain, "--at", "1.5", "--no-overlay", "--window-dump", dump))
	shot := readPNG(t, plain)
	if m, most := diff(t, shot, ref, all); !below1(m) {
		t.Fatalf("screenshot vs frames --exact at 1.5 s: mean abs diff %v (max %d), want < 1", m, most)
	}
	if m, most := diff(t, readPNG(t, dump), shot, all); most != 0 {
		t.Fatalf("the window's pixels differ from the screenshot: mean %v, max %d", m, most)
	}

	mustOK(t, "screenshot with overlay", xvfb(t, bin("tracegrid-preview"), "--manifest", manifest, "--clip", testID,
		"--screenshot", over, "--at", "1.5"))
	withOverlay := readPNG(t, over)
	clip, tr, _, err := pipeline.LoadClip(manifest, testID)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := preview.New(preview.Config{Clip: clip, Trace: tr, Overlay: true, Start: 1.5, Paused: true})
	if err != nil {
		t.Fatal(err)
	}
	rects := pl.OverlayBounds()
	inRect := func(r preview.Rect, grow float64) func(x, y int) bool {
		return func(x, y int) bool {
			fx, fy := float64(x)+0.5, float64(y)+0.5
			return fx >= r.X0-grow && fx <= r.X1+grow && fy >= r.Y0-grow && fy <= r.Y1+grow
		}
	}
	outside := func(x, y int) bool {
		for _, r := range rects {
			if inRect(r, 2)(x, y) {
				return false
			}
		}
		return true
	}
	if m, most := diff(t, withOverlay, shot, outside); most != 0 {
		t.Errorf("outside the overlay the pixels changed: mean %v, max %d", m, most)
	}
	// The status panel (text on a dark band) changes its area a lot.
	if m, _ := diff(t, withOverlay, shot, inRect(rects[1], 0)); m[0]+m[1]+m[2] < 30 {
		t.Errorf("the overlay's text area barely differs: mean abs diff %v", m)
	}

	// A 400x300 window: the 16:9 scene fills 400x225, centred, black
	// above and below; the screenshot is still the clip's 320x180.
	wide := filepath.Join(dir, "wide.png")
	wideDump := filepath.Join(dir, "wide-window.png")
	mustOK(t, "screenshot --window 400x300", xvfb(t, bin("tracegrid-preview"), "--manifest", manifest, "--clip", testID,
		"--screenshot", wide, "--at", "1.5", "--no-overlay", "--window", "400x300", "--window-dump", wideDump))
	if m, most := diff(t, readPNG(t, wide), shot, all); most != 0 {
		t.Errorf("the screenshot depends on the window size: mean %v, max %d", m, most)
	}
	win := readPNG(t, wideDump)
	if win.Bounds() != image.Rect(0, 0, 400, 300) {
		t.Fatalf("window framebuffer %v, want 400x300", win.Bounds())
	}
	// (300-225)/2 = 37 rows above (GL places the area 37 rows from the
	// bottom: 38 rows above it in the top-down image).
	black := image.NewNRGBA(win.Bounds())
	draw.Draw(black, black.Bounds(), image.Black, image.Point{}, draw.Src)
	margins := func(x, y int) bool { return y < 38 || y >= 263 }
	if m, most := diff(t, win, black, margins); most != 0 {
		t.Errorf("the margins are not black: mean %v, max %d", m, most)
	}
	if m, _ := diff(t, win, black, func(x, y int) bool { return y >= 38 && y < 263 }); m[0]+m[1]+m[2] < 10 {
		t.Errorf("the scene area is (nearly) black: mean %v", m)
	}
}

// With a policy, the picture between two samples is the earlier sample's
// frame, as tracegrid frames renders it for the model.
func TestPolicyScreenshot(t *testing.T) {
	manifest := renderTestClip(t)
	// fps:1 samples 0, 1, 2 s; at 1.7 s the frame sampled at 1 s is held.
	ref := readPNG(t, framesPNG(t, manifest, "fps:1", false, 1))
	shot := filepath.Join(t.TempDir(), "policy.png")
	mustOK(t, "policy screenshot", xvfb(t, bin("tracegrid-preview"), "--manifest", manifest, "--clip", testID,
		"--policy", "fps:1", "--screenshot", shot, "--at", "1.7", "--no-overlay"))
	if m, most := diff(t, readPNG(t, shot), ref, all); !below1(m) {
		t.Fatalf("policy screenshot at 1.7 s vs the fps:1 frame at 1 s: mean abs diff %v (max %d)", m, most)
	}
}

func scriptState(t *testing.T, r result) preview.State {
	t.Helper()
	mustOK(t, "script", r)
	var s preview.State
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("script output %q: %v", r.stdout, err)
	}
	return s
}

// A key script: each key, then one clip frame (1/30 s) of time at the
// current speed.
func TestScript(t *testing.T) {
	// + (2×), then 2 frames of time: frame 2; tick: frame 4; space:
	// pause; - (1×); right, right, left: frame 5; shift+right: the first
	// event after 5/30 s, 0.5 s (frame 15); shift+right: 1.5 s;
	// shift+left: 0.5 s; tick: paused, no time passes.
	args := append([]string{"--script", "+,tick,space,-,right,right,left,shift+right,shift+right,shift+left,tick"}, testParams...)
	s := scriptState(t, xvfb(t, bin("tracegrid-preview"), args...))
	if s.T != 0.5 || s.Frame != 15 || !s.Paused || s.Speed != 1 || s.Count != 1 || !s.Overlay {
		t.Fatalf("after the script: %+v; want t=0.5, frame 15, paused, speed 1, count 1, overlay on", s)
	}
	// Playing: 3 ticks at 1× from 0.2 s (frame 6) reach frame 9; o turns
	// the overlay off.
	s = scriptState(t, xvfb(t, bin("tracegrid-preview"), append([]string{"--script", "tick,tick,o", "--at", "0.2"}, testParams...)...))
	if s.Frame != 9 || s.Paused || s.Overlay || math.Abs(s.T-0.3) > 1e-9 {
		t.Fatalf("after playing 3 frames from 0.2 s: %+v; want t=0.3, frame 9, playing, overlay off", s)
	}
	// With fps:1 the frame sampled at 0 s is held at the first event,
	// labelled as eval labels it.
	s = scriptState(t, xvfb(t, bin("tracegrid-preview"), append([]string{"--script", "shift+right", "--policy", "fps:1"}, testParams...)...))
	if s.T != 0.5 || s.Sample != 0 || s.ShownFrame != 0 || s.Label != "Frame 1 of 3 at t = 0.000 s" || s.Policy != "fps:1" {
		t.Fatalf("policy script: %+v", s)
	}
	// q stops the script there.
	s = scriptState(t, xvfb(t, bin("tracegrid-preview"), append([]string{"--script", "space,q,right"}, testParams...)...))
	if s.Frame != 0 || !s.Paused {
		t.Fatalf("keys after q were played: %+v", s)
	}
}

// Without a display the preview fails at once with exit 1 and says how to
// get one; it never panics or dumps core.
func TestNoDisplay(t *testing.T) {
	sock := "/tmp/.X11-unix/X8873"
	if fileExists(sock) {
		t.Fatalf("%s exists: the test needs a display number with no server", sock)
	}
	for _, tc := range []struct {
		name    string
		env     []string
		command []string
		cause   string
	}{
		{"no DISPLAY", envWithout("DISPLAY", "WAYLAND_DISPLAY"), []string{bin("tracegrid-preview")}, "DISPLAY is not set"},
		{"no server", append(envWithout("DISPLAY", "WAYLAND_DISPLAY"), "DISPLAY=:8873"), []string{bin("tracegrid-preview")}, `cannot open display ":8873"`},
		{"screenshot", envWithout("DISPLAY", "WAYLAND_DISPLAY"), []string{bin("tracegrid-preview"), "--screenshot", filepath.Join(t.TempDir(), "x.png")}, "DISPLAY is not set"},
	} {
		args := append(tc.command[1:], testParams...)
		r := runEnv(t, tc.env, tc.command[0], args...)
		if r.code != 1 || r.signaled {
			t.Errorf("%s: exit %d (signaled %v), want 1\n%s", tc.name, r.code, r.signaled, r.stderr)
		}
		for _, want := range []string{"tracegrid-preview: no display", tc.cause, "X server", "xvfb-run -a", "tracegrid render and tracegrid frames need no display"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", tc.name, want, r.stderr)
			}
		}
		for _, bad := range []string{"panic", "goroutine ", "SIGSEGV", "core dumped"} {
			if strings.Contains(r.stderr, bad) {
				t.Errorf("%s: stderr has %q:\n%s", tc.name, bad, r.stderr)
			}
		}
	}
}

// Bad input is exit 2 and says what is wrong, before any window.
func TestUsage(t *testing.T) {
	env := envWithout("DISPLAY", "WAYLAND_DISPLAY")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "say which clip"},
		{[]string{"--domain", "bounce_ball", "--n", "3"}, "--f is required"},
		{[]string{"--domain", "objects", "--n", "5"}, "--class is required"},
		{append([]string{"--labels", "time"}, testParams...), "--labels applies to --policy"},
		{append([]string{"--policy", "fps:0"}, testParams...), "fps"},
		{append([]string{"--window", "10x10"}, testParams...), "--window"},
		{append([]string{"--script", "jump"}, testParams...), "jump"},
		{append([]string{"--at", "3.5"}, testParams...), "outside clip"},
		{append([]string{"--policy", "keyframes"}, "--domain", "objects", "--n", "5", "--class", "cube-red"), "none"},
		{[]string{"--domain", "bounce_ball", "--n", "3", "--f", "1", "--duration", "2"}, "longer than"},
	} {
		r := runEnv(t, env, bin("tracegrid-preview"), tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// neededLibs are the shared libraries an ELF file names itself (DT_NEEDED).
func neededLibs(t *testing.T, path string) []string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	return libs
}

func hasModule(t *testing.T, path, module string) bool {
	t.Helper()
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range info.Deps {
		if d.Path == module {
			return true
		}
	}
	return false
}

// windowLib reports whether a library is X11, GLX, GLFW or libGL (which
// pulls in GLX and X11).
func windowLib(name string) bool {
	for _, p := range []string{"libX11", "libxcb", "libGL.so", "libGLX", "libglfw"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// The headless tracegrid binary links no window library and no GLFW: it
// names none itself (DT_NEEDED), holds no GLFW code, and where X11 or GL
// appear in its closure (ldd) they come from Debian's FFmpeg libraries
// (libavutil needs libX11 for VAAPI, libavdevice X11, xcb, GL and SDL),
// not from tracegrid. tracegrid-preview, for contrast, names them.
func TestHeadlessLinksNoWindowLibraries(t *testing.T) {
	const glfwModule = "github.com/go-gl/glfw/v3.3/glfw"
	for _, lib := range neededLibs(t, bin("tracegrid")) {
		if windowLib(lib) {
			t.Errorf("tracegrid needs %s itself", lib)
		}
	}
	if hasModule(t, bin("tracegrid"), glfwModule) {
		t.Error("tracegrid contains GLFW")
	}
	pv := strings.Join(neededLibs(t, bin("tracegrid-preview")), " ")
	if !strings.Contains(pv, "libX11") || !hasModule(t, bin("tracegrid-preview"), glfwModule) {
		t.Errorf("tracegrid-preview does not link X11 and GLFW (needs %s): the checks above prove nothing", pv)
	}

	// The closure: which direct dependency brings each window library in.
	out, err := exec.Command("ldd", bin("tracegrid")).Output()
	if err != nil {
		t.Fatalf("ldd: %v", err)
	}
	paths := map[string]string{}
	for _, ln := range strings.Split(string(out), "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(ln), " => ")
		if ok {
			paths[name] = strings.Fields(rest)[0]
		}
	}
	ffmpeg := 0
	for _, top := range neededLibs(t, bin("tracegrid")) {
		if ffmpegLib(top) {
			ffmpeg++
			continue
		}
		if w := reach(t, paths, top, map[string]bool{}); w != "" {
			t.Errorf("%s (needed by tracegrid) brings in %s", top, w)
		}
	}
	if ffmpeg == 0 {
		t.Error("tracegrid needs no FFmpeg library: the closure check excluded nothing")
	}
}

// ffmpegLib reports whether a library is one of FFmpeg's.
func ffmpegLib(name string) bool {
	return strings.HasPrefix(name, "libav") || strings.HasPrefix(name, "libsw") || strings.HasPrefix(name, "libpostproc")
}

// reach returns the first window library reachable from lib through
// DT_NEEDED without passing through an FFmpeg library, or "".
func reach(t *testing.T, paths map[string]string, lib string, seen map[string]bool) string {
	if seen[lib] || ffmpegLib(lib) {
		return ""
	}
	seen[lib] = true
	if windowLib(lib) {
		return lib
	}
	p, ok := paths[lib]
	if !ok || !filepath.IsAbs(p) {
		return ""
	}
	for _, d := range neededLibs(t, p) {
		if w := reach(t, paths, d, seen); w != "" {
			return w
		}
	}
	return ""
}

// tracegrid preview runs tracegrid-preview from its own directory with
// the same arguments, and says how to build it when it is missing.
func TestTracegridPreview(t *testing.T) {
	args := append([]string{"preview", "--script", "shift+right"}, testParams...)
	s := scriptState(t, xvfb(t, bin("tracegrid"), args...))
	if s.T != 0.5 || s.Frame != 15 {
		t.Fatalf("tracegrid preview --script shift+right: %+v, want t=0.5 frame 15", s)
	}
	// The exec passes the preview's exit status and message through.
	r := runEnv(t, envWithout("DISPLAY", "WAYLAND_DISPLAY"), bin("tracegrid"), append([]string{"preview"}, testParams...)...)
	if r.code != 1 || !strings.Contains(r.stderr, "tracegrid-preview: no display") {
		t.Errorf("tracegrid preview without a display: exit %d, stderr %q", r.code, r.stderr)
	}
	// Alone in a directory: exit 1, how to build it.
	alone := filepath.Join(t.TempDir(), "tracegrid")
	b, err := os.ReadFile(bin("tracegrid"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, b, 0o755); err != nil {
		t.Fatal(err)
	}
	r = runEnv(t, nil, alone, append([]string{"preview"}, testParams...)...)
	if r.code != 1 || !strings.Contains(r.stderr, "tracegrid-preview") || !strings.Contains(r.stderr, "make build") {
		t.Errorf("tracegrid preview without tracegrid-preview: exit %d, stderr %q; want 1 and how to build it", r.code, r.stderr)
	}
}

// The window's key callback maps presses to player keys: arrows and speed
// keys repeat while held, the others act once per press.
func TestKeyMapping(t *testing.T) {
	type ev struct {
		key    glfw.Key
		action glfw.Action
		mods   glfw.ModifierKey
	}
	w := &window{}
	for _, e := range []ev{
		{glfw.KeySpace, glfw.Press, 0},
		{glfw.KeySpace, glfw.Repeat, 0}, // held: once
		{glfw.KeySpace, glfw.Release, 0},
		{glfw.KeyRight, glfw.Press, 0},
		{glfw.KeyRight, glfw.Repeat, 0},
		{glfw.KeyLeft, glfw.Press, 0},
		{glfw.KeyRight, glfw.Press, glfw.ModShift},
		{glfw.KeyLeft, glfw.Repeat, glfw.ModShift},
		{glfw.KeyEqual, glfw.Press, glfw.ModShift}, // +
		{glfw.KeyKPAdd, glfw.Press, 0},
		{glfw.KeyMinus, glfw.Press, 0},
		{glfw.KeyKPSubtract, glfw.Repeat, 0},
		{glfw.KeyO, glfw.Press, 0},
		{glfw.KeyO, glfw.Repeat, 0},
		{glfw.KeyA, glfw.Press, 0}, // not a preview key
		{glfw.KeyQ, glfw.Press, 0},
		{glfw.KeyEscape, glfw.Press, 0},
	} {
		w.onKey(nil, e.key, 0, e.action, e.mods)
	}
	want := []preview.Key{preview.KeyPause, preview.KeyStepForward, preview.KeyStepForward, preview.KeyStepBack,
		preview.KeyNextEvent, preview.KeyPrevEvent, preview.KeyFaster, preview.KeyFaster, preview.KeySlower, preview.KeySlower,
		preview.KeyOverlay, preview.KeyQuit, preview.KeyQuit}
	if fmt.Sprint(w.keys) != fmt.Sprint(want) {
		t.Fatalf("keys %v, want %v", w.keys, want)
	}
}
