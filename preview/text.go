package preview

import (
	"fmt"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// The renderer centres a scene.Text item on (X0, Y0) and sizes it so that
// cap height plus descender is Size pixels; to left-align a line the
// overlay needs its width. measurer computes it from the same font
// (goregular), the same way the renderer lays text out: unhinted advances
// plus kerning at 64 pixels per em, scaled linearly.
type measurer struct {
	font    *sfnt.Font
	ppem    fixed.Int26_6
	capDesc float64 // cap height plus descent at ppem, pixels
	mu      sync.Mutex
	buf     sfnt.Buffer
	advance map[rune]float64 // pixels at ppem; 0 with ok=false for runes that take no room
	index   map[rune]sfnt.GlyphIndex
}

const measurePPEM = 64

var sharedMeasurer = sync.OnceValues(func() (*measurer, error) {
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return nil, fmt.Errorf("preview: parsing goregular: %w", err)
	}
	m := &measurer{font: f, ppem: fixed.I(measurePPEM), advance: map[rune]float64{}, index: map[rune]sfnt.GlyphIndex{}}
	met, err := f.Metrics(&m.buf, m.ppem, font.HintingNone)
	if err != nil {
		return nil, fmt.Errorf("preview: goregular metrics: %w", err)
	}
	m.capDesc = fix(met.CapHeight) + fix(met.Descent)
	if !(m.capDesc > 0) {
		return nil, fmt.Errorf("preview: goregular metrics: cap height %v, descent %v", met.CapHeight, met.Descent)
	}
	return m, nil
})

func fix(v fixed.Int26_6) float64 { return float64(v) / 64 }

// glyph returns the glyph index and advance of r; ok is false for control
// characters, which take no room. Runes the font lacks take the width of
// U+FFFD (the renderer draws its fallback glyph there).
func (m *measurer) glyph(r rune) (sfnt.GlyphIndex, float64, bool) {
	if r < 0x20 || r == 0x7f {
		return 0, 0, false
	}
	if a, ok := m.advance[r]; ok {
		return m.index[r], a, true
	}
	gi, err := m.font.GlyphIndex(&m.buf, r)
	if err != nil || gi == 0 {
		if r == '\ufffd' {
			return 0, 0, false
		}
		gi, a, ok := m.glyph('\ufffd')
		m.index[r], m.advance[r] = gi, a
		return gi, a, ok
	}
	adv, err := m.font.GlyphAdvance(&m.buf, gi, m.ppem, font.HintingNone)
	if err != nil {
		adv = 0
	}
	m.index[r], m.advance[r] = gi, fix(adv)
	return gi, fix(adv), true
}

// width is the width in pixels of s drawn size pixels tall.
func (m *measurer) width(s string, size float64) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var w float64
	var prev sfnt.GlyphIndex
	for _, r := range s {
		gi, a, ok := m.glyph(r)
		if !ok {
			continue
		}
		if prev != 0 && gi != 0 {
			if k, err := m.font.Kern(&m.buf, prev, gi, m.ppem, font.HintingNone); err == nil {
				w += fix(k)
			}
		}
		w += a
		prev = gi
	}
	return w * size / m.capDesc
}
