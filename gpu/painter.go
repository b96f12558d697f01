package gpu

import (
	"cmp"
	"github.com/tracegrid/tracegrid/gpu/internal/raster"
	"math"
	"slices"

	"github.com/tracegrid/tracegrid/scene"
)

// This file is the CPU side of the painter path, the way most worlds are
// drawn: no depth buffer and no multisampling. The ground goes down first,
// then the objects from the farthest to the nearest, each blended over
// what is already there with an analytic coverage its fragment shader
// computes (impostor.vert.glsl, cube.frag.glsl, sphere.frag.glsl). That
// needs an order in which no object is ever hidden by one drawn after it;
// worlds without one (objects that interpenetrate, cross the near or far
// plane, or sink below the ground) take the depth path (worldpass.go), a
// multisampled depth-buffered rendering of the objects' meshes.
//
// On llvmpipe the depth path's cost is the multisampled buffers (clearing
// and resolving four samples a pixel) and the spheres' triangles; the
// painter path shades each pixel once, and an object as one octagon around
// it. The ground, where its grid lines are at least minLineGap pixels
// apart everywhere in view and it fills the canvas, is painted on the CPU
// (ground.go, package raster: each line a band blended row by row over
// the ground's colour) instead of shaded pixel by pixel; otherwise a
// canvas-wide pass shades the ground (groundview.*.glsl).

const (
	// floatsPerImpostor is the painter path's per-object instance layout,
	// eight vec4s (see impostor.vert.glsl), in object space, where a cube
	// is [−½, ½]³ and a sphere has radius ½, and output pixels:
	//
	//	iEye    the eye, noise amplitude
	//	iRay0   the ray direction through output point (0, 0), flat (0 or 1)
	//	iRayX   its change per output pixel in x, noise offset x
	//	iRayY   its change per output pixel in y, noise offset y
	//	iColor  straight-alpha RGBA
	//	iBox    the octagon to shade: x0, y0, x1, y1 (bounds of x and y)
	//	iDiag   … and s0, d0, s1, d1 (bounds of x+y and x−y)
	//	iLight  unit vector toward the light, noise offset z
	floatsPerImpostor = 32

	// minLineGap is the least distance, in output pixels, between
	// neighbouring grid lines anywhere in view for them to be drawn one by
	// one. Closer lines, toward a horizon, are left to the ground view
	// shader, whose box filter averages many lines in a pixel.
	minLineGap = 4.0

	// maxPainterObjects bounds the objects in view for which an order is
	// looked for (the check compares every pair); more take the depth path.
	maxPainterObjects = 512

	// octMargin widens an object's octagon, in output pixels, so its
	// anti-aliased fringe (pixel centres up to half a pixel outside the
	// silhouette) is rasterized, with some room for rounding.
	octMargin = 0.6
)

// objectRun is a range of impostor instances of one shape: one instanced
// draw with its program.
type objectRun struct {
	sphere       bool
	first, count int
}

// vec3 is a float64 vector for the CPU-side geometry.
type vec3 = [3]float64

