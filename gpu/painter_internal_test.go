package gpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tracegrid/tracegrid/gpu/internal/raster"
	"github.com/tracegrid/tracegrid/scene"
)

func TestInvert4(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		var m scene.Mat4
		for i := range m {
			m[i] = rng.Float64()*2 - 1
		}
		inv, ok := invert4(m)
		if !ok {
			t.Fatalf("%v: not inverted", m)
		}
		p := m.Mul(inv)
		for r := range 4 {
			for c := range 4 {
				want := 0.0
				if r == c {
					want = 1
				}
				if math.Abs(p[c*4+r]-want) > 1e-9 {
					t.Fatalf("m·inv(m) [%d][%d] = %g", r, c, p[c*4+r])
				}
			}
		}
	}
	if _, ok := invert4(scene.Mat4{}); ok {
		t.Error("the zero matrix inverted")
	}
}

// testCamera looks down at the origin from the front right, on a canvas
// placed with a letterbox, so the ray map has the fit in it too.
func testCamera() (cam scene.Camera, m scene.Mat4, rm rayMap, outW, outH int) {
	cam = scene.Camera{Eye: scene.Vec3{3, 5, 9}, Yaw: 0.3, Pitch: -0.45, FovY: 0.9, Near: 0.1, Far: 100}
	const cw, ch = 320, 180
	outW, outH = 400, 300
	tf := fit(cw, ch, outW, outH)
	m = clipMatrix(cam, cw, ch, tf, outW, outH)
	rm, ok := newRayMap(m, cam.Eye, outW, outH)
	if !ok {
		panic("singular")
	}
	return cam, m, rm, outW, outH
}

// The ray through the output point where a world point lands points at
// it, with unit view depth.
func TestRayMap(t *testing.T) {
	cam, m, rm, outW, outH := testCamera()
	fwd := vec3(cam.Forward())
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		p := scene.Vec3{rng.Float64()*8 - 4, rng.Float64() * 3, rng.Float64()*8 - 4}
		q := m.Apply(p)
		x, y := (q[0]/q[3]+1)/2*float64(outW), (q[1]/q[3]+1)/2*float64(outH)
		d := rm.at(x, y)
		if vd := dot(d, fwd); math.Abs(vd-1) > 1e-9 {
			t.Fatalf("view depth of the ray %v is %g, want 1", d, vd)
		}
		to := sub(vec3(p), rm.eye)
		depth := dot(to, fwd)
		for i := range 3 {
			if math.Abs(d[i]*depth-to[i]) > 1e-9*depth {
				t.Fatalf("ray %v through (%.2f, %.2f) does not point at %v (want %v / %g)", d, x, y, p, to, depth)
			}
		}
	}
}

// sphereF is the sphere's silhouette function at output point (x, y):
// negative where the ray meets the sphere.
func sphereF(rm *rayMap, c scene.Vec3, r, x, y float64) float64 {
	d := rm.at(x, y)
	o := sub(rm.eye, vec3(c))
	od := dot(o, d)
	return dot(d, d)*(dot(o, o)-r*r) - od*od
}

