package gpu

import (
	"math"
	"strings"
	"testing"

	"golang.org/x/image/font/sfnt"

	"github.com/tracegrid/tracegrid/scene"
)

type box struct{ x0, y0, x1, y1 float64 }

func quads(t *testing.T, in []float32) []box {
	t.Helper()
	if len(in)%floatsPerInstance != 0 {
		t.Fatalf("%d floats is not whole instances", len(in))
	}
	var bs []box
	for i := 0; i < len(in); i += floatsPerInstance {
		q := in[i : i+floatsPerInstance]
		cx, cy := float64(q[0]), float64(q[1])
		hx := math.Abs(float64(q[2])) + math.Abs(float64(q[4]))
		hy := math.Abs(float64(q[3])) + math.Abs(float64(q[5]))
		bs = append(bs, box{cx - hx, cy - hy, cx + hx, cy + hy})
	}
	return bs
}

func TestStrokeRectBandsTile(t *testing.T) {
	it := scene.Item{Kind: scene.StrokeRect, X0: 10, Y0: 20, X1: 110, Y1: 80, R: 5, Width: 4, Color: scene.RGBA{A: 1}}
	const m = 0.5
	in, err := appendItem(nil, &it, m, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	bs := quads(t, in)
	if len(bs) != 4 {
		t.Fatalf("%d quads, want 4 bands", len(bs))
	}
	// Sample a grid: every point of the outer box in exactly one quad
	// unless it is in the hole, which must stay clear of the band.
	const hw = 2.0
	for y := 20 - hw - m + 0.25; y < 80+hw+m; y += 0.5 {
		for x := 10 - hw - m + 0.25; x < 110+hw+m; x += 0.5 {
			n := 0
			for _, b := range bs {
				if x > b.x0 && x < b.x1 && y > b.y0 && y < b.y1 {
					n++
				}
			}
			if n > 1 {
				t.Fatalf("(%v,%v) is in %d quads: it would blend twice", x, y, n)
			}
			if n == 0 && (x < 10+hw+5+m || x > 110-hw-5-m || y < 20+hw+5+m || y > 80-hw-5-m) {
				t.Fatalf("(%v,%v) near the band is in no quad", x, y)
			}
		}
	}
	// A thin rectangle has no hole worth cutting: one quad.
	it.Y1 = 30
	if in, _ := appendItem(nil, &it, m, nil, nil); len(in) != floatsPerInstance {
		t.Errorf("thin stroke rect: %d instances, want 1", len(in)/floatsPerInstance)
	}
}

func TestShaderDefines(t *testing.T) {
	d := shaderDefines()
	for _, want := range []string{"KIND_FILL_CIRCLE 0\n", "KIND_ARROW 5\n", "KIND_GLYPH 7\n"} {
		if !strings.Contains(d, want) {
			t.Errorf("defines lack %q:\n%s", want, d)
		}
	}
}

func TestAtlasLayout(t *testing.T) {
	a, err := sharedAtlas()
	if err != nil {
		t.Fatal(err)
	}
	if a.cellW%atlasAlign != 0 || a.cellH%atlasAlign != 0 {
		t.Errorf("cells %dx%d not aligned to %d", a.cellW, a.cellH, atlasAlign)
	}
	for _, r := range "AgWÅ€Δ" {
		if _, ok := a.glyphs[r]; !ok {
			t.Errorf("atlas lacks %q", r)
		}
	}
	var buf sfnt.Buffer
	// Width scales linearly with size.
	if w1, w2 := a.measureText(&buf, "Hello", 10), a.measureText(&buf, "Hello", 20); math.Abs(w2-2*w1) > 1e-9 {
		t.Errorf("width at size 20 = %v, want twice %v", w2, w1)
	}
	// goregular has no 'kern' table (sfnt reads no GPOS), so this is 0;
	// logged to notice a font that does kern.
	av, a1, v1 := a.measureText(&buf, "AV", 50), a.measureText(&buf, "A", 50), a.measureText(&buf, "V", 50)
	t.Logf("kerning of AV at size 50: %.2f px", av-a1-v1)
	// Control characters take no room; unknown runes take the fallback's.
	if a.measureText(&buf, "a\tb", 10) != a.measureText(&buf, "ab", 10) {
		t.Error("a tab takes room")
	}
	if a.measureText(&buf, "\u4e16", 10) <= 0 {
		t.Error("a rune missing from the atlas takes no room")
	}
	t.Logf("atlas %v, cell %dx%d, %d glyphs", a.img.Rect.Size(), a.cellW, a.cellH, len(a.glyphs))
}
