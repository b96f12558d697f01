package perceiver

import (
	"image"
	"math"
	"sort"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// Label reading. The labels the answer parser accepts as states are a
// capital letter with up to two digits ("B", "S3"); the perceiver reads
// the one-letter and letter-digit forms by template matching against
// sans-serif glyphs (Go Regular, a common sans face), the way a reader who
// knows what letters look like would. It is done only for the highlighted
// nodes, where the text is dark on a bright fill.

// template is one candidate label rasterized large.
type template struct {
	text   string
	w, h   int
	table  []float64 // (w+1)×(h+1) summed-area table of the ink coverage
	aspect float64
}

var templates = sync.OnceValue(buildTemplates)

// templatePPEM is the size candidates are rasterized at before being
// resampled to the observed label's size.
const templatePPEM = 64

func buildTemplates() []template {
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return nil // the embedded font always parses; no templates means no labels
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: templatePPEM, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		return nil
	}
	defer face.Close()
	var texts []string
	for c := 'A'; c <= 'Z'; c++ {
		texts = append(texts, string(c))
		for d := '1'; d <= '9'; d++ {
			texts = append(texts, string(c)+string(d))
		}
	}
	out := make([]template, 0, len(texts))
	for _, s := range texts {
		dst := image.NewAlpha(image.Rect(0, 0, 3*templatePPEM, 2*templatePPEM))
		d := font.Drawer{Dst: dst, Src: image.Opaque, Face: face, Dot: fixed.P(templatePPEM/4, 3*templatePPEM/2)}
		d.DrawString(s)
		x0, y0, x1, y1 := dst.Rect.Dx(), dst.Rect.Dy(), -1, -1
		for y := range dst.Rect.Dy() {
			for x := range dst.Rect.Dx() {
				if dst.Pix[y*dst.Stride+x] > 0 {
					x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
				}
			}
		}
		if x1 < 0 {
			continue
		}
		t := template{text: s, w: x1 - x0 + 1, h: y1 - y0 + 1}
		tw := t.w + 1
		t.table = make([]float64, tw*(t.h+1))
		for y := range t.h {
			for x := range t.w {
				a := float64(dst.Pix[(y+y0)*dst.Stride+x+x0]) / 255
				t.table[(y+1)*tw+x+1] = a + t.table[y*tw+x+1] + t.table[(y+1)*tw+x] - t.table[y*tw+x]
			}
		}
		t.aspect = float64(t.w) / float64(t.h)
		out = append(out, t)
	}
	return out
}

// readLabel reads the dark label inside a filled node (crop centred on
// the node, radius r). It returns "" when no ink is found or the best
// match is not clearly better than the runner-up.
func readLabel(crop *raster, r float64) string {
	if crop == nil || crop.w < 4 || crop.h < 4 {
		return ""
	}
	cx, cy := float64(crop.w)/2, float64(crop.h)/2
	rr := 0.85 * r
	inside := func(x, y int) bool { return math.Hypot(float64(x)+0.5-cx, float64(y)+0.5-cy) <= rr }
	// The fill's luma (the median inside the disk) and the darkest ink.
	var ls []float64
	lmin := math.Inf(1)
	for y := range crop.h {
		for x := range crop.w {
			if inside(x, y) {
				l := luma(crop.at(x, y))
				ls = append(ls, l)
				lmin = math.Min(lmin, l)
			}
		}
	}
	lfill := median(ls)
	if lfill-lmin < 40 {
		return ""
	}
	cov := make([]float64, crop.w*crop.h)
	x0, y0, x1, y1 := crop.w, crop.h, -1, -1
	for y := range crop.h {
		for x := range crop.w {
			if !inside(x, y) {
				continue
			}
			v := math.Min(1, math.Max(0, (lfill-luma(crop.at(x, y)))/(lfill-lmin)))
			cov[y*crop.w+x] = v
			if v > 0.3 {
				x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
			}
		}
	}
	if x1 < 0 || y1-y0 < 3 {
		return ""
	}
	// The observed patch: the ink box and a pixel of margin around it, so
	// that a template's box can be fitted with sub-pixel shifts.
	px0, py0 := max(0, x0-1), max(0, y0-1)
	px1, py1 := min(crop.w-1, x1+1), min(crop.h-1, y1+1)
	p := patch{w: px1 - px0 + 1, h: py1 - py0 + 1}
	p.v = make([]float64, p.w*p.h)
	for y := range p.h {
		for x := range p.w {
			p.v[y*p.w+x] = cov[(y+py0)*crop.w+x+px0]
		}
	}
	box0 := box{float64(x0 - px0), float64(y0 - py0), float64(x1 - px0 + 1), float64(y1 - py0 + 1)}
	type scored struct {
		t     *template
		b     box
		score float64
	}
	ts := templates()
	res := make([]scored, 0, len(ts))
	for i := range ts {
		res = append(res, scored{&ts[i], box0, p.match(&ts[i], box0)})
	}
	if len(res) < 2 {
		return ""
	}
	sort.Slice(res, func(i, j int) bool { return res[i].score > res[j].score })
	// Refine the best few: move each edge of the box in quarter- and
	// half-pixel steps, three rounds.
	top := res[:min(len(res), 8)]
	for k := range top {
		c := &top[k]
		for range 3 {
			for e := range 4 {
				for _, d := range []float64{-0.5, -0.25, 0.25, 0.5} {
					b := c.b
					b.edge(e, d)
					if s := p.match(c.t, b); s > c.score {
						c.b, c.score = b, s
					}
				}
			}
		}
	}
	sort.Slice(top, func(i, j int) bool { return top[i].score > top[j].score })
	if top[0].score < 0.6 || top[0].score-top[1].score < 0.02 {
		return ""
	}
	return top[0].t.text
}