func TestSphereOctagon(t *testing.T) {
	_, _, rm, outW, outH := testCamera()
	for _, s := range []struct {
		c scene.Vec3
		r float64
	}{{scene.Vec3{0, 0.5, 0}, 0.5}, {scene.Vec3{-2, 1, -3}, 1.5}, {scene.Vec3{2.5, 0.2, 1}, 0.2}, {scene.Vec3{4, 0.5, 4}, 0.5}} {
		oct, ok := sphereOctagon(&rm, s.c, s.r)
		if !ok {
			t.Fatalf("%v: no octagon", s)
		}
		// Every pixel-grid point (quarter pixels) the ray from which meets
		// the sphere is inside the octagon, and each bound is reached
		// within a quarter pixel.
		far := math.Inf(-1)
		reach := [8]float64{far, far, far, far, far, far, far, far}
		n := 0
		for y := 0.0; y <= float64(outH); y += 0.25 {
			for x := 0.0; x <= float64(outW); x += 0.25 {
				if sphereF(&rm, s.c, s.r, x, y) > 0 {
					continue
				}
				n++
				const eps = 1e-6
				if x < oct.x0-eps || x > oct.x1+eps || y < oct.y0-eps || y > oct.y1+eps ||
					x+y < oct.s0-eps || x+y > oct.s1+eps || x-y < oct.d0-eps || x-y > oct.d1+eps {
					t.Fatalf("%v: point (%g, %g) on the sphere is outside %+v", s, x, y, oct)
				}
				for i, v := range [8]float64{-x, -y, x, y, -(x + y), -(x - y), x + y, x - y} {
					reach[i] = max(reach[i], v)
				}
			}
		}
		if n < 10 {
			t.Fatalf("%v: only %d points on the sphere", s, n)
		}
		for i, b := range [8]float64{-oct.x0, -oct.y0, oct.x1, oct.y1, -oct.s0, -oct.d0, oct.s1, oct.d1} {
			if slack := b - reach[i]; slack > 0.5 {
				t.Errorf("%v: bound %d is %g px beyond the sphere", s, i, slack)
			}
		}
	}
}

// The octagon's corners are where impostor.vert.glsl puts them, it holds
// what was added, and growing it by m moves every side out by m pixels.
func TestOctagon(t *testing.T) {
	o := emptyOctagon()
	pts := [][2]float64{{10, 20}, {30, 22}, {25, 40}, {12, 35}}
	for _, p := range pts {
		o.add(p[0], p[1])
	}
	want := octagon{10, 20, 30, 40, 30, -23, 65, 8}
	if o != want {
		t.Fatalf("octagon %+v, want %+v", o, want)
	}
	in := func(o octagon, x, y float64) bool {
		const e = 1e-9
		return x >= o.x0-e && x <= o.x1+e && y >= o.y0-e && y <= o.y1+e && x+y >= o.s0-e && x+y <= o.s1+e && x-y >= o.d0-e && x-y <= o.d1+e
	}
	g := o
	if !g.grow(1, [4]float64{0, 0, 100, 100}) {
		t.Fatal("grow emptied it")
	}
	for _, p := range pts {
		// A pixel away from each point in every direction is inside.
		for a := 0.0; a < 2*math.Pi; a += 0.1 {
			if x, y := p[0]+0.999*math.Cos(a), p[1]+0.999*math.Sin(a); !in(g, x, y) {
				t.Errorf("(%g, %g), within a pixel of %v, is outside the grown octagon %+v", x, y, p, g)
			}
		}
	}
	// The corners are on the octagon's boundary, in order around it: the
	// polygon is convex and its area that of the half-planes' intersection.
	c := g.corners()
	area := 0.0
	for k := range 8 {
		if !in(g, c[k][0], c[k][1]) {
			t.Errorf("corner %d %v outside %+v", k, c[k], g)
		}
		p, q, r := c[k], c[(k+1)%8], c[(k+2)%8]
		if cross := (q[0]-p[0])*(r[1]-q[1]) - (q[1]-p[1])*(r[0]-q[0]); cross < -1e-9 {
			t.Errorf("corners %d..%d turn the wrong way (%g)", k, k+2, cross)
		}
		area += p[0]*q[1] - q[0]*p[1]
	}
	// Monte Carlo would do; the shoelace area must match counting unit cells.
	cells := 0
	for y := 0.5; y < 100; y++ {
		for x := 0.5; x < 100; x++ {
			if in(g, x, y) {
				cells++
			}
		}
	}
	if math.Abs(area/2-float64(cells)) > 0.05*float64(cells) {
		t.Errorf("area %g, %d cells inside", area/2, cells)
	}
	// Clipped to the canvas; wholly off it, nothing is left.
	g = o
	if !g.grow(1, [4]float64{0, 0, 20, 30}) || g.x1 != 20 || g.y1 != 30 || g.s1 > 50 {
		t.Errorf("clipped octagon %+v", g)
	}
	g = o
	if g.grow(1, [4]float64{50, 50, 60, 60}) {
		t.Errorf("octagon off the canvas kept: %+v", g)
	}
}

