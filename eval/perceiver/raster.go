package perceiver

import (
	"errors"
	"image"
	"image/color"
)

// raster is an 8-bit RGB picture, row-major, 3 bytes a pixel: the one form
// every decoded frame is turned into before analysis, so the analysis
// loops read plain bytes instead of calling image.Image.At.
type raster struct {
	w, h int
	pix  []uint8
}

// rgb is one colour.
type rgb struct{ r, g, b uint8 }

func (r *raster) at(x, y int) rgb {
	i := 3 * (y*r.w + x)
	return rgb{r.pix[i], r.pix[i+1], r.pix[i+2]}
}

// load converts img into r, reusing r's buffer. When w and h are positive
// and differ from img's size, img is resampled (nearest pixel) to w×h, so
// every frame of a request is analysed on the first frame's grid.
func (r *raster) load(img image.Image, w, h int) {
	b := img.Bounds()
	if w <= 0 || h <= 0 {
		w, h = b.Dx(), b.Dy()
	}
	r.w, r.h = w, h
	if cap(r.pix) < 3*w*h {
		r.pix = make([]uint8, 3*w*h)
	}
	r.pix = r.pix[:3*w*h]
	if w == b.Dx() && h == b.Dy() {
		if fastLoad(r, img) {
			return
		}
	}
	for y := range h {
		sy := b.Min.Y + y*b.Dy()/h
		for x := range w {
			sx := b.Min.X + x*b.Dx()/w
			c := color.NRGBAModel.Convert(img.At(sx, sy)).(color.NRGBA)
			i := 3 * (y*w + x)
			r.pix[i], r.pix[i+1], r.pix[i+2] = c.R, c.G, c.B
		}
	}
}

// fastLoad copies the pixel layouts Go's JPEG and PNG decoders produce
// without going through At; it reports false for other layouts. Alpha is
// ignored: frames are opaque.
func fastLoad(r *raster, img image.Image) bool {
	b := img.Bounds()
	switch m := img.(type) {
	case *image.YCbCr:
		for y := range r.h {
			for x := range r.w {
				yi := m.YOffset(b.Min.X+x, b.Min.Y+y)
				ci := m.COffset(b.Min.X+x, b.Min.Y+y)
				R, G, B := color.YCbCrToRGB(m.Y[yi], m.Cb[ci], m.Cr[ci])
				i := 3 * (y*r.w + x)
				r.pix[i], r.pix[i+1], r.pix[i+2] = R, G, B
			}
		}
	case *image.RGBA:
		copyRGBA(r, m.Pix, m.Stride, m.PixOffset(b.Min.X, b.Min.Y))
	case *image.NRGBA:
		copyRGBA(r, m.Pix, m.Stride, m.PixOffset(b.Min.X, b.Min.Y))
	case *image.Gray:
		for y := range r.h {
			row := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):]
			for x := range r.w {
				i := 3 * (y*r.w + x)
				r.pix[i], r.pix[i+1], r.pix[i+2] = row[x], row[x], row[x]
			}
		}
	default:
		return false
	}
	return true
}

// copyRGBA copies 4-byte pixels (alpha dropped) starting at off.
func copyRGBA(r *raster, pix []uint8, stride, off int) {
	for y := range r.h {
		row := pix[off+y*stride:]
		for x := range r.w {
			i := 3 * (y*r.w + x)
			r.pix[i], r.pix[i+1], r.pix[i+2] = row[4*x], row[4*x+1], row[4*x+2]
		}
	}
}

// loadRGBA fills r from tightly or loosely packed RGBA rows (a decoded
// video frame).
func (r *raster) loadRGBA(w, h, stride int, pix []uint8) {
	r.w, r.h = w, h
	if cap(r.pix) < 3*w*h {
		r.pix = make([]uint8, 3*w*h)
	}
	r.pix = r.pix[:3*w*h]
	copyRGBA(r, pix, stride, 0)
}

// dist is the largest per-channel difference between two colours: cheap,
// and a single clear threshold separates drawn shapes from the flat
// background under JPEG noise.
func dist(a, b rgb) int {
	return max(absInt(int(a.r)-int(b.r)), absInt(int(a.g)-int(b.g)), absInt(int(a.b)-int(b.b)))
}

