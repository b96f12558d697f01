package perceiver

import (
	"errors"
	"math"
	"sort"
)

// bounceTracker finds the box and follows the ball (see the package doc,
// "bounce_ball").
type bounceTracker struct {
	bg   rgb
	ball rgb // the ball's colour
	// Inner edges of the walls, in pixel coordinates (pixel (i, j)
	// covers [i, i+1]×[j, j+1]).
	top, bottom, left, right float64
	obs                      []ballObs
	wbuf                     []float32
	mask                     []bool
	labels                   []int32
}

type ballObs struct {
	t      float64
	x, y   float64 // centre
	radius float64
	ok     bool
}

func (b *bounceTracker) setup(f *raster) error {
	var err error
	if b.bg, err = sceneBackground(f); err != nil {
		return err
	}
	w, h := f.w, f.h
	rows := make([]int, h)
	cols := make([]int, w)
	for y := range h {
		for x := range w {
			if f.distAt(3*(y*w+x), b.bg) > fgThreshold {
				rows[y]++
				cols[x]++
			}
		}
	}
	// The walls are the rows (columns) that are foreground over more than
	// half the width (height): only a stroked box spans the frame.
	band := func(counts []int, limit int, lo, hi int) (a, z int, ok bool) {
		a, z = -1, -1
		for i := lo; i < hi; i++ {
			if counts[i] > limit {
				if a < 0 {
					a = i
				}
				z = i
			}
		}
		return a, z, a >= 0
	}
	ta, tz, ok1 := band(rows, w/2, 0, h/2)
	ba, _, ok2 := band(rows, w/2, h/2, h)
	_, lz, ok3 := band(cols, h/2, 0, w/2)
	ra, _, ok4 := band(cols, h/2, w/2, w)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return errors.New("no box of walls")
	}
	// The wall colour: the median pixel along the middle of the top wall.
	wall := f.at(w/2, (ta+tz)/2)
	dw := float64(dist(wall, b.bg))
	if dw < fgThreshold {
		return errors.New("walls indistinct from the background")
	}
	// Coverage of a row (column) by the wall: the median over the middle
	// half of the box of dist/dw, clamped to [0, 1]; the median ignores a
	// ball lying against the wall.
	cov := func(horizontal bool, i int) float64 {
		if i < 0 || (horizontal && i >= h) || (!horizontal && i >= w) {
			return 0
		}
		var vs []float64
		if horizontal {
			x0, x1 := lz+(ra-lz)/4, ra-(ra-lz)/4
			for x := x0; x < x1; x++ {
				vs = append(vs, float64(f.distAt(3*(i*w+x), b.bg))/dw)
			}
		} else {
			y0, y1 := tz+(ba-tz)/4, ba-(ba-tz)/4
			for y := y0; y < y1; y++ {
				vs = append(vs, float64(f.distAt(3*(y*w+i), b.bg))/dw)
			}
		}
		return math.Min(1, math.Max(0, median(vs)))
	}
	// Inner edges with sub-pixel position: the last full row of the band
	// plus the partial coverage of the rows beyond it.
	b.top = float64(tz) + cov(true, tz) + cov(true, tz+1)
	b.bottom = float64(ba+1) - cov(true, ba) - cov(true, ba-1)
	b.left = float64(lz) + cov(false, lz) + cov(false, lz+1)
	b.right = float64(ra+1) - cov(false, ra) - cov(false, ra-1)
	if b.right-b.left < 8 || b.bottom-b.top < 8 {
		return errors.New("box too small")
	}
	// The ball: the largest blob inside the box.
	x0, y0, x1, y1 := b.inner(w, h)
	bw, bh := x1-x0, y1-y0
	mask := make([]bool, bw*bh)
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			mask[(y-y0)*bw+x-x0] = f.distAt(3*(y*w+x), b.bg) > fgThreshold
		}
	}
	cs := components(mask, bw, bh, nil)
	if len(cs) == 0 {
		return errors.New("no ball inside the box")
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].n > cs[j].n })
	c := cs[0]
	b.ball = f.at(x0+int(c.cx()), y0+int(c.cy()))
	if dist(b.ball, b.bg) <= fgThreshold {
		return errors.New("ball indistinct from the background")
	}
	return nil
}

