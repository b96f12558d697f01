package gpu

import (
	"fmt"
	"math"

	"github.com/tracegrid/tracegrid/scene"
)

// This file is the CPU side of the 3D world path: validation, the camera's
// clip transform, the choice between the painter and the depth path, the
// depth path's per-object instance layout and meshes. It runs on the
// caller's goroutine, into the caller's frame. painter.go has the painter
// path's CPU side; the GL side is in worldpass.go and meshgl.go.

// floatsPerObject is the depth path's per-object instance layout, four
// vec4s:
//
//	iCenter  centre x, y, z, size           (world units)
//	iColor   straight-alpha RGBA
//	iRot     cos yaw, sin yaw, noise amplitude, flat (0 or 1)
//	iSeed    noise-space offset x, y, z (from NoiseSeed), unused
const floatsPerObject = 16

// Sphere tessellation on the depth path (the painter path draws exact
// spheres): 32 slices × 16 stacks, 960 triangles a sphere. Its
// silhouette is within 0.5% of the radius of a true circle (0.3 px for a
// sphere 130 px across, 1.4 px for one half the height of a 1080p frame).
// Measured on llvmpipe (2 cores) with the scene of
// BenchmarkRenderWorld1920x1080 made of 50 spheres instead of 25 cubes and
// 25 spheres, in CPU time per frame over 50 cubes: 16×8 +0 ms, 24×12
// +14 ms, 32×16 +19 ms, 48×24 +37 ms, against a frame of ~62 ms (of which
// ~23 ms is the MSAA resolve), before the painter path existed. 16×8 would
// be free but visibly polygonal (1.9% of the radius).
const (
	sphereSlices = 32
	sphereStacks = 16
)

// worldFrame is what the GL thread needs to draw one frame's world, worked
// out on the caller's goroutine by frame.layoutWorld.
type worldFrame struct {
	viewProj   [16]float32 // fit · projection · view, column-major
	scissor    [4]int32    // the canvas in output px: x, y, width, height
	groundHalf float32     // 0: no ground
	groundCol  [4]float32
	lineCol    [4]float32
	lines      [2]float32 // 1 / spacing, width / spacing clamped to [0, 1]
	lightDir   [3]float32
	lightDir64 [3]float64 // the same, for the painter path's object space
	light      [2]float32 // ambient, diffuse

	// painter: drawn without a depth buffer (painter.go): the ground, then
	// f.impostors in f.objRuns, far to near. Otherwise the depth path:
	// f.objects, cubes then spheres, multisampled.
	painter bool
	// rasterGround (painter only): the ground fills the canvas and its
	// lines are at least minLineGap apart, so it is painted on the CPU
	// (package raster, f.groundLines) into the output image, which the GL
	// thread uploads under the objects; otherwise the ground view shader
	// draws it, from the eye, the ray map and the ground's edges.
	rasterGround bool
	eye          [3]float32
	ray          [3][3]float32 // d0, dx, dy: see rayMap
	groundEdges  [6][3]float32 // the ground's sides and clip lines: a, b, c of a·x + b·y + c, positive outside

	opaque  bool // depth path: no translucent colour, blending can be off
	cubes   int  // depth path instances: the cubes come first in the buffer,
	spheres int  // then the spheres
}

