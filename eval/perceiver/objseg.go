package perceiver

import (
	"math"
	"sort"
	"sync"
)

// Segmentation of the objects domain: pixels of one named colour, and
// their connected components (blobs).

// colourHues are the hue centres (degrees) of the colour names a question
// may use. A pixel takes the name of the nearest centre, so orange, cyan
// and magenta keep red, yellow, green, blue and purple apart.
var colourHues = []struct {
	name string
	hue  float64
}{
	{"red", 0}, {"orange", 30}, {"yellow", 55}, {"green", 125}, {"cyan", 185},
	{"blue", 225}, {"purple", 275}, {"magenta", 315},
}

// colourAliases maps other words for a colour to its name.
var colourAliases = map[string]string{"violet": "purple", "pink": "magenta"}

// colourIndex is the index in colourHues of a colour name, −1 if unknown.
func colourIndex(name string) int {
	if a, ok := colourAliases[name]; ok {
		name = a
	}
	for i, c := range colourHues {
		if c.name == name {
			return i
		}
	}
	return -1
}

// Thresholds of an object pixel. Lighting scales a surface's colour
// (×0.57–1.08 with the noise) and keeps its hue and its saturation (chroma
// / max channel, 0.8–0.95 for the five class colours), and every class
// colour has a channel below 50; the white ground and the grey grid lines
// have saturation below 0.1 and every channel above 190. An anti-aliased
// edge pixel mixes the two: it passes when its smallest channel is below
// 128, i.e. when the object covers more than about 60 % of it. The
// smallest-channel test is a safeguard against bright, tinted pixels
// (JPEG's half-resolution chroma can tint a narrow gap between two
// objects); on the measured clips it changed no count.
const (
	objMinSat    = 0.3
	objMinChroma = 28
	objMaxMin    = 128
)

// hueTable maps a pixel to its colour index (−1: not an object colour): a
// lookup over 6 bits a channel, fast and exact enough (the class hues are
// ≥ 45° apart).
type hueTable [1 << 18]int8

var (
	hueTableOnce sync.Once
	hueTableData *hueTable
)

// colourTable returns the lookup table, built on first use.
func colourTable() *hueTable {
	hueTableOnce.Do(func() { hueTableData = buildHueTable() })
	return hueTableData
}

func buildHueTable() *hueTable {
	t := new(hueTable)
	for k := range t {
		r := float64(k>>12&63)*4 + 2
		g := float64(k>>6&63)*4 + 2
		b := float64(k&63)*4 + 2
		t[k] = int8(pixelColour(r, g, b))
	}
	return t
}

// pixelColour names the hue of a saturated colour (an index into
// colourHues), or −1 for an unsaturated one.
func pixelColour(r, g, b float64) int {
	mx, mn := max(r, g, b), min(r, g, b)
	c := mx - mn
	if c < objMinChroma || c < objMinSat*mx || mn >= objMaxMin {
		return -1
	}
	var h float64
	switch mx {
	case r:
		h = 60 * math.Mod((g-b)/c+6, 6)
	case g:
		h = 60 * ((b-r)/c + 2)
	default:
		h = 60 * ((r-g)/c + 4)
	}
	best, bestD := -1, 999.0
	for i, ch := range colourHues {
		d := math.Abs(h - ch.hue)
		d = math.Min(d, 360-d)
		if d < bestD {
			best, bestD = i, d
		}
	}
	return best
}

// objBlob is one connected set of pixels of the asked colour, in a frame
// or in the mosaic (objpano.go, where border means cut by what the frames
// saw, cx and cy are grid coordinates and ray a reference direction).
type objBlob struct {
	n                      int     // pixels
	cx, cy                 float64 // centroid (pixel centres at +0.5)
	minX, minY, maxX, maxY int
	border                 bool    // touches the picture's edge
	ray                    vec3    // unit viewing direction of the centroid (camera frame)
	radius                 float64 // equivalent radius, pixels: √(n/π)
	omega                  float64 // solid angle, steradians
	runs                   []run   // its pixels, row by row
}

