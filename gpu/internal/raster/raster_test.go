package raster

import (
	"math"
	"math/rand/v2"
	"testing"
)

var (
	black = [4]byte{0, 0, 0, 255}
	white = [4]byte{255, 255, 255, 255}
)

// image returns a w×h RGBA image with stride padding, every byte 7.
func image(w, h, pad int) (pix []byte, stride int) {
	stride = 4*w + pad
	pix = make([]byte, stride*h)
	for i := range pix {
		pix[i] = 7
	}
	return pix, stride
}

// vertical is the band u0 ≤ x ≤ u1 over every row.
func vertical(u0, u1 float64, rows int32) Line {
	return Line{E1: [3]float64{-1, 0, u0}, E2: [3]float64{1, 0, -u1}, Y0: 0, Y1: rows}
}

// horizontal is the band v0 ≤ y ≤ v1.
func horizontal(v0, v1 float64) Line {
	return Line{E1: [3]float64{0, -1, v0}, E2: [3]float64{0, 1, -v1}, Y0: int32(math.Floor(v0)) - 1, Y1: int32(math.Ceil(v1)) + 1}
}

func red(pix []byte, stride, x, y int) byte { return pix[y*stride+4*x] }

// A band from x = 10.25 to 12.25 covers column 10 by 0.75, 11 wholly and
// 12 by 0.25: white over black gives round(0.75·255) = 191, 255 and
// round(0.25·255) = 64, alpha 255 throughout.
func TestVerticalBand(t *testing.T) {
	pix, stride := image(20, 3, 0)
	if err := Ground(pix, stride, [4]int{0, 0, 20, 3}, black, white, []Line{vertical(10.25, 12.25, 3)}); err != nil {
		t.Fatal(err)
	}
	want := map[int]byte{10: 191, 11: 255, 12: 64}
	for y := range 3 {
		for x := range 20 {
			if got := red(pix, stride, x, y); got != want[x] {
				t.Errorf("pixel (%d,%d) = %d, want %d", x, y, got, want[x])
			}
			if a := pix[y*stride+4*x+3]; a != 255 {
				t.Errorf("pixel (%d,%d) alpha %d", x, y, a)
			}
		}
	}
}

// A band a quarter pixel wide (x from 10.5 to 10.75) inside column 10
// covers it by 0.25 and nothing else.
func TestThinBand(t *testing.T) {
	pix, stride := image(20, 1, 0)
	if err := Ground(pix, stride, [4]int{0, 0, 20, 1}, black, white, []Line{vertical(10.5, 10.75, 1)}); err != nil {
		t.Fatal(err)
	}
	for x := range 20 {
		want := byte(0)
		if x == 10 {
			want = 64
		}
		if got := red(pix, stride, x, 0); got != want {
			t.Errorf("column %d = %d, want %d", x, got, want)
		}
	}
}

// A horizontal band (no column bound at all, or all but none) from y = 5
// to 6.8: row 5 wholly, row 6 by 0.8 (204); and the two crossing: at
// (10, 6) the vertical band's 0.75 (191) then the horizontal's 0.8 over
// it, round((191·51 + 255·204)/255) = round(242.2) = 242.
func TestHorizontalAndCrossing(t *testing.T) {
	for _, tilt := range []float64{0, 1e-12, -1e-12} {
		h := horizontal(5, 6.8)
		h.E1[0], h.E2[0] = tilt, -tilt
		pix, stride := image(16, 10, 8)
		if err := Ground(pix, stride, [4]int{0, 0, 16, 10}, black, white, []Line{vertical(10.25, 12.25, 10), h}); err != nil {
			t.Fatal(err)
		}
		for x := range 16 {
			if x >= 10 && x <= 12 {
				continue
			}
			if got := red(pix, stride, x, 5); got != 255 {
				t.Errorf("tilt %g: (%d,5) = %d, want 255", tilt, x, got)
			}
			if got := red(pix, stride, x, 6); got != 204 {
				t.Errorf("tilt %g: (%d,6) = %d, want 204", tilt, x, got)
			}
			if got := red(pix, stride, x, 4); got != 0 {
				t.Errorf("tilt %g: (%d,4) = %d, want 0", tilt, x, got)
			}
		}
		if got := red(pix, stride, 10, 6); got != 242 {
			t.Errorf("tilt %g: crossing (10,6) = %d, want 242", tilt, got)
		}
		// The stride's padding is never written.
		for y := range 10 {
			for i := 64; i < stride; i++ {
				if pix[y*stride+i] != 7 {
					t.Fatalf("tilt %g: padding byte %d of row %d written", tilt, i, y)
				}
			}
		}
	}
}

// Only the rectangle is written, and a line only on its rows: outside
// them the ground shows even where the band's edges would cover.
func TestRectangleAndRows(t *testing.T) {
	pix, stride := image(20, 10, 4)
	l := vertical(4, 16, 7)
	l.Y0 = 3
	if err := Ground(pix, stride, [4]int{2, 1, 18, 9}, black, white, []Line{l}); err != nil {
		t.Fatal(err)
	}
	for y := range 10 {
		for x := range 20 {
			in := x >= 2 && x < 18 && y >= 1 && y < 9
			want := byte(7)
			switch {
			case in && x >= 4 && x < 16 && y >= 3 && y < 7:
				want = 255
			case in:
				want = 0
			}
			if got := red(pix, stride, x, y); got != want {
				t.Errorf("pixel (%d,%d) = %d, want %d", x, y, got, want)
			}
		}
	}
}