// layoutWorld validates w and fills f.world and the object instances for a
// canvas of canvasW×canvasH placed in the output by tf. Objects wholly
// outside the view are left out.
func (f *frame) layoutWorld(w *scene.World, canvasW, canvasH int, tf transform, outW, outH int) error {
	if err := validateWorld(w); err != nil {
		return fmt.Errorf("gpu: Render: world: %w", err)
	}
	wf := &f.world
	m := clipMatrix(w.Camera, canvasW, canvasH, tf, outW, outH)
	for i, v := range m {
		wf.viewProj[i] = float32(v)
		if !finite32(v) {
			return fmt.Errorf("gpu: Render: world: camera matrix overflows float32 (Near %g, Far %g)", w.Camera.Near, w.Camera.Far)
		}
	}
	wf.scissor = canvasRect(canvasW, canvasH, tf, outW, outH)

	g := &w.Ground
	wf.groundHalf = float32(g.Half)
	if g.Half > 0 {
		wf.groundCol, wf.lineCol = rgba32(g.Color), rgba32(g.LineColor)
		wf.lines = [2]float32{float32(1 / g.LineSpacing), float32(math.Min(g.LineWidth/g.LineSpacing, 1))}
	}

	l := &w.Light
	wf.lightDir, wf.lightDir64 = [3]float32{}, [3]float64{}
	if n := math.Sqrt(l.Dir[0]*l.Dir[0] + l.Dir[1]*l.Dir[1] + l.Dir[2]*l.Dir[2]); n > 0 {
		// The contract asks for a unit vector; normalizing forgives one
		// that is not. A zero vector leaves ambient light only.
		wf.lightDir64 = [3]float64{l.Dir[0] / n, l.Dir[1] / n, l.Dir[2] / n}
		wf.lightDir = [3]float32{float32(wf.lightDir64[0]), float32(wf.lightDir64[1]), float32(wf.lightDir64[2])}
	}
	wf.light = [2]float32{l.Ambient, l.Diffuse}
	wf.rasterGround = false

	// The objects in view, and whether the painter path can draw them.
	cam := &w.Camera
	vp := cam.ViewProjection(float64(canvasW) / float64(canvasH))
	fwd, eye := vec3(cam.Forward()), vec3(cam.Eye)
	painter := !f.forceDepth
	f.bounds = f.bounds[:0]
	for i := range w.Objects {
		o := &w.Objects[i]
		if o.Color.A <= 0 {
			continue // alpha 0 would show nothing but still hide what is behind
		}
		b := boundsOf(i, o, fwd, eye)
		if !inFrustum(&vp, o.Center, b.ball) {
			continue
		}
		// Wholly between the clip planes (so the painter path clips
		// nothing), and above the ground, which is drawn first.
		if b.depth-b.ball <= cam.Near || b.depth+b.ball >= cam.Far || g.Half > 0 && (b.lowest < 0 || eye[1] <= 0) {
			painter = false
		}
		f.bounds = append(f.bounds, b)
	}
	var rm rayMap
	if painter {
		rm, painter = newRayMap(m, cam.Eye, outW, outH)
	}
	if painter && len(f.bounds) > 1 {
		painter = paintOrder(f.bounds, w.Objects, eye)
	}
	wf.painter = painter
	if painter {
		f.layoutPainter(w, &m, &rm, outW, outH)
		return nil
	}

	// The depth path: cubes, then spheres, one instanced draw per mesh.
	// Draw order only matters between translucent objects, which are not
	// sorted here.
	f.objects = f.objects[:0]
	wf.cubes, wf.spheres = 0, 0
	wf.opaque = g.Half <= 0 || g.Color.A >= 1 && g.LineColor.A >= 1
	for _, shape := range [2]scene.Shape{scene.Cube, scene.Sphere} {
		for i := range f.bounds {
			o := &w.Objects[f.bounds[i].index]
			if o.Shape != shape {
				continue
			}
			f.objects = appendObject(f.objects, o)
			wf.opaque = wf.opaque && o.Color.A >= 1
			if shape == scene.Cube {
				wf.cubes++
			} else {
				wf.spheres++
			}
		}
	}
	return nil
}