// segmenter keeps the buffers of the per-frame segmentation.
type segmenter struct {
	colour int
	lab    runLabeler
}

// run is a horizontal run of mask pixels in one row.
type run struct {
	y, x0, x1 int32 // x1 exclusive
	label     int32
}

// segment finds the blobs of the colour in f (at least minArea pixels).
func (s *segmenter) segment(f *raster, minArea int) []objBlob {
	w, h := f.w, f.h
	if w <= 0 || h <= 0 || len(f.pix) < 3*w*h {
		return nil
	}
	s.lab.reset()
	col := int8(s.colour)
	if col < 0 {
		return nil
	}
	tab := colourTable()
	for y := range h {
		s.lab.newRow()
		row := f.pix[3*y*w : 3*(y+1)*w]
		x := 0
		for x < w {
			i := 3 * x
			if tab[int(row[i]>>2)<<12|int(row[i+1]>>2)<<6|int(row[i+2]>>2)] != col {
				x++
				continue
			}
			x0 := x
			for x < w {
				i := 3 * x
				if tab[int(row[i]>>2)<<12|int(row[i+1]>>2)<<6|int(row[i+2]>>2)] != col {
					break
				}
				x++
			}
			s.lab.add(y, x0, x)
		}
	}
	return s.lab.blobs(w, h, minArea)
}

// runLabeler finds the 8-connected components of a mask given as runs,
// row by row (union-find over the runs of neighbouring rows).
type runLabeler struct {
	runs               []run
	parent             []int32
	prevStart, prevEnd int
	rowStart           int
}

func (l *runLabeler) reset() {
	l.runs, l.parent = l.runs[:0], l.parent[:0]
	l.prevStart, l.prevEnd, l.rowStart = 0, 0, 0
}

// newRow starts the next row (call it for every row, in order).
func (l *runLabeler) newRow() {
	l.prevStart, l.prevEnd = l.rowStart, len(l.runs)
	l.rowStart = len(l.runs)
}

// add adds the run [x0, x1) of row y.
func (l *runLabeler) add(y, x0, x1 int) {
	lab := int32(len(l.parent))
	l.parent = append(l.parent, lab)
	r := run{y: int32(y), x0: int32(x0), x1: int32(x1), label: lab}
	for k := l.prevStart; k < l.prevEnd; k++ {
		p := l.runs[k]
		if p.x1 < r.x0 || p.x0 > r.x1 { // diagonal contact joins
			continue
		}
		union(l.parent, r.label, p.label)
	}
	l.runs = append(l.runs, r)
}

// blobs returns the components of at least minArea pixels, each with its
// own copy of its runs.
func (l *runLabeler) blobs(w, h, minArea int) []objBlob {
	idx := make(map[int32]int)
	var blobs []objBlob
	var sx, sy []float64
	for k := range l.runs {
		r := &l.runs[k]
		root := find(l.parent, r.label)
		bi, ok := idx[root]
		if !ok {
			bi = len(blobs)
			idx[root] = bi
			blobs = append(blobs, objBlob{minX: w, minY: h, maxX: -1, maxY: -1})
			sx = append(sx, 0)
			sy = append(sy, 0)
		}
		r.label = int32(bi)
		b := &blobs[bi]
		n := int(r.x1 - r.x0)
		b.n += n
		// Σ (x + 0.5) over x0..x1−1.
		sx[bi] += float64(n) * (float64(r.x0+r.x1) / 2)
		sy[bi] += float64(n) * (float64(r.y) + 0.5)
		b.minX = min(b.minX, int(r.x0))
		b.maxX = max(b.maxX, int(r.x1)-1)
		b.minY = min(b.minY, int(r.y))
		b.maxY = max(b.maxY, int(r.y))
	}
	// Runs grouped by blob, in row order within each.
	start := make([]int, len(blobs)+1)
	for _, r := range l.runs {
		start[r.label+1]++
	}
	for i := range blobs {
		start[i+1] += start[i]
	}
	sorted := make([]run, len(l.runs)) // kept by the blobs
	fill := append([]int(nil), start[:len(blobs)]...)
	for _, r := range l.runs {
		sorted[fill[r.label]] = r
		fill[r.label]++
	}
	out := blobs[:0]
	for i := range blobs {
		b := blobs[i]
		b.runs = sorted[start[i]:start[i+1]]
		if b.n < minArea {
			continue
		}
		b.cx, b.cy = sx[i]/float64(b.n), sy[i]/float64(b.n)
		b.border = b.minX == 0 || b.minY == 0 || b.maxX == w-1 || b.maxY == h-1
		b.radius = math.Sqrt(float64(b.n) / math.Pi)
		out = append(out, b)
	}
	return out
}

