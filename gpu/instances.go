package gpu

import (
	"fmt"
	"math"

	"golang.org/x/image/font/sfnt"

	"github.com/tracegrid/tracegrid/scene"
)

// The shader's primitive kinds are scene.Kind values, plus one for glyph
// quads (a Text item becomes one instance per glyph). shaderDefines hands the
// numbers to GLSL, so the two sides cannot drift apart.
const kindGlyph = scene.Text + 1

// aaMargin is how far, in output pixels, quads reach beyond a shape so its
// anti-aliased fringe (up to half a pixel outside the edge) is rasterized.
const aaMargin = 1.0

// floatsPerInstance is the per-instance vertex layout, five vec4s:
//
//	iQuad   centre x, y, half-axis A x, y        (canvas px)
//	iQuadB  half-axis B x, y, kind, unused
//	iGeom   kind-specific points, or glyph uv rect
//	iParam  radius, width, head, unused         (canvas px)
//	iColor  straight-alpha RGBA
const floatsPerInstance = 20

func shaderDefines() string {
	return fmt.Sprintf(
		"#define KIND_FILL_CIRCLE %d\n#define KIND_STROKE_CIRCLE %d\n#define KIND_FILL_RECT %d\n"+
			"#define KIND_STROKE_RECT %d\n#define KIND_LINE %d\n#define KIND_ARROW %d\n#define KIND_GLYPH %d\n",
		scene.FillCircle, scene.StrokeCircle, scene.FillRect, scene.StrokeRect,
		scene.Line, scene.Arrow, kindGlyph)
}

// instance is one quad before it is flattened into the vertex buffer.
type instance struct {
	cx, cy, ax, ay, bx, by float64 // quad: centre and half-axes, canvas px
	kind                   scene.Kind
	g0, g1, g2, g3         float64
	r, w, head             float64
	col                    scene.RGBA
}

func appendInstance(dst []float32, in instance) []float32 {
	return append(dst,
		float32(in.cx), float32(in.cy), float32(in.ax), float32(in.ay),
		float32(in.bx), float32(in.by), float32(in.kind), 0,
		float32(in.g0), float32(in.g1), float32(in.g2), float32(in.g3),
		float32(in.r), float32(in.w), float32(in.head), 0,
		in.col.R, in.col.G, in.col.B, in.col.A,
	)
}

// appendBox appends in with its quad set to the axis-aligned box
// [x0, x1]×[y0, y1].
func appendBox(dst []float32, in instance, x0, y0, x1, y1 float64) []float32 {
	in.cx, in.cy = (x0+x1)/2, (y0+y1)/2
	in.ax, in.ay, in.bx, in.by = (x1-x0)/2, 0, 0, (y1-y0)/2
	return appendInstance(dst, in)
}

func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// appendItem appends the instances that draw it; m is aaMargin in canvas
// pixels. Items that cannot show anything (zero radius, zero length,
// transparent colour) append nothing; unknown kinds and non-finite numbers
// are errors.
func appendItem(dst []float32, it *scene.Item, m float64, atlas *fontAtlas, buf *sfnt.Buffer) ([]float32, error) {
	if !finite(it.X0, it.Y0, it.X1, it.Y1, it.R, it.Width, it.Head, it.Size) {
		return dst, fmt.Errorf("%s with a non-finite coordinate or size", it.Kind)
	}
	if it.Color.A <= 0 {
		return dst, nil // source-over with alpha 0 changes nothing
	}
	switch it.Kind {
	case scene.FillCircle, scene.StrokeCircle:
		ext := it.R
		if it.Kind == scene.StrokeCircle {
			if it.Width <= 0 {
				return dst, nil
			}
			ext += it.Width / 2
		}
		if ext <= 0 || it.R < 0 {
			return dst, nil
		}
		ext += m
		return appendInstance(dst, instance{
			cx: it.X0, cy: it.Y0, ax: ext, by: ext, kind: it.Kind,
			g0: it.X0, g1: it.Y0, r: it.R, w: it.Width, col: it.Color,
		}), nil

	case scene.FillRect, scene.StrokeRect:
		x0, x1 := math.Min(it.X0, it.X1), math.Max(it.X0, it.X1)
		y0, y1 := math.Min(it.Y0, it.Y1), math.Max(it.Y0, it.Y1)
		if x1 <= x0 || y1 <= y0 {
			return dst, nil
		}
		in := instance{kind: it.Kind, g0: x0, g1: y0, g2: x1, g3: y1, r: math.Max(it.R, 0), w: it.Width, col: it.Color}
		if it.Kind == scene.FillRect {
			return appendBox(dst, in, x0-m, y0-m, x1+m, y1+m), nil
		}
		if it.Width <= 0 {
			return dst, nil
		}
		return appendStrokeRect(dst, in, x0, y0, x1, y1, m), nil

	case scene.Line:
		dx, dy := it.X1-it.X0, it.Y1-it.Y0
		l := math.Hypot(dx, dy)
		if l == 0 || it.Width <= 0 {
			return dst, nil // butt caps: a zero-length line covers nothing
		}
		ux, uy := dx/l, dy/l
		ha, hb := l/2+m, it.Width/2+m
		return appendInstance(dst, instance{
			cx: (it.X0 + it.X1) / 2, cy: (it.Y0 + it.Y1) / 2,
			ax: ux * ha, ay: uy * ha, bx: -uy * hb, by: ux * hb, kind: it.Kind,
			g0: it.X0, g1: it.Y0, g2: it.X1, g3: it.Y1, w: it.Width, col: it.Color,
		}), nil

	case scene.Arrow:
		dx, dy := it.X1-it.X0, it.Y1-it.Y0
		l := math.Hypot(dx, dy)
		head := math.Max(it.Head, 0)
		w := math.Max(it.Width, 0)
		if l == 0 || (w == 0 && head == 0) {
			return dst, nil // no direction, or nothing to draw
		}
		ux, uy := dx/l, dy/l
		// Along the axis (0 at the tail) the arrow spans [start, l]: a head
		// longer than the arrow reaches behind the tail.
		start := math.Min(0, l-head)
		mid := (start + l) / 2
		ha, hb := (l-start)/2+m, math.Max(w, head)/2+m
		return appendInstance(dst, instance{
			cx: it.X0 + ux*mid, cy: it.Y0 + uy*mid,
			ax: ux * ha, ay: uy * ha, bx: -uy * hb, by: ux * hb, kind: it.Kind,
			g0: it.X0, g1: it.Y0, g2: it.X1, g3: it.Y1, w: w, head: head, col: it.Color,
		}), nil

	case scene.Text:
		if it.Size <= 0 || it.Text == "" {
			return dst, nil
		}
		return appendText(dst, it, m, atlas, buf), nil
	}
	return dst, fmt.Errorf("unknown kind %d", it.Kind)
}

