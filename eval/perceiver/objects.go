package perceiver

import (
	"errors"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// The objects domain (CountVideoBench): how many objects of one colour
// and shape stand on the ground while the camera turns in place. The
// count is of distinct objects, so an object seen in several frames counts
// once. Blobs of the asked colour are segmented in every frame (objseg.go);
// the camera's rotation between frames is estimated from the blobs
// themselves, whose centroids become viewing directions in one reference
// frame (this file); the frames' masks are then laid onto one mosaic of
// directions, in which every object appears once, and its blobs are
// counted, several objects for a blob as large as several (objpano.go).

// objectsFovY is the vertical field of view the perceiver assumes, like a
// known lens: the renderer documents a pinhole camera with a 45° vertical
// field of view and square pixels (docs/scenes.md, CountVideoBench §4).
const objectsFovY = 45 * math.Pi / 180

// objectsBasePitch is the tilt below the horizon the alignment search
// starts from (the renderer's camera looks down about 40°); the final
// rotations are fitted without it.
const objectsBasePitch = -40 * math.Pi / 180

// reObjectsAsk matches a colour word followed by cube(s) or sphere(s).
var reObjectsAsk = regexp.MustCompile(`\b(red|orange|yellow|green|cyan|blue|purple|violet|magenta|pink)\s+(cubes?|spheres?)\b`)

// ObjectsQuestion reads a question about objects of one colour and shape,
// "How many red cubes are in this video?": the colour and the shape
// (singular, lower case). ok is false when the question names no colour
// followed by cube(s) or sphere(s).
func ObjectsQuestion(question string) (colour, shape string, ok bool) {
	m := reObjectsAsk.FindStringSubmatch(strings.ToLower(question))
	if m == nil {
		return "", "", false
	}
	colour = m[1]
	if a, ok := colourAliases[colour]; ok {
		colour = a
	}
	return colour, strings.TrimSuffix(m[2], "s"), true
}

// objFrame is one analysed picture.
type objFrame struct {
	t      float64
	w, h   int
	f      float64 // focal length, pixels
	blobs  []objBlob
	mask   bitset // pixels of the blobs
	rot    mat3   // camera → reference directions
	placed bool   // rot is known
}

func (fr *objFrame) ray(x, y float64) vec3 {
	return vec3{x - float64(fr.w)/2, y - float64(fr.h)/2, fr.f}.unit()
}

// project returns the pixel a camera-frame direction falls on; ok is false
// behind the camera.
func (fr *objFrame) project(d vec3) (x, y float64, ok bool) {
	if d[2] < 0.1 {
		return 0, 0, false
	}
	return float64(fr.w)/2 + fr.f*d[0]/d[2], float64(fr.h)/2 + fr.f*d[1]/d[2], true
}

// objectsTracker collects the blobs of every frame, then counts.
type objectsTracker struct {
	colour, shape string
	seg           segmenter
	frames        []objFrame
}

func newObjectsTracker(colour, shape string) *objectsTracker {
	return &objectsTracker{colour: colour, shape: shape, seg: segmenter{colour: colourIndex(colour)}}
}

// setup checks that the first picture shows a light ground.
func (o *objectsTracker) setup(f *raster) error {
	if !lightGround(f) {
		return errors.New("no light ground: less than a third of the picture is white or light grey")
	}
	return nil
}

// lightGround reports whether at least a third of the picture is white or
// light grey (every channel ≥ 150, chroma < 30), as the ground of these
// scenes is even where 50 objects stand on it.
func lightGround(f *raster) bool {
	n, all := 0, 0
	for i := 0; i+2 < len(f.pix); i += 3 * 5 { // every 5th pixel
		c := rgb{f.pix[i], f.pix[i+1], f.pix[i+2]}
		all++
		if min(c.r, c.g, c.b) >= 150 && chroma(c) < 30 {
			n++
		}
	}
	return all > 0 && 3*n >= all
}

func (o *objectsTracker) observe(t float64, f *raster, same bool) {
	if !same && !lightGround(f) {
		// Not a picture of the scene: not laid onto the mosaic.
		o.frames = append(o.frames, objFrame{t: t, w: f.w, h: f.h, f: float64(f.h) / 2 / math.Tan(objectsFovY/2)})
		return
	}
	if same && len(o.frames) > 0 {
		fr := o.frames[len(o.frames)-1]
		fr.t = t
		fr.blobs = append([]objBlob(nil), fr.blobs...)
		o.frames = append(o.frames, fr)
		return
	}
	fr := objFrame{t: t, w: f.w, h: f.h, f: float64(f.h) / 2 / math.Tan(objectsFovY/2)}
	minArea := max(8, f.w*f.h/25000)
	fr.blobs = o.seg.segment(f, minArea)
	// A blob over a quarter of the picture is no object of these scenes
	// (a picture filled with the colour).
	fr.blobs = slices.DeleteFunc(fr.blobs, func(b objBlob) bool { return 4*b.n > f.w*f.h })
	fr.mask = newBitset(f.w * f.h)
	for _, b := range fr.blobs {
		for _, r := range b.runs {
			fr.mask.setRun(int(r.y), f.w, r)
		}
	}
	for i := range fr.blobs {
		b := &fr.blobs[i]
		b.ray = fr.ray(b.cx, b.cy)
		b.omega = float64(b.n) * b.ray[2] * b.ray[2] * b.ray[2] / (fr.f * fr.f)
	}
	o.frames = append(o.frames, fr)
}

// events returns one event per distinct object, at the time it is first
// seen.
func (o *objectsTracker) events() []Event {
	objs := o.count()
	sort.Float64s(objs)
	ev := make([]Event, len(objs))
	for i, t := range objs {
		ev[i] = Event{T: t}
	}
	return ev
}

// cluster is one object (or a group of objects that overlap in the
// pictures) of the alignment map: a direction in the reference frame and
// the frames that showed it whole.
type cluster struct {
	d      vec3 // mean direction (unit)
	sum    vec3 // Σ directions
	frames map[int]bool
}

// count tracks the blobs across the frames and returns, for every distinct
// object, the time it was first seen.
func (o *objectsTracker) count() []float64 {
	fs := o.frames
	if len(fs) == 0 {
		return nil
	}
	o.placeFrames()
	p := buildPanorama(fs, o.upVector())
	if p == nil {
		return nil
	}
	minArea := max(8, fs[0].w*fs[0].h/25000)
	dirs := countPanorama(p, o.shape, minArea)
	// Each object's time: the first frame that shows the colour in its
	// direction, else the first that sees the direction.
	byTime := make([]int, len(fs))
	for i := range byTime {
		byTime[i] = i
	}
	sort.SliceStable(byTime, func(a, b int) bool { return fs[byTime[a]].t < fs[byTime[b]].t })
	out := make([]float64, len(dirs))
	for k, d := range dirs {
		out[k] = math.NaN()
		seen := math.NaN()
		for _, i := range byTime {
			fr := &fs[i]
			if !fr.placed || fr.mask == nil {
				continue
			}
			x, y, ok := fr.project(fr.rot.applyT(d))
			if !ok || x < 0 || y < 0 || x >= float64(fr.w) || y >= float64(fr.h) {
				continue
			}
			if math.IsNaN(seen) {
				seen = fr.t
			}
			if fr.mask.get(int(y)*fr.w + int(x)) {
				out[k] = fr.t
				break
			}
		}
		if math.IsNaN(out[k]) {
			out[k] = seen
		}
		if math.IsNaN(out[k]) {
			out[k] = fs[byTime[0]].t
		}
	}
	return out
}

// fullBlobs counts a frame's blobs that do not touch the picture's edge.
func fullBlobs(fr *objFrame) int {
	n := 0
	for _, b := range fr.blobs {
		if !b.border {
			n++
		}
	}
	return n
}

// placeFrames estimates every frame's rotation into the reference frame
// (the frame with the most whole blobs): frames are aligned one after
// another outward in time from it, each against the objects found so far.
func (o *objectsTracker) placeFrames() {
	fs := o.frames
	ref := 0
	for i := range fs {
		if fullBlobs(&fs[i]) > fullBlobs(&fs[ref]) {
			ref = i
		}
	}
	fs[ref].rot, fs[ref].placed = identity3(), true
	order := []int{ref}
	for i := ref + 1; i < len(fs); i++ {
		order = append(order, i)
	}
	for i := ref - 1; i >= 0; i-- {
		order = append(order, i)
	}
	var cs []*cluster
	cs = addObservations(cs, fs, ref)
	for _, i := range order[1:] {
		prev := i - 1
		if i < ref {
			prev = i + 1
		}
		fs[i].rot = alignFrame(&fs[i], fs[prev].rot, cs)
		// A frame without a whole blob cannot be aligned: it keeps its
		// neighbour's rotation (the next frame starts from there) but is
		// not laid onto the mosaic.
		fs[i].placed = fullBlobs(&fs[i]) > 0
		cs = addObservations(cs, fs, i)
	}
	// Refine every rotation against the objects of all frames.
	for range 2 {
		for i := range fs {
			fs[i].rot = refineRotation(&fs[i], fs[i].rot, cs, 0.5)
		}
		cs = cs[:0]
		for _, i := range order {
			cs = addObservations(cs, fs, i)
		}
	}
}

// Splitting of merged blobs, a knob for the measurement in
// objects_test.go: how many objects a whole blob of the mosaic shows.
const (
	splitNone      = iota // every blob is one object
	splitArea             // its solid angle over one object's
	splitAreaPeaks        // that, or its distance transform's peaks if more
)

var objectsSplit = splitAreaPeaks

// multiplicity is how many objects a blob of the mosaic shows, from ratio,
// its solid angle over one object's at its elevation. Objects that overlap
// in the picture hide part of each other: a merged blob measured about
// 0.92 of the sum of its objects' solid angles over blobs of 2–14 cubes, so
// the estimate is round(ratio / 0.92), at least 1. A whole blob (not cut)
// whose distance transform has more peaks than that, each rising by a
// tenth of one object's radius above the saddle that joins it to a higher
// one, shows at least that many.
func multiplicity(b *objBlob, ratio float64) int {
	if objectsSplit == splitNone {
		return 1
	}
	m := max(1, int(math.Round(ratio/0.92)))
	if b.border || ratio < 1.4 || objectsSplit == splitArea {
		return m
	}
	r1 := math.Sqrt(float64(b.n) / ratio / math.Pi)
	peaks := 0
	for _, p := range b.distancePeaks() {
		if p >= 0.1*r1 {
			peaks++
		}
	}
	return max(m, peaks)
}

// elevation is the angle of a direction below the horizon.
func elevation(d, up vec3) float64 {
	return math.Asin(math.Max(-1, math.Min(1, -d.dot(up))))
}

// singleScale is the solid angle scale of one object: the 30th percentile
// of the blobs' scales (merged blobs only raise the upper part), refined
// to the median of the scales within ±25 % of it.
func singleScale(ks []float64) float64 {
	if len(ks) == 0 {
		return 1
	}
	sort.Float64s(ks)
	k0 := ks[len(ks)*3/10]
	var near []float64
	for _, k := range ks {
		if k > 0.75*k0 && k < 1.25*k0 {
			near = append(near, k)
		}
	}
	if len(near) == 0 {
		return k0
	}
	return near[len(near)/2]
}

// addObservations adds the whole blobs of frame i to the alignment map:
// each joins the nearest cluster not yet seen in that frame whose direction
// is within 0.7 of the blob's angular radius, else starts a new one.
func addObservations(cs []*cluster, fs []objFrame, i int) []*cluster {
	fr := &fs[i]
	for _, b := range fr.blobs {
		if b.border {
			continue
		}
		d := fr.rot.apply(b.ray)
		rho := b.radius / fr.f * b.ray[2] * b.ray[2]
		best, bestA := -1, 0.7*rho
		for k, c := range cs {
			if c.frames[i] {
				continue
			}
			if a := angleBetween(d, c.d); a < bestA {
				best, bestA = k, a
			}
		}
		if best < 0 {
			cs = append(cs, &cluster{frames: map[int]bool{}})
			best = len(cs) - 1
		}
		c := cs[best]
		c.frames[i] = true
		c.sum = c.sum.add(d)
		c.d = c.sum.unit()
	}
	return cs
}

// Alignment search: yaw about the (assumed) world vertical and pitch about
// the camera's horizontal axis, relative to the neighbouring frame.
const (
	alignYawMax   = 40 * math.Pi / 180
	alignPitchMax = 10 * math.Pi / 180
	alignStep     = 1.5 * math.Pi / 180
	alignFineStep = 0.3 * math.Pi / 180
)

// alignFrame finds the rotation of frame fr (camera → reference) that
// lays its whole blobs onto the clusters found so far, starting from the
// neighbouring frame's rotation prev: a coarse grid over yaw and pitch, a
// finer one around the best, then a least-squares fit of all three angles
// to the matched blobs.
func alignFrame(fr *objFrame, prev mat3, cs []*cluster) mat3 {
	if fullBlobs(fr) == 0 || len(cs) == 0 {
		return prev
	}
	up := vec3{0, -math.Cos(objectsBasePitch), math.Sin(objectsBasePitch)}
	right := vec3{1, 0, 0}
	hyp := func(yaw, pitch float64) mat3 {
		return prev.mul(axisAngle(up, yaw).mul(axisAngle(right, pitch)))
	}
	// The score's last term prefers the smaller turn among equals (one
	// blob matches anywhere).
	bestY, bestP, bestS := 0.0, 0.0, math.Inf(-1)
	minTol := 0.6 * alignStep * fr.f
	for yaw := -alignYawMax; yaw <= alignYawMax+1e-9; yaw += alignStep {
		for pitch := -alignPitchMax; pitch <= alignPitchMax+1e-9; pitch += alignStep {
			s := matchScore(fr, hyp(yaw, pitch), cs, 0.7, minTol) - 0.01*(math.Abs(yaw)+math.Abs(pitch))*180/math.Pi
			if s > bestS {
				bestY, bestP, bestS = yaw, pitch, s
			}
		}
	}
	cy, cp := bestY, bestP
	bestS = math.Inf(-1)
	for yaw := cy - alignStep; yaw <= cy+alignStep+1e-9; yaw += alignFineStep {
		for pitch := cp - alignStep; pitch <= cp+alignStep+1e-9; pitch += alignFineStep {
			s := matchScore(fr, hyp(yaw, pitch), cs, 0.5, 3) - 0.01*(math.Abs(yaw)+math.Abs(pitch))*180/math.Pi
			if s > bestS {
				bestY, bestP, bestS = yaw, pitch, s
			}
		}
	}
	return refineRotation(fr, hyp(bestY, bestP), cs, 0.5)
}

// matchScore is Σ over the frame's whole blobs of 1 − d²/tol² for the
// nearest projected cluster within tol = max(minTol, k·radius).
func matchScore(fr *objFrame, rot mat3, cs []*cluster, k, minTol float64) float64 {
	var px, py [256]float64
	n := 0
	for _, c := range cs {
		if n == len(px) {
			break
		}
		x, y, ok := fr.project(rot.applyT(c.d))
		if !ok || x < -20 || y < -20 || x > float64(fr.w)+20 || y > float64(fr.h)+20 {
			continue
		}
		px[n], py[n] = x, y
		n++
	}
	s := 0.0
	for _, b := range fr.blobs {
		if b.border {
			continue
		}
		tol := math.Max(minTol, k*b.radius)
		best := tol * tol
		for j := range n {
			dx, dy := px[j]-b.cx, py[j]-b.cy
			if d2 := dx*dx + dy*dy; d2 < best {
				best = d2
			}
		}
		s += 1 - best/(tol*tol)
	}
	return s
}

// refineRotation re-fits rot to the blobs whose nearest projected cluster
// lies within k·radius (two rounds); with fewer than three such pairs rot
// is kept.
func refineRotation(fr *objFrame, rot mat3, cs []*cluster, k float64) mat3 {
	for range 2 {
		var a, b []vec3
		var w []float64
		for _, bl := range fr.blobs {
			if bl.border {
				continue
			}
			tol := math.Max(3, k*bl.radius)
			best, bestD := -1, tol*tol
			for j, c := range cs {
				x, y, ok := fr.project(rot.applyT(c.d))
				if !ok {
					continue
				}
				dx, dy := x-bl.cx, y-bl.cy
				if d2 := dx*dx + dy*dy; d2 < bestD {
					best, bestD = j, d2
				}
			}
			if best >= 0 {
				a = append(a, bl.ray)
				b = append(b, cs[best].d)
				w = append(w, 1)
			}
		}
		if len(a) < 3 {
			return rot
		}
		rot = fitRotation(a, b, w)
	}
	return rot
}

// upVector estimates the world's vertical in reference coordinates: the
// camera turns about it without rolling, so every frame's horizontal axis
// (rot·x̂) is perpendicular to it. It is the cross product of the two most
// different horizontal axes; when the frames turn less than 2° it falls
// back to the renderer's usual tilt (objectsBasePitch) of the reference
// frame.
func (o *objectsTracker) upVector() vec3 {
	var axes []vec3
	var of []int
	for i := range o.frames {
		if o.frames[i].placed {
			axes = append(axes, o.frames[i].rot.apply(vec3{1, 0, 0}))
			of = append(of, i)
		}
	}
	bestA, bestB, bestAng := -1, -1, 2*math.Pi/180
	for a := range axes {
		for b := a + 1; b < len(axes); b++ {
			if ang := angleBetween(axes[a], axes[b]); ang > bestAng {
				bestA, bestB, bestAng = a, b, ang
			}
		}
	}
	if bestA < 0 {
		return vec3{0, -math.Cos(objectsBasePitch), math.Sin(objectsBasePitch)}
	}
	up := axes[bestA].cross(axes[bestB]).unit()
	// Up points to the top of the pictures (−y in camera coordinates).
	if up.dot(o.frames[of[bestA]].rot.apply(vec3{0, -1, 0})) < 0 {
		up = up.scale(-1)
	}
	return up
}

// sizeShape is the relative solid angle of one object seen at elevation
// e (radians below the horizon): objects stand on a plane, so their
// distance is ∝ 1/sin e and their solid angle ∝ sin²e; a cube also shows
// more of its top from higher up (projected area of a unit cube, its yaw
// averaged: sin e + (4/π) cos e).
func sizeShape(shape string, e float64) float64 {
	s := math.Sin(e)
	if s <= 0.02 {
		s = 0.02
	}
	if shape == "cube" {
		return s * s * (s + 4/math.Pi*math.Cos(e))
	}
	return s * s
}