// inner is the pixel rectangle strictly inside the walls, one pixel in
// from the inner edges (JPEG ringing of the wall lines stays out).
func (b *bounceTracker) inner(w, h int) (x0, y0, x1, y1 int) {
	x0 = max(0, int(math.Ceil(b.left))+1)
	y0 = max(0, int(math.Ceil(b.top))+1)
	x1 = min(w, int(math.Floor(b.right))-1)
	y1 = min(h, int(math.Floor(b.bottom))-1)
	return x0, y0, max(x0+1, x1), max(y0+1, y1)
}

// observe finds the ball: pixels inside the box get a coverage weight, the
// projection of their colour on the ball colour (0 background, 1 ball);
// the largest blob of weight > ½ is the ball, and its centre is the
// weighted centroid around that blob (sub-pixel, anti-aliased edges
// included).
func (b *bounceTracker) observe(t float64, f *raster, same bool) {
	if same && len(b.obs) > 0 {
		o := b.obs[len(b.obs)-1]
		o.t = t
		b.obs = append(b.obs, o)
		return
	}
	x0, y0, x1, y1 := b.inner(f.w, f.h)
	bw, bh := x1-x0, y1-y0
	if cap(b.wbuf) < bw*bh {
		b.wbuf = make([]float32, bw*bh)
		b.mask = make([]bool, bw*bh)
		b.labels = make([]int32, bw*bh)
	}
	wv, mask := b.wbuf[:bw*bh], b.mask[:bw*bh]
	dr, dg, db := float64(b.ball.r)-float64(b.bg.r), float64(b.ball.g)-float64(b.bg.g), float64(b.ball.b)-float64(b.bg.b)
	den := dr*dr + dg*dg + db*db
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			i := 3 * (y*f.w + x)
			p := ((float64(f.pix[i])-float64(b.bg.r))*dr + (float64(f.pix[i+1])-float64(b.bg.g))*dg + (float64(f.pix[i+2])-float64(b.bg.b))*db) / den
			p = math.Min(1, math.Max(0, p))
			k := (y-y0)*bw + x - x0
			wv[k] = float32(p)
			mask[k] = p > 0.5
		}
	}
	cs := components(mask, bw, bh, b.labels)
	o := ballObs{t: t}
	if len(cs) > 0 {
		best := cs[0]
		for _, c := range cs[1:] {
			if c.n > best.n {
				best = c
			}
		}
		var sw, sx, sy float64
		for y := max(0, best.minY-2); y <= min(bh-1, best.maxY+2); y++ {
			for x := max(0, best.minX-2); x <= min(bw-1, best.maxX+2); x++ {
				p := float64(wv[y*bw+x])
				if p < 0.1 {
					continue
				}
				sw += p
				sx += p * (float64(x+x0) + 0.5)
				sy += p * (float64(y+y0) + 0.5)
			}
		}
		if sw > 3 {
			o.x, o.y, o.radius, o.ok = sx/sw, sy/sw, math.Sqrt(sw/math.Pi), true
		}
	}
	b.obs = append(b.obs, o)
}

// Motion thresholds, in pixels. deadband: a displacement smaller than
// this between two frames has no direction (the centroid's noise is ~0.1
// px). straight: a frame within this distance of the segment joining its
// neighbours lies on the same straight path as they do.
const (
	deadband = 0.2
	straight = 0.75
)

// turn is a reversal of the ball's motion on one axis at a wall.
type turn struct {
	e    int     // the turning frame (index into the time-sorted frames)
	gap  float64 // distance of the turning frame from the wall, as a fraction of the axis's travel range
	t    float64
	wall string
}