// validateWorld rejects what would draw garbage or nothing useful:
// non-finite numbers (or ones beyond float32), a degenerate camera or
// ground, objects of no size or unknown shape.
func validateWorld(w *scene.World) error {
	c := &w.Camera
	if !finite32(c.Eye[0], c.Eye[1], c.Eye[2], c.Yaw, c.Pitch, c.FovY, c.Near, c.Far) {
		return fmt.Errorf("camera has a non-finite number: %+v", *c)
	}
	if c.FovY <= 0 || c.FovY >= math.Pi {
		return fmt.Errorf("camera FovY %g outside (0, π)", c.FovY)
	}
	if c.Near <= 0 || c.Far <= c.Near {
		return fmt.Errorf("camera clip distances Near %g, Far %g: want 0 < Near < Far", c.Near, c.Far)
	}
	g := &w.Ground
	if !finite32(g.Half, g.LineSpacing, g.LineWidth) || !finiteRGBA(g.Color, g.LineColor) {
		return fmt.Errorf("ground has a non-finite number: %+v", *g)
	}
	if g.Half < 0 {
		return fmt.Errorf("ground Half %g < 0", g.Half)
	}
	if g.Half > 0 && (g.LineSpacing <= 0 || g.LineWidth < 0) {
		return fmt.Errorf("ground LineSpacing %g, LineWidth %g: want spacing > 0, width ≥ 0", g.LineSpacing, g.LineWidth)
	}
	l := &w.Light
	if !finite32(l.Dir[0], l.Dir[1], l.Dir[2], float64(l.Ambient), float64(l.Diffuse)) {
		return fmt.Errorf("light has a non-finite number: %+v", *l)
	}
	for i := range w.Objects {
		o := &w.Objects[i]
		if !finite32(o.Center[0], o.Center[1], o.Center[2], o.Size, o.Yaw, float64(o.Noise)) || !finiteRGBA(o.Color) {
			return fmt.Errorf("object %d has a non-finite number: %+v", i, *o)
		}
		if o.Size <= 0 {
			return fmt.Errorf("object %d: Size %g ≤ 0", i, o.Size)
		}
		if o.Shape != scene.Cube && o.Shape != scene.Sphere {
			return fmt.Errorf("object %d: unknown shape %d", i, o.Shape)
		}
	}
	return nil
}

// finite32 reports whether every value is finite and stays finite as a
// float32, the precision the GPU gets.
func finite32(vs ...float64) bool {
	for _, v := range vs {
		if f := float32(v); math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return false
		}
	}
	return true
}

func finiteRGBA(cs ...scene.RGBA) bool {
	for _, c := range cs {
		if !finite32(float64(c.R), float64(c.G), float64(c.B), float64(c.A)) {
			return false
		}
	}
	return true
}

func rgba32(c scene.RGBA) [4]float32 { return [4]float32{c.R, c.G, c.B, c.A} }

// clipMatrix is the camera's view-projection for the canvas aspect ratio,
// followed by a clip-space scale and offset that maps the canvas's
// normalized device coordinates to where fit places the canvas in the
// output, with y flipped. Together with a full-output viewport and a
// scissor at the canvas rectangle, this is a viewport on exactly the
// (possibly fractional) canvas rectangle the 2D items use, and puts NDC
// (x, y) at canvas pixel ((x+1)/2·W, (1−y)/2·H) with window row 0 at the
// top, as the contract in scene/world.go says.
func clipMatrix(cam scene.Camera, canvasW, canvasH int, tf transform, outW, outH int) scene.Mat4 {
	vp := cam.ViewProjection(float64(canvasW) / float64(canvasH))
	sw, sh := tf.s*float64(canvasW), tf.s*float64(canvasH)
	// Output px x = ((xn+1)/2·W)·s + offX; GL NDC = px/outW·2 − 1.
	ax, bx := sw/float64(outW), (sw+2*tf.offX)/float64(outW)-1
	// Output px y = ((1−yn)/2·H)·s + offY, y down.
	ay, by := -sh/float64(outH), (sh+2*tf.offY)/float64(outH)-1
	// Affine in clip space (it multiplies w too), so it commutes with the
	// perspective divide and leaves clipping against near and far alone.
	fitM := scene.Mat4{
		ax, 0, 0, 0,
		0, ay, 0, 0,
		0, 0, 1, 0,
		bx, by, 0, 1,
	}
	return fitM.Mul(vp)
}

// canvasRect is the canvas's rectangle in output pixels, edges rounded to
// the nearest pixel, as x, y, width, height (y down, which is window y
// here).
func canvasRect(canvasW, canvasH int, tf transform, outW, outH int) [4]int32 {
	x0 := min(max(math.Round(tf.offX), 0), float64(outW))
	y0 := min(max(math.Round(tf.offY), 0), float64(outH))
	x1 := min(max(math.Round(tf.offX+tf.s*float64(canvasW)), x0), float64(outW))
	y1 := min(max(math.Round(tf.offY+tf.s*float64(canvasH)), y0), float64(outH))
	return [4]int32{int32(x0), int32(y0), int32(x1 - x0), int32(y1 - y0)}
}

