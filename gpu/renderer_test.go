package gpu_test

import (
	"bytes"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/scene"
	"github.com/tracegrid/tracegrid/shaders"
)

func list(w, h int, bg scene.RGBA, items ...scene.Item) *scene.DrawList {
	return &scene.DrawList{Width: w, Height: h, Background: bg, Items: items}
}

func TestInfo(t *testing.T) {
	info := renderer(t).Info()
	t.Logf("%+v", info)
	if info.Renderer == "" || info.Version == "" || info.Vendor == "" {
		t.Errorf("GL strings missing: %+v", info)
	}
	switch info.Platform {
	case "device", "surfaceless", "default":
	default:
		t.Errorf("Platform = %q", info.Platform)
	}
}

func TestBackground(t *testing.T) {
	bg := scene.RGBA{R: 0.1, G: 0.2, B: 0.3, A: 1}
	img := render(t, list(17, 9, bg), 17, 9)
	for y := 0; y < 9; y++ {
		for x := 0; x < 17; x++ {
			if got := at(img, x, y); maxDiff(got, bytesOf(bg)) > 1 {
				t.Fatalf("pixel (%d,%d) = %v, want %v", x, y, got, bytesOf(bg))
			}
		}
	}
}

func TestFillCircle(t *testing.T) {
	// Centred on a pixel centre, so pixel (50+k, 50) is exactly k from it.
	img := render(t, list(100, 100, white,
		scene.Item{Kind: scene.FillCircle, X0: 50.5, Y0: 50.5, R: 20, Color: red}), 100, 100)
	wantPx(t, img, 50, 50, red, 0, "centre")
	wantPx(t, img, 68, 50, red, 0, "2 px inside the right edge")
	wantPx(t, img, 50, 32, red, 0, "2 px inside the top edge")
	wantPx(t, img, 72, 50, white, 0, "2 px outside the right edge")
	wantPx(t, img, 50, 28, white, 0, "2 px outside the top edge")
	wantPx(t, img, 5, 5, white, 0, "far away")
	// Pixel 70's centre is on the edge: half covered, G and B halfway.
	wantBetween(t, img, 70, 50, red, white, "on the edge")
	if g := at(img, 70, 50)[1]; math.Abs(float64(g)-127.5) > 3 {
		t.Errorf("edge pixel green = %d, want about half (127.5)", g)
	}
	// Along the diagonal, too.
	d := int(math.Round(20 / math.Sqrt2))
	wantBetween(t, img, 50+d, 50+d, red, white, "on the diagonal edge")
}

func TestFillRectEdges(t *testing.T) {
	img := render(t, list(60, 60, white,
		scene.Item{Kind: scene.FillRect, X0: 10, Y0: 20, X1: 30, Y1: 40, Color: blue}), 60, 60)
	for _, c := range []struct {
		x, y int
		in   bool
	}{
		{10, 30, true}, {9, 30, false}, {29, 30, true}, {30, 30, false},
		{20, 20, true}, {20, 19, false}, {20, 39, true}, {20, 40, false},
		{10, 20, true}, {29, 39, true}, {9, 19, false}, {30, 40, false},
	} {
		want := white
		if c.in {
			want = blue
		}
		// Edges on pixel boundaries: exact colours, no blending.
		wantPx(t, img, c.x, c.y, want, 0, "rect edge")
	}
}

func TestRoundedRect(t *testing.T) {
	img := render(t, list(60, 60, white,
		scene.Item{Kind: scene.FillRect, X0: 10, Y0: 20, X1: 40, Y1: 50, R: 6, Color: blue}), 60, 60)
	wantPx(t, img, 10, 20, white, 0, "cut corner")
	wantPx(t, img, 16, 20, blue, 0, "top edge past the corner arc")
	wantPx(t, img, 10, 26, blue, 0, "left edge past the corner arc")
	wantPx(t, img, 25, 35, blue, 0, "middle")
	wantBetween(t, img, 11, 21, blue, white, "corner arc")
}