func add3(a, b vec3) vec3 { return vec3{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }
func sub(a, b vec3) vec3  { return vec3{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }
func scale3(a vec3, k float64) vec3 {
	return vec3{a[0] * k, a[1] * k, a[2] * k}
}
func dot(a, b vec3) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

// rayMap gives the direction of the eye ray through any output point:
// d(x, y) = d0 + x·dx + y·dy, in world units, (x, y) in output pixels with
// y down (gl_FragCoord's frame here). It is affine in (x, y) and scaled so
// that its component along the view direction is 1: a ray's parameter t is
// the view depth of the point eye + t·d.
type rayMap struct {
	eye        vec3
	d0, dx, dy vec3
}

// newRayMap inverts the clip matrix m (world → clip, including the fit
// and the y flip) for an outW×outH output. ok is false if m is singular.
func newRayMap(m scene.Mat4, eye scene.Vec3, outW, outH int) (rm rayMap, ok bool) {
	inv, ok := invert4(m)
	if !ok {
		return rayMap{}, false
	}
	// The point of clip coordinates (ndc, 1, 1) on the far plane is
	// inv·(ndc, 1, 1) in homogeneous world coordinates P, with P.w =
	// 1/Far > 0; P.xyz − eye·P.w is then the direction to it with unit
	// view depth, and affine in ndc, which is affine in the pixel.
	col := func(c int) [4]float64 { return [4]float64{inv[c*4], inv[c*4+1], inv[c*4+2], inv[c*4+3]} }
	dir := func(h [4]float64) vec3 {
		return vec3{h[0] - eye[0]*h[3], h[1] - eye[1]*h[3], h[2] - eye[2]*h[3]}
	}
	c0, c1, c2, c3 := col(0), col(1), col(2), col(3)
	var p0 [4]float64 // inv·(−1, −1, 1, 1): output point (0, 0)
	for i := range p0 {
		p0[i] = -c0[i] - c1[i] + c2[i] + c3[i]
	}
	rm.eye = vec3(eye)
	rm.d0 = dir(p0)
	rm.dx = scale3(dir(c0), 2/float64(outW))
	rm.dy = scale3(dir(c1), 2/float64(outH))
	return rm, true
}

func (rm *rayMap) at(x, y float64) vec3 {
	return add3(rm.d0, add3(scale3(rm.dx, x), scale3(rm.dy, y)))
}

// invert4 inverts a 4×4 matrix by Gauss-Jordan elimination with partial
// pivoting; ok is false if it is singular.
func invert4(m scene.Mat4) (inv scene.Mat4, ok bool) {
	// a is m (row r, column c at a[r][c]) augmented with the identity.
	var a [4][8]float64
	for r := range 4 {
		for c := range 4 {
			a[r][c] = m[c*4+r]
		}
		a[r][4+r] = 1
	}
	for c := range 4 {
		p := c
		for r := c + 1; r < 4; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		if a[p][c] == 0 || math.IsNaN(a[p][c]) {
			return scene.Mat4{}, false
		}
		a[c], a[p] = a[p], a[c]
		k := 1 / a[c][c]
		for j := range 8 {
			a[c][j] *= k
		}
		for r := range 4 {
			if r != c && a[r][c] != 0 {
				f := a[r][c]
				for j := range 8 {
					a[r][j] -= f * a[c][j]
				}
			}
		}
	}
	for r := range 4 {
		for c := range 4 {
			inv[c*4+r] = a[r][4+c]
		}
	}
	return inv, true
}

// objectBounds are what the painter path needs of one object in view.
type objectBounds struct {
	index  int     // in World.Objects
	ball   float64 // bounding sphere radius
	foot   float64 // bounding vertical cylinder's radius (the footprint)
	depth  float64 // view depth of the centre
	lowest float64 // lowest y of the object
	cube   bool
	key    float64 // sort key: the eye's power with respect to the bound used
}

func boundsOf(i int, o *scene.Object, fwd vec3, eye vec3) objectBounds {
	b := objectBounds{index: i, cube: o.Shape == scene.Cube, lowest: o.Center[1] - o.Size/2}
	if b.cube {
		b.ball = o.Size * math.Sqrt(3) / 2
		b.foot = o.Size * math.Sqrt2 / 2 // yaw turns about +y only
	} else {
		b.ball = o.Size / 2
		b.foot = o.Size / 2
	}
	b.depth = dot(fwd, sub(vec3(o.Center), eye))
	return b
}

// inFrustum reports whether a ball may show through the frustum whose
// clip matrix is vp (the canvas's view-projection): it is not wholly
// outside one of the six planes.
func inFrustum(vp *scene.Mat4, c scene.Vec3, r float64) bool {
	row := func(i int) [4]float64 { return [4]float64{vp[i], vp[4+i], vp[8+i], vp[12+i]} }
	w := row(3)
	for i := range 3 {
		ri := row(i)
		for _, s := range [2]float64{1, -1} {
			a, b, cc, d := w[0]+s*ri[0], w[1]+s*ri[1], w[2]+s*ri[2], w[3]+s*ri[3]
			n := math.Sqrt(a*a + b*b + cc*cc)
			if n == 0 {
				continue
			}
			if (a*c[0]+b*c[1]+cc*c[2]+d)/n < -r {
				return false
			}
		}
	}
	return true
}

// paintOrder sorts bs far to near in an order in which nothing is hidden
// by an object drawn after it, if there is one it can prove. Two disjoint
// balls are separated by their radical plane (the points of equal power
// |p − c|² − r² with respect to both), the eye is on the side of the ball
// of smaller power, and a ray from the eye crosses the plane once: it
// meets that ball, if at all, first. So disjoint bounding balls give an
// exact order by the eye's power. The same holds in plan view for disjoint
// vertical bounding cylinders (footprint circles), which fit objects
// standing on the ground: cubes closer than their bounding balls allow.
func paintOrder(bs []objectBounds, world []scene.Object, eye vec3) bool {
	if len(bs) > maxPainterObjects {
		return false
	}
	disjoint := func(foot bool) bool {
		for i := range bs {
			ci := world[bs[i].index].Center
			for j := i + 1; j < len(bs); j++ {
				cj := world[bs[j].index].Center
				dx, dy, dz := ci[0]-cj[0], ci[1]-cj[1], ci[2]-cj[2]
				if foot {
					r := bs[i].foot + bs[j].foot
					if dx*dx+dz*dz < r*r {
						return false
					}
				} else {
					r := bs[i].ball + bs[j].ball
					if dx*dx+dy*dy+dz*dz < r*r {
						return false
					}
				}
			}
		}
		return true
	}
	switch {
	case disjoint(true):
		for i := range bs {
			c := world[bs[i].index].Center
			dx, dz := c[0]-eye[0], c[2]-eye[2]
			bs[i].key = dx*dx + dz*dz - bs[i].foot*bs[i].foot
		}
	case disjoint(false):
		for i := range bs {
			d := sub(vec3(world[bs[i].index].Center), eye)
			bs[i].key = dot(d, d) - bs[i].ball*bs[i].ball
		}
	default:
		return false
	}
	// Largest power first; ties keep the world's order.
	slices.SortStableFunc(bs, func(a, b objectBounds) int { return cmp.Compare(b.key, a.key) })
	return true
}

// toObject maps a world vector to object space: the inverse of the yaw
// rotation (as in object.vert.glsl), divided by the size.
func toObject(v vec3, cosY, sinY, inv float64) vec3 {
	return vec3{(cosY*v[0] - sinY*v[2]) * inv, v[1] * inv, (sinY*v[0] + cosY*v[2]) * inv}
}

// octagon bounds a convex shape in output pixels by eight half-planes:
// x, y, x+y and x−y each between two bounds. Objects are drawn as their
// octagon, which holds about 5 % more than an ellipse where a rectangle
// holds 27 % more (llvmpipe shades every pixel drawn).
type octagon struct {
	x0, y0, x1, y1 float64 // bounds of x and y
	s0, d0, s1, d1 float64 // bounds of x+y and x−y
}

func emptyOctagon() octagon {
	inf := math.Inf(1)
	return octagon{inf, inf, -inf, -inf, inf, inf, -inf, -inf}
}

// add grows o to hold point (x, y).
func (o *octagon) add(x, y float64) {
	o.x0, o.x1 = min(o.x0, x), max(o.x1, x)
	o.y0, o.y1 = min(o.y0, y), max(o.y1, y)
	o.s0, o.s1 = min(o.s0, x+y), max(o.s1, x+y)
	o.d0, o.d1 = min(o.d0, x-y), max(o.d1, x-y)
}

// grow moves every side out by m pixels (the diagonal bounds by m·√2,
// since x ± y grows √2 per pixel across a diagonal side) and clips x and y
// to clip, the canvas. It then tightens the diagonal bounds to the
// rectangle, so every corner lies on it: a convex octagon, some of whose
// sides may have length 0. ok is false if nothing is left.
func (o *octagon) grow(m float64, clip [4]float64) (ok bool) {
	md := m * math.Sqrt2
	o.x0, o.y0 = max(o.x0-m, clip[0]), max(o.y0-m, clip[1])
	o.x1, o.y1 = min(o.x1+m, clip[2]), min(o.y1+m, clip[3])
	if !(o.x0 < o.x1 && o.y0 < o.y1) {
		return false
	}
	o.s0, o.s1 = max(o.s0-md, o.x0+o.y0), min(o.s1+md, o.x1+o.y1)
	o.d0, o.d1 = max(o.d0-md, o.x0-o.y1), min(o.d1+md, o.x1-o.y0)
	return o.s0 < o.s1 && o.d0 < o.d1
}

// corners lists the octagon's corners in order around it (impostor.vert.glsl
// computes the same ones from the bounds for a triangle fan).
func (o *octagon) corners() [8][2]float64 {
	return [8][2]float64{
		{o.x1, o.x1 - o.d1}, {o.x1, o.s1 - o.x1}, {o.s1 - o.y1, o.y1}, {o.d0 + o.y1, o.y1},
		{o.x0, o.x0 - o.d0}, {o.x0, o.s0 - o.x0}, {o.s0 - o.y0, o.y0}, {o.d1 + o.y0, o.y0},
	}
}

// cubeOctagon bounds a cube's eight corners projected to the output, all
// in front of the camera (the painter path's condition).
func cubeOctagon(o *scene.Object, m *scene.Mat4, outW, outH int) octagon {
	s, c := math.Sincos(o.Yaw)
	h := o.Size / 2
	oct := emptyOctagon()
	for k := range 8 {
		lx, ly, lz := h, h, h
		if k&1 != 0 {
			lx = -h
		}
		if k&2 != 0 {
			ly = -h
		}
		if k&4 != 0 {
			lz = -h
		}
		// rot·(lx, ly, lz), the rotation of object.vert.glsl.
		p := scene.Vec3{o.Center[0] + c*lx + s*lz, o.Center[1] + ly, o.Center[2] - s*lx + c*lz}
		q := m.Apply(p)
		oct.add((q[0]/q[3]+1)/2*float64(outW), (q[1]/q[3]+1)/2*float64(outH))
	}
	return oct
}

// sphereOctagon bounds a sphere's silhouette, which lies wholly in front
// of the camera. The rays d(x, y) that touch the sphere (centre c, radius
// r) satisfy |d|²·(|o|² − r²) − (o·d)² = 0 with o = eye − c: a conic
// (x, y, 1)·C·(x, y, 1)ᵀ = 0, an ellipse here. The lines a·x + b·y + k = 0
// tangent to it are those on the dual conic adj(C): for each direction
// (a, b) of the octagon's sides, k solves k²·C*₂₂ + 2k·(a·C*₀₂ + b·C*₁₂) +
// (a, b)·C*·(a, b) = 0. ok is false if the conic is not a real ellipse
// (it is, for a sphere in front of the camera, unless rounding spoils a
// degenerate one).
func sphereOctagon(rm *rayMap, c scene.Vec3, r float64) (oct octagon, ok bool) {
	o := sub(rm.eye, vec3(c))
	q := dot(o, o) - r*r
	cols := [3]vec3{rm.dx, rm.dy, rm.d0}
	var m [3][3]float64
	for i := range 3 {
		for j := i; j < 3; j++ {
			m[i][j] = q*dot(cols[i], cols[j]) - dot(o, cols[i])*dot(o, cols[j])
			m[j][i] = m[i][j]
		}
	}
	// The adjugate of the symmetric m: a[i][j] is the cofactor of (j, i).
	var a [3][3]float64
	for i := range 3 {
		for j := range 3 {
			r0, r1 := (j+1)%3, (j+2)%3
			c0, c1 := (i+1)%3, (i+2)%3
			a[i][j] = m[r0][c0]*m[r1][c1] - m[r0][c1]*m[r1][c0]
		}
	}
	// The range of −k over the tangents with direction (p, q), which is
	// the range of p·x + q·y over the ellipse.
	span := func(p, q float64) (lo, hi float64, ok bool) {
		qa := a[2][2]
		qb := p*a[0][2] + q*a[1][2]
		qc := p*p*a[0][0] + 2*p*q*a[0][1] + q*q*a[1][1]
		disc := qb*qb - qa*qc
		if qa == 0 || !(disc >= 0) {
			return 0, 0, false
		}
		sq := math.Sqrt(disc)
		k0, k1 := (-qb-sq)/qa, (-qb+sq)/qa
		return min(-k0, -k1), max(-k0, -k1), true
	}
	var oks [4]bool
	oct.x0, oct.x1, oks[0] = span(1, 0)
	oct.y0, oct.y1, oks[1] = span(0, 1)
	oct.s0, oct.s1, oks[2] = span(1, 1)
	oct.d0, oct.d1, oks[3] = span(1, -1)
	return oct, oks[0] && oks[1] && oks[2] && oks[3]
}

// appendImpostor appends object o's impostor instance, with its octagon
// (already grown and clipped).
func appendImpostor(dst []float32, o *scene.Object, rm *rayMap, light vec3, oct *octagon) []float32 {
	s, c := math.Sincos(o.Yaw)
	inv := 1 / o.Size
	eye := toObject(sub(rm.eye, vec3(o.Center)), c, s, inv)
	d0 := toObject(rm.d0, c, s, inv)
	dx := toObject(rm.dx, c, s, inv)
	dy := toObject(rm.dy, c, s, inv)
	l := toObject(light, c, s, 1)
	var flat float32
	if o.Flat {
		flat = 1
	}
	seed := seedOffset(o.NoiseSeed)
	return append(dst,
		float32(eye[0]), float32(eye[1]), float32(eye[2]), o.Noise,
		float32(d0[0]), float32(d0[1]), float32(d0[2]), flat,
		float32(dx[0]), float32(dx[1]), float32(dx[2]), seed[0],
		float32(dy[0]), float32(dy[1]), float32(dy[2]), seed[1],
		o.Color.R, o.Color.G, o.Color.B, o.Color.A,
		float32(oct.x0), float32(oct.y0), float32(oct.x1), float32(oct.y1),
		float32(oct.s0), float32(oct.d0), float32(oct.s1), float32(oct.d1),
		float32(l[0]), float32(l[1]), float32(l[2]), seed[2],
	)
}

// layoutPainter fills f.impostors and f.objRuns from the bounds (sorted
// far to near), f.objRects with the pixels they may draw, and, for the
// ground, f.groundLines (wf.rasterGround) or the ground shader.
func (f *frame) layoutPainter(w *scene.World, m *scene.Mat4, rm *rayMap, outW, outH int) {
	wf := &f.world
	sc := wf.scissor
	clip := [4]float64{float64(sc[0]), float64(sc[1]), float64(sc[0] + sc[2]), float64(sc[1] + sc[3])}
	light := vec3(wf.lightDir64)
	f.impostors, f.objRuns, f.objRects = f.impostors[:0], f.objRuns[:0], f.objRects[:0]
	for i := range f.bounds {
		b := &f.bounds[i]
		o := &w.Objects[b.index]
		var oct octagon
		if b.cube {
			oct = cubeOctagon(o, m, outW, outH)
		} else {
			var ok bool
			if oct, ok = sphereOctagon(rm, o.Center, o.Size/2); !ok {
				// The sphere's bounding cube holds its silhouette.
				cube := *o
				cube.Yaw = 0
				oct = cubeOctagon(&cube, m, outW, outH)
			}
		}
		if !oct.grow(octMargin, clip) {
			continue // off the canvas
		}
		// The octagon's pixels: those whose centres it holds.
		f.objRects = append(f.objRects, [4]int32{
			int32(math.Floor(oct.x0)), int32(math.Floor(oct.y0)), int32(math.Ceil(oct.x1)), int32(math.Ceil(oct.y1)),
		})
		n := len(f.impostors) / floatsPerImpostor
		f.impostors = appendImpostor(f.impostors, o, rm, light, &oct)
		if k := len(f.objRuns) - 1; k >= 0 && f.objRuns[k].sphere == !b.cube {
			f.objRuns[k].count++
		} else {
			f.objRuns = append(f.objRuns, objectRun{sphere: !b.cube, first: n, count: 1})
		}
	}

	f.groundLines = f.groundLines[:0]
	wf.rasterGround = false
	for i := range 3 {
		wf.eye[i] = float32(rm.eye[i])
		wf.ray[0][i], wf.ray[1][i], wf.ray[2][i] = float32(rm.d0[i]), float32(rm.dx[i]), float32(rm.dy[i])
	}
	g := &w.Ground
	if g.Half > 0 && rm.eye[1] != 0 {
		wf.groundEdges = groundEdges(rm, g.Half, w.Camera.Near, w.Camera.Far)
	}
	if g.Half <= 0 || g.Color.A < 1 || g.LineColor.A < 1 && g.LineWidth > 0 || f.forceGroundShader {
		return
	}
	if !groundFills(rm, g, clip, w.Camera.Near, w.Camera.Far) {
		return
	}
	if g.LineWidth > 0 && (lineGap(rm, g.LineSpacing, clip) < minLineGap || g.LineWidth >= g.LineSpacing) {
		return
	}
	wf.rasterGround = true
	if g.LineWidth > 0 {
		f.groundLines = appendGroundLines(f.groundLines, rm, g, clip)
	}
}

// groundFills reports whether every canvas pixel sees the ground: the rays
// through the canvas's four corners meet the ground plane within the
// square and between the clip distances. (The pixels that see the plane in
// front form a half-plane of the output, and the preimage of the canvas on
// the plane is then the convex hull of its corners' points; the square
// and the slab between the clip distances are convex.)
func groundFills(rm *rayMap, g *scene.Ground, clip [4]float64, near, far float64) bool {
	e := rm.eye
	if e[1] == 0 {
		return false
	}
	for _, p := range [4][2]float64{{clip[0], clip[1]}, {clip[2], clip[1]}, {clip[0], clip[3]}, {clip[2], clip[3]}} {
		d := rm.at(p[0], p[1])
		t := -e[1] / d[1] // view depth of the hit (d has unit view depth)
		if !(t >= near && t <= far) {
			return false
		}
		if math.Abs(e[0]+t*d[0]) > g.Half || math.Abs(e[2]+t*d[2]) > g.Half {
			return false
		}
	}
	return true
}

// lineGap is the least distance in output pixels between neighbouring grid
// lines over the canvas (which must see only ground), sampled at its
// corners, edge midpoints and centre: spacing / |∇X| for the lines of
// constant X, and likewise Z. On the ground X = ex − ey·dx/dy along the
// ray, so ∂X/∂x = −ey·(d'x·dy − dx·d'y)/dy², d' the ray's change per pixel.
func lineGap(rm *rayMap, spacing float64, clip [4]float64) float64 {
	e := rm.eye
	gap := math.Inf(1)
	for _, fx := range [3]float64{0, 0.5, 1} {
		for _, fy := range [3]float64{0, 0.5, 1} {
			d := rm.at(clip[0]+fx*(clip[2]-clip[0]), clip[1]+fy*(clip[3]-clip[1]))
			for _, a := range [2]int{0, 2} {
				gx := -e[1] * (rm.dx[a]*d[1] - d[a]*rm.dx[1]) / (d[1] * d[1])
				gy := -e[1] * (rm.dy[a]*d[1] - d[a]*rm.dy[1]) / (d[1] * d[1])
				if n := math.Hypot(gx, gy); n > 0 {
					gap = min(gap, spacing/n)
				}
			}
		}
	}
	return gap
}

// groundLine is the image of the ground line {axis a = v}: the output
// points where h(x, y) = A·x + B·y + C, returned as (A, B, C), vanishes, with h = (e_a − v)·d_y −
// e_y·d_a for the ray d through (x, y): the hit's coordinate a is e_a −
// e_y·d_a/d_y, so h/d_y = (hit_a − v), and d_y has the sign opposite to
// e_y for a ray that meets the ground in front.
func groundLine(rm *rayMap, a int, v float64) [3]float64 {
	e := rm.eye
	k := e[a] - v
	return [3]float64{k*rm.dx[1] - e[1]*rm.dx[a], k*rm.dy[1] - e[1]*rm.dy[a], k*rm.d0[1] - e[1]*rm.d0[a]}
}

// appendGroundLines appends, for package raster, every line of the grid
// whose band (with its half-pixel fringe) reaches a pixel centre of the
// canvas: along z (constant x) and along x (constant z), with the rows
// that hold it. The canvas must see only ground (groundFills).
func appendGroundLines(dst []raster.Line, rm *rayMap, g *scene.Ground, clip [4]float64) []raster.Line {
	e := rm.eye
	hw := g.LineWidth / 2
	ey := math.Copysign(1, e[1])
	// The grid under the canvas: the hull of its corners' points.
	lo, hi := [3]float64{math.Inf(1), 0, math.Inf(1)}, [3]float64{math.Inf(-1), 0, math.Inf(-1)}
	for _, p := range [4][2]float64{{clip[0], clip[1]}, {clip[2], clip[1]}, {clip[0], clip[3]}, {clip[2], clip[3]}} {
		d := rm.at(p[0], p[1])
		t := -e[1] / d[1]
		for _, a := range [2]int{0, 2} {
			v := e[a] + t*d[a]
			lo[a], hi[a] = min(lo[a], v), max(hi[a], v)
		}
	}
	for _, a := range [2]int{0, 2} {
		k0 := math.Ceil((lo[a] - hw) / g.LineSpacing)
		k1 := math.Floor((hi[a] + hw) / g.LineSpacing)
		for k := k0; k <= k1; k++ {
			v := k * g.LineSpacing
			// The band v − hw ≤ coordinate ≤ v + hw: outside past the lower
			// edge is where hit_a < v − hw, i.e. where h has e_y's sign.
			l := raster.Line{
				E1: edgeLine(ey, groundLine(rm, a, v-hw)),
				E2: edgeLine(-ey, groundLine(rm, a, v+hw)),
			}
			y0, y1, ok := bandRows(&l, clip)
			if !ok {
				continue
			}
			l.Y0, l.Y1 = y0, y1
			dst = append(dst, l)
		}
	}
	return dst
}

// bandRows returns the rows [y0, y1) of the canvas clip in which the
// band l and its half-pixel fringe (both edges' distance below 0.5) can
// reach a pixel centre, a row to spare each side; ok is false where it
// reaches none. It clips the canvas rectangle by the two half-planes.
func bandRows(l *raster.Line, clip [4]float64) (y0, y1 int32, ok bool) {
	// A rectangle cut by two lines has at most six corners.
	var buf [2][8][2]float64
	poly, n := &buf[0], 4
	poly[0], poly[1], poly[2], poly[3] = [2]float64{clip[0], clip[1]}, [2]float64{clip[2], clip[1]}, [2]float64{clip[2], clip[3]}, [2]float64{clip[0], clip[3]}
	for j, e := range [2][3]float64{l.E1, l.E2} {
		f := func(p [2]float64) float64 { return e[0]*p[0] + e[1]*p[1] + e[2] - 0.5 } // ≤ 0 inside
		next, m := &buf[(j+1)%2], 0
		for i := range n {
			p, q := poly[i], poly[(i+1)%n]
			fp, fq := f(p), f(q)
			if fp <= 0 {
				next[m], m = p, m+1
			}
			if (fp < 0) != (fq < 0) && fp != fq {
				t := fp / (fp - fq)
				next[m], m = [2]float64{p[0] + t*(q[0]-p[0]), p[1] + t*(q[1]-p[1])}, m+1
			}
		}
		poly, n = next, m
		if n == 0 {
			return 0, 0, false
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range poly[:n] {
		lo, hi = min(lo, p[1]), max(hi, p[1])
	}
	y0 = int32(max(math.Floor(lo)-1, clip[1]))
	y1 = int32(min(math.Ceil(hi)+1, clip[3]))
	return y0, y1, y0 < y1
}

// groundEdges are the output lines that bound the ground as the ground
// view shader draws it, as signed distances in pixels, positive outside:
// its sides x = ±half and z = ±half (see groundLine: the hit's coordinate
// a is beyond v where h has the sign opposite to e_y), and where the hits'
// view depth t = −e_y/d_y reaches near or far (t > far where e_y + far·d_y
// has e_y's sign, as d_y has the opposite sign for a hit in front). Near
// the horizon, where a hit's position and its change from pixel to pixel
// grow without bound, these lines stay exact. The eye must not be on the
// plane.
func groundEdges(rm *rayMap, half, near, far float64) [6][3]float32 {
	ey := math.Copysign(1, rm.eye[1])
	depth := func(t float64) [3]float64 { // e_y + t·d_y
		return [3]float64{t * rm.dx[1], t * rm.dy[1], rm.eye[1] + t*rm.d0[1]}
	}
	lines := [6][3]float64{
		edgeLine(-ey, groundLine(rm, 0, half)), edgeLine(ey, groundLine(rm, 0, -half)),
		edgeLine(-ey, groundLine(rm, 2, half)), edgeLine(ey, groundLine(rm, 2, -half)),
		edgeLine(-ey, depth(near)), edgeLine(ey, depth(far)),
	}
	var out [6][3]float32
	for i, l := range lines {
		out[i] = [3]float32{float32(l[0]), float32(l[1]), float32(l[2])}
	}
	return out
}

// edgeLine normalizes the line l = (A, B, C) into a signed distance in
// pixels, positive where A·x + B·y + C has the sign of sign. Where A and B
// vanish (the ground seen from straight above has one view depth
// everywhere) it is a constant far inside or outside.
func edgeLine(sign float64, l [3]float64) [3]float64 {
	n := math.Hypot(l[0], l[1])
	if !(n > 1e-12*math.Abs(l[2])) {
		if sign*l[2] > 0 {
			return [3]float64{0, 0, 1e4}
		}
		return [3]float64{0, 0, -1e4}
	}
	k := sign / n
	return [3]float64{l[0] * k, l[1] * k, l[2] * k}
}