func appendObject(dst []float32, o *scene.Object) []float32 {
	var flat float32
	if o.Flat {
		flat = 1
	}
	seed := seedOffset(o.NoiseSeed)
	s, c := math.Sincos(o.Yaw)
	return append(dst,
		float32(o.Center[0]), float32(o.Center[1]), float32(o.Center[2]), float32(o.Size),
		o.Color.R, o.Color.G, o.Color.B, o.Color.A,
		float32(c), float32(s), o.Noise, flat,
		seed[0], seed[1], seed[2], 0,
	)
}

// seedOffset moves an object's noise to its own region of noise space: a
// whole number of cells in [0, 1024) per axis from a hash of the seed
// (SplitMix64's finalizer), so nearby seeds land far apart. Whole cells, and
// small enough that float32 keeps the position within a cell exact to
// about 1e-4.
func seedOffset(seed uint32) [3]float32 {
	z := uint64(seed) + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return [3]float32{float32(z & 1023), float32(z >> 10 & 1023), float32(z >> 20 & 1023)}
}

// mesh is an indexed triangle list: vertices are position x, y, z and
// normal x, y, z; triangles are counter-clockwise seen from outside.
type mesh struct {
	verts []float32
	index []uint16
}

const floatsPerVertex = 6

// cubeMesh is the unit cube [−0.5, 0.5]³ with a normal per face: 24
// vertices (four a face, so corners do not share normals) and 12 triangles.
func cubeMesh() mesh {
	var m mesh
	// Each face: normal n and tangents u, v with u × v = n, so corners in
	// the order (−u−v, +u−v, +u+v, −u+v) run counter-clockwise seen from
	// outside.
	faces := [6][3][3]float32{
		{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
		{{-1, 0, 0}, {0, 0, 1}, {0, 1, 0}},
		{{0, 1, 0}, {0, 0, 1}, {1, 0, 0}},
		{{0, -1, 0}, {1, 0, 0}, {0, 0, 1}},
		{{0, 0, 1}, {1, 0, 0}, {0, 1, 0}},
		{{0, 0, -1}, {0, 1, 0}, {1, 0, 0}},
	}
	for _, f := range faces {
		n, u, v := f[0], f[1], f[2]
		base := uint16(len(m.verts) / floatsPerVertex)
		for _, k := range [4][2]float32{{-1, -1}, {1, -1}, {1, 1}, {-1, 1}} {
			for i := range 3 {
				m.verts = append(m.verts, 0.5*(n[i]+k[0]*u[i]+k[1]*v[i]))
			}
			m.verts = append(m.verts, n[0], n[1], n[2])
		}
		m.index = append(m.index, base, base+1, base+2, base, base+2, base+3)
	}
	return m
}

// sphereMesh is a UV sphere of radius 0.5 with smooth normals: slices
// around +y, stacks from pole to pole; the seam and poles repeat vertices,
// and the degenerate triangles at the poles are left out.
func sphereMesh(slices, stacks int) mesh {
	var m mesh
	for j := 0; j <= stacks; j++ {
		st, ct := math.Sincos(math.Pi * float64(j) / float64(stacks)) // θ from +y
		for i := 0; i <= slices; i++ {
			sp, cp := math.Sincos(2 * math.Pi * float64(i) / float64(slices))
			n := [3]float64{st * cp, ct, st * sp}
			for _, c := range n {
				m.verts = append(m.verts, float32(0.5*c))
			}
			for _, c := range n {
				m.verts = append(m.verts, float32(c))
			}
		}
	}
	at := func(i, j int) uint16 { return uint16(j*(slices+1) + i) }
	for j := 0; j < stacks; j++ {
		for i := 0; i < slices; i++ {
			a, b, c, d := at(i, j), at(i+1, j), at(i, j+1), at(i+1, j+1)
			// Going to i+1 turns toward +z at φ = 0, to j+1 goes down: a, b,
			// c is counter-clockwise seen from outside.
			if j > 0 {
				m.index = append(m.index, a, b, c)
			}
			if j < stacks-1 {
				m.index = append(m.index, b, d, c)
			}
		}
	}
	return m
}