func TestStrokeRectBand(t *testing.T) {
	// Width 4 centred on the edge x=20: columns 18..21 covered.
	img := render(t, list(100, 100, white,
		scene.Item{Kind: scene.StrokeRect, X0: 20, Y0: 20, X1: 80, Y1: 80, Width: 4, Color: black}), 100, 100)
	for x := 16; x <= 23; x++ {
		want := white
		if x >= 18 && x <= 21 {
			want = black
		}
		wantPx(t, img, x, 50, want, 0, "left band")
	}
	for y := 76; y <= 83; y++ {
		want := white
		if y >= 78 && y <= 81 {
			want = black
		}
		wantPx(t, img, 50, y, want, 0, "bottom band")
	}
	wantPx(t, img, 18, 18, black, 0, "sharp outer corner")
	wantPx(t, img, 50, 50, white, 0, "inside")
}

func TestTranslucentStrokeRect(t *testing.T) {
	// A stroked rectangle is drawn as several quads; none may overlap, or
	// their shared pixels would blend twice and show darker seams.
	half := scene.RGBA{A: 0.5}
	img := render(t, list(100, 100, white,
		scene.Item{Kind: scene.StrokeRect, X0: 20, Y0: 20, X1: 80, Y1: 80, R: 6, Width: 4, Color: half}), 100, 100)
	want := at(img, 50, 19) // middle of the top band
	if math.Abs(float64(want[0])-127.5) > 1.5 {
		t.Fatalf("band pixel %v, want half grey", want)
	}
	for y := 0; y < 100; y++ {
		for x := 0; x < 100; x++ {
			if p := at(img, x, y); p[0] < want[0]-1 {
				t.Fatalf("pixel (%d,%d) = %v darker than the band %v: blended twice", x, y, p, want)
			}
		}
	}
	for _, c := range [][2]int{{18, 50}, {21, 50}, {50, 18}, {50, 21}, {78, 50}, {81, 50}, {50, 81}} {
		if p := at(img, c[0], c[1]); maxDiff(p, want) > 1 {
			t.Errorf("band pixel (%d,%d) = %v, want %v", c[0], c[1], p, want)
		}
	}
}

func TestStrokeCircleBand(t *testing.T) {
	// Band of width 6 on radius 30: distances 27..33 from the centre.
	img := render(t, list(100, 100, white,
		scene.Item{Kind: scene.StrokeCircle, X0: 50.5, Y0: 50.5, R: 30, Width: 6, Color: black}), 100, 100)
	for _, k := range []int{28, 30, 32} {
		wantPx(t, img, 50+k, 50, black, 0, "inside the band")
		wantPx(t, img, 50, 50-k, black, 0, "inside the band")
	}
	for _, k := range []int{0, 10, 25, 35, 40} {
		wantPx(t, img, 50+k, 50, white, 0, "off the band")
	}
	wantBetween(t, img, 50+27, 50, black, white, "inner edge")
	wantBetween(t, img, 50+33, 50, black, white, "outer edge")
}

func TestLine(t *testing.T) {
	img := render(t, list(100, 100, white,
		scene.Item{Kind: scene.Line, X0: 10, Y0: 50, X1: 90, Y1: 50, Width: 4, Color: black},
		scene.Item{Kind: scene.Line, X0: 10, Y0: 90, X1: 90, Y1: 60, Width: 3, Color: red}), 100, 100)
	for y := 46; y <= 53; y++ {
		want := white
		if y >= 48 && y <= 51 {
			want = black
		}
		wantPx(t, img, 50, y, want, 0, "horizontal line width")
	}
	wantPx(t, img, 10, 50, black, 0, "butt cap start")
	wantPx(t, img, 9, 50, white, 0, "before the start")
	wantPx(t, img, 89, 50, black, 0, "butt cap end")
	wantPx(t, img, 90, 50, white, 0, "after the end")

	// The diagonal line passes through (50, 75); y = 90 - 30*(x-10)/80.
	wantPx(t, img, 50, 74, red, 8, "diagonal line centre")
	wantPx(t, img, 50, 70, white, 0, "above the diagonal line")
	wantPx(t, img, 50, 79, white, 0, "below the diagonal line")
	partial := 0
	for y := 70; y < 80; y++ {
		if p := at(img, 50, y); maxDiff(p, bytesOf(red)) > 16 && maxDiff(p, bytesOf(white)) > 16 {
			partial++
		}
	}
	if partial == 0 {
		t.Errorf("diagonal line has no anti-aliased pixels in column 50")
	}
}