// appendStrokeRect covers a stroked rectangle's band with up to four
// quads around the empty middle, so a frame around the whole canvas does not
// run the fragment shader over every pixel inside it. The quads tile without
// overlap (an overlap would blend twice); each evaluates the whole band's
// distance, so their seams are invisible.
func appendStrokeRect(dst []float32, in instance, x0, y0, x1, y1, m float64) []float32 {
	hw := in.w / 2
	ox0, oy0, ox1, oy1 := x0-hw-m, y0-hw-m, x1+hw+m, y1+hw+m
	// Points of the hole are more than hw+m inside the rectangle shrunk by
	// the corner radius, so no rounded corner reaches them.
	r := math.Min(in.r, math.Min(x1-x0, y1-y0)/2)
	in2 := hw + r + m
	ix0, iy0, ix1, iy1 := x0+in2, y0+in2, x1-in2, y1-in2
	if ix1-ix0 < 4*m || iy1-iy0 < 4*m {
		return appendBox(dst, in, ox0, oy0, ox1, oy1) // no hole worth cutting
	}
	dst = appendBox(dst, in, ox0, oy0, ox1, iy0)  // top, full width
	dst = appendBox(dst, in, ox0, iy1, ox1, oy1)  // bottom, full width
	dst = appendBox(dst, in, ox0, iy0, ix0, iy1)  // left, between them
	return appendBox(dst, in, ix1, iy0, ox1, iy1) // right
}

// appendText lays out a Text item on the Go side and appends one glyph quad
// per inked rune. The line is centred horizontally on X0 by its advance
// width, and vertically so that the band from cap height to descender
// (Size tall) is centred on Y0. m is the anti-aliasing margin in canvas
// pixels.
func appendText(dst []float32, it *scene.Item, m float64, a *fontAtlas, buf *sfnt.Buffer) []float32 {
	k := a.scale(it.Size) // canvas px per atlas px
	penX := it.X0 - a.advance(buf, it.Text)*k/2
	baseline := it.Y0 - it.Size/2 + a.capHeight*k
	w, h := float64(a.img.Rect.Dx()), float64(a.img.Rect.Dy())
	// Each quad covers the glyph's ink plus the margin, in atlas pixels,
	// but stays inside the cell's empty border: sampling beyond would reach
	// the next glyph. (Whole cells would shade several times more pixels,
	// and the mipmapped lookup is the costly part on llvmpipe.)
	pad := math.Min(m/k, atlasPad)
	var prev sfnt.GlyphIndex
	for _, r := range it.Text {
		g, ok := a.lookup(r)
		if !ok {
			continue
		}
		if prev != 0 {
			penX += a.kern(buf, prev, g.index) * k
		}
		prev = g.index
		if g.ink {
			// In atlas pixels relative to the cell's corner, which lies
			// originX, originY above-left of the pen.
			bx0, by0 := float64(g.bounds.Min.X)-pad, float64(g.bounds.Min.Y)-pad
			bx1, by1 := float64(g.bounds.Max.X)+pad, float64(g.bounds.Max.Y)+pad
			left, top := penX-a.originX*k, baseline-a.originY*k
			cx, cy := float64(g.cell.X), float64(g.cell.Y)
			dst = appendBox(dst, instance{
				kind: kindGlyph,
				g0:   (cx + bx0) / w, g1: (cy + by0) / h,
				g2: (cx + bx1) / w, g3: (cy + by1) / h,
				col: it.Color,
			}, left+bx0*k, top+by0*k, left+bx1*k, top+by1*k)
		}
		penX += g.advance * k
	}
	return dst
}
