package variants

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/frames"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/internal/rgba"
	"github.com/tracegrid/tracegrid/pipeline"
)

var testRenderer *gpu.Renderer

func TestMain(m *testing.M) {
	r, err := gpu.NewRenderer()
	if err != nil {
		os.Stderr.WriteString("variants tests need EGL (llvmpipe is enough): " + err.Error() + "\n")
		os.Exit(1)
	}
	testRenderer = r
	if os.Getenv(killHelperEnv) != "" {
		killHelper()
	}
	code := m.Run()
	r.Close()
	os.Exit(code)
}

// The small grid of these tests: three domains, an N=0 control and N=2 at
// 1 Hz each, 4 s at 30 fps, 160×96 (6 clips of 120 frames).
const gridSpec = "grid: default\ndomains: [bounce_ball, blinking, state_machine]\ncounts: [0, 2]\nfrequencies: [1.0]\nduration: 4\nwidth: 160\nheight: 96\n"

var (
	gridOnce sync.Once
	gridDir  string
	gridErr  error
)

// grid renders the test grid once per test binary and returns its
// manifest; tests that change files copy it first (copyGrid).
func grid(t *testing.T) string {
	t.Helper()
	gridOnce.Do(func() {
		gridDir, gridErr = os.MkdirTemp("", "variants-grid")
		if gridErr != nil {
			return
		}
		spec, err := pipeline.ParseSpec([]byte(gridSpec))
		if err != nil {
			gridErr = err
			return
		}
		_, gridErr = pipeline.Render(context.Background(), spec, pipeline.Options{Out: gridDir, Renderer: testRenderer})
	})
	if gridErr != nil {
		t.Fatal(gridErr)
	}
	return filepath.Join(gridDir, pipeline.ManifestName)
}