func TestArrowTip(t *testing.T) {
	// Axis through the centres of row 50; tip on the centre of pixel 80.
	img := render(t, list(100, 100, white,
		scene.Item{Kind: scene.Arrow, X0: 10, Y0: 50.5, X1: 80.5, Y1: 50.5, Width: 4, Head: 16, Color: black},
		// Pointing left, tip on the centre of pixel (10, 20).
		scene.Item{Kind: scene.Arrow, X0: 60, Y0: 20.5, X1: 10.5, Y1: 20.5, Width: 2, Head: 10, Color: red},
	), 100, 100)
	wantPx(t, img, 78, 50, black, 0, "2 px behind the tip")
	wantBetween(t, img, 80, 50, black, white, "tip pixel")
	wantPx(t, img, 81, 50, white, 0, "1 px beyond the tip")
	wantPx(t, img, 82, 50, white, 0, "2 px beyond the tip")
	wantPx(t, img, 66, 45, black, 0, "head near its base, off the shaft")
	wantPx(t, img, 62, 45, white, 0, "behind the head, off the shaft")
	wantPx(t, img, 30, 50, black, 0, "shaft")
	wantPx(t, img, 30, 49, black, 0, "shaft")
	wantPx(t, img, 30, 46, white, 0, "beside the shaft")
	wantPx(t, img, 30, 55, white, 0, "beside the shaft")
	// No seam where the shaft meets the head (base at x = 64.5).
	for x := 60; x <= 70; x++ {
		wantPx(t, img, x, 50, black, 0, "axis across the head's base")
	}

	wantBetween(t, img, 10, 20, red, white, "left tip pixel")
	wantPx(t, img, 12, 20, red, 0, "2 px behind the left tip")
	wantPx(t, img, 8, 20, white, 0, "2 px beyond the left tip")
}