// topDownGrid looks straight down from height 10 at ±5 units on a square
// 200×200 output: 20 px a unit, x to the right and z down the image.
func topDownGrid() (scene.Camera, rayMap, [4]float64) {
	cam := scene.Camera{Eye: scene.Vec3{0, 10, 0}, Pitch: -math.Pi / 2, FovY: 2 * math.Atan(0.5), Near: 1, Far: 50}
	m := clipMatrix(cam, 200, 200, fit(200, 200, 200, 200), 200, 200)
	rm, _ := newRayMap(m, cam.Eye, 200, 200)
	return cam, rm, [4]float64{0, 0, 200, 200}
}

func TestGroundFillsAndLineGap(t *testing.T) {
	_, rm, clip := topDownGrid()
	g := scene.Ground{Half: 20, LineSpacing: 2, LineWidth: 0.1}
	if !groundFills(&rm, &g, clip, 1, 50) {
		t.Error("top-down view inside the ground: not filled")
	}
	if gap := lineGap(&rm, 2, clip); math.Abs(gap-40) > 1e-6 {
		t.Errorf("line gap %g px, want 40 (spacing 2 at 20 px a unit)", gap)
	}
	small := g
	small.Half = 4.9 // the view reaches ±5
	if groundFills(&rm, &small, clip, 1, 50) {
		t.Error("a ground smaller than the view fills it")
	}
	if groundFills(&rm, &g, clip, 1, 9.9) {
		t.Error("a ground beyond Far fills the view")
	}
	// Looking at the horizon: not filled, and lines in the distance close up.
	cam := scene.Camera{Eye: scene.Vec3{0, 4, 0}, Pitch: -0.08, FovY: 0.9, Near: 0.1, Far: 2000}
	m := clipMatrix(cam, 240, 160, fit(240, 160, 240, 160), 240, 160)
	hrm, _ := newRayMap(m, cam.Eye, 240, 160)
	if groundFills(&hrm, &scene.Ground{Half: 1000}, [4]float64{0, 0, 240, 160}, 0.1, 2000) {
		t.Error("a view with the sky in it is filled")
	}
}

// Grid lines seen from straight above: the line x = 2k lands on output
// column 100 + 40k, its band edges ±width/2 · 20 px from it; lines of
// constant z likewise on rows.
func TestGroundLines(t *testing.T) {
	_, rm, clip := topDownGrid()
	g := scene.Ground{Half: 20, LineSpacing: 2, LineWidth: 0.425}
	lines := appendGroundLines(nil, &rm, &g, clip)
	// x from −5 to 5 in view: lines at −4 … 4, and z likewise.
	if len(lines) != 10 {
		t.Fatalf("%d lines, want 10", len(lines))
	}
	vertical := 0
	for i, l := range lines {
		e1, e2 := l.E1, l.E2
		// Each edge is a unit-normal line, the two parallel and 8.5 px
		// apart, facing away from each other.
		for _, e := range [][3]float64{e1, e2} {
			if math.Abs(math.Hypot(e[0], e[1])-1) > 1e-9 {
				t.Fatalf("line %d: edge %v not normalized", i, e)
			}
		}
		if math.Abs(e1[0]+e2[0]) > 1e-9 || math.Abs(e1[1]+e2[1]) > 1e-9 {
			t.Fatalf("line %d: edges %v %v not opposite", i, e1, e2)
		}
		if w := -(e1[2] + e2[2]); math.Abs(w-8.5) > 1e-9 {
			t.Errorf("line %d: band %g px wide, want 8.5", i, w)
		}
		centre := -(e1[2] - e2[2]) / 2 // where e1 = −e2 is ±x or ±y
		if math.Abs(e1[0]) > 0.99999 { // a line of constant x: every row
			vertical++
			centre /= e1[0]
			if l.Y0 != 0 || l.Y1 != 200 {
				t.Errorf("line %d: rows [%d, %d), want all 200", i, l.Y0, l.Y1)
			}
		} else {
			// The band's rows and its fringe, a row to spare each side.
			centre /= e1[1]
			if y0, y1 := int32(math.Floor(centre-4.75))-1, int32(math.Ceil(centre+4.75))+1; l.Y0 != max(y0, 0) || l.Y1 != min(y1, 200) {
				t.Errorf("line %d at row %g: rows [%d, %d), want [%d, %d)", i, centre, l.Y0, l.Y1, y0, y1)
			}
		}
		if k := (centre - 100) / 40; math.Abs(k-math.Round(k)) > 1e-9 {
			t.Errorf("line %d at %g, want 100 + 40k", i, centre)
		}
	}
	if vertical != 5 {
		t.Errorf("%d lines of constant x out of %d", vertical, len(lines))
	}
}