// copyGrid copies the rendered grid into a new directory.
func copyGrid(t *testing.T) string {
	t.Helper()
	src := filepath.Dir(grid(t))
	dst := t.TempDir()
	if out, err := exec.Command("cp", "-r", src+"/.", dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	return filepath.Join(dst, pipeline.ManifestName)
}

func policies(t *testing.T, ss ...string) []sampling.Policy {
	t.Helper()
	var ps []sampling.Policy
	for _, s := range ss {
		p, err := sampling.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}

func run(t *testing.T, opt Options) Summary {
	t.Helper()
	opt.Renderer = testRenderer
	sum, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// allFramePolicies is every policy kind.
var allFramePolicies = []string{"native", "fps:2", "fps:8", "keyframes", "adaptive:6", "single:random", "single:best", "uniform:5", "shuffled:5"}

// referenceFrames writes a clip × policy exactly as `tracegrid frames`
// does (frames.Source.Stream into a frames.Dir, per-image renames).
func referenceFrames(t *testing.T, manifest, clipID, policy string, format encode.ImageFormat, dir string) sampling.Plan {
	t.Helper()
	clip, tr, _, err := pipeline.LoadClip(manifest, clipID)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := sampling.Parse(policy)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pol.Plan(sampling.Clip{ID: clip.P.ID(), Duration: clip.P.Duration, FPS: float64(clip.P.FPS), Seed: clip.P.Seed, Events: tr.Times(),
		Pixels: frames.NewLowRes(testRenderer, clip)})
	if err != nil {
		t.Fatal(err)
	}
	src, err := frames.NewSource(testRenderer, frames.Options{Format: format})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	d := frames.NewDir(dir, frames.Index{Clip: clipID, Source: "scene", Policy: pol.String(), Format: string(format),
		Width: clip.P.Width, Height: clip.P.Height, Note: plan.Note, Events: tr.Times(), Generator: pipeline.ToolVersion()}, false)
	for img, err := range src.Stream(context.Background(), clip, plan) {
		if err != nil {
			t.Fatal(err)
		}
		if err := d.AddImage(img); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return plan
}

// sameTree reports the first difference between two directories' files.
func sameTree(t *testing.T, a, b string) {
	t.Helper()
	list := func(dir string) []string {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return names
	}
	na, nb := list(a), list(b)
	if !slices.Equal(na, nb) {
		t.Errorf("%s has %v, %s has %v", a, na, b, nb)
		return
	}
	for _, n := range na {
		x, _ := os.ReadFile(filepath.Join(a, n))
		y, _ := os.ReadFile(filepath.Join(b, n))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between %s and %s", n, a, b)
		}
	}
}

// TestFramesAsTracegridFrames: every policy kind on every clip, as PNG:
// each variant directory holds byte for byte what `tracegrid frames`
// writes for the clip and policy, its frames are the plan's, and the
// files are listed with their hashes.
func TestFramesAsTracegridFrames(t *testing.T) {
	manifest := grid(t)
	out := t.TempDir()
	var calls []int
	sum := run(t, Options{Manifest: manifest, Policies: policies(t, allFramePolicies...), Out: out, Format: "png",
		Progress: func(done, total int) {
			if total != 6*len(allFramePolicies) {
				t.Errorf("progress total %d", total)
			}
			calls = append(calls, done)
		}})
	want := 6 * len(allFramePolicies)
	if sum.Variants != want || sum.Skipped != 0 || len(calls) != want || calls[want-1] != want {
		t.Fatalf("summary %+v, %d progress calls", sum, len(calls))
	}
	entries, err := pipeline.LoadManifest(manifest)
	if err != nil {
		t.Fatal(err)
	}
	recs, _, err := readRecords(filepath.Join(out, RecordsName))
	if err != nil || len(recs) != want {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	frames0 := 0
	for _, e := range entries {
		for _, pol := range allFramePolicies {
			p, _ := sampling.Parse(pol)
			ref := filepath.Join(t.TempDir(), "ref")
			plan := referenceFrames(t, manifest, e.ID, pol, encode.ImagePNG, ref)
			got := filepath.Join(out, PolicyDir(p.String()), e.ID)
			sameTree(t, ref, got)
			idx, err := readIndex(filepath.Join(got, frames.IndexName))
			if err != nil {
				t.Fatal(err)
			}
			if len(idx.Frames) != len(plan.Frames) {
				t.Fatalf("%s %s: %d frames, plan %d", e.ID, pol, len(idx.Frames), len(plan.Frames))
			}
			for i, f := range plan.Frames {
				g := idx.Frames[i]
				if g.Index != f.Index || g.Position != f.Position || g.T != f.T || g.ClipFrame == nil || *g.ClipFrame != frames.ShownFrame(f.T, 30, 120) {
					t.Errorf("%s %s frame %d: %+v, plan %+v", e.ID, pol, i, g, f)
				}
			}
			frames0 += len(plan.Frames)
		}
	}
	if sum.Frames != frames0 || sum.Files != frames0+want {
		t.Errorf("summary frames %d files %d, want %d and %d", sum.Frames, sum.Files, frames0, frames0+want)
	}
	// Hand-worked: fps:2 on a 4 s clip at 30 fps is 8 frames at
	// 0, 0.5, …, 3.5 s showing clip frames 0, 15, …, 105.
	idx, err := readIndex(filepath.Join(out, "fps_2", "blinking_N02_F1.0_s00", frames.IndexName))
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.Frames) != 8 {
		t.Fatalf("fps:2: %d frames", len(idx.Frames))
	}
	for j, f := range idx.Frames {
		if f.T != float64(j)*0.5 || *f.ClipFrame != 15*j || f.File != fmt.Sprintf("%04d.png", j) {
			t.Errorf("fps:2 frame %d: %+v", j, f)
		}
	}
	// Each record lists every file with its hash.
	for _, r := range recs {
		if r.As != AsFrames || r.Settings.Format != "png" || r.Settings.Quality != 0 || r.Settings.Width != 160 || len(r.SHA256) != r.Frames+1 {
			t.Errorf("record %s %s: %+v", r.Clip, r.Policy, r)
		}
		for name, sum := range r.SHA256 {
			got, err := fileSHA256(filepath.Join(out, name))
			if err != nil || got != sum {
				t.Errorf("%s: sha256 %s, recorded %s (%v)", name, got, sum, err)
			}
		}
	}
	// keyframes on an N=0 clip: no frames, the plan's note.
	for _, r := range recs {
		if r.Clip == "bounce_ball_N00_F1.0_s00" && r.Policy == "keyframes:0.1" && (r.Frames != 0 || !strings.Contains(r.Note, "no true events")) {
			t.Errorf("keyframes on N=0: %+v", r)
		}
	}
	// The distinct pictures are far fewer than the frames: static spans
	// and shared clip frames are rendered once.
	if sum.Pictures <= 0 || sum.Pictures*2 > sum.Frames {
		t.Errorf("%d pictures for %d frames", sum.Pictures, sum.Frames)
	}
}

// TestVideoVariants: each rate policy as an MP4 of constant rate K whose
// frame j decodes to the clip frame shown at j/K (PSNR ≥ 35 dB against
// the render), with the trace copied beside it.
func TestVideoVariants(t *testing.T) {
	manifest := grid(t)
	out := t.TempDir()
	pols := []string{"native", "fps:2", "fps:8", "fps:30"}
	sum := run(t, Options{Manifest: manifest, Policies: policies(t, pols...), Out: out, As: AsVideo,
		Clips: []string{"bounce_ball_N02_F1.0_s00", "blinking_N02_F1.0_s00"}})
	if sum.Variants != 8 || sum.Files != 16 || sum.Frames != 2*(4+8+32+120) {
		t.Fatalf("summary %+v", sum)
	}
	for _, id := range []string{"bounce_ball_N02_F1.0_s00", "blinking_N02_F1.0_s00"} {
		clip, _, e, err := pipeline.LoadClip(manifest, id)
		if err != nil {
			t.Fatal(err)
		}
		tp, _ := e.TracePath(manifest)
		wantTrace, _ := os.ReadFile(tp)
		for i, k := range []int{1, 2, 8, 30} {
			p, _ := sampling.Parse(pols[i])
			path := filepath.Join(out, PolicyDir(p.String()), id+".mp4")
			info, err := encode.Probe(path)
			if err != nil {
				t.Fatal(err)
			}
			if info.FPS != float64(k) || info.Frames != 4*k || info.Width != 160 || info.Height != 96 {
				t.Errorf("%s %s: %+v", id, p, info)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
				t.Errorf("%s: mode %v %v", path, fi.Mode(), err)
			}
			ref := gpu.Image{Width: 160, Height: 96, Stride: 640, Pix: make([]byte, 640*96)}
			n := 0
			err = encode.DecodeAll(path, func(f encode.Frame) error {
				// Frame j shows clip frame ⌊j·30/K⌋ (fps:8: frame 5 is clip frame 18).
				want := frames.ShownFrame(float64(f.Index)/float64(k), 30, 120)
				if k == 8 && f.Index == 5 && want != 18 {
					t.Errorf("fps:8 frame 5 is clip frame %d", want)
				}
				if err := testRenderer.Render(clip.State(float64(want)/30), ref); err != nil {
					return err
				}
				if q := rgba.PSNR(f.Image.Pix, ref.Pix); q < 35 {
					t.Errorf("%s %s frame %d: PSNR %.1f dB against clip frame %d", id, p, f.Index, q, want)
				}
				if math.Abs(f.PTS-float64(f.Index)/float64(k)) > 1e-6 {
					t.Errorf("%s %s frame %d at %v s", id, p, f.Index, f.PTS)
				}
				n++
				return nil
			})
			if err != nil || n != 4*k {
				t.Errorf("%s %s: decoded %d frames: %v", id, p, n, err)
			}
			gotTrace, err := os.ReadFile(filepath.Join(out, PolicyDir(p.String()), id+".trace.json"))
			if err != nil || !bytes.Equal(gotTrace, wantTrace) {
				t.Errorf("%s %s: trace copy differs (%v)", id, p, err)
			}
		}
	}
	recs, _, _ := readRecords(filepath.Join(out, RecordsName))
	for _, r := range recs {
		if r.Settings.Encoder == nil || r.Settings.Encoder.Codec != "libx264" || r.Settings.Encoder.Preset != "veryfast" || r.Settings.Encoder.CRF != 18 || len(r.SHA256) != 2 {
			t.Errorf("record %+v", r)
		}
	}
}

// TestRerunSkipsVerified: a rerun skips what verifies and makes again a
// variant whose file changed, the variant of a torn last record line,
// and every variant when the settings change.
func TestRerunSkipsVerified(t *testing.T) {
	manifest := grid(t)
	out := t.TempDir()
	opt := Options{Manifest: manifest, Policies: policies(t, "fps:4", "keyframes"), Out: out, Clips: []string{"blinking_N02_F1.0_s00", "state_machine_N02_F1.0_s00"}}
	if s := run(t, opt); s.Variants != 4 {
		t.Fatalf("first run %+v", s)
	}
	if s := run(t, opt); s.Variants != 0 || s.Skipped != 4 || s.Files != 0 {
		t.Fatalf("second run %+v", s)
	}
	// Change one image: exactly its variant is made again, bytes equal.
	img := filepath.Join(out, "fps_4", "blinking_N02_F1.0_s00", "0003.jpg")
	orig, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(img, append(slices.Clone(orig), 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := run(t, opt); s.Variants != 1 || s.Skipped != 3 {
		t.Fatalf("after a changed file %+v", s)
	}
	if got, _ := os.ReadFile(img); !bytes.Equal(got, orig) {
		t.Errorf("remade image differs")
	}
	// A torn last line (an append cut short by a kill): that variant
	// is made again, the file rewritten whole.
	recPath := filepath.Join(out, RecordsName)
	b, _ := os.ReadFile(recPath)
	lines := bytes.SplitAfter(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	last := lines[len(lines)-1]
	torn := append(bytes.Join(lines[:len(lines)-1], nil), last[:len(last)/2]...)
	if err := os.WriteFile(recPath, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	if s := run(t, opt); s.Variants != 1 || s.Skipped != 3 {
		t.Fatalf("after a torn line %+v", s)
	}
	recs, torn2, err := readRecords(recPath)
	if err != nil || torn2 || len(recs) != 4 {
		t.Fatalf("records after rerun: %d, torn %v, %v", len(recs), torn2, err)
	}
	// A variant an older tracegrid made, its image names holding sample
	// times (0003_t0000.7500.jpg), is made again under names by position.
	for i, r := range recs {
		if r.Clip != "blinking_N02_F1.0_s00" || r.Policy != "fps:4" {
			continue
		}
		old := r.Path + "/0003_t0000.7500.jpg"
		if err := os.Rename(filepath.Join(out, filepath.FromSlash(r.Path), "0003.jpg"), filepath.Join(out, filepath.FromSlash(old))); err != nil {
			t.Fatal(err)
		}
		recs[i].SHA256[old] = r.SHA256[r.Path+"/0003.jpg"]
		delete(recs[i].SHA256, r.Path+"/0003.jpg")
	}
	if err := writeRecords(recPath, recs); err != nil {
		t.Fatal(err)
	}
	if s := run(t, opt); s.Variants != 1 || s.Skipped != 3 {
		t.Fatalf("after a variant with names holding times %+v", s)
	}
	if _, err := os.Stat(img); err != nil {
		t.Errorf("not remade under its position's name: %v", err)
	}
	if old, _ := filepath.Glob(filepath.Join(out, "fps_4", "blinking_N02_F1.0_s00", "*_t*")); len(old) != 0 {
		t.Errorf("old names left: %v", old)
	}
	// Another quality: every variant is made again.
	opt.Quality = 75
	if s := run(t, opt); s.Variants != 4 || s.Skipped != 0 {
		t.Fatalf("after a quality change %+v", s)
	}
	// Records of other policies are kept in the file.
	opt2 := opt
	opt2.Policies = policies(t, "fps:1")
	run(t, opt2)
	recs, _, _ = readRecords(recPath)
	if len(recs) != 6 {
		t.Errorf("%d records after another policy, want 6", len(recs))
	}
}

const killHelperEnv = "VARIANTS_KILL_HELPER"

// killHelper runs a variants job in this (child) process and kills it
// with SIGKILL after the given number of files has been written — in the
// middle of a variant.
func killHelper() {
	var cfg struct {
		Manifest, Out string
		After         int
	}
	if err := json.Unmarshal([]byte(os.Getenv(killHelperEnv)), &cfg); err != nil {
		os.Exit(3)
	}
	n := 0
	writeFileHook = func(path string, data []byte) error {
		if n++; n > cfg.After {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
		return os.WriteFile(path, data, 0o644)
	}
	p1, _ := sampling.Parse("fps:4")
	p2, _ := sampling.Parse("fps:8")
	_, err := Run(context.Background(), Options{Manifest: cfg.Manifest, Out: cfg.Out, Policies: []sampling.Policy{p1, p2}, Renderer: testRenderer, Workers: 1})
	fmt.Fprintln(os.Stderr, "helper finished without being killed:", err)
	os.Exit(4)
}

// TestResumeAfterKill: a run killed with SIGKILL in the middle of a
// variant keeps every finished variant and leaves no partial one in
// place; the rerun removes the staging, skips the finished variants and
// ends with every variant complete, byte for byte as an uninterrupted run.
func TestResumeAfterKill(t *testing.T) {
	manifest := grid(t)
	out := t.TempDir()
	// Six clips × fps:4 (16 images + frames.json) and fps:8 (32 + 1) with
	// one worker: a clip's two variants are written together, 51 files a
	// clip. After 51·2 + 20 files two clips are done (4 variants) and the
	// third is half written.
	cfg, _ := json.Marshal(map[string]any{"Manifest": manifest, "Out": out, "After": 51*2 + 20})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), killHelperEnv+"="+string(cfg))
	outb, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("helper: %v: %s", err, outb)
	}
	recs, torn, err := readRecords(filepath.Join(out, RecordsName))
	if err != nil || torn || len(recs) != 4 {
		t.Fatalf("after the kill: %d records, torn %v, %v", len(recs), torn, err)
	}
	// No partial variant in place: the third clip is only in staging.
	third := recs[3].Clip
	var staging []string
	for _, pd := range []string{"fps_4", "fps_8"} {
		ents, _ := os.ReadDir(filepath.Join(out, pd))
		for _, e := range ents {
			if tempName.MatchString(e.Name()) {
				staging = append(staging, pd+"/"+e.Name())
			}
		}
	}
	if len(staging) == 0 {
		t.Fatal("the kill left no staging directory: it did not hit a variant in progress")
	}
	entries, _ := pipeline.LoadManifest(manifest)
	for _, e := range entries[2:] {
		for _, pd := range []string{"fps_4", "fps_8"} {
			if _, err := os.Stat(filepath.Join(out, pd, e.ID)); err == nil {
				t.Errorf("%s/%s is in place, unfinished (records end with %s)", pd, e.ID, third)
			}
		}
	}
	sum := run(t, Options{Manifest: manifest, Out: out, Policies: policies(t, "fps:4", "fps:8")})
	if sum.Skipped != 4 || sum.Variants != 8 || len(sum.Removed) != len(staging) {
		t.Fatalf("rerun %+v, staging before %v", sum, staging)
	}
	fresh := t.TempDir()
	run(t, Options{Manifest: manifest, Out: fresh, Policies: policies(t, "fps:4", "fps:8")})
	for _, e := range entries {
		for _, pd := range []string{"fps_4", "fps_8"} {
			sameTree(t, filepath.Join(fresh, pd, e.ID), filepath.Join(out, pd, e.ID))
		}
	}
	for _, pd := range []string{"fps_4", "fps_8"} {
		ents, _ := os.ReadDir(filepath.Join(out, pd))
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("left behind: %s/%s", pd, e.Name())
			}
		}
	}
}

// TestInterrupt: a cancelled run returns the context's error, keeps the
// finished variants (recorded and verified) and leaves no staging.
func TestInterrupt(t *testing.T) {
	manifest := grid(t)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := Run(ctx, Options{Manifest: manifest, Out: out, Policies: policies(t, "fps:4", "fps:8"), Renderer: testRenderer, Workers: 1,
		Progress: func(done, _ int) {
			if done == 2 {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	recs, _, _ := readRecords(filepath.Join(out, RecordsName))
	if len(recs) != 2 {
		t.Fatalf("%d records after the interrupt", len(recs))
	}
	opt := Options{Manifest: manifest, Out: out, Policies: policies(t, "fps:4", "fps:8"), Renderer: testRenderer}
	if err := opt.check(); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		j := &clipJob{entry: entryOf(t, manifest, r.Clip)}
		p, _ := sampling.Parse(r.Policy)
		if why := verify(out, r, opt.record(j, p)); why != "" {
			t.Errorf("%s %s does not verify: %s", r.Clip, r.Policy, why)
		}
	}
	if removed := removeStaleTemps(out); len(removed) != 0 {
		t.Errorf("staging left: %v", removed)
	}
}

func entryOf(t *testing.T, manifest, id string) pipeline.Entry {
	t.Helper()
	entries, err := pipeline.LoadManifest(manifest)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.ID == id {
			return e
		}
	}
	t.Fatalf("no clip %s", id)
	return pipeline.Entry{}
}

// TestDiskFull: a write failing with ENOSPC stops the run with a message
// naming the file and the cause; the variants finished before stay
// recorded and verified, and no staging is left.
func TestDiskFull(t *testing.T) {
	manifest := grid(t)
	out := t.TempDir()
	n := 0
	writeFileHook = func(path string, data []byte) error {
		if n++; n > 40 {
			return &os.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}
		}
		return os.WriteFile(path, data, 0o644)
	}
	defer func() { writeFileHook = nil }()
	// fps:4 alone: 17 files a clip, so two clips finish before the 41st.
	_, err := Run(context.Background(), Options{Manifest: manifest, Out: out, Policies: policies(t, "fps:4"), Renderer: testRenderer, Workers: 1})
	if err == nil || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "no space left on device") || !strings.Contains(err.Error(), "fps_4") {
		t.Fatalf("err = %v", err)
	}
	t.Log(err)
	recs, _, _ := readRecords(filepath.Join(out, RecordsName))
	if len(recs) != 2 {
		t.Fatalf("%d records kept, want 2", len(recs))
	}
	writeFileHook = nil
	if removed := removeStaleTemps(out); len(removed) != 0 {
		t.Errorf("staging left: %v", removed)
	}
	sum := run(t, Options{Manifest: manifest, Out: out, Policies: policies(t, "fps:4")})
	if sum.Skipped != 2 || sum.Variants != 4 {
		t.Errorf("rerun %+v", sum)
	}
}

// TestBadInput: each bad input is refused before anything is written,
// with a message that says what is wrong.
func TestBadInput(t *testing.T) {
	manifest := grid(t)
	file := filepath.Join(t.TempDir(), "plain")
	os.WriteFile(file, []byte("x"), 0o644)

	missing := copyGrid(t)
	os.Remove(filepath.Join(filepath.Dir(missing), "clips", "blinking_N02_F1.0_s00.mp4"))
	changed := copyGrid(t)
	f, _ := os.OpenFile(filepath.Join(filepath.Dir(changed), "clips", "state_machine_N00_F1.0_s00.mp4"), os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte{0})
	f.Close()
	renamed := copyGrid(t)
	mb, _ := os.ReadFile(renamed)
	os.WriteFile(renamed, bytes.Replace(mb, []byte(`"id":"blinking_N00_F1.0_s00"`), []byte(`"id":"../../escape"`), 1), 0o644)
	noTrace := copyGrid(t)
	os.Remove(filepath.Join(filepath.Dir(noTrace), "clips", "bounce_ball_N02_F1.0_s00.trace.json"))

	cases := []struct {
		name string
		opt  Options
		is   error
		want []string
	}{
		{"video keyframes", Options{Manifest: manifest, Policies: policies(t, "fps:2", "keyframes"), As: AsVideo}, ErrInput, []string{"keyframes:0.1 has no constant frame rate", "fps:K and native[:R]"}},
		{"video uniform", Options{Manifest: manifest, Policies: policies(t, "uniform:8"), As: AsVideo}, ErrInput, []string{"uniform:8 has no constant frame rate"}},
		{"video fractional rate", Options{Manifest: manifest, Policies: policies(t, "fps:2.5"), As: AsVideo}, ErrInput, []string{"fps:2.5", "whole number of frames per second"}},
		{"rate above the clip's", Options{Manifest: manifest, Policies: policies(t, "fps:60")}, sampling.ErrPolicy, []string{"faster than the clip's own 30 fps"}},
		{"unknown clip", Options{Manifest: manifest, Policies: policies(t, "fps:1"), Clips: []string{"bounce_ball_N99_F1.0_s00"}}, pipeline.ErrNoClip, []string{"bounce_ball_N99_F1.0_s00"}},
		{"missing manifest", Options{Manifest: filepath.Join(t.TempDir(), "none.jsonl"), Policies: policies(t, "fps:1")}, ErrInput, []string{"none.jsonl"}},
		{"missing video", Options{Manifest: missing, Policies: policies(t, "fps:1")}, ErrInput, []string{"clip blinking_N02_F1.0_s00: video clips/blinking_N02_F1.0_s00.mp4 is missing", "nothing was written"}},
		{"changed video", Options{Manifest: changed, Policies: policies(t, "fps:1")}, ErrInput, []string{"clip state_machine_N00_F1.0_s00", "the manifest records", "changed after it was rendered"}},
		{"id not the clip's", Options{Manifest: renamed, Policies: policies(t, "fps:1")}, ErrInput, []string{`clip "../../escape": the id does not match its parameters, which make clip blinking_N00_F1.0_s00`}},
		{"missing trace", Options{Manifest: noTrace, Policies: policies(t, "fps:1")}, ErrInput, []string{"clip bounce_ball_N02_F1.0_s00: trace clips/bounce_ball_N02_F1.0_s00.trace.json is missing"}},
		{"output is a file", Options{Manifest: manifest, Policies: policies(t, "fps:1"), Out: file}, ErrInput, []string{"is a file"}},
		{"output under a file", Options{Manifest: manifest, Policies: policies(t, "fps:1"), Out: filepath.Join(file, "sub")}, ErrOutput, []string{"cannot be created"}},
		{"quality", Options{Manifest: manifest, Policies: policies(t, "fps:1"), Quality: 101}, ErrInput, []string{"quality 101"}},
		{"odd size", Options{Manifest: manifest, Policies: policies(t, "fps:1"), Width: 101, Height: 50}, ErrInput, []string{"size 101x50"}},
		{"two-turn prompt", Options{Manifest: manifest, Policies: policies(t, "fps:1"), Dataset: &DatasetOptions{Prompts: []string{"multi_turn_verification"}}}, ErrInput, []string{"multi_turn_verification takes 2 turns"}},
		{"unknown prompt", Options{Manifest: manifest, Policies: policies(t, "fps:1"), Dataset: &DatasetOptions{Prompts: []string{"shouting"}}}, ErrInput, []string{"shouting"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.opt.Out == "" {
				c.opt.Out = filepath.Join(t.TempDir(), "out")
			}
			c.opt.Renderer = testRenderer
			_, err := Run(context.Background(), c.opt)
			if err == nil || !errors.Is(err, c.is) {
				t.Fatalf("err = %v, want %v", err, c.is)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v\nlacks %q", err, w)
				}
			}
			if ents, _ := os.ReadDir(c.opt.Out); len(ents) > 0 && c.is != ErrOutput {
				t.Errorf("wrote %d entries into %s", len(ents), c.opt.Out)
			}
		})
	}
	// A directory in use by another run.
	out := t.TempDir()
	unlock, err := lockDir(out)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	_, err = Run(context.Background(), Options{Manifest: manifest, Policies: policies(t, "fps:1"), Out: out, Renderer: testRenderer})
	if !errors.Is(err, ErrOutput) || !strings.Contains(err.Error(), "in use by another") {
		t.Errorf("locked directory: %v", err)
	}
}

// TestPolicyDir: the canonical policy with ':' as '_'.
func TestPolicyDir(t *testing.T) {
	for in, want := range map[string]string{"fps:4": "fps_4", "native": "native_1", "keyframes": "keyframes_0.1", "single:random": "single_random", "fps:0.5": "fps_0.5"} {
		p, err := sampling.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := PolicyDir(p.String()); got != want {
			t.Errorf("PolicyDir(%s) = %q, want %q", p, got, want)
		}
	}
}

// TestRemoveStaleTemps: the staging and temporary files of a killed run
// go, in the output directory and its subdirectories; finished files, the
// lock and names that merely look alike stay.
func TestRemoveStaleTemps(t *testing.T) {
	out := t.TempDir()
	for _, p := range []string{"fps_4/.clip_a.tmp-123/0000.jpg", "fps_4/clip_b/frames.json", "traces/.clip_a.trace.json.tmp987", "traces/clip_a.trace.json", "fps_4/.clip_c.mp4.tmp-55"} {
		full := filepath.Join(out, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(full, []byte("x"), 0o644)
	}
	os.WriteFile(filepath.Join(out, ".variants.jsonl.tmp42"), nil, 0o644)
	os.WriteFile(filepath.Join(out, ".variants.lock"), nil, 0o644)
	os.WriteFile(filepath.Join(out, "fps_4", ".notes.tmp"), nil, 0o644)
	got := removeStaleTemps(out)
	want := []string{".variants.jsonl.tmp42", "fps_4/.clip_a.tmp-123", "fps_4/.clip_c.mp4.tmp-55", "traces/.clip_a.trace.json.tmp987"}
	if !slices.Equal(got, want) {
		t.Errorf("removed %v, want %v", got, want)
	}
	for _, p := range []string{"fps_4/clip_b/frames.json", "traces/clip_a.trace.json", ".variants.lock", "fps_4/.notes.tmp"} {
		if _, err := os.Stat(filepath.Join(out, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