// events finds the contacts: per axis, a reversal of the ball's direction
// whose turning frame is no farther from the wall (the contact
// coordinate: inner edge ∓ the ball's radius) than the ball moves in one
// interval. A kink that turns both axes is one contact, on the wall its
// turning point is nearer to.
func (b *bounceTracker) events() []Event {
	var obs []ballObs
	for _, o := range b.obs {
		if o.ok {
			obs = append(obs, o)
		}
	}
	sort.SliceStable(obs, func(i, j int) bool { return obs[i].t < obs[j].t })
	n := len(obs)
	if n < 3 {
		return nil
	}
	radii := make([]float64, n)
	for i, o := range obs {
		radii[i] = o.radius
	}
	r := median(radii)
	tol := math.Max(1.5, 0.1*r)
	// clean(j): frames j−1, j, j+1 lie on one straight segment of the
	// path: j is on the segment joining its neighbours (a plane test, free
	// of the timing jitter of frames taken from a video) and both steps
	// move, or neither does (the ball does not start or stop between
	// them).
	clean := func(j int) bool {
		if j < 1 || j > n-2 {
			return false
		}
		a, p, c := obs[j-1], obs[j], obs[j+1]
		d1, d2 := math.Hypot(p.x-a.x, p.y-a.y), math.Hypot(c.x-p.x, c.y-p.y)
		if (d1 > deadband) != (d2 > deadband) {
			return false
		}
		return segDist(p.x, p.y, a.x, a.y, c.x, c.y) <= straight
	}
	var turns []turn
	for axis := range 2 {
		pos := make([]float64, n)
		for i, o := range obs {
			pos[i] = o.x
			if axis == 1 {
				pos[i] = o.y
			}
		}
		lo, hi := b.left+r, b.right-r // contact coordinates of the centre
		walls := [2]string{"left", "right"}
		if axis == 1 {
			lo, hi = b.top+r, b.bottom-r
			walls = [2]string{"top", "bottom"}
		}
		sign := func(j int) int { // direction over the interval j → j+1
			d := pos[j+1] - pos[j]
			switch {
			case d > deadband:
				return 1
			case d < -deadband:
				return -1
			}
			return 0
		}
		last := -1 // the last interval with a direction
		for j := 0; j < n-1; j++ {
			s := sign(j)
			if s == 0 {
				continue
			}
			if last >= 0 && sign(last) == -s && j-last <= 2 {
				dir := sign(last) // toward the wall: +1 the high side
				e := last + 1     // the turning frame
				if j-last == 2 && float64(dir)*(pos[e+1]-pos[e]) > 0 {
					e++
				}
				c, wall := lo, walls[0]
				if dir > 0 {
					c, wall = hi, walls[1]
				}
				// How far the ball moves in one interval on this axis
				// around the turn (an interval holding the turn nets
				// less than it travels, so its neighbours count too).
				step := 0.0
				for k := max(0, e-2); k <= min(n-2, e+1); k++ {
					step = math.Max(step, math.Abs(pos[k+1]-pos[k]))
				}
				gap := float64(dir) * (c - pos[e]) // ≥ 0 before the wall
				if gap <= step+tol && gap >= -tol {
					turns = append(turns, turn{e: e, gap: math.Abs(gap) / math.Max(1, hi-lo),
						t: contactTime(obs, pos, e, c, tol, clean), wall: wall})
				}
			}
			last = j
		}
	}
	// One contact per kink: turns of the two axes at the same or
	// neighbouring frames are one event, on the nearer wall.
	sort.Slice(turns, func(i, j int) bool { return turns[i].e < turns[j].e })
	var evs []Event
	for i := 0; i < len(turns); i++ {
		best := turns[i]
		for i+1 < len(turns) && turns[i+1].e-turns[i].e <= 1 {
			i++
			if turns[i].gap < best.gap {
				best = turns[i]
			}
		}
		evs = append(evs, Event{T: best.t, Wall: best.wall})
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].T < evs[j].T })
	return evs
}