// A line whose centre falls just outside the canvas but whose band
// reaches into it is kept: at spacing 5.1 the lines x = ±5.1 land on
// columns −2 and 202 of the 200-px view, their bands ±4.25 px wide.
func TestGroundLinesAtTheEdge(t *testing.T) {
	_, rm, clip := topDownGrid()
	g := scene.Ground{Half: 20, LineSpacing: 5.1, LineWidth: 0.425}
	lines := appendGroundLines(nil, &rm, &g, clip)
	if len(lines) != 6 {
		t.Fatalf("%d lines, want 6 (x and z at −5.1, 0, 5.1)", len(lines))
	}
	found := 0
	for _, l := range lines {
		// The pixel next to the edge, (0.5, 20.5) or (199.5, 20.5), is
		// covered wholly by the line past that edge (row 20 is far from
		// the lines of constant z, on rows −2, 100 and 202).
		for _, x := range []float64{0.5, 199.5} {
			if raster.Coverage(&l, x, 20.5) == 1 {
				found++
			}
		}
	}
	if found != 2 {
		t.Errorf("%d of the edge columns covered by an outside line, want 2", found)
	}
}

// bandRows keeps a band's rows conservative: at random angles, every
// pixel centre of the canvas the band (with its fringe) covers lies in
// its rows; a band wholly off the canvas has none.
func TestBandRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	clip := [4]float64{0, 0, 64, 48}
	shown, off := 0, 0
	for range 300 {
		th := rng.Float64() * math.Pi
		nx, ny := math.Cos(th), math.Sin(th)
		cx, cy := rng.Float64()*100-18, rng.Float64()*90-21
		half := 0.05 + rng.Float64()*4
		c := -(nx*cx + ny*cy)
		l := raster.Line{E1: [3]float64{-nx, -ny, -c - half}, E2: [3]float64{nx, ny, c - half}}
		y0, y1, ok := bandRows(&l, clip)
		any := false
		for y := 0.5; y < 48; y++ {
			for x := 0.5; x < 64; x++ {
				if raster.Coverage(&l, x, y) <= 0 {
					continue
				}
				any = true
				if !ok || int32(y) < y0 || int32(y) >= y1 {
					t.Fatalf("band %+v covers (%g, %g) outside its rows [%d, %d) (ok %v)", l, x, y, y0, y1, ok)
				}
			}
		}
		if ok && (y0 < 0 || y1 > 48) {
			t.Fatalf("rows [%d, %d) outside the canvas", y0, y1)
		}
		if any {
			shown++
		} else if !ok {
			off++
		}
	}
	// Both kinds were tried.
	if shown < 100 || off < 20 {
		t.Errorf("%d bands shown, %d off the canvas: the test tries too few of one kind", shown, off)
	}
}

