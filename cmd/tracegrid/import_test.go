package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tracegrid/tracegrid/encode"
)

// grayClip writes a 96×64, 10 fps, 2 s MP4 (20 frames).
func grayClip(t *testing.T, path string) {
	t.Helper()
	w, err := encode.Create(path, encode.Options{Width: 96, Height: 64, FPS: 10, Preset: "ultrafast"})
	if err != nil {
		t.Fatal(err)
	}
	img := encode.Image{Width: 96, Height: 64, Stride: 4 * 96, Pix: make([]byte, 4*96*64)}
	for k := range 20 {
		for i := range img.Pix {
			img.Pix[i] = byte(10 * k)
		}
		if err := w.WriteRGBA(img); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestImportCommand: tracegrid import prints what it imported and each
// bad row, exits 0 while anything could be imported, and 2 when nothing
// could or, with --strict, when a row is bad (then writing nothing).
func TestImportCommand(t *testing.T) {
	dir := t.TempDir()
	videos := filepath.Join(dir, "videos")
	if err := os.MkdirAll(videos, 0o755); err != nil {
		t.Fatal(err)
	}
	grayClip(t, filepath.Join(videos, "a.mp4"))
	ann := filepath.Join(dir, "ann.csv")
	if err := os.WriteFile(ann, []byte("type,name,count,L1,L2,L3,L4\nsquat,a.mp4,2,0,5,5,19\nsquat,b.mp4,1,0,4,,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	text, err, code := inProcess(t, newImportCmd(), "--videos", videos, "--annotations", ann, "--out", out)
	if code != exitOK || err != nil || !strings.Contains(text, "import: 1 videos imported (1 with a trace of their repetitions, repcount layout), 1 not imported") ||
		!strings.Contains(text, "import: not imported: line 3 (b.mp4): no file b.mp4 in the videos folder") {
		t.Fatalf("exit %d, %v:\n%s", code, err, text)
	}
	if _, err := os.Stat(filepath.Join(out, "clips", "a.trace.json")); err != nil {
		t.Error(err)
	}
	strict := filepath.Join(dir, "strict")
	if text, _, code := inProcess(t, newImportCmd(), "--videos", videos, "--annotations", ann, "--out", strict, "--strict"); code != exitUsage || !strings.Contains(text, "b.mp4") {
		t.Errorf("--strict: exit %d:\n%s", code, text)
	}
	if _, err := os.Stat(strict); !os.IsNotExist(err) {
		t.Errorf("--strict wrote %s", strict)
	}
	if err := os.WriteFile(ann, []byte("name,count\nb.mp4,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err, code := inProcess(t, newImportCmd(), "--videos", videos, "--annotations", ann, "--out", filepath.Join(dir, "none")); code != exitUsage ||
		!strings.Contains(err.Error(), "nothing could be imported") {
		t.Errorf("nothing importable: exit %d, %v", code, err)
	}
	if _, _, code := inProcess(t, newImportCmd(), "--videos", videos, "--annotations", ann, "--out", out, "--event-at", "peak"); code != exitUsage {
		t.Errorf("--event-at peak: exit %d", code)
	}
	if _, _, code := inProcess(t, newImportCmd(), "--videos", videos, "--out", out); code != exitUsage {
		t.Errorf("no --annotations: exit %d", code)
	}
	// --annotations naming a directory or a FIFO is bad input (2), the
	// FIFO refused without opening it (an open would block).
	fifo := filepath.Join(dir, "fifo.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{videos, fifo} {
		if _, err, code := inProcess(t, newImportCmd(), "--videos", videos, "--annotations", bad, "--out", filepath.Join(dir, "bad")); code != exitUsage ||
			err == nil || !strings.Contains(err.Error(), "annotations "+bad+" is ") {
			t.Errorf("--annotations %s: exit %d, %v", bad, code, err)
		}
	}
}
