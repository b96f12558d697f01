package gputest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/gpu"
)

func solid(w, h int, c [4]byte) gpu.Image {
	img := gpu.Image{Width: w, Height: h, Stride: 4*w + 8, Pix: make([]byte, (4*w+8)*h)}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			copy(img.Pix[y*img.Stride+4*x:], c[:])
		}
	}
	return img
}

// recorder is a testing.TB whose Fatal ends only the goroutine running the
// check (as testing's does), so a test can look at the failure.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper()                      {}
func (r *recorder) Logf(string, ...any)          {}
func (r *recorder) Errorf(f string, args ...any) { r.failed += fmt.Sprintf(f, args...) }
func (r *recorder) Fatal(args ...any)            { r.failed += fmt.Sprint(args...); runtime.Goexit() }
func (r *recorder) Fatalf(f string, args ...any) {
	r.failed += fmt.Sprintf(f, args...)
	runtime.Goexit()
}

func (r *recorder) run(f func(tb testing.TB)) string {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.failed
}

func TestCompareGolden(t *testing.T) {
	t.Chdir(t.TempDir())
	grey := solid(10, 10, [4]byte{100, 100, 100, 255})
	*update = true
	CompareGolden(t, "grey", grey, Default)
	*update = false
	CompareGolden(t, "grey", grey, Default) // identical: passes

	// One pixel off by 20: over the channel limit, but 1% of the pixels is
	// allowed.
	near := solid(10, 10, [4]byte{100, 100, 100, 255})
	near.Pix[0] = 120
	CompareGolden(t, "grey", near, Default)

	far := solid(10, 10, [4]byte{140, 100, 100, 255})
	rec := &recorder{TB: t}
	msg := rec.run(func(tb testing.TB) { CompareGolden(tb, "grey", far, Default) })
	if !strings.Contains(msg, "100 of 100 pixels") {
		t.Errorf("mismatch reported as %q", msg)
	}
	bad, err := ReadPNG(filepath.Join("testdata", "grey-bad.png"))
	if err != nil {
		t.Fatalf("no -bad.png: %v", err)
	}
	if bad.Pix[0] != 140 {
		t.Errorf("-bad.png holds %v, want the rendered image", bad.Pix[:4])
	}

	// A later match removes the stale -bad.png.
	CompareGolden(t, "grey", grey, Default)
	if _, err := os.Stat(filepath.Join("testdata", "grey-bad.png")); !os.IsNotExist(err) {
		t.Errorf("stale -bad.png kept: %v", err)
	}

	rec = &recorder{TB: t}
	msg = rec.run(func(tb testing.TB) { CompareGolden(tb, "missing", grey, Default) })
	if !strings.Contains(msg, "-update") {
		t.Errorf("missing golden reported as %q", msg)
	}
}
