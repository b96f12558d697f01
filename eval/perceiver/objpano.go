package perceiver

import (
	"math"
	"sort"
)

// The mosaic of the objects domain. The camera only turns, so every frame
// shows the same rays: once the frames' rotations are known, their masks
// (pixels of the asked colour) can be laid onto one grid of directions,
// azimuth about the world's vertical against elevation. A direction
// counts as an object pixel when most frames that see it say so. In that
// grid every object appears exactly once, whole where any frame showed all
// of it, however the frames cut it or merged it with a neighbour.

// bitset is a frame's mask, one bit a pixel.
type bitset []uint64

func newBitset(n int) bitset    { return make(bitset, (n+63)/64) }
func (b bitset) set(i int)      { b[i>>6] |= 1 << (uint(i) & 63) }
func (b bitset) get(i int) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }
func (b bitset) setRun(y, w int, r run) {
	for x := r.x0; x < r.x1; x++ {
		b.set(y*w + int(x))
	}
}

// panorama is the grid of directions: column c, row r is the direction at
// azimuth az0 + (c+½)/sAz and elevation el0 − (r+½)/sEl, the azimuth
// measured about up from fwd toward right.
type panorama struct {
	up, fwd, right vec3
	az0, el0       float64
	sAz, sEl       float64
	w, h           int
	in, obj        []uint8 // per pixel: frames that see it, and that show the colour there
	cut            []bool  // per pixel: no frame sees it
}

// maxPanoFrames bounds the frames laid onto the mosaic (evenly chosen when
// there are more): each adds coverage, not precision.
const maxPanoFrames = 48

// maxPanoPixels bounds the mosaic; a wider view is sampled more coarsely.
const maxPanoPixels = 6 << 20

// dir is the direction of a grid point (fractional column and row).
func (p *panorama) dir(c, r float64) vec3 {
	az := p.az0 + c/p.sAz
	el := p.el0 - r/p.sEl
	ce := math.Cos(el)
	return p.fwd.scale(ce * math.Cos(az)).add(p.right.scale(ce * math.Sin(az))).add(p.up.scale(math.Sin(el)))
}

// azEl is a direction's azimuth and elevation.
func (p *panorama) azEl(d vec3) (az, el float64) {
	return math.Atan2(d.dot(p.right), d.dot(p.fwd)), math.Asin(math.Max(-1, math.Min(1, d.dot(p.up))))
}

// buildPanorama lays the placed frames' masks onto the grid. up is the
// world's vertical in reference coordinates; nil when no frame is placed.
func buildPanorama(fs []objFrame, up vec3) *panorama {
	var use []int
	for i := range fs {
		if fs[i].placed && fs[i].mask != nil {
			use = append(use, i)
		}
	}
	if len(use) == 0 {
		return nil
	}
	if len(use) > maxPanoFrames {
		sub := make([]int, maxPanoFrames)
		for k := range sub {
			sub[k] = use[k*len(use)/maxPanoFrames]
		}
		use = sub
	}
	p := &panorama{up: up}
	// fwd: the reference camera's axis, levelled.
	z := vec3{0, 0, 1}
	p.fwd = z.add(up.scale(-z.dot(up)))
	if p.fwd.norm() < 1e-6 {
		p.fwd = vec3{1, 0, 0}.add(up.scale(-up[0]))
	}
	p.fwd = p.fwd.unit()
	p.right = up.cross(p.fwd).unit()
	if p.right.dot(vec3{1, 0, 0}) < 0 { // right toward the reference's +x
		p.right = p.right.scale(-1)
	}
	// Extent: the frames' outlines.
	azMin, azMax, elMin, elMax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	fMax, cosMax := 0.0, 0.0
	type box struct{ a0, a1, e0, e1 float64 }
	boxes := make([]box, len(use))
	for k, i := range use {
		fr := &fs[i]
		bx := box{math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)}
		const steps = 16
		for s := 0; s <= steps; s++ {
			u := float64(s) / steps
			for _, xy := range [4][2]float64{{u * float64(fr.w), 0}, {u * float64(fr.w), float64(fr.h)}, {0, u * float64(fr.h)}, {float64(fr.w), u * float64(fr.h)}} {
				az, el := p.azEl(fr.rot.apply(fr.ray(xy[0], xy[1])))
				bx.a0, bx.a1 = math.Min(bx.a0, az), math.Max(bx.a1, az)
				bx.e0, bx.e1 = math.Min(bx.e0, el), math.Max(bx.e1, el)
				cosMax = math.Max(cosMax, math.Cos(el))
			}
		}
		boxes[k] = bx
		azMin, azMax = math.Min(azMin, bx.a0), math.Max(azMax, bx.a1)
		elMin, elMax = math.Min(elMin, bx.e0), math.Max(elMax, bx.e1)
		fMax = math.Max(fMax, fr.f)
	}
	// One grid step is at most one pixel of the frames at the optical
	// axis, in both directions (the azimuth step shrinks toward the
	// horizon by cos elevation).
	p.sEl, p.sAz = fMax, fMax*cosMax
	for float64(int(math.Ceil((azMax-azMin)*p.sAz)))*math.Ceil((elMax-elMin)*p.sEl) > maxPanoPixels {
		p.sEl, p.sAz = p.sEl*0.8, p.sAz*0.8
	}
	p.az0, p.el0 = azMin, elMax
	p.w = max(1, int(math.Ceil((azMax-azMin)*p.sAz)))
	p.h = max(1, int(math.Ceil((elMax-elMin)*p.sEl)))
	n := p.w * p.h
	p.in, p.obj = make([]uint8, n), make([]uint8, n)
	cosAz, sinAz := make([]float64, p.w), make([]float64, p.w)
	for c := range p.w {
		az := p.az0 + (float64(c)+0.5)/p.sAz
		cosAz[c], sinAz[c] = math.Cos(az), math.Sin(az)
	}
	for k, i := range use {
		fr := &fs[i]
		bx := boxes[k]
		c0 := max(0, int((bx.a0-p.az0)*p.sAz)-1)
		c1 := min(p.w, int((bx.a1-p.az0)*p.sAz)+2)
		r0 := max(0, int((p.el0-bx.e1)*p.sEl)-1)
		r1 := min(p.h, int((p.el0-bx.e0)*p.sEl)+2)
		// Camera coordinates of the basis.
		a, b, u := fr.rot.applyT(p.fwd), fr.rot.applyT(p.right), fr.rot.applyT(up)
		cx, cy := float64(fr.w)/2, float64(fr.h)/2
		for r := r0; r < r1; r++ {
			el := p.el0 - (float64(r)+0.5)/p.sEl
			ce, se := math.Cos(el), math.Sin(el)
			row := r * p.w
			for c := c0; c < c1; c++ {
				ca, sa := ce*cosAz[c], ce*sinAz[c]
				dz := ca*a[2] + sa*b[2] + se*u[2]
				if dz < 0.1 {
					continue
				}
				x := cx + fr.f*(ca*a[0]+sa*b[0]+se*u[0])/dz
				y := cy + fr.f*(ca*a[1]+sa*b[1]+se*u[1])/dz
				if x < 0 || y < 0 || x >= float64(fr.w) || y >= float64(fr.h) {
					continue
				}
				p.in[row+c]++
				if fr.mask.get(int(y)*fr.w + int(x)) {
					p.obj[row+c]++
				}
			}
		}
	}
	p.cut = make([]bool, n)
	for i := range p.cut {
		p.cut[i] = p.in[i] == 0
	}
	return p
}

