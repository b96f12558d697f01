package encode

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestProbeVideoFile: a constant-rate clip of Writer's reads back with its
// frame times k/30, no rotation and a constant rate; Remux gives it a
// rotation and a variable rate that ProbeVideoFile reads back.
func TestProbeVideoFile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "clip.mp4")
	writeIndexClip(t, src, indexScene{64, 48}, clipFPS, 60, clipGOP)
	p, err := ProbeVideoFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if p.Width != 64 || p.Height != 48 || p.FPS != 30 || p.Frames != 60 || p.Listed != 60 || p.Container != ContainerMP4 ||
		p.Rotation != 0 || p.Mirrored || math.Abs(p.Duration-2) > 1e-9 {
		t.Errorf("probe %+v", p)
	}
	for k, tk := range p.Times {
		if math.Abs(tk-float64(k)/30) > 1e-9 {
			t.Fatalf("frame %d at %v s, want %v", k, tk, float64(k)/30)
		}
	}
	if rate, ok, why := p.ConstantRate(); !ok || math.Abs(rate-30) > 1e-9 {
		t.Errorf("constant rate: %v %v %q", rate, ok, why)
	}

	for _, rot := range []float64{90, 180, 270} {
		dst := filepath.Join(dir, "rot.mp4")
		if err := Remux(dst, src, RemuxOptions{Rotation: rot}); err != nil {
			t.Fatal(err)
		}
		q, err := ProbeVideoFile(dst)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(q.Rotation-rot) > 1e-6 || q.Mirrored || q.Frames != 60 || q.Width != 64 {
			t.Errorf("rotation %v: probe %+v", rot, q)
		}
		// What ffprobe makes of it (libavutil's own reading): a video
		// turned 90° clockwise for display, as a phone held upright
		// records it, has a matrix whose counterclockwise angle is −90°
		// ("rotation of -90.00 degrees").
		if _, err := exec.LookPath("ffprobe"); err == nil && rot == 90 {
			out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream_side_data=rotation", "-of", "default=nw=1", dst).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "rotation=-90") {
				t.Errorf("ffprobe on a 90° clip: %s %v", out, err)
			}
		}
	}

	// Variable rate: frames 30 fps for the first second, then 15 fps.
	vfr := filepath.Join(dir, "vfr.mp4")
	if err := Remux(vfr, src, RemuxOptions{Retime: func(t float64) float64 {
		if t <= 1 {
			return t
		}
		return 1 + 2*(t-1)
	}}); err != nil {
		t.Fatal(err)
	}
	q, err := ProbeVideoFile(vfr)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, why := q.ConstantRate(); ok || !strings.Contains(why, "apart") {
		t.Errorf("variable rate read as constant (%q): times %v", why, q.Times)
	}
	if math.Abs(q.Times[59]-(1+2*29.0/30)) > 1e-4 {
		t.Errorf("last frame at %v s", q.Times[59])
	}
}

// TestProbeDamaged: a truncated file, a file that is not a video and one in
// another container are refused with errors that say so.
func TestProbeDamaged(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "clip.mp4")
	writeIndexClip(t, src, indexScene{64, 48}, clipFPS, 60, clipGOP)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.mp4")
	if err := os.WriteFile(cut, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ProbeVideoFile(cut); err == nil {
		t.Error("a truncated MP4 (index at the end) probed")
	}
	txt := filepath.Join(dir, "notes.mp4")
	if err := os.WriteFile(txt, []byte("not a video at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ProbeVideoFile(txt); !errors.Is(err, ErrContainer) {
		t.Errorf("text file: %v", err)
	}
	if _, err := ProbeVideoFile(filepath.Join(dir, "missing.mp4")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	// The index first (faststart), the media cut: the index lists frames
	// the file no longer holds.
	if _, err := exec.LookPath("ffmpeg"); err == nil {
		fs := filepath.Join(dir, "faststart.mp4")
		ffmpeg(t, "-i", src, "-c", "copy", "-movflags", "+faststart", fs)
		b, err := os.ReadFile(fs)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cut, b[:len(b)*2/3], 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ProbeVideoFile(cut); !errors.Is(err, ErrDamaged) {
			t.Errorf("truncated faststart MP4: %v; want ErrDamaged", err)
		}
	}
}