func TestText(t *testing.T) {
	const (
		s          = "Hxg 42"
		size       = 30.0
		cx, cy     = 100.0, 50.0
		darkThresh = 128
	)
	img := render(t, list(200, 100, white,
		scene.Item{Kind: scene.Text, X0: cx, Y0: cy, Size: size, Text: s, Color: black}), 200, 100)
	w := gpu.MeasureText(s, size)
	if w < size || w > 200 {
		t.Fatalf("MeasureText(%q, %v) = %v", s, size, w)
	}
	// The box the item is centred in, plus a pixel for anti-aliasing; in
	// the pixel beyond that only a faint filtering fringe (round glyphs
	// overshoot the cap height a little), and nothing further out.
	x0, x1 := cx-w/2-1, cx+w/2+1
	y0, y1 := cy-size/2-1, cy+size/2+1
	outside := func(x, y int, m float64) bool {
		return float64(x) < x0-m || float64(x+1) > x1+m || float64(y) < y0-m || float64(y+1) > y1+m
	}
	dark, minY, maxY, minX, maxX := 0, 1000, -1, 1000, -1
	for y := 0; y < img.Height; y++ {
		for x := 0; x < img.Width; x++ {
			p := at(img, x, y)
			if p == bytesOf(white) {
				continue
			}
			if outside(x, y, 1) || outside(x, y, 0) && maxDiff(p, bytesOf(white)) > 8 {
				t.Fatalf("pixel (%d,%d) = %v outside the text box [%.1f,%.1f]x[%.1f,%.1f]", x, y, p, x0, x1, y0, y1)
			}
			if p[0] < darkThresh {
				dark++
				minY, maxY = min(minY, y), max(maxY, y)
				minX, maxX = min(minX, x), max(maxX, x)
			}
		}
	}
	t.Logf("text %q: %d dark pixels in x %d..%d, y %d..%d; box x %.1f..%.1f, y %.1f..%.1f",
		s, dark, minX, maxX, minY, maxY, x0, x1, y0, y1)
	if dark < 100 {
		t.Fatalf("only %d dark pixels", dark)
	}
	// The H's top is the cap height: the top of the box.
	if top := cy - size/2; math.Abs(float64(minY)-top) > 1 {
		t.Errorf("topmost dark row %d, want the cap height at %.1f", minY, top)
	}
	// The g descends well below the baseline.
	if base := cy - size/2 + gpu.TextBaseline(size); float64(maxY) < base+size/8 {
		t.Errorf("lowest dark row %d, want a descender below the baseline at %.1f", maxY, base)
	}
	// Ink spans most of the advance width, centred.
	if float64(maxX-minX) < 0.8*w || math.Abs(float64(minX+maxX+1)/2-cx) > 3 {
		t.Errorf("dark columns %d..%d, want about %.1f wide centred on %.1f", minX, maxX, w, cx)
	}
}

func TestUnknownRunes(t *testing.T) {
	// Runes the atlas lacks draw a replacement glyph; control characters
	// draw nothing.
	img := render(t, list(100, 40, white,
		scene.Item{Kind: scene.Text, X0: 50, Y0: 20, Size: 20, Text: "\u4e16\t", Color: black}), 100, 40)
	if dark := countNot(img, bytesOf(white)); dark == 0 {
		t.Errorf("a rune missing from the atlas drew nothing")
	}
}

func countNot(img gpu.Image, c px) int {
	n := 0
	for y := 0; y < img.Height; y++ {
		for x := 0; x < img.Width; x++ {
			if at(img, x, y) != c {
				n++
			}
		}
	}
	return n
}

func TestAlphaBlending(t *testing.T) {
	half := scene.RGBA{A: 0.5}
	img := render(t, list(20, 20, white,
		scene.Item{Kind: scene.FillRect, X0: 0, Y0: 0, X1: 10, Y1: 20, Color: half},
		scene.Item{Kind: scene.FillRect, X0: 5, Y0: 0, X1: 15, Y1: 20, Color: red}), 20, 20)
	got := at(img, 2, 10)
	if math.Abs(float64(got[0])-127.5) > 1.5 || got[3] != 255 {
		t.Errorf("half-transparent black over white = %v, want grey about 128, opaque", got)
	}
	wantPx(t, img, 7, 10, red, 0, "later item covers earlier one")
}

func TestScale2x(t *testing.T) {
	dl := list(50, 50, white,
		scene.Item{Kind: scene.FillRect, X0: 10, Y0: 10, X1: 20, Y1: 20, Color: blue},
		scene.Item{Kind: scene.FillCircle, X0: 35.25, Y0: 35.25, R: 10, Color: red})
	img := render(t, dl, 100, 100)
	wantPx(t, img, 20, 30, blue, 0, "rect left edge at 2x")
	wantPx(t, img, 19, 30, white, 0, "left of the rect at 2x")
	wantPx(t, img, 39, 30, blue, 0, "rect right edge at 2x")
	wantPx(t, img, 40, 30, white, 0, "right of the rect at 2x")
	// The circle's centre maps to (70.5, 70.5), radius 20.
	wantPx(t, img, 70+18, 70, red, 0, "2 px inside the circle at 2x")
	wantPx(t, img, 70+22, 70, white, 0, "2 px outside the circle at 2x")
	wantBetween(t, img, 70+20, 70, red, white, "circle edge at 2x")
}