// distAt is dist between pixel i (an index into pix, a multiple of 3)
// and c.
func (r *raster) distAt(i int, c rgb) int {
	return max(absInt(int(r.pix[i])-int(c.r)), absInt(int(r.pix[i+1])-int(c.g)), absInt(int(r.pix[i+2])-int(c.b)))
}

func absInt(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// luma is BT.601 luma in 0..255.
func luma(c rgb) float64 { return 0.299*float64(c.r) + 0.587*float64(c.g) + 0.114*float64(c.b) }

// chroma is max−min of the channels: near 0 for the greys of walls, node
// strokes and backgrounds, large for the bright palette of balls, lamps
// and highlights.
func chroma(c rgb) int {
	return int(max(c.r, c.g, c.b)) - int(min(c.r, c.g, c.b))
}

// background is the most common colour of the frame (5 bits a channel,
// every other pixel in each direction), refined to the mean of the pixels
// in that bin: the flat canvas covers most of every frame of the three
// domains.
func background(r *raster) rgb {
	var hist [1 << 15]int32
	key := func(i int) int {
		return int(r.pix[i]>>3)<<10 | int(r.pix[i+1]>>3)<<5 | int(r.pix[i+2]>>3)
	}
	best, bestN := 0, int32(-1)
	for y := 0; y < r.h; y += 2 {
		for x := 0; x < r.w; x += 2 {
			k := key(3 * (y*r.w + x))
			hist[k]++
			if hist[k] > bestN {
				best, bestN = k, hist[k]
			}
		}
	}
	var sr, sg, sb, n int
	for y := 0; y < r.h; y += 2 {
		for x := 0; x < r.w; x += 2 {
			i := 3 * (y*r.w + x)
			if key(i) == best {
				sr += int(r.pix[i])
				sg += int(r.pix[i+1])
				sb += int(r.pix[i+2])
				n++
			}
		}
	}
	if n == 0 {
		return rgb{}
	}
	return rgb{uint8(sr / n), uint8(sg / n), uint8(sb / n)}
}

// sceneBackground returns the background of a frame of one of the
// domains, where the flat canvas covers most of the picture; a picture
// whose most common colour covers less than half of it shows no such
// scene.
func sceneBackground(r *raster) (rgb, error) {
	bg := background(r)
	n, all := 0, 0
	for i := 0; i+2 < len(r.pix); i += 3 * 7 { // every 7th pixel
		all++
		if r.distAt(i, bg) <= fgThreshold {
			n++
		}
	}
	if 2*n < all {
		return bg, errors.New("no flat background")
	}
	return bg, nil
}

// fgThreshold is the dist above which a pixel is not background. The
// dimmest drawn colour (an unlit lamp's outline, 35% of a bright colour
// over the background) differs by ≥ 57 in some channel; JPEG noise away
// from edges stays around 10.
const fgThreshold = 32

// component is a connected set of pixels of a mask.
type component struct {
	n                      int
	minX, minY, maxX, maxY int
	sx, sy                 float64 // sums of coordinates (pixel centres)
}

func (c component) cx() float64 { return c.sx / float64(c.n) }
func (c component) cy() float64 { return c.sy / float64(c.n) }

// components labels the 8-connected components of mask (w×h, row-major)
// and returns them; labels, when non-nil and long enough, receives each
// pixel's component index + 1 (0 outside the mask).
func components(mask []bool, w, h int, labels []int32) []component {
	if len(labels) < w*h {
		labels = make([]int32, w*h)
	} else {
		clear(labels[:w*h])
	}
	var out []component
	var stack []int
	for start, on := range mask[:w*h] {
		if !on || labels[start] != 0 {
			continue
		}
		id := int32(len(out) + 1)
		c := component{minX: w, minY: h, maxX: -1, maxY: -1}
		labels[start] = id
		stack = append(stack[:0], start)
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			x, y := p%w, p/w
			c.n++
			c.sx += float64(x) + 0.5
			c.sy += float64(y) + 0.5
			c.minX, c.maxX = min(c.minX, x), max(c.maxX, x)
			c.minY, c.maxY = min(c.minY, y), max(c.maxY, y)
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					nx, ny := x+dx, y+dy
					if nx < 0 || ny < 0 || nx >= w || ny >= h {
						continue
					}
					q := ny*w + nx
					if mask[q] && labels[q] == 0 {
						labels[q] = id
						stack = append(stack, q)
					}
				}
			}
		}
		out = append(out, c)
	}
	return out
}