// isObject: most frames that see the direction show the colour there.
func (p *panorama) isObject(i int) bool { return p.in[i] > 0 && 2*int(p.obj[i]) > int(p.in[i]) }

// blobs segments the mosaic. A blob is cut when it touches a direction no
// frame sees (or the grid's edge): the frames showed only part of it.
func (p *panorama) blobs(minArea int) []objBlob {
	var lab runLabeler
	for r := range p.h {
		lab.newRow()
		row := r * p.w
		c := 0
		for c < p.w {
			if !p.isObject(row + c) {
				c++
				continue
			}
			c0 := c
			for c < p.w && p.isObject(row+c) {
				c++
			}
			lab.add(r, c0, c)
		}
	}
	bs := lab.blobs(p.w, p.h, minArea)
	for i := range bs {
		b := &bs[i]
		b.omega = 0
		for _, rn := range b.runs {
			el := p.el0 - (float64(rn.y)+0.5)/p.sEl
			b.omega += float64(rn.x1-rn.x0) * math.Cos(el) / (p.sAz * p.sEl)
			if b.border {
				continue
			}
			// Cut: a neighbour of the run that no frame sees.
			y := int(rn.y)
			for _, yy := range [3]int{y - 1, y, y + 1} {
				if yy < 0 || yy >= p.h {
					continue
				}
				for x := max(0, int(rn.x0)-1); x <= min(p.w-1, int(rn.x1)); x++ {
					if p.cut[yy*p.w+x] {
						b.border = true
						break
					}
				}
			}
		}
		b.ray = p.dir(b.cx, b.cy)
	}
	return bs
}

// countPanorama counts the objects of the mosaic: every blob is one
// object or, when its solid angle is several objects' at its elevation,
// that many. It returns each object's direction (reference coordinates).
func countPanorama(p *panorama, shape string, minArea int) []vec3 {
	bs := p.blobs(minArea)
	elev := func(b *objBlob) float64 { return elevation(b.ray, p.up) }
	var ks []float64
	for i := range bs {
		if !bs[i].border {
			ks = append(ks, bs[i].omega/sizeShape(shape, elev(&bs[i])))
		}
	}
	if len(ks) == 0 {
		for i := range bs {
			ks = append(ks, bs[i].omega/sizeShape(shape, elev(&bs[i])))
		}
	}
	k := singleScale(ks)
	sort.Slice(bs, func(i, j int) bool { return bs[i].cy < bs[j].cy || bs[i].cy == bs[j].cy && bs[i].cx < bs[j].cx })
	var out []vec3
	for i := range bs {
		b := &bs[i]
		m := multiplicity(b, b.omega/(k*sizeShape(shape, elev(b))))
		for range m {
			out = append(out, b.ray)
		}
	}
	return out
}