func find(parent []int32, i int32) int32 {
	for parent[i] != i {
		parent[i] = parent[parent[i]]
		i = parent[i]
	}
	return i
}

func union(parent []int32, a, b int32) {
	ra, rb := find(parent, a), find(parent, b)
	if ra != rb {
		if ra < rb {
			parent[rb] = ra
		} else {
			parent[ra] = rb
		}
	}
}

// distancePeaks returns the persistence of every local maximum of the
// blob's distance transform (chamfer 3-4, in pixels), highest first: the
// first is the largest inscribed radius; a later one is how much its peak
// rises above the saddle that joins it to a higher one.
func (b *objBlob) distancePeaks() []float64 {
	w, h := b.maxX-b.minX+3, b.maxY-b.minY+3 // a one-pixel frame of background
	if w*h > 1<<20 {                         // a blob this large is counted by its area alone
		return nil
	}
	const inf = math.MaxInt32 / 2
	d := make([]int32, w*h)
	for _, r := range b.runs {
		row := (int(r.y)-b.minY+1)*w - b.minX + 1
		for x := r.x0; x < r.x1; x++ {
			d[row+int(x)] = inf
		}
	}
	for y := 1; y < h-1; y++ {
		for x := 1; x < w-1; x++ {
			i := y*w + x
			if d[i] == 0 {
				continue
			}
			d[i] = min(d[i], d[i-1]+3, d[i-w]+3, d[i-w-1]+4, d[i-w+1]+4)
		}
	}
	for y := h - 2; y >= 1; y-- {
		for x := w - 2; x >= 1; x-- {
			i := y*w + x
			if d[i] == 0 {
				continue
			}
			d[i] = min(d[i], d[i+1]+3, d[i+w]+3, d[i+w+1]+4, d[i+w-1]+4)
		}
	}
	// Persistence of maxima: add pixels from the highest distance down,
	// uniting with added neighbours; when two regions meet, the one with
	// the lower peak dies at the current level.
	idx := make([]int32, 0, b.n)
	for i, v := range d {
		if v > 0 {
			idx = append(idx, int32(i))
		}
	}
	sort.Slice(idx, func(a, c int) bool { return d[idx[a]] > d[idx[c]] })
	parent := make([]int32, w*h)
	for i := range parent {
		parent[i] = -1
	}
	peak := map[int32]int32{} // root → its peak value
	var pers []float64
	for _, p := range idx {
		parent[p] = p
		peak[p] = d[p]
		for _, q := range [8]int32{p - 1, p + 1, p - int32(w), p + int32(w), p - int32(w) - 1, p - int32(w) + 1, p + int32(w) - 1, p + int32(w) + 1} {
			if parent[q] < 0 {
				continue
			}
			rp, rq := find(parent, p), find(parent, q)
			if rp == rq {
				continue
			}
			hi, lo := rp, rq
			if peak[lo] > peak[hi] {
				hi, lo = lo, hi
			}
			pers = append(pers, float64(peak[lo]-d[p])/3)
			parent[lo] = hi
			delete(peak, lo)
		}
	}
	for _, v := range peak {
		pers = append(pers, float64(v)/3)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(pers)))
	return pers
}
