package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/trace"
)

// One renderer for the package's tests: EGL start-up costs ~0.5 s.
var testRenderer *gpu.Renderer

func TestMain(m *testing.M) {
	r, err := gpu.NewRenderer()
	if err != nil {
		os.Stderr.WriteString("pipeline tests need EGL (llvmpipe is enough): " + err.Error() + "\n")
		os.Exit(1)
	}
	testRenderer = r
	code := m.Run()
	r.Close()
	os.Exit(code)
}

// smallSpec renders 6 short, small clips: every domain, N ∈ {0, 3}.
func smallSpec(t *testing.T) Spec {
	t.Helper()
	s, err := ParseSpec([]byte(`
grid: default
counts: [0, 3]
frequencies: [2.0]
duration: 2
fps: 30
width: 160
height: 96
`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func render(t *testing.T, ctx context.Context, s Spec, out string) (Summary, error) {
	t.Helper()
	return Render(ctx, s, Options{Out: out, Workers: 2, Renderer: testRenderer})
}

func TestRenderWritesClipsTracesManifest(t *testing.T) {
	out := t.TempDir()
	s := smallSpec(t)
	sum, err := render(t, context.Background(), s, out)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Planned != 6 || sum.Rendered != 6 || sum.Frames != 6*60 {
		t.Fatalf("summary %+v", sum)
	}
	entries, skipped, err := ReadManifest(filepath.Join(out, ManifestName))
	if err != nil || skipped != 0 || len(entries) != 6 {
		t.Fatalf("manifest: %d entries, %d skipped, %v", len(entries), skipped, err)
	}
	plan, _ := s.Plan()
	for i, e := range entries {
		if e.ID != plan[i].ID() {
			t.Errorf("manifest line %d is %s, want plan order %s", i, e.ID, plan[i].ID())
		}
		video := filepath.Join(out, e.Video)
		b, err := os.ReadFile(video)
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256.Sum256(b); e.SHA256 != hexString(got[:]) {
			t.Errorf("%s: sha256 in manifest does not match the file", e.ID)
		}
		info, err := encode.Probe(video)
		if err != nil {
			t.Fatal(err)
		}
		if info.Frames != 60 || info.Width != 160 || info.Height != 96 || math.Abs(info.FPS-30) > 1e-6 || math.Abs(info.Duration-2) > 1e-3 {
			t.Errorf("%s: probe %+v, want 60 frames 160x96 @30 fps, 2 s", e.ID, info)
		}
		last := -1.0
		n := 0
		err = encode.DecodeAll(video, func(f encode.Frame) error {
			if f.PTS <= last {
				t.Errorf("%s: pts %v after %v", e.ID, f.PTS, last)
			}
			if want := float64(n) / 30; math.Abs(f.PTS-want) > 1e-3 {
				t.Errorf("%s: frame %d at pts %v, want %v", e.ID, n, f.PTS, want)
			}
			last = f.PTS
			n++
			return nil
		})
		if err != nil || n != 60 {
			t.Errorf("%s: decoded %d frames, %v", e.ID, n, err)
		}
		tr, err := trace.Load(filepath.Join(out, e.Trace))
		if err != nil {
			t.Fatal(err)
		}
		if tr.ID != e.ID || tr.Final() != e.N {
			t.Errorf("%s: trace %s final %d", e.ID, tr.ID, tr.Final())
		}
	}
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 2*len(b))
	for i, c := range b {
		out[2*i], out[2*i+1] = digits[c>>4], digits[c&15]
	}
	return string(out)
}

func decodedFrames(t *testing.T, path string) [][]byte {
	t.Helper()
	var frames [][]byte
	if err := encode.DecodeAll(path, func(f encode.Frame) error {
		frames = append(frames, bytes.Clone(f.Image.Pix))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return frames
}

func TestDeterministic(t *testing.T) {
	s := smallSpec(t)
	a, b := t.TempDir(), t.TempDir()
	if _, err := render(t, context.Background(), s, a); err != nil {
		t.Fatal(err)
	}
	if _, err := render(t, context.Background(), s, b); err != nil {
		t.Fatal(err)
	}
	entries, _, _ := ReadManifest(filepath.Join(a, ManifestName))
	for _, e := range entries {
		ta, _ := os.ReadFile(filepath.Join(a, e.Trace))
		tb, _ := os.ReadFile(filepath.Join(b, e.Trace))
		if !bytes.Equal(ta, tb) {
			t.Errorf("%s: traces differ", e.ID)
		}
		fa, fb := decodedFrames(t, filepath.Join(a, e.Video)), decodedFrames(t, filepath.Join(b, e.Video))
		if len(fa) != len(fb) {
			t.Fatalf("%s: %d vs %d frames", e.ID, len(fa), len(fb))
		}
		for i := range fa {
			if !bytes.Equal(fa[i], fb[i]) {
				t.Errorf("%s: decoded frame %d differs between runs", e.ID, i)
				break
			}
		}
	}
}

func TestResumeSkipsVerifiedAndRedoesDamaged(t *testing.T) {
	s := smallSpec(t)
	out := t.TempDir()
	if _, err := render(t, context.Background(), s, out); err != nil {
		t.Fatal(err)
	}
	sum, err := render(t, context.Background(), s, out)
	if err != nil || sum.Rendered != 0 || sum.Skipped != 6 {
		t.Fatalf("rerun: %+v %v", sum, err)
	}
	entries, _, _ := ReadManifest(filepath.Join(out, ManifestName))
	// Damage one video, delete one trace, and tear the manifest's last line
	// as a kill during an append would.
	f, _ := os.OpenFile(filepath.Join(out, entries[0].Video), os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte{0})
	f.Close()
	os.Remove(filepath.Join(out, entries[1].Trace))
	mpath := filepath.Join(out, ManifestName)
	m, _ := os.ReadFile(mpath)
	os.WriteFile(mpath, m[:len(m)-20], 0o644)
	// A temporary file left by a killed run.
	os.WriteFile(filepath.Join(out, "clips", ".x.mp4.tmp"), []byte("partial"), 0o644)
	sum, err = render(t, context.Background(), s, out)
	if err != nil || sum.Rendered != 3 || sum.Skipped != 3 {
		t.Fatalf("repair run: %+v %v (want 3 re-rendered: damaged video, missing trace, torn line)", sum, err)
	}
	if _, err := os.Stat(filepath.Join(out, "clips", ".x.mp4.tmp")); !os.IsNotExist(err) {
		t.Errorf("stale temporary file not removed")
	}
	entries, skipped, _ := ReadManifest(mpath)
	if len(entries) != 6 || skipped != 0 {
		t.Errorf("manifest after repair: %d entries, %d skipped", len(entries), skipped)
	}
	// Changed settings mean different pixels: everything is rendered again.
	s.Encoder.CRF = 23
	if sum, err = render(t, context.Background(), s, out); err != nil || sum.Rendered != 6 {
		t.Errorf("crf change: %+v %v", sum, err)
	}
}

func TestCancelKeepsFinishedClipsAndNoPartials(t *testing.T) {
	s := smallSpec(t)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := Render(ctx, s, Options{Out: out, Workers: 1, Renderer: testRenderer, Progress: func(done, total int) {
		if done == 2 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	entries, skipped, _ := ReadManifest(filepath.Join(out, ManifestName))
	if len(entries) < 2 || skipped != 0 {
		t.Fatalf("after cancel: %d entries (want ≥ 2 finished), %d torn", len(entries), skipped)
	}
	files, _ := os.ReadDir(filepath.Join(out, "clips"))
	for _, f := range files {
		if strings.Contains(f.Name(), ".tmp") {
			t.Errorf("partial file left: %s", f.Name())
		}
	}
	for _, e := range entries {
		if verifyEntry(out, e, settingsOf(s)) != "" {
			t.Errorf("%s recorded but not complete", e.ID)
		}
	}
	sum, err := render(t, context.Background(), s, out)
	if err != nil || sum.Skipped != len(entries) || sum.Rendered != 6-len(entries) {
		t.Errorf("resume after cancel: %+v %v", sum, err)
	}
}

func TestBadInput(t *testing.T) {
	cases := []struct {
		yaml, want string
	}{
		{"grid: default\ncolour: red\n", "field colour not found"},
		{"grid: huge\n", "unknown grid"},
		{"grid: default\ndomains: [juggling]\n", "unknown domain"},
		{"grid: default\ncounts: [12]\nfrequencies: [0.25]\n", "longer than"},
		{"grid: default\nfrequencies: [0]\n", "must be positive"},
		{"grid: default\nfrequencies: [-1.5]\n", "must be positive"},
		{"grid: default\nwidth: 855\n", "odd"},
		{"grid: default\nfps: 0\n", "fps"},
		{"grid: default\nfps: 500\n", "fps"},
		{"grid: default\nheight: 20\n", "out of range"},
		{"grid: default\nseeds: 0\n", "seeds"},
		{"grid: default\nduration: 2.01\n", "whole number of frames"},
		{"grid: default\nencoder: {crf: 99}\n", "crf"},
		{"grid: default\nencoder: {bitrate: 5}\n", "field bitrate not found"},
	}
	for _, c := range cases {
		_, err := ParseSpec([]byte(c.yaml))
		if err == nil || !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want ErrSpec containing %q", c.yaml, err, c.want)
		}
	}
	s := smallSpec(t)
	// An output path below a regular file cannot be created.
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := render(t, context.Background(), s, filepath.Join(file, "out")); !errors.Is(err, ErrOutput) {
		t.Errorf("unwritable output: %v", err)
	}
	s.Encoder.Codec = "no_such_encoder"
	if _, err := render(t, context.Background(), s, t.TempDir()); err == nil || !strings.Contains(err.Error(), "not available") {
		t.Errorf("missing encoder: %v", err)
	}
}

func TestBuiltinGrids(t *testing.T) {
	for grid, want := range map[string]int{GridPaper: 2190, GridDefault: 39} {
		s, err := BuiltinSpec(grid)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := s.Plan()
		if err != nil || len(plan) != want {
			t.Errorf("%s grid: %d clips, %v; want %d", grid, len(plan), err, want)
		}
	}
	s, _ := BuiltinSpec(GridPaper)
	plan, _ := s.Plan()
	if id := plan[0].ID(); id != "blinking_N00_F1.0_s00" {
		t.Errorf("first paper clip %s", id)
	}
}