// Bands crossing the rectangle's left and right sides are cut there: the
// band x ≤ 5.5 fills columns 3 and 4 of a rectangle from column 3 and
// half of column 5; the band x ≥ 13.5 half of 13 and all of 14, the
// rectangle's last column; nothing outside the rectangle is written.
func TestBandsCutAtTheSides(t *testing.T) {
	pix, stride := image(20, 6, 4)
	lines := []Line{vertical(-10, 5.5, 6), vertical(13.5, 40, 6)}
	if err := Ground(pix, stride, [4]int{3, 1, 15, 5}, black, white, lines); err != nil {
		t.Fatal(err)
	}
	want := map[int]byte{3: 255, 4: 255, 5: 128, 13: 128, 14: 255}
	for y := range 6 {
		for x := range 20 {
			w := byte(7)
			if y >= 1 && y < 5 && x >= 3 && x < 15 {
				w = want[x]
			}
			if got := red(pix, stride, x, y); got != w {
				t.Errorf("pixel (%d,%d) = %d, want %d", x, y, got, w)
			}
		}
		for i := 80; i < stride; i++ {
			if pix[y*stride+i] != 7 {
				t.Fatalf("padding byte %d of row %d written", i, y)
			}
		}
	}
}

// Random bands at every angle, width and position, some thinner than a
// pixel, blended in turn over a coloured ground: every byte is what
// Coverage and the documented blend give.
func TestRandomBandsMatchCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const w, h = 61, 47
	ground, line := [4]byte{30, 140, 60, 255}, [4]byte{240, 230, 200, 255}
	for round := range 50 {
		var lines []Line
		for range 1 + rng.IntN(8) {
			th := rng.Float64() * math.Pi
			nx, ny := math.Cos(th), math.Sin(th)
			if round%5 == 0 { // exactly axis-aligned ones too
				nx, ny = math.Round(nx), math.Round(ny)
				if nx == 0 && ny == 0 {
					nx = 1
				}
			}
			cx, cy := rng.Float64()*w, rng.Float64()*h
			half := 0.05 + rng.Float64()*3
			c := -(nx*cx + ny*cy)
			// Outside past edge 1 is n·p + c < −half; past edge 2, > half.
			lines = append(lines, Line{
				E1: [3]float64{-nx, -ny, -c - half},
				E2: [3]float64{nx, ny, c - half},
				Y0: 0, Y1: h,
			})
		}
		pix, stride := image(w, h, 0)
		if err := Ground(pix, stride, [4]int{0, 0, w, h}, ground, line, lines); err != nil {
			t.Fatal(err)
		}
		for y := range h {
			for x := range w {
				want := ground
				for i := range lines {
					c := Coverage(&lines[i], float64(x)+0.5, float64(y)+0.5)
					if c <= 0 {
						continue
					}
					a := int(float64(c*255) + 0.5)
					for k := range 4 {
						v := int(want[k])*(255-a) + int(line[k])*a
						want[k] = byte(math.Round(float64(v) / 255))
					}
				}
				got := [4]byte(pix[y*stride+4*x:])
				if got != want {
					t.Fatalf("round %d: pixel (%d,%d) = %v, want %v (lines %+v)", round, x, y, got, want, lines)
				}
			}
		}
	}
}

func TestGroundRejects(t *testing.T) {
	pix, stride := image(10, 10, 0)
	for name, c := range map[string]struct {
		rect         [4]int
		ground, line [4]byte
		pix          []byte
		stride       int
	}{
		"negative":        {[4]int{-1, 0, 5, 5}, black, white, pix, stride},
		"inverted":        {[4]int{5, 0, 4, 5}, black, white, pix, stride},
		"past the stride": {[4]int{0, 0, 11, 5}, black, white, pix, stride},
		"past the end":    {[4]int{0, 0, 10, 11}, black, white, pix, stride},
		"short buffer":    {[4]int{0, 0, 10, 10}, black, white, pix[:len(pix)-1], stride},
		"translucent":     {[4]int{0, 0, 10, 10}, [4]byte{0, 0, 0, 254}, white, pix, stride},
		// (y1−1)·stride overflows int: the check must not wrap.
		"huge stride":    {[4]int{0, 0, 1, 3}, black, white, pix, 1 << 62},
		"huge rectangle": {[4]int{0, 0, 1 << 29, 1}, black, white, pix, 1 << 31},
	} {
		if err := Ground(c.pix, c.stride, c.rect, c.ground, c.line, nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// An empty rectangle is nothing to do, even on an empty image.
	if err := Ground(nil, 0, [4]int{0, 0, 0, 0}, black, white, nil); err != nil {
		t.Errorf("empty rectangle: %v", err)
	}
}