func TestLetterbox(t *testing.T) {
	// A square canvas in a 2:1 output: scale 1, centred, margins background.
	dl := list(50, 50, white, scene.Item{Kind: scene.FillRect, X0: 0, Y0: 0, X1: 50, Y1: 50, Color: blue})
	img := render(t, dl, 100, 50)
	wantPx(t, img, 24, 25, white, 0, "left margin")
	wantPx(t, img, 25, 25, blue, 0, "canvas left edge")
	wantPx(t, img, 74, 25, blue, 0, "canvas right edge")
	wantPx(t, img, 75, 25, white, 0, "right margin")
}

func TestRowZeroIsTop(t *testing.T) {
	img := render(t, list(30, 30, white,
		scene.Item{Kind: scene.FillRect, X0: 0, Y0: 0, X1: 30, Y1: 3, Color: red}), 30, 30)
	for y := 0; y < 30; y++ {
		want := white
		if y < 3 {
			want = red
		}
		for _, x := range []int{0, 15, 29} {
			wantPx(t, img, x, y, want, 0, "top band")
		}
	}
}

func TestStride(t *testing.T) {
	dl := compositeList()
	ref := render(t, dl, 97, 61)
	// A stride that is a whole number of pixels uses GL_PACK_ROW_LENGTH; one
	// that is not goes through a copy. Padding must survive either way.
	for _, pad := range []int{12, 3} {
		const fill = 0xab
		w, h := 97, 61
		img := gpu.Image{Width: w, Height: h, Stride: 4*w + pad}
		img.Pix = bytes.Repeat([]byte{fill}, (h-1)*img.Stride+4*w)
		if err := renderer(t).Render(dl, img); err != nil {
			t.Fatalf("pad %d: %v", pad, err)
		}
		for y := 0; y < h; y++ {
			row := img.Pix[y*img.Stride:]
			if !bytes.Equal(row[:4*w], ref.Pix[y*ref.Stride:y*ref.Stride+4*w]) {
				t.Fatalf("pad %d: row %d differs from the tightly packed render", pad, y)
			}
			if y < h-1 {
				for i, b := range row[4*w : img.Stride] {
					if b != fill {
						t.Fatalf("pad %d: row %d padding byte %d changed to %#x", pad, y, i, b)
					}
				}
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	dl := compositeList()
	a := render(t, dl, 160, 100)
	_ = render(t, dl, 80, 50) // a size change re-creates the framebuffer
	b := render(t, dl, 160, 100)
	c := render(t, dl, 160, 100)
	if !bytes.Equal(a.Pix, b.Pix) || !bytes.Equal(b.Pix, c.Pix) {
		t.Fatal("rendering the same list twice gave different bytes")
	}
}

func TestRenderErrors(t *testing.T) {
	r := renderer(t)
	ok := list(10, 10, white)
	for name, c := range map[string]struct {
		dl   *scene.DrawList
		img  gpu.Image
		want string
	}{
		"nil list":     {nil, newImage(10, 10), "nil draw list"},
		"empty canvas": {list(0, 10, white), newImage(10, 10), "canvas"},
		"empty image":  {ok, gpu.Image{}, "destination"},
		"short stride": {ok, gpu.Image{Width: 10, Height: 10, Stride: 39, Pix: make([]byte, 400)}, "stride"},
		"short pix":    {ok, gpu.Image{Width: 10, Height: 10, Stride: 40, Pix: make([]byte, 399)}, "Pix"},
		"too big":      {ok, gpu.Image{Width: 1 << 20, Height: 1, Stride: 4 << 20, Pix: make([]byte, 4<<20)}, "limit"},
		"unknown kind": {list(10, 10, white, scene.Item{Kind: 99, Color: red}), newImage(10, 10), "unknown kind"},
		"NaN":          {list(10, 10, white, scene.Item{Kind: scene.FillCircle, X0: math.NaN(), R: 1, Color: red}), newImage(10, 10), "non-finite"},
	} {
		err := r.Render(c.dl, c.img)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", name, err, c.want)
		}
	}
	// The renderer still works after rejected frames.
	img := render(t, ok, 10, 10)
	wantPx(t, img, 5, 5, white, 0, "after errors")
}

func TestDegenerateItems(t *testing.T) {
	// Items that cannot show anything are no-ops, not errors.
	img := render(t, list(20, 20, white,
		scene.Item{Kind: scene.FillCircle, X0: 10, Y0: 10, R: 0, Color: red},
		scene.Item{Kind: scene.Line, X0: 5, Y0: 5, X1: 5, Y1: 5, Width: 3, Color: red},
		scene.Item{Kind: scene.Arrow, X0: 5, Y0: 5, X1: 5, Y1: 5, Width: 3, Head: 4, Color: red},
		scene.Item{Kind: scene.StrokeRect, X0: 2, Y0: 2, X1: 8, Y1: 8, Width: 0, Color: red},
		scene.Item{Kind: scene.FillRect, X0: 2, Y0: 2, X1: 8, Y1: 8, Color: scene.RGBA{R: 1}},
		scene.Item{Kind: scene.Text, X0: 10, Y0: 10, Size: 10, Color: red},
	), 20, 20)
	if n := countNot(img, bytesOf(white)); n != 0 {
		t.Errorf("%d pixels drawn by degenerate items", n)
	}
}

func TestShaderErrors(t *testing.T) {
	r := renderer(t)
	if err := gpu.BuildProgram(r, shaders.QuadVertex, "", shaders.ShapeFragment); err != nil {
		t.Fatalf("the real shaders: %v", err)
	}
	// The compiler's log, with line numbers of the .glsl source (the
	// injected #defines do not shift them), is in the error.
	bad := "#version 330 core\nout vec4 c;\nvoid main() {\n    c = vec4(nosuch);\n}\n"
	err := gpu.BuildProgram(r, shaders.QuadVertex, "", bad)
	if err == nil || !strings.Contains(err.Error(), "fragment shader") || !strings.Contains(err.Error(), "nosuch") {
		t.Fatalf("err = %v, want the compile log", err)
	}
	if !strings.Contains(err.Error(), "0:4(") && !strings.Contains(err.Error(), "0:4:") && !strings.Contains(err.Error(), "(4)") {
		t.Errorf("err = %v, want line 4", err)
	}
	// A link error: a fragment shader without main compiles, but does not
	// link.
	unlinked := "#version 330 core\nout vec4 c;\nvoid notMain() { c = vec4(1.0); }\n"
	if err := gpu.BuildProgram(r, shaders.QuadVertex, "", unlinked); err == nil || !strings.Contains(err.Error(), "linking") {
		t.Errorf("err = %v, want a link error", err)
	}
}

func TestForcedPlatform(t *testing.T) {
	renderer(t)
	t.Setenv("TRACEGRID_EGL_PLATFORM", "bogus")
	if r, err := gpu.NewRenderer(); err == nil || !strings.Contains(err.Error(), "TRACEGRID_EGL_PLATFORM") {
		r.Close()
		t.Errorf("bogus platform: err = %v", err)
	}
	for _, p := range []string{"surfaceless", "device"} {
		t.Setenv("TRACEGRID_EGL_PLATFORM", p)
		r, err := gpu.NewRenderer()
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if got := r.Info().Platform; got != p {
			t.Errorf("forced %s, got %s", p, got)
		}
		img := newImage(8, 8)
		if err := r.Render(list(8, 8, red), img); err != nil {
			t.Errorf("%s: Render: %v", p, err)
		}
		wantPx(t, img, 3, 3, red, 0, p)
		if err := r.Close(); err != nil {
			t.Errorf("%s: Close: %v", p, err)
		}
	}
}

// TestEGLDevice: TRACEGRID_EGL_DEVICE names the device to render on, as
// EGLDevices counts them; a device that does not exist, an index that is
// not one, or a device with the surfaceless platform forced is an error
// that says so, never a quiet fallback to another display.
func TestEGLDevice(t *testing.T) {
	renderer(t)
	devs, err := gpu.EGLDevices()
	if err != nil {
		t.Skipf("no EGL device enumeration here: %v", err)
	}
	if len(devs) == 0 {
		t.Skip("no EGL devices")
	}
	t.Setenv("TRACEGRID_EGL_PLATFORM", "")
	last := len(devs) - 1
	t.Setenv("TRACEGRID_EGL_DEVICE", strconv.Itoa(last))
	r, err := gpu.NewRenderer()
	if err != nil {
		t.Fatalf("device %d (%s): %v", last, devs[last], err)
	}
	if i := r.Info(); i.Platform != "device" || i.Device != devs[last] {
		t.Errorf("device %d: platform %q device %q, want device %q", last, i.Platform, i.Device, devs[last])
	}
	img := newImage(8, 8)
	if err := r.Render(list(8, 8, red), img); err != nil {
		t.Errorf("Render: %v", err)
	}
	wantPx(t, img, 3, 3, red, 0, "named device")
	if err := r.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	// Empty is unset: the best display, as without the variable.
	t.Setenv("TRACEGRID_EGL_DEVICE", "")
	if r, err := gpu.NewRenderer(); err != nil {
		t.Errorf("TRACEGRID_EGL_DEVICE empty: %v", err)
	} else {
		r.Close()
	}
	for _, c := range []struct{ device, platform, want string }{
		{strconv.Itoa(len(devs)), "", "does not exist; the driver lists " + strconv.Itoa(len(devs)) + ": 0: "},
		{"-1", "", "want an EGL device index"},
		{"first", "", "want an EGL device index"},
		{"0", "surfaceless", "forbids devices"},
	} {
		t.Setenv("TRACEGRID_EGL_DEVICE", c.device)
		t.Setenv("TRACEGRID_EGL_PLATFORM", c.platform)
		r, err := gpu.NewRenderer()
		if err == nil {
			r.Close()
			t.Errorf("TRACEGRID_EGL_DEVICE=%q TRACEGRID_EGL_PLATFORM=%q: no error", c.device, c.platform)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "TRACEGRID_EGL_DEVICE") {
			t.Errorf("TRACEGRID_EGL_DEVICE=%q: err = %v, want %q", c.device, err, c.want)
		}
	}
}

func TestCloseIdempotent(t *testing.T) {
	renderer(t) // skip or fail like the others when there is no GL
	goroutines := runtime.NumGoroutine()
	r, err := gpu.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	img := newImage(20, 20)
	if err := r.Render(list(20, 20, white, scene.Item{Kind: scene.FillCircle, X0: 10, Y0: 10, R: 5, Color: red}), img); err != nil {
		t.Fatal(err)
	}
	wantPx(t, img, 10, 10, red, 0, "second renderer")
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := r.Render(list(20, 20, white), img); err == nil {
		t.Error("Render after Close succeeded")
	}
	var nilR *gpu.Renderer
	if err := nilR.Close(); err != nil {
		t.Errorf("nil Close: %v", err)
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Errorf("%d goroutines after Close, %d before NewRenderer: the GL thread leaked", n, goroutines)
	}
	// Both renderers shared one EGL display: closing the second must not
	// have terminated it under the first.
	img = render(t, list(20, 20, white, scene.Item{Kind: scene.FillCircle, X0: 10, Y0: 10, R: 5, Color: blue}), 20, 20)
	wantPx(t, img, 10, 10, blue, 0, "shared renderer after closing another")
}
