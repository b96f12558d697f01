package gpu

import (
	"errors"
	"fmt"
	"image"
	"image/draw"
	"math"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

const (
	// atlasPPEM is the size glyphs are rasterized at. Text is mostly drawn
	// smaller, so the atlas is minified through mipmaps.
	atlasPPEM = 64
	// atlasPad is the empty border around a glyph inside its cell, in atlas
	// pixels, and atlasAlign the multiple cells are rounded up to. Cells
	// aligned to 2^atlasMaxLevel never share a texel at mip levels up to
	// atlasMaxLevel, and the padding keeps bilinear taps at a cell's edge on
	// empty texels, so glyphs do not bleed into their neighbours.
	atlasPad      = 16
	atlasMaxLevel = 4
	atlasAlign    = 1 << atlasMaxLevel
)

// atlasExtras are the runes beyond ASCII and Latin-1 worth having for
// labels; runes the font lacks are dropped.
const atlasExtras = "–—‘’“”•…€←↑→↓−≈≤≥√∞ΓΔΘΛΞΠΣΦΨΩαβγδεζηθικλμνξπρστυφχψω"

// glyph is one rune's entry in the atlas. Layout (advance, kerning) happens
// on the Go side; the GPU only sees finished glyph quads.
type glyph struct {
	index   sfnt.GlyphIndex
	advance float64         // atlas pixels
	ink     bool            // false for blanks such as the space: no quad
	cell    image.Point     // top-left corner of its cell in the atlas
	bounds  image.Rectangle // inked pixels, relative to the cell's corner
}

// fontAtlas is goregular rasterized once into a coverage (R8) image. Every
// glyph sits in a cell of the same size with its pen origin at the same
// offset; a glyph quad is its inked part of the cell plus a margin, placed
// relative to the pen. It is immutable after build and shared by all
// renderers.
type fontAtlas struct {
	font      *sfnt.Font // safe for concurrent use with separate sfnt.Buffers
	img       *image.Alpha
	cellW     int
	cellH     int
	originX   float64 // pen origin (baseline) inside a cell, atlas pixels
	originY   float64
	capHeight float64 // atlas pixels
	descent   float64 // atlas pixels, positive
	glyphs    map[rune]glyph
	fallback  glyph // for runes the atlas lacks
}

// sharedAtlas builds the atlas on first use; the ~200 glyphs take tens of
// milliseconds and never change.
var sharedAtlas = sync.OnceValues(buildAtlas)

func atlasRunes() []rune {
	var rs []rune
	for r := rune(0x20); r <= 0x7e; r++ {
		rs = append(rs, r)
	}
	for r := rune(0xa0); r <= 0xff; r++ {
		rs = append(rs, r)
	}
	rs = append(rs, []rune(atlasExtras)...)
	return append(rs, '\ufffd')
}

func buildAtlas() (*fontAtlas, error) {
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return nil, fmt.Errorf("gpu: parsing goregular: %w", err)
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: atlasPPEM, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		return nil, fmt.Errorf("gpu: goregular face: %w", err)
	}
	defer face.Close()
	m := face.Metrics()
	a := &fontAtlas{
		font:      f,
		capHeight: fix(m.CapHeight),
		descent:   fix(m.Descent),
		glyphs:    map[rune]glyph{},
	}
	if a.capHeight <= 0 || a.descent <= 0 {
		return nil, fmt.Errorf("gpu: goregular metrics: cap height %v, descent %v", a.capHeight, a.descent)
	}

	// First pass: which runes exist, their advances and the union of their
	// ink bounds (relative to the pen origin), which sizes the cells.
	var buf sfnt.Buffer
	var union image.Rectangle
	var order []rune
	for _, r := range atlasRunes() {
		if _, dup := a.glyphs[r]; dup {
			continue
		}
		gi, err := f.GlyphIndex(&buf, r)
		if err != nil || gi == 0 {
			continue // not in the font
		}
		dr, _, _, adv, ok := face.Glyph(fixed.Point26_6{}, r)
		if !ok {
			continue
		}
		g := glyph{index: gi, advance: fix(adv), ink: !dr.Empty()}
		if g.ink {
			union = union.Union(dr)
			order = append(order, r)
		}
		a.glyphs[r] = g
	}
	if len(order) == 0 {
		return nil, errors.New("gpu: goregular: no glyphs rasterized")
	}
	a.cellW = roundUp(union.Dx()+2*atlasPad, atlasAlign)
	a.cellH = roundUp(union.Dy()+2*atlasPad, atlasAlign)
	a.originX = float64(atlasPad - union.Min.X)
	a.originY = float64(atlasPad - union.Min.Y)
	cols := int(math.Ceil(math.Sqrt(float64(len(order)))))
	rows := (len(order) + cols - 1) / cols
	a.img = image.NewAlpha(image.Rect(0, 0, cols*a.cellW, rows*a.cellH))

	// Second pass: draw each glyph with its pen origin at (originX, originY)
	// of its cell.
	for i, r := range order {
		g := a.glyphs[r]
		g.cell = image.Pt(i%cols*a.cellW, i/cols*a.cellH)
		dr, mask, maskp, _, _ := face.Glyph(fixed.Point26_6{}, r)
		g.bounds = dr.Add(image.Pt(atlasPad-union.Min.X, atlasPad-union.Min.Y))
		draw.Draw(a.img, g.bounds.Add(g.cell), mask, maskp, draw.Src)
		a.glyphs[r] = g
	}
	fb, ok := a.glyphs['\ufffd']
	if !ok {
		fb = a.glyphs['?']
	}
	a.fallback = fb
	return a, nil
}

func fix(v fixed.Int26_6) float64 { return float64(v) / 64 }

func roundUp(v, m int) int { return (v + m - 1) / m * m }

// lookup returns the atlas entry for r; ok is false for runes that take no
// room (control characters).
func (a *fontAtlas) lookup(r rune) (glyph, bool) {
	if r < 0x20 || r == 0x7f {
		return glyph{}, false
	}
	if g, ok := a.glyphs[r]; ok {
		return g, true
	}
	return a.fallback, true
}

// kern returns the kerning between two glyphs in atlas pixels; fonts
// without a kern table give 0.
func (a *fontAtlas) kern(buf *sfnt.Buffer, prev, next sfnt.GlyphIndex) float64 {
	k, err := a.font.Kern(buf, prev, next, fixed.I(atlasPPEM), font.HintingNone)
	if err != nil {
		return 0
	}
	return fix(k)
}

// scale converts atlas pixels to canvas pixels for text of the given
// height: Size is cap height plus descender.
func (a *fontAtlas) scale(size float64) float64 {
	return size / (a.capHeight + a.descent)
}

// advance is the width of s in atlas pixels: advances plus kerning.
func (a *fontAtlas) advance(buf *sfnt.Buffer, s string) float64 {
	var w float64
	var prev sfnt.GlyphIndex
	for _, r := range s {
		g, ok := a.lookup(r)
		if !ok {
			continue
		}
		if prev != 0 {
			w += a.kern(buf, prev, g.index)
		}
		w += g.advance
		prev = g.index
	}
	return w
}

// measureText returns the width in canvas pixels of s drawn size pixels
// tall: the width a Text item is centred on.
func (a *fontAtlas) measureText(buf *sfnt.Buffer, s string, size float64) float64 {
	return a.advance(buf, s) * a.scale(size)
}