// segDist is the distance from (px, py) to the segment (ax, ay)–(cx, cy).
func segDist(px, py, ax, ay, cx, cy float64) float64 {
	dx, dy := cx-ax, cy-ay
	l2 := dx*dx + dy*dy
	if l2 == 0 {
		return math.Hypot(px-ax, py-ay)
	}
	u := math.Max(0, math.Min(1, ((px-ax)*dx+(py-ay)*dy)/l2))
	return math.Hypot(px-ax-u*dx, py-ay-u*dy)
}

// contactTime estimates when the ball reached the wall around turning
// frame e: pos holds each frame's coordinate on the axis, c the contact
// coordinate. Where frames show the motion before and after the turn as
// straight lines, the contact is where the two lines (position against
// time) meet; where only one side is known to be straight, where that
// line reaches the wall; else the frame itself when the ball is at the
// wall in it, or the estimate from the interval next to it that falls
// inside that interval. Each estimate is kept inside the interval the
// turn must lie in.
func contactTime(obs []ballObs, pos []float64, e int, c, tol float64, clean func(int) bool) float64 {
	n := len(obs)
	t := func(i int) float64 { return obs[i].t }
	// line is the axis motion through two frames: position x0 at t0 and
	// velocity v.
	type line struct{ t0, x0, v float64 }
	mk := func(i, k int) line { return line{t(i), pos[i], (pos[k] - pos[i]) / (t(k) - t(i))} }
	clamp := func(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }
	meet := func(a, b line) (float64, bool) {
		if a.v == b.v {
			return 0, false
		}
		return (b.x0 - a.x0 + a.v*a.t0 - b.v*b.t0) / (a.v - b.v), true
	}
	reach := func(l line) (float64, bool) {
		if l.v == 0 {
			return 0, false
		}
		return l.t0 + (c-l.x0)/l.v, true
	}
	inClean, outClean := clean(e-1), clean(e+1)
	inBefore := e-3 >= 0 && clean(e-2)   // frames e−3..e−1 on one line
	outAfter := e+3 <= n-1 && clean(e+2) // frames e+1..e+3 on one line
	var in, out line
	inOK, outOK := false, false
	lo, hi := t(e-1), t(e+1)
	switch {
	case inClean && outClean: // the turn is on frame e
		return t(e)
	case inClean: // the turn is in [t(e), t(e+1))
		in, inOK, lo = mk(e-2, e), true, t(e)
		if outAfter {
			out, outOK = mk(e+1, e+3), true
		}
	case outClean: // the turn is in (t(e−1), t(e)]
		out, outOK, hi = mk(e, e+2), true, t(e)
		if inBefore {
			in, inOK = mk(e-3, e-1), true
		}
	default:
		if inBefore {
			in, inOK = mk(e-3, e-1), true
		}
		if outAfter {
			out, outOK = mk(e+1, e+3), true
		}
	}
	if inOK && outOK {
		if tc, ok := meet(in, out); ok {
			return clamp(tc, lo, hi)
		}
	}
	if math.Abs(pos[e]-c) <= tol {
		return t(e) // the ball is at the wall in frame e
	}
	if inOK {
		if tc, ok := reach(in); ok {
			return clamp(tc, lo, hi)
		}
	}
	if outOK {
		if tc, ok := reach(out); ok {
			return clamp(tc, lo, hi)
		}
	}
	// Nothing is known to be straight (sparse frames): assume the
	// interval before (after) e is, and keep the estimate that falls
	// inside its own interval.
	if tc, ok := reach(mk(e-1, e)); ok && tc >= t(e) && tc <= t(e+1) {
		return tc
	}
	if tc, ok := reach(mk(e, e+1)); ok && tc >= t(e-1) && tc <= t(e) {
		return tc
	}
	return t(e)
}

func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
