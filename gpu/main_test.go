package gpu_test

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/scene"
)

// One renderer for the whole test binary: context creation and shader
// compilation cost more than most tests.
var (
	shared    *gpu.Renderer
	sharedErr error
)

func TestMain(m *testing.M) {
	shared, sharedErr = gpu.NewRenderer()
	code := m.Run()
	if err := shared.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "closing the shared renderer:", err)
		code = max(code, 1)
	}
	os.Exit(code)
}

// renderer returns the shared renderer. Without OpenGL the tests skip on a
// developer machine but fail on CI (CI set), where llvmpipe must work.
func renderer(t testing.TB) *gpu.Renderer {
	t.Helper()
	if sharedErr != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("no OpenGL here (set CI=1 to make this a failure): %v", sharedErr)
		}
		t.Fatalf("NewRenderer: %v", sharedErr)
	}
	return shared
}

func newImage(w, h int) gpu.Image {
	return gpu.Image{Width: w, Height: h, Stride: 4 * w, Pix: make([]byte, 4*w*h)}
}

// render draws dl at w×h with the shared renderer.
func render(t testing.TB, dl *scene.DrawList, w, h int) gpu.Image {
	t.Helper()
	img := newImage(w, h)
	if err := renderer(t).Render(dl, img); err != nil {
		t.Fatalf("Render: %v", err)
	}
	return img
}

type px [4]uint8

func at(img gpu.Image, x, y int) px {
	i := y*img.Stride + 4*x
	return px(img.Pix[i : i+4])
}

// bytesOf is the colour a fully covered pixel gets: GL converts with
// round(c*255).
func bytesOf(c scene.RGBA) px {
	b := func(v float32) uint8 { return uint8(math.Round(float64(v) * 255)) }
	return px{b(c.R), b(c.G), b(c.B), b(c.A)}
}

func maxDiff(a, b px) int {
	d := 0
	for i := range a {
		d = max(d, int(math.Abs(float64(a[i])-float64(b[i]))))
	}
	return d
}

var (
	white = scene.RGBA{R: 1, G: 1, B: 1, A: 1}
	black = scene.RGBA{A: 1}
	red   = scene.RGBA{R: 1, A: 1}
	blue  = scene.RGBA{R: 0.1, G: 0.2, B: 0.9, A: 1}
)

// wantPx checks pixel (x, y) is within tol of want. A difference of 1 is
// always allowed: drivers round c*255 differently when it ends in .5.
func wantPx(t *testing.T, img gpu.Image, x, y int, want scene.RGBA, tol int, what string) {
	t.Helper()
	tol = max(tol, 1)
	got := at(img, x, y)
	if maxDiff(got, bytesOf(want)) > tol {
		t.Errorf("%s: pixel (%d,%d) = %v, want %v", what, x, y, got, bytesOf(want))
	}
}

// wantBetween checks pixel (x, y) is a visible mix of a and b: an
// anti-aliased edge, neither colour.
func wantBetween(t *testing.T, img gpu.Image, x, y int, a, b scene.RGBA, what string) {
	t.Helper()
	got := at(img, x, y)
	if maxDiff(got, bytesOf(a)) < 16 || maxDiff(got, bytesOf(b)) < 16 {
		t.Errorf("%s: pixel (%d,%d) = %v, want a blend of %v and %v", what, x, y, got, bytesOf(a), bytesOf(b))
	}
}
