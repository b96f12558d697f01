package encode

import (
	"math"
	"math/rand"
	"testing"

	"github.com/asticode/go-astiav"
)

// bt601 is the exact limited-range BT.601 Y, Cb, Cr of an RGB colour.
func bt601(c [3]byte) [3]float64 {
	r, g, b := float64(c[0]), float64(c[1]), float64(c[2])
	return [3]float64{
		16 + (65.481*r+128.553*g+24.966*b)/255,
		128 + (-37.797*r-74.203*g+112.0*b)/255,
		128 + (112.0*r-93.786*g-18.214*b)/255,
	}
}

// convertBlocks converts an image whose 2×2 blocks are filled by fill(bx,
// by, dx, dy) with Writer's converter and returns the frame's planes
// packed: Y (w×h), then U and V (w/2×h/2).
func convertBlocks(t *testing.T, w, h int, fill func(bx, by, dx, dy int) [3]byte) []byte {
	t.Helper()
	img := Image{Width: w, Height: h, Stride: 4 * w, Pix: make([]byte, 4*w*h)}
	for y := range h {
		for x := range w {
			c := fill(x/2, y/2, x%2, y%2)
			copy(img.Pix[y*img.Stride+4*x:], []byte{c[0], c[1], c[2], 255})
		}
	}
	c, err := newConverter(w, h)
	if err != nil {
		t.Fatal(err)
	}
	defer c.free()
	f := astiav.AllocFrame()
	defer f.Free()
	f.SetWidth(w)
	f.SetHeight(h)
	f.SetPixelFormat(astiav.PixelFormatYuv420P)
	if err := f.AllocBuffer(0); err != nil {
		t.Fatal(err)
	}
	if err := c.convert(img, f); err != nil {
		t.Fatal(err)
	}
	planes, err := f.Data().Bytes(1)
	if err != nil {
		t.Fatal(err)
	}
	if len(planes) != w*h*3/2 {
		t.Fatalf("%d bytes of planes, want %d", len(planes), w*h*3/2)
	}
	return planes
}

// TestConvertColours: Writer's RGBA→yuv420p conversion (libyuv) against the
// exact BT.601 limited-range values on 4,096 random colours, each filling a
// 2×2 block. libyuv rounds luma and truncates chroma (measured: luma within
// 0.72, chroma within 1.39 and on average 0.5 below exact; libswscale's
// within 0.55, unbiased): far below what libx264 at crf 18 changes.
func TestConvertColours(t *testing.T) {
	const w, h = 128, 128
	rng := rand.New(rand.NewSource(1))
	cols := make([][3]byte, w*h/4)
	for i := range cols {
		cols[i] = [3]byte{byte(rng.Intn(256)), byte(rng.Intn(256)), byte(rng.Intn(256))}
	}
	cols[0], cols[1], cols[2] = [3]byte{0, 0, 0}, [3]byte{255, 255, 255}, [3]byte{128, 128, 128}
	planes := convertBlocks(t, w, h, func(bx, by, _, _ int) [3]byte { return cols[by*w/2+bx] })
	var worst [3]float64
	var bias [2]float64
	for i, c := range cols {
		bx, by := i%(w/2), i/(w/2)
		want := bt601(c)
		got := [3]float64{
			float64(planes[2*by*w+2*bx]),
			float64(planes[w*h+by*w/2+bx]),
			float64(planes[w*h+w*h/4+by*w/2+bx]),
		}
		for k := range 3 {
			worst[k] = math.Max(worst[k], math.Abs(got[k]-want[k]))
		}
		bias[0] += got[1] - want[1]
		bias[1] += got[2] - want[2]
		if i < 3 && (got[0] != math.Round(want[0]) || got[1] != 128 || got[2] != 128) {
			t.Errorf("%v: Y, Cb, Cr %v, want %.0f, 128, 128", c, got, want[0])
		}
	}
	n := float64(len(cols))
	t.Logf("largest error Y %.2f Cb %.2f Cr %.2f; mean chroma error %.2f %.2f", worst[0], worst[1], worst[2], bias[0]/n, bias[1]/n)
	if worst[0] > 1 || worst[1] > 1.5 || worst[2] > 1.5 {
		t.Errorf("largest error Y %.2f Cb %.2f Cr %.2f, want at most 1, 1.5, 1.5", worst[0], worst[1], worst[2])
	}
	for _, b := range bias {
		if math.Abs(b/n) > 0.75 {
			t.Errorf("mean chroma error %.2f, want within ±0.75", b/n)
		}
	}
}

// TestConvertChromaBox: a chroma sample is the mean of its 2×2 block, so a
// one-pixel coloured line keeps its tint wherever it lies (with SWS_POINT,
// libswscale's fastest path, a horizontal line on an even row took the row
// below's chroma and lost it).
func TestConvertChromaBox(t *testing.T) {
	grey, red := [3]byte{128, 128, 128}, [3]byte{230, 20, 20}
	mean := [3]byte{179, 74, 74} // (128+230)/2, (128+20)/2
	for _, c := range []struct {
		name string
		line func(dx, dy int) bool
	}{
		{"row 0 of the pair", func(_, dy int) bool { return dy == 0 }},
		{"row 1 of the pair", func(_, dy int) bool { return dy == 1 }},
		{"column 0 of the pair", func(dx, _ int) bool { return dx == 0 }},
	} {
		planes := convertBlocks(t, 16, 8, func(_, _, dx, dy int) [3]byte {
			if c.line(dx, dy) {
				return red
			}
			return grey
		})
		want := bt601(mean)
		gotCr := float64(planes[16*8+16*8/4+3*8+5]) // any sample: every block is alike
		if math.Abs(gotCr-want[2]) > 1.5 {
			t.Errorf("%s: Cr %.0f, want the block mean's %.2f (grey's is 128)", c.name, gotCr, want[2])
		}
	}
}