// box is where a template's ink box lies in a patch: x0, y0, x1, y1 in
// patch pixels (continuous).
type box struct{ x0, y0, x1, y1 float64 }

func (b *box) edge(e int, d float64) {
	switch e {
	case 0:
		b.x0 += d
	case 1:
		b.y0 += d
	case 2:
		b.x1 += d
	default:
		b.y1 += d
	}
}

// patch is observed ink coverage.
type patch struct {
	w, h int
	v    []float64
}

// match renders template t into the patch with its ink box at b (box
// filtering, exact for the template's pixels through its summed-area
// table) and scores the fit: the normalized cross-correlation less a
// penalty for stretching the template's aspect ratio.
func (p *patch) match(t *template, b box) float64 {
	bw, bh := b.x1-b.x0, b.y1-b.y0
	if bw < 1 || bh < 2 {
		return math.Inf(-1)
	}
	sx, sy := float64(t.w)/bw, float64(t.h)/bh // template pixels per patch pixel
	model := make([]float64, len(p.v))
	for y := range p.h {
		va, vb := (float64(y)-b.y0)*sy, (float64(y+1)-b.y0)*sy
		for x := range p.w {
			ua, ub := (float64(x)-b.x0)*sx, (float64(x+1)-b.x0)*sx
			model[y*p.w+x] = t.integral(ua, va, ub, vb) / (sx * sy)
		}
	}
	return ncc(p.v, model) - 0.5*math.Abs(math.Log(bw/bh/t.aspect))
}

// integral is the ink of the template over [ua, ub]×[va, vb] (template
// pixels, clipped to the template).
func (t *template) integral(ua, va, ub, vb float64) float64 {
	return t.sat(ub, vb) - t.sat(ua, vb) - t.sat(ub, va) + t.sat(ua, va)
}

// sat is the summed-area function at a real point: bilinear between the
// table's integer corners, which is exact for pixel-constant coverage.
func (t *template) sat(u, v float64) float64 {
	u = math.Max(0, math.Min(float64(t.w), u))
	v = math.Max(0, math.Min(float64(t.h), v))
	iu, iv := min(int(u), t.w-1), min(int(v), t.h-1)
	fu, fv := u-float64(iu), v-float64(iv)
	w := t.w + 1
	s00, s10 := t.table[iv*w+iu], t.table[iv*w+iu+1]
	s01, s11 := t.table[(iv+1)*w+iu], t.table[(iv+1)*w+iu+1]
	return s00*(1-fu)*(1-fv) + s10*fu*(1-fv) + s01*(1-fu)*fv + s11*fu*fv
}

// ncc is the normalized cross-correlation of two equal-length vectors.
func ncc(a, b []float64) float64 {
	var ma, mb float64
	for i := range a {
		ma += a[i]
		mb += b[i]
	}
	ma /= float64(len(a))
	mb /= float64(len(b))
	var sab, saa, sbb float64
	for i := range a {
		da, db := a[i]-ma, b[i]-mb
		sab += da * db
		saa += da * da
		sbb += db * db
	}
	if saa == 0 || sbb == 0 {
		return 0
	}
	return sab / math.Sqrt(saa*sbb)
}