func bounds(w *scene.World) []objectBounds {
	var bs []objectBounds
	for i := range w.Objects {
		bs = append(bs, boundsOf(i, &w.Objects[i], vec3(w.Camera.Forward()), vec3(w.Camera.Eye)))
	}
	return bs
}

func TestPaintOrder(t *testing.T) {
	eye := vec3{0, 5, 10}
	cam := scene.Camera{Eye: scene.Vec3(eye), Pitch: -0.4, FovY: 0.9, Near: 0.1, Far: 100}
	cube := func(x, y, z float64) scene.Object {
		return scene.Object{Shape: scene.Cube, Center: scene.Vec3{x, y, z}, Size: 1}
	}
	sphere := func(x, y, z float64) scene.Object {
		return scene.Object{Shape: scene.Sphere, Center: scene.Vec3{x, y, z}, Size: 1}
	}
	order := func(w *scene.World) ([]int, bool) {
		bs := bounds(w)
		ok := paintOrder(bs, w.Objects, eye)
		var idx []int
		for _, b := range bs {
			idx = append(idx, b.index)
		}
		return idx, ok
	}
	for _, c := range []struct {
		name    string
		objects []scene.Object
		want    []int // far to near; nil: no order
	}{
		// Footprints 1.5 apart (> √2, the cubes' footprint diameter),
		// though their bounding balls (√3 across) overlap.
		{"cubes in a row", []scene.Object{cube(0, 0.5, 3), cube(0, 0.5, 1.5), cube(0, 0.5, 0)}, []int{2, 1, 0}},
		// Same footprint, disjoint balls: ordered in 3D, the upper one,
		// nearer the eye, last.
		{"stacked spheres", []scene.Object{sphere(0, 2, 0), sphere(0, 0.5, 0)}, []int{1, 0}},
		{"interpenetrating", []scene.Object{cube(0, 0.5, 0), sphere(0.6, 0.5, 0)}, nil},
		// Ties keep the world's order.
		{"tie", []scene.Object{sphere(-2, 0.5, 0), sphere(2, 0.5, 0)}, []int{0, 1}},
	} {
		got, ok := order(&scene.World{Camera: cam, Objects: c.objects})
		if c.want == nil {
			if ok {
				t.Errorf("%s: ordered %v, want no order", c.name, got)
			}
			continue
		}
		if !ok {
			t.Errorf("%s: no order, want %v", c.name, c.want)
			continue
		}
		for i := range c.want {
			if got[i] != c.want[i] {
				t.Errorf("%s: order %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}

// Layout of a real objects frame allocates nothing once its buffers have
// grown, and picks the painter path with grid lines.
func TestLayoutObjectsFrame(t *testing.T) {
	c, err := scene.New(scene.Params{Domain: scene.ObjectsDomain, N: 50, Class: "cube-red", Seed: 0, Duration: 5, FPS: 30, Width: 1920, Height: 1080})
	if err != nil {
		t.Fatal(err)
	}
	dl := c.State(2.5)
	f := &frame{}
	dst := Image{Width: 1920, Height: 1080}
	if err := f.layout(dl, dst, false, nil); err != nil {
		t.Fatal(err)
	}
	if !f.world.painter || !f.world.rasterGround || len(f.groundLines) == 0 || len(f.objRuns) != 1 || f.objRuns[0].sphere {
		t.Fatalf("painter %v, raster ground %v, %d grid lines, runs %v", f.world.painter, f.world.rasterGround, len(f.groundLines), f.objRuns)
	}
	if n := len(f.impostors) / floatsPerImpostor; n == 0 || n > 50 || f.objRuns[0].count != n {
		t.Fatalf("%d impostors, runs %v", n, f.objRuns)
	}
	if allocs := testing.AllocsPerRun(20, func() {
		if err := f.layout(dl, dst, false, nil); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Errorf("%v allocations a layout", allocs)
	}
}

// The ground's edges seen from straight above: its sides x = ±2 are
// columns 60 and 140, z = ±2 rows 60 and 140 (20 px a unit, z down the
// image); every point is at depth 10, inside [near, far] or not at all.
func TestGroundEdges(t *testing.T) {
	_, rm, _ := topDownGrid()
	sd := func(l [3]float32, x, y float64) float64 { return float64(l[0])*x + float64(l[1])*y + float64(l[2]) }
	e := groundEdges(&rm, 2, 1, 50)
	for _, c := range []struct {
		edge       int
		x, y, want float64
	}{
		{0, 150, 100, 10}, {0, 130, 100, -10}, // x = +2: outside to the right
		{1, 50, 100, 10}, {1, 70, 100, -10}, // x = −2
		{2, 100, 150, 10}, {3, 100, 50, 10}, // z = ±2
		{4, 100, 100, -1e4}, {5, 10, 10, -1e4}, // depth 10 is within [1, 50] everywhere
	} {
		if got := sd(e[c.edge], c.x, c.y); math.Abs(got-c.want) > 1e-3*math.Max(1, math.Abs(c.want)) {
			t.Errorf("edge %d at (%g, %g): %g, want %g", c.edge, c.x, c.y, got, c.want)
		}
	}
	// A far plane nearer than the ground: nothing of it is drawn.
	e = groundEdges(&rm, 2, 1, 5)
	if got := sd(e[5], 100, 100); got <= 0 {
		t.Errorf("ground beyond Far: far edge distance %g, want outside", got)
	}
	// Looking at the horizon: the far edge lies below it, and a pixel on
	// the horizon row is outside.
	cam := scene.Camera{Eye: scene.Vec3{0, 4, 0}, FovY: 0.9, Near: 0.1, Far: 100}
	m := clipMatrix(cam, 240, 160, fit(240, 160, 240, 160), 240, 160)
	hrm, _ := newRayMap(m, cam.Eye, 240, 160)
	e = groundEdges(&hrm, 1000, 0.1, 100)
	// The horizon is row 80 (pitch 0); depth 100 is 4/100 below it: tan⁻¹
	// 0.04 of the half field of view 0.45 over 80 rows.
	wantRow := 80 + 80*0.04/math.Tan(0.45)
	if got := sd(e[5], 120, wantRow); math.Abs(got) > 0.01 {
		t.Errorf("far edge at row %.3f: distance %g, want 0", wantRow, got)
	}
	if got := sd(e[5], 120, 80.5); got < 5 {
		t.Errorf("horizon row: far edge distance %g, want well outside", got)
	}
}

// BenchmarkPaintGround paints the ground of real CountVideoBench frames
// (1920×1080, the camera turning; layout not timed): the CPU cost the
// painter path's raster ground adds to a frame, in place of drawing the
// grid lines with GL.
func BenchmarkPaintGround(b *testing.B) {
	c, err := scene.New(scene.Params{Domain: scene.ObjectsDomain, N: 50, Class: "cube-red", Seed: 0, Duration: 5, FPS: 30, Width: 1920, Height: 1080})
	if err != nil {
		b.Fatal(err)
	}
	dst := Image{Width: 1920, Height: 1080, Stride: 4 * 1920}
	dst.Pix = make([]byte, dst.Stride*dst.Height)
	frames := make([]*frame, 30)
	lines := 0
	for k := range frames {
		f := &frame{}
		if err := f.layout(c.State(float64(k*5)/30), dst, true, nil); err != nil {
			b.Fatal(err)
		}
		if !f.world.rasterGround {
			b.Fatalf("frame %d: ground not painted", k)
		}
		frames[k], lines = f, lines+len(f.groundLines)
	}
	k := 0
	for b.Loop() {
		if err := frames[k%len(frames)].paintGround(dst, false); err != nil {
			b.Fatal(err)
		}
		k++
	}
	b.ReportMetric(float64(lines)/float64(len(frames)), "lines/frame")
}
