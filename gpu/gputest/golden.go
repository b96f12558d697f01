// Package gputest compares rendered images against golden PNGs.
//
// Golden files live in testdata/<name>.png of the package under test. Run
// the tests with -update to (re)write them; on a mismatch the rendered image
// is written beside the golden file as testdata/<name>-bad.png. The package
// registers the -update flag, so a test package using it must not define
// its own.
package gputest

import (
	"errors"
	"flag"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracegrid/tracegrid/gpu"
)

var update = flag.Bool("update", false, "rewrite golden images in testdata/ instead of comparing")

// Tolerance says how far an image may be from its golden one. A pixel
// differs when one of its channels differs by more than MaxChannelDiff; the
// image matches when at most MaxDiffFraction of its pixels differ. GPUs and
// driver versions round differently at anti-aliased edges, so exact
// equality is too strict across machines.
type Tolerance struct {
	MaxChannelDiff  uint8
	MaxDiffFraction float64
}

// Default tolerates small rounding differences on edges: a channel may be 8
// levels off on up to 1% of the pixels.
var Default = Tolerance{MaxChannelDiff: 8, MaxDiffFraction: 0.01}

// NRGBA wraps img's pixels (no copy) as an image.NRGBA; the renderer's
// output is straight alpha.
func NRGBA(img gpu.Image) *image.NRGBA {
	return &image.NRGBA{Pix: img.Pix, Stride: img.Stride, Rect: image.Rect(0, 0, img.Width, img.Height)}
}

// WritePNG writes img to path as a PNG.
func WritePNG(path string, img gpu.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, NRGBA(img)); err != nil {
		f.Close()
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	return f.Close()
}

// ReadPNG reads a PNG as an NRGBA image.
func ReadPNG(path string) (*image.NRGBA, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := png.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	if n, ok := src.(*image.NRGBA); ok {
		return n, nil
	}
	dst := image.NewNRGBA(image.Rect(0, 0, src.Bounds().Dx(), src.Bounds().Dy()))
	draw.Draw(dst, dst.Rect, src, src.Bounds().Min, draw.Src)
	return dst, nil
}

// Diff compares two images of the same size: the largest channel
// difference, how many pixels differ by more than maxChannelDiff, and the
// first such pixel.
type Diff struct {
	MaxChannelDiff int
	Differing      int
	Total          int
	First          image.Point
}

// Compare returns how got differs from want (which must be the same size).
func Compare(got, want *image.NRGBA, maxChannelDiff uint8) Diff {
	d := Diff{Total: got.Rect.Dx() * got.Rect.Dy(), First: image.Pt(-1, -1)}
	for y := 0; y < got.Rect.Dy(); y++ {
		g := got.Pix[y*got.Stride : y*got.Stride+4*got.Rect.Dx()]
		w := want.Pix[y*want.Stride : y*want.Stride+4*want.Rect.Dx()]
		for x := 0; x < len(g)/4; x++ {
			worst := 0
			for c := 0; c < 4; c++ {
				worst = max(worst, absDiff(g[4*x+c], w[4*x+c]))
			}
			d.MaxChannelDiff = max(d.MaxChannelDiff, worst)
			if worst > int(maxChannelDiff) {
				if d.Differing == 0 {
					d.First = image.Pt(x, y)
				}
				d.Differing++
			}
		}
	}
	return d
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

// CompareGolden checks img against testdata/<name>.png within tol. With
// -update it writes the golden file instead. On a mismatch it writes
// testdata/<name>-bad.png and fails the test; on a match it removes a stale
// -bad.png.
func CompareGolden(t testing.TB, name string, img gpu.Image, tol Tolerance) {
	t.Helper()
	golden := filepath.Join("testdata", name+".png")
	bad := filepath.Join("testdata", name+"-bad.png")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := WritePNG(golden, img); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", golden)
		return
	}
	want, err := ReadPNG(golden)
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no golden image %s: run the test with -update to create it", golden)
	}
	if err != nil {
		t.Fatal(err)
	}
	got := NRGBA(img)
	if got.Rect.Size() != want.Rect.Size() {
		writeBad(t, bad, img)
		t.Fatalf("%s: image is %v, golden is %v (rendered image in %s)", name, got.Rect.Size(), want.Rect.Size(), bad)
	}
	d := Compare(got, want, tol.MaxChannelDiff)
	if frac := float64(d.Differing) / float64(d.Total); frac > tol.MaxDiffFraction {
		writeBad(t, bad, img)
		t.Fatalf("%s: %d of %d pixels (%.3f%%, allowed %.3f%%) differ by more than %d; largest difference %d, first at %v; rendered image in %s",
			name, d.Differing, d.Total, 100*frac, 100*tol.MaxDiffFraction, tol.MaxChannelDiff, d.MaxChannelDiff, d.First, bad)
	}
	if err := os.Remove(bad); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Logf("removing stale %s: %v", bad, err)
	}
}

func writeBad(t testing.TB, path string, img gpu.Image) {
	t.Helper()
	if err := WritePNG(path, img); err != nil {
		t.Errorf("writing %s: %v", path, err)
	}
}
