package gpu_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/gpu/gputest"
	"github.com/tracegrid/tracegrid/scene"
	"github.com/tracegrid/tracegrid/shaders"
)

var (
	sky    = scene.RGBA{R: 0.55, G: 0.7, B: 0.9, A: 1}
	grass  = scene.RGBA{R: 0.35, G: 0.55, B: 0.3, A: 1}
	chalk  = scene.RGBA{R: 0.9, G: 0.9, B: 0.85, A: 1}
	green  = scene.RGBA{R: 0.1, G: 0.8, B: 0.2, A: 1}
	yellow = scene.RGBA{R: 0.95, G: 0.8, B: 0.1, A: 1}
)

// frontCamera stands 6 units in front of the origin, 2 up, looking a little
// down along −z.
var frontCamera = scene.Camera{Eye: scene.Vec3{0, 2, 6}, Pitch: -0.25, FovY: 1.0, Near: 0.1, Far: 100}

func worldList(w, h int, world *scene.World, items ...scene.Item) *scene.DrawList {
	return &scene.DrawList{Width: w, Height: h, Background: sky, World: world, Items: items}
}

// pixelOf is where the contract puts world point p on a w×h canvas drawn
// at scale 1: the pixel containing ((x+1)/2·W, (1−y)/2·H).
func pixelOf(t *testing.T, cam scene.Camera, p scene.Vec3, w, h int) (int, int) {
	t.Helper()
	x, y, _, front := cam.Project(p, float64(w)/float64(h))
	if !front {
		t.Fatalf("%v is behind the camera", p)
	}
	px, py := int(math.Floor((x+1)/2*float64(w))), int(math.Floor((1-y)/2*float64(h)))
	if px < 0 || py < 0 || px >= w || py >= h {
		t.Fatalf("%v projects to (%d, %d), outside %dx%d", p, px, py, w, h)
	}
	return px, py
}

// pixelsOf lists the pixels whose colour is within tol of c (tol 1 at
// least, as drivers round c*255 differently when it ends in .5).
func pixelsOf(img gpu.Image, c scene.RGBA, tol int) [][2]int {
	tol = max(tol, 1)
	var ps [][2]int
	want := bytesOf(c)
	for y := 0; y < img.Height; y++ {
		for x := 0; x < img.Width; x++ {
			if maxDiff(at(img, x, y), want) <= tol {
				ps = append(ps, [2]int{x, y})
			}
		}
	}
	return ps
}

func TestWorldShadersCompile(t *testing.T) {
	r := renderer(t)
	for name, p := range map[string][3]string{
		"object":      {shaders.ObjectVertex, "", shaders.ObjectFragment},
		"ground":      {shaders.GroundVertex, "", shaders.GroundFragment},
		"cube":        {shaders.ImpostorVertex, "#define CUBE\n", shaders.CubeFragment},
		"sphere":      {shaders.ImpostorVertex, "", shaders.SphereFragment},
		"ground view": {shaders.GroundViewVertex, "", shaders.GroundViewFragment},
	} {
		if err := gpu.BuildProgram(r, p[0], p[1], p[2]); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestWorldFlatCube(t *testing.T) {
	const w, h = 160, 120
	cube := scene.Object{Shape: scene.Cube, Center: scene.Vec3{0.5, 0.5, 0}, Size: 1, Yaw: 0.4, Color: red, Flat: true}
	world := &scene.World{
		Camera:  frontCamera,
		Ground:  scene.Ground{Half: 10, Color: grass, LineColor: chalk, LineSpacing: 1, LineWidth: 0},
		Light:   scene.Light{Dir: scene.Vec3{0, 1, 0}, Ambient: 0.5, Diffuse: 0.5},
		Objects: []scene.Object{cube},
	}
	img := render(t, worldList(w, h, world), w, h)
	x, y := pixelOf(t, frontCamera, cube.Center, w, h)
	wantPx(t, img, x, y, red, 0, "projection of the cube's centre")
	// Its neighbours too: the cube is well over one pixel wide.
	for _, d := range [][2]int{{-2, 0}, {2, 0}, {0, -2}, {0, 2}} {
		wantPx(t, img, x+d[0], y+d[1], red, 0, "near the cube's centre")
	}
	gx, gy := pixelOf(t, frontCamera, scene.Vec3{-3, 0, 2}, w, h)
	wantPx(t, img, gx, gy, grass, 0, "ground away from the cube")
	wantPx(t, img, 2, 2, sky, 0, "sky above the horizon")
	wantPx(t, img, w-3, 2, sky, 0, "sky above the horizon")
}

func TestWorldDepth(t *testing.T) {
	// Camera on the z axis looking along −z; a small near object in front of
	// a large far one, on the same line of sight.
	cam := scene.Camera{Eye: scene.Vec3{0, 1, 5}, FovY: 0.8, Near: 0.1, Far: 50}
	const w, h = 120, 90
	for _, c := range []struct {
		name      string
		near, far scene.Shape
	}{
		{"cube before cube", scene.Cube, scene.Cube},
		{"sphere before sphere", scene.Sphere, scene.Sphere},
		{"sphere before cube", scene.Sphere, scene.Cube},
		{"cube before sphere", scene.Cube, scene.Sphere},
	} {
		near := scene.Object{Shape: c.near, Center: scene.Vec3{0, 1, 1}, Size: 0.6, Color: red, Flat: true}
		far := scene.Object{Shape: c.far, Center: scene.Vec3{0, 1, -4}, Size: 4, Color: blue, Flat: true}
		for _, objs := range [][]scene.Object{{near, far}, {far, near}} {
			world := &scene.World{Camera: cam, Objects: objs}
			img := render(t, worldList(w, h, world), w, h)
			x, y := pixelOf(t, cam, near.Center, w, h)
			wantPx(t, img, x, y, red, 0, c.name+": nearer object on the line of sight")
			// The far object shows around the near one.
			ex, ey := pixelOf(t, cam, scene.Vec3{0.8, 1, -2}, w, h)
			wantPx(t, img, ex, ey, blue, 0, c.name+": far object beside the near one")
		}
	}
}

// Both paths anti-alias a sphere's silhouette: the painter path with its
// analytic coverage, the depth path with multisampling (where the driver
// has it).
func TestWorldEdgesAntiAliased(t *testing.T) {
	renderer(t)
	r, err := gpu.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	t.Logf("GL_MAX_SAMPLES = %d", r.Info().MaxSamples)
	cam := scene.Camera{Eye: scene.Vec3{0, 0, 5}, FovY: 0.8, Near: 0.1, Far: 50}
	const w, h = 120, 90
	world := &scene.World{Camera: cam, Objects: []scene.Object{
		{Shape: scene.Sphere, Center: scene.Vec3{0, 0, 0}, Size: 2, Color: red, Flat: true},
	}}
	for _, depth := range []bool{false, true} {
		if depth && r.Info().MaxSamples < 2 {
			t.Log("the driver cannot multisample: the depth path's edges alias")
			continue
		}
		gpu.ForcePaths(r, depth, false)
		img := newImage(w, h)
		if err := r.Render(worldList(w, h, world), img); err != nil {
			t.Fatal(err)
		}
		// Walk from the centre outward along a few directions: the
		// silhouette crossing must have pixels that are neither colour.
		cx, cy := pixelOf(t, cam, scene.Vec3{0, 0, 0}, w, h)
		for _, d := range [][2]float64{{1, 0}, {1, 1}, {2, 1}, {0, -1}, {-1, 2}} {
			blended := 0
			l := math.Hypot(d[0], d[1])
			// Half-pixel steps visit every pixel the ray crosses (some twice).
			for k := 0.0; k < 120; k++ {
				x := cx + int(math.Round(k/2*d[0]/l))
				y := cy + int(math.Round(k/2*d[1]/l))
				if x < 0 || y < 0 || x >= w || y >= h {
					break
				}
				p := at(img, x, y)
				if maxDiff(p, bytesOf(red)) > 16 && maxDiff(p, bytesOf(sky)) > 16 {
					blended++
				}
			}
			if blended == 0 {
				t.Errorf("depth path %v, direction %v: no blended pixel across the sphere's edge", depth, d)
			}
		}
	}
}

func TestWorldOrientation(t *testing.T) {
	// Up-left in view must be top-left in the image (row 0 on top), and
	// down-right bottom-right. Checked by where the colours are, not through
	// Camera.Project, so a sign error shared by both would still show.
	cam := scene.Camera{Eye: scene.Vec3{0, 0, 8}, FovY: 1.0, Near: 0.1, Far: 50}
	const w, h = 160, 100
	world := &scene.World{Camera: cam, Objects: []scene.Object{
		{Shape: scene.Cube, Center: scene.Vec3{-2.5, 1.5, 0}, Size: 1, Color: red, Flat: true},
		{Shape: scene.Sphere, Center: scene.Vec3{2.5, -1.5, 0}, Size: 1, Color: blue, Flat: true},
	}}
	img := render(t, worldList(w, h, world), w, h)
	centroid := func(c scene.RGBA) (float64, float64) {
		ps := pixelsOf(img, c, 0)
		if len(ps) == 0 {
			t.Fatalf("no pixel of %v", bytesOf(c))
		}
		var sx, sy float64
		for _, p := range ps {
			sx, sy = sx+float64(p[0]), sy+float64(p[1])
		}
		return sx / float64(len(ps)), sy / float64(len(ps))
	}
	if x, y := centroid(red); x > w/2 || y > h/2 {
		t.Errorf("up-left cube centred at (%.1f, %.1f), want the top-left quadrant", x, y)
	}
	if x, y := centroid(blue); x < w/2 || y < h/2 {
		t.Errorf("down-right sphere centred at (%.1f, %.1f), want the bottom-right quadrant", x, y)
	}
	// And the same places Camera.Project gives.
	x, y := pixelOf(t, cam, world.Objects[0].Center, w, h)
	wantPx(t, img, x, y, red, 0, "cube at its projection")
	x, y = pixelOf(t, cam, world.Objects[1].Center, w, h)
	wantPx(t, img, x, y, blue, 0, "sphere at its projection")
}

// topDown looks straight down on the origin from height 10 and sees
// ±5 units vertically on a square canvas: 20 px a unit at 200×200.
var topDown = scene.Camera{Eye: scene.Vec3{0, 10, 0}, Pitch: -math.Pi / 2, FovY: 2 * math.Atan(0.5), Near: 1, Far: 50}

func TestWorldGroundLines(t *testing.T) {
	const w, h = 200, 200
	// 20 px a unit: lines 8.5 px wide every 40 px. The line on x = 0 covers
	// output columns 95.75 to 104.25.
	world := &scene.World{Camera: topDown, Ground: scene.Ground{
		Half: 20, Color: grass, LineColor: chalk, LineSpacing: 2, LineWidth: 0.425,
	}}
	img := render(t, worldList(w, h, world), w, h)
	for _, p := range []scene.Vec3{{0, 0, 1}, {2, 0, -1}, {-4, 0, 3}, {1, 0, 0}, {-1, 0, 2}, {0, 0, 0}} {
		x, y := pixelOf(t, topDown, p, w, h)
		wantPx(t, img, x, y, chalk, 2, "on a line")
	}
	for _, p := range []scene.Vec3{{1, 0, 1}, {-1, 0, -1}, {3, 0, 3}, {0.6, 0, 0.6}} {
		x, y := pixelOf(t, topDown, p, w, h)
		wantPx(t, img, x, y, grass, 0, "between lines")
	}
	// The edges are box-filtered over the pixel: columns 95 and 104 are a
	// quarter covered.
	_, y := pixelOf(t, topDown, scene.Vec3{0, 0, 1}, w, h)
	quarter := scene.RGBA{
		R: grass.R + (chalk.R-grass.R)/4, G: grass.G + (chalk.G-grass.G)/4, B: grass.B + (chalk.B-grass.B)/4, A: 1,
	}
	for x := 94; x <= 105; x++ {
		switch {
		case x == 95 || x == 104:
			wantPx(t, img, x, y, quarter, 2, "line edge, a quarter covered")
		case x > 95 && x < 104:
			wantPx(t, img, x, y, chalk, 0, "inside the line")
		default:
			wantPx(t, img, x, y, grass, 0, "beside the line")
		}
	}
}

func TestWorldGroundFadesWithDistance(t *testing.T) {
	// Looking across a large ground toward the horizon, lines far away are
	// much narrower than a pixel apart: pixels there must be close to the
	// average of line and ground colour, with no moiré bands.
	const w, h = 240, 160
	cam := scene.Camera{Eye: scene.Vec3{0, 4, 0}, Pitch: -0.08, FovY: 0.9, Near: 0.1, Far: 2000}
	g := scene.Ground{Half: 1000, Color: grass, LineColor: chalk, LineSpacing: 1, LineWidth: 0.1}
	img := render(t, worldList(w, h, &scene.World{Camera: cam, Ground: g}), w, h)
	// Coverage of the grid where it is averaged: 1 − (1 − 0.1)².
	cover := 1 - (1-0.1)*(1-0.1)
	mix := func(a, b float32) float32 { return a + (b-a)*float32(cover) }
	avg := scene.RGBA{R: mix(grass.R, chalk.R), G: mix(grass.G, chalk.G), B: mix(grass.B, chalk.B), A: 1}
	// Point 400 units ahead: lines 1 unit apart are far below a pixel.
	_, y := pixelOf(t, cam, scene.Vec3{0, 0, -400}, w, h)
	worst, sum := 0, 0.0
	for x := w / 4; x < 3*w/4; x++ {
		d := maxDiff(at(img, x, y), bytesOf(avg))
		worst = max(worst, d)
		sum += float64(at(img, x, y)[0])
	}
	mean := sum / float64(w/2)
	t.Logf("row %d: worst difference from the average colour %d, mean red %.1f (average %d)", y, worst, mean, bytesOf(avg)[0])
	if worst > 20 {
		t.Errorf("row %d far away: a pixel %d levels from the average colour %v: aliasing", y, worst, bytesOf(avg))
	}
	if math.Abs(mean-float64(bytesOf(avg)[0])) > 6 {
		t.Errorf("row %d far away: mean red %.1f, want about %d", y, mean, bytesOf(avg)[0])
	}
}

// litCube is a cube seen from the front-right and above, so its top (+y)
// and front (+z) faces show.
func litCubeWorld(obj scene.Object) *scene.World {
	return &scene.World{
		Camera:  scene.Camera{Eye: scene.Vec3{1.5, 3, 4}, Yaw: 0.3, Pitch: -0.55, FovY: 0.8, Near: 0.1, Far: 50},
		Light:   scene.Light{Dir: scene.Vec3{0, 1, 0}, Ambient: 0.3, Diffuse: 0.6},
		Objects: []scene.Object{obj},
	}
}

func scale(c scene.RGBA, k float32) scene.RGBA {
	return scene.RGBA{R: c.R * k, G: c.G * k, B: c.B * k, A: c.A}
}

func TestWorldLighting(t *testing.T) {
	const w, h = 160, 120
	col := scene.RGBA{R: 0.8, G: 0.6, B: 0.4, A: 1}
	cube := scene.Object{Shape: scene.Cube, Center: scene.Vec3{0, 0.5, 0}, Size: 1.6, Color: col}
	world := litCubeWorld(cube)
	img := render(t, worldList(w, h, world), w, h)
	cam := world.Camera
	x, y := pixelOf(t, cam, scene.Vec3{0, 0.5 + 0.8, 0}, w, h)
	wantPx(t, img, x, y, scale(col, 0.3+0.6), 1, "top face: ambient + diffuse")
	x, y = pixelOf(t, cam, scene.Vec3{0, 0.5, 0.8}, w, h)
	wantPx(t, img, x, y, scale(col, 0.3), 1, "front face: ambient only")

	// A yawed cube, lit from +x. Yaw turns about +y in the camera's sense
	// (positive turns −z toward −x), so with yaw −0.5 the +x face turns
	// toward the camera and the light (normal (cos 0.5, 0, sin 0.5)) and
	// the +z face away from the light (normal (−sin 0.5, 0, cos 0.5)).
	cube.Yaw = -0.5
	world = litCubeWorld(cube)
	world.Light.Dir = scene.Vec3{2, 0, 0} // normalized by the renderer
	img = render(t, worldList(w, h, world), w, h)
	c5, s5 := math.Cos(0.5), math.Sin(0.5)
	x, y = pixelOf(t, cam, scene.Vec3{0.8 * c5, 0.5, 0.8 * s5}, w, h)
	wantPx(t, img, x, y, scale(col, 0.3+0.6*float32(c5)), 1, "yawed +x face, turned toward the light")
	x, y = pixelOf(t, cam, scene.Vec3{-0.8 * s5, 0.5, 0.8 * c5}, w, h)
	wantPx(t, img, x, y, scale(col, 0.3), 1, "yawed +z face, turned away from the light")
	x, y = pixelOf(t, cam, scene.Vec3{0, 0.5 + 0.8, 0}, w, h)
	wantPx(t, img, x, y, scale(col, 0.3), 1, "top face, light from the side")

	// A lit sphere (radius 1.5 at the origin, light from the front right):
	// full light where the normal is the light's direction, ambient where
	// it faces away. Both points face the camera, so they are what their
	// pixels show; smooth normals change by about 2° a pixel here, so the
	// brightest point is within a level of its value.
	dir := scene.Vec3{math.Sqrt(0.5), 0, math.Sqrt(0.5)}
	world = &scene.World{
		Camera:  scene.Camera{Eye: scene.Vec3{0, 0, 6}, FovY: 0.8, Near: 0.1, Far: 50},
		Light:   scene.Light{Dir: dir, Ambient: 0.2, Diffuse: 0.7},
		Objects: []scene.Object{{Shape: scene.Sphere, Size: 3, Color: white}},
	}
	img = render(t, worldList(w, h, world), w, h)
	x, y = pixelOf(t, world.Camera, scene.Vec3{1.5 * dir[0], 0, 1.5 * dir[2]}, w, h)
	wantPx(t, img, x, y, scale(white, 0.2+0.7), 2, "sphere facing the light")
	x, y = pixelOf(t, world.Camera, scene.Vec3{-1.5 * 0.8, 0, 1.5 * 0.6}, w, h) // n·Dir < 0
	wantPx(t, img, x, y, scale(white, 0.2), 1, "sphere facing away from the light")
}

func TestWorldNoise(t *testing.T) {
	const w, h = 160, 120
	col := scene.RGBA{R: 0.7, G: 0.5, B: 0.3, A: 1}
	const amp = 0.15
	cube := scene.Object{Shape: scene.Cube, Center: scene.Vec3{0, 0.5, 0}, Size: 1.6, Color: col}
	plain := render(t, worldList(w, h, litCubeWorld(cube)), w, h)
	// The cube's pixels, from a flat render of the same geometry.
	flat := cube
	flat.Flat, flat.Color = true, red
	mask := render(t, worldList(w, h, litCubeWorld(flat)), w, h)
	inside := pixelsOf(mask, red, 0)
	if len(inside) < 500 {
		t.Fatalf("only %d cube pixels", len(inside))
	}

	noisy := func(seed uint32) gpu.Image {
		o := cube
		o.Noise, o.NoiseSeed = amp, seed
		return render(t, worldList(w, h, litCubeWorld(o)), w, h)
	}
	a, b := noisy(1), noisy(2)
	if again := noisy(1); !bytes.Equal(a.Pix, again.Pix) {
		t.Error("the same seed gave different pixels")
	}
	differ := 0
	var sumPlain, sumA float64
	for _, p := range inside {
		pp, pa, pb := at(plain, p[0], p[1]), at(a, p[0], p[1]), at(b, p[0], p[1])
		if maxDiff(pa, pb) > 2 {
			differ++
		}
		// Brightness × (1 + amp·n), |n| ≤ 1: each channel within amp of
		// the noiseless value, relatively.
		for c := 0; c < 3; c++ {
			if math.Abs(float64(pa[c])-float64(pp[c])) > amp*float64(pp[c])+1.5 {
				t.Fatalf("pixel %v channel %d: %d with noise, %d without: beyond the amplitude", p, c, pa[c], pp[c])
			}
		}
		sumPlain += float64(pp[0])
		sumA += float64(pa[0])
	}
	if differ < len(inside)/4 {
		t.Errorf("seeds 1 and 2 differ in %d of %d cube pixels, want many", differ, len(inside))
	}
	n := float64(len(inside))
	meanPlain, meanA := sumPlain/n, sumA/n
	t.Logf("%d cube pixels, %d differ between seeds; mean red %.1f without noise, %.1f with", len(inside), differ, meanPlain, meanA)
	if math.Abs(meanA-meanPlain) > amp*meanPlain {
		t.Errorf("mean red %.1f with noise, %.1f without: more than the amplitude apart", meanA, meanPlain)
	}
	// Noise changes brightness, not hue: the channel ratios stay.
	for _, p := range inside {
		pa := at(a, p[0], p[1])
		if pa[0] > 40 && math.Abs(float64(pa[1])/float64(pa[0])-0.5/0.7) > 0.05 {
			t.Fatalf("pixel %v = %v: hue changed", p, pa)
		}
	}
}

func TestWorldItemsOnTop(t *testing.T) {
	const w, h = 120, 90
	cam := scene.Camera{Eye: scene.Vec3{0, 0, 4}, FovY: 1.0, Near: 0.1, Far: 50}
	world := &scene.World{Camera: cam, Objects: []scene.Object{
		{Shape: scene.Cube, Size: 2, Color: red, Flat: true},
	}}
	dl := worldList(w, h, world,
		scene.Item{Kind: scene.FillRect, X0: 50, Y0: 35, X1: 70, Y1: 55, Color: blue},
		scene.Item{Kind: scene.FillRect, X0: 0, Y0: 0, X1: 10, Y1: 10, Color: scene.RGBA{A: 0.5}})
	img := render(t, dl, w, h)
	wantPx(t, img, 60, 45, blue, 0, "item over the cube")
	wantPx(t, img, 45, 45, red, 0, "cube beside the item")
	// Half-transparent black over the sky: the world is under the items.
	wantPx(t, img, 5, 5, scale(sky, 0.5), 1, "translucent item over the world")
	// Items' edges are as sharp as without a world.
	wantPx(t, img, 50, 45, blue, 0, "item's left edge column")
	wantPx(t, img, 49, 45, red, 0, "left of the item")
}

// TestWorldLeavesNoState renders 2D lists before and after world frames:
// a world must not change how later 2D frames come out (bound objects,
// depth test, culling, scissor).
func TestWorldLeavesNoState(t *testing.T) {
	dl := compositeList()
	before := render(t, dl, 320, 200)
	world := goldenWorld()
	_ = render(t, worldList(320, 180, world), 320, 180)
	_ = render(t, worldList(160, 100, world), 320, 200)
	after := render(t, dl, 320, 200)
	if !bytes.Equal(before.Pix, after.Pix) {
		t.Fatal("a world-less list renders differently after a world frame")
	}
}

func TestWorldLetterbox(t *testing.T) {
	// A 160×90 canvas in a 240×240 output: scale 1.5, 0 px left, 52.5 px
	// rounded to 53 above. The world must stay inside the canvas, and land
	// where the 2D items' mapping puts its canvas pixels.
	cam := scene.Camera{Eye: scene.Vec3{0, 0, 3}, FovY: 1.2, Near: 0.1, Far: 50}
	world := &scene.World{Camera: cam, Objects: []scene.Object{
		// Far bigger than the view: it would fill the whole output
		// without the canvas's limits.
		{Shape: scene.Cube, Center: scene.Vec3{0, 0, -30}, Size: 40, Color: red, Flat: true},
		{Shape: scene.Sphere, Center: scene.Vec3{-1, 0.5, 0}, Size: 0.5, Color: blue, Flat: true},
	}}
	const cw, ch, ow, oh = 160, 90, 240, 240
	img := render(t, worldList(cw, ch, world), ow, oh)
	wantPx(t, img, 120, 52, sky, 0, "top margin")
	wantPx(t, img, 120, 53, red, 0, "canvas's first row")
	wantPx(t, img, 120, 187, red, 0, "canvas's last row")
	wantPx(t, img, 120, 188, sky, 0, "bottom margin")
	x, y, _, _ := cam.Project(world.Objects[1].Center, float64(cw)/ch)
	ox := (x + 1) / 2 * cw * 1.5
	oy := (1-y)/2*ch*1.5 + 53
	wantPx(t, img, int(ox), int(oy), blue, 0, "sphere where the canvas mapping puts it")
}

func TestWorldErrors(t *testing.T) {
	r := renderer(t)
	good := func() *scene.World {
		return &scene.World{
			Camera:  frontCamera,
			Ground:  scene.Ground{Half: 5, Color: grass, LineColor: chalk, LineSpacing: 1, LineWidth: 0.05},
			Light:   scene.Light{Dir: scene.Vec3{0, 1, 0}, Ambient: 0.3, Diffuse: 0.7},
			Objects: []scene.Object{{Shape: scene.Cube, Size: 1, Color: red}},
		}
	}
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		name   string
		change func(w *scene.World)
		want   string
	}{
		{"NaN eye", func(w *scene.World) { w.Camera.Eye[1] = nan }, "non-finite"},
		{"Inf yaw", func(w *scene.World) { w.Camera.Yaw = inf }, "non-finite"},
		{"eye beyond float32", func(w *scene.World) { w.Camera.Eye[0] = 1e300 }, "non-finite"},
		{"zero fov", func(w *scene.World) { w.Camera.FovY = 0 }, "FovY"},
		{"fov π", func(w *scene.World) { w.Camera.FovY = math.Pi }, "FovY"},
		{"negative fov", func(w *scene.World) { w.Camera.FovY = -1 }, "FovY"},
		{"zero near", func(w *scene.World) { w.Camera.Near = 0 }, "Near"},
		{"far before near", func(w *scene.World) { w.Camera.Far = 0.05 }, "Far"},
		{"far at near", func(w *scene.World) { w.Camera.Far = w.Camera.Near }, "Far"},
		{"matrix overflows", func(w *scene.World) { w.Camera.FovY = 1e-39 }, "float32"},
		{"negative half", func(w *scene.World) { w.Ground.Half = -1 }, "Half"},
		{"zero spacing", func(w *scene.World) { w.Ground.LineSpacing = 0 }, "LineSpacing"},
		{"negative line width", func(w *scene.World) { w.Ground.LineWidth = -0.1 }, "LineWidth"},
		{"NaN ground colour", func(w *scene.World) { w.Ground.Color.G = float32(nan) }, "non-finite"},
		{"NaN light", func(w *scene.World) { w.Light.Diffuse = float32(nan) }, "non-finite"},
		{"zero size", func(w *scene.World) { w.Objects[0].Size = 0 }, "Size"},
		{"negative size", func(w *scene.World) { w.Objects[0].Size = -1 }, "Size"},
		{"NaN centre", func(w *scene.World) { w.Objects[0].Center[2] = nan }, "non-finite"},
		{"Inf noise", func(w *scene.World) { w.Objects[0].Noise = float32(inf) }, "non-finite"},
		{"unknown shape", func(w *scene.World) { w.Objects[0].Shape = 7 }, "unknown shape"},
	} {
		world := good()
		c.change(world)
		err := r.Render(worldList(40, 30, world), newImage(40, 30))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	// Not errors: no ground at all (Half 0, no spacing), zero line width,
	// a zero light direction (ambient only), no objects.
	for name, change := range map[string]func(w *scene.World){
		"no ground":       func(w *scene.World) { w.Ground = scene.Ground{} },
		"no lines":        func(w *scene.World) { w.Ground.LineWidth = 0 },
		"no light dir":    func(w *scene.World) { w.Light.Dir = scene.Vec3{} },
		"no objects":      func(w *scene.World) { w.Objects = nil },
		"invisible":       func(w *scene.World) { w.Objects[0].Color.A = 0 },
		"camera top-down": func(w *scene.World) { w.Camera.Pitch = -math.Pi / 2 },
	} {
		world := good()
		change(world)
		if err := r.Render(worldList(40, 30, world), newImage(40, 30)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Still works after rejected frames.
	img := render(t, worldList(40, 30, good()), 40, 30)
	wantPx(t, img, 1, 1, sky, 0, "after errors")
}

func TestWorldDeterministic(t *testing.T) {
	dl := worldList(320, 180, goldenWorld())
	a := render(t, dl, 320, 180)
	_ = render(t, dl, 160, 90) // a size change re-creates the framebuffers
	b := render(t, dl, 320, 180)
	c := render(t, dl, 320, 180)
	if !bytes.Equal(a.Pix, b.Pix) || !bytes.Equal(b.Pix, c.Pix) {
		t.Fatal("rendering the same world twice gave different bytes")
	}
}

func TestWorldStrideAndNoReadback(t *testing.T) {
	dl := worldList(97, 61, goldenWorld())
	ref := render(t, dl, 97, 61)
	w, h := 97, 61
	img := gpu.Image{Width: w, Height: h, Stride: 4*w + 12}
	img.Pix = make([]byte, (h-1)*img.Stride+4*w)
	if err := renderer(t).Render(dl, img); err != nil {
		t.Fatal(err)
	}
	for y := 0; y < h; y++ {
		if !bytes.Equal(img.Pix[y*img.Stride:y*img.Stride+4*w], ref.Pix[y*ref.Stride:y*ref.Stride+4*w]) {
			t.Fatalf("row %d differs from the tightly packed render", y)
		}
	}
	if err := gpu.RenderNoReadback(renderer(t), dl, 1280, 720); err != nil {
		t.Fatalf("RenderNoReadback: %v", err)
	}
}

// goldenWorld has a bit of everything: a lined ground, lit noisy cubes and
// spheres of a few colours and seeds, a yawed cube, a flat object and one
// object cut by the near plane's neighbourhood (close to the camera).
func goldenWorld() *scene.World {
	return &scene.World{
		Camera: scene.Camera{Eye: scene.Vec3{0, 3.2, 9}, Yaw: 0.15, Pitch: -0.3, FovY: 0.85, Near: 0.1, Far: 200},
		Ground: scene.Ground{Half: 30, Color: grass, LineColor: chalk, LineSpacing: 1, LineWidth: 0.06},
		Light:  scene.Light{Dir: scene.Vec3{0.4, 0.8, 0.45}, Ambient: 0.35, Diffuse: 0.65},
		Objects: []scene.Object{
			{Shape: scene.Cube, Center: scene.Vec3{-2, 0.5, 0}, Size: 1, Yaw: 0.5, Color: red, Noise: 0.12, NoiseSeed: 1},
			{Shape: scene.Cube, Center: scene.Vec3{-0.4, 0.5, -1}, Size: 1, Yaw: 0.2, Color: red, Noise: 0.12, NoiseSeed: 2},
			{Shape: scene.Sphere, Center: scene.Vec3{1.5, 0.6, 0.5}, Size: 1.2, Color: blue, Noise: 0.12, NoiseSeed: 3},
			{Shape: scene.Sphere, Center: scene.Vec3{3, 0.4, -2}, Size: 0.8, Color: yellow, Noise: 0.1, NoiseSeed: 4},
			{Shape: scene.Cube, Center: scene.Vec3{0.5, 1, -6}, Size: 2, Yaw: -0.7, Color: green, Noise: 0.1, NoiseSeed: 5},
			{Shape: scene.Sphere, Center: scene.Vec3{-3.5, 0.5, -4}, Size: 1, Color: white, Flat: true},
		},
	}
}

func TestGoldenWorld(t *testing.T) {
	ink := scene.RGBA{R: 0.1, G: 0.1, B: 0.12, A: 1}
	dl := worldList(320, 180, goldenWorld(),
		scene.Item{Kind: scene.FillRect, X0: 8, Y0: 8, X1: 120, Y1: 30, R: 4, Color: scene.RGBA{R: 1, G: 1, B: 1, A: 0.8}},
		scene.Item{Kind: scene.Text, X0: 64, Y0: 19, Size: 12, Text: "world + items", Color: ink},
		scene.Item{Kind: scene.Arrow, X0: 200, Y0: 40, X1: 178, Y1: 78, Width: 2, Head: 8, Color: ink})
	img := render(t, dl, 320, 180)
	again := render(t, dl, 320, 180)
	if !bytes.Equal(img.Pix, again.Pix) {
		t.Fatal("two renders of the golden world differ")
	}
	gputest.CompareGolden(t, "world", img, gputest.Default)
}

func TestWorldAllocationFree(t *testing.T) {
	r := renderer(t)
	// The golden world (painter path, ground view shader), one seen from
	// above (painter path, grid lines) and one the depth path draws.
	lines := &scene.World{Camera: topDown, Ground: scene.Ground{Half: 20, Color: grass, LineColor: chalk, LineSpacing: 2, LineWidth: 0.1},
		Objects: goldenWorld().Objects}
	depth := &scene.World{Camera: frontCamera, Objects: []scene.Object{
		{Shape: scene.Cube, Size: 1, Color: red}, {Shape: scene.Sphere, Center: scene.Vec3{0.5, 0, 0}, Size: 1, Color: blue}}}
	for i, world := range []*scene.World{goldenWorld(), lines, depth} {
		dl := worldList(64, 36, world, scene.Item{Kind: scene.FillCircle, X0: 10, Y0: 10, R: 4, Color: red})
		painter, rasterGround, _, err := gpu.WorldPath(r, dl, 64, 36)
		if err != nil || painter != (i < 2) || rasterGround != (i == 1) {
			t.Fatalf("world %d: painter %v, raster ground %v, %v", i, painter, rasterGround, err)
		}
		img := newImage(64, 36)
		if err := r.Render(dl, img); err != nil { // creates what a world needs
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(10, func() {
			if err := r.Render(dl, img); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%v allocations a frame in steady state, want 0", allocs)
		}
	}
}

func TestWorldResourcesLazyAndFreed(t *testing.T) {
	renderer(t) // skip or fail like the others when there is no GL
	r, err := gpu.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Render(list(32, 32, white, scene.Item{Kind: scene.FillCircle, X0: 16, Y0: 16, R: 5, Color: red}), newImage(32, 32)); err != nil {
		t.Fatal(err)
	}
	if gpu.WorldAllocated(r) {
		t.Error("a renderer that drew only 2D created the 3D objects")
	}
	for _, size := range [][2]int{{64, 36}, {128, 72}} { // a size change re-creates the MSAA buffers
		img := newImage(size[0], size[1])
		if err := r.Render(worldList(64, 36, goldenWorld()), img); err != nil {
			t.Fatal(err)
		}
	}
	if !gpu.WorldAllocated(r) {
		t.Error("no 3D objects after a world frame")
	}
	// Close checks glGetError after deleting everything.
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func TestWorldTranslucent(t *testing.T) {
	// Translucent colours blend source-over, like items: a half-transparent
	// flat cube over the ground, and an invisible cube (alpha 0) that must
	// not hide the sphere behind it through the depth buffer.
	const w, h = 120, 90
	cam := scene.Camera{Eye: scene.Vec3{0, 1, 5}, FovY: 0.8, Near: 0.1, Far: 50}
	half := scene.RGBA{R: 1, A: 0.5}
	world := &scene.World{
		Camera: cam,
		Ground: scene.Ground{Half: 10, Color: grass, LineColor: chalk, LineSpacing: 1},
		Objects: []scene.Object{
			{Shape: scene.Cube, Center: scene.Vec3{-1, 0.5, 0}, Size: 1, Color: half, Flat: true},
			// On the depth path cubes are drawn before spheres: the
			// invisible cube comes first, so its depth would hide the
			// sphere.
			{Shape: scene.Cube, Center: scene.Vec3{1, 1, 2}, Size: 0.5, Color: scene.RGBA{G: 1}, Flat: true},
			{Shape: scene.Sphere, Center: scene.Vec3{2, 1, -1}, Size: 1, Color: blue, Flat: true}, // on the same line of sight
		},
	}
	renderer(t)
	r, err := gpu.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, depth := range []bool{false, true} {
		gpu.ForcePaths(r, depth, false)
		img := newImage(w, h)
		if err := r.Render(worldList(w, h, world), img); err != nil {
			t.Fatal(err)
		}
		// The cube's centre is seen against the ground just behind it.
		x, y := pixelOf(t, cam, scene.Vec3{-1, 0.5, 0.5}, w, h)
		want := scene.RGBA{R: 0.5 + grass.R/2, G: grass.G / 2, B: grass.B / 2, A: 1}
		wantPx(t, img, x, y, want, 1, "half-transparent cube over the ground")
		x, y = pixelOf(t, cam, scene.Vec3{1, 1, 2}, w, h)
		wantPx(t, img, x, y, blue, 0, "sphere behind an invisible cube")
	}
}

func TestWorldWithoutMSAA(t *testing.T) {
	// The depth path's fall back for drivers without multisampling: depth
	// still works, edges are hard. (The painter path never multisamples.)
	renderer(t) // skip or fail like the others when there is no GL
	r, err := gpu.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	gpu.PretendNoMSAA(r)
	cam := scene.Camera{Eye: scene.Vec3{0, 0, 5}, FovY: 0.8, Near: 0.1, Far: 50}
	const w, h = 120, 90
	world := &scene.World{Camera: cam, Objects: []scene.Object{
		{Shape: scene.Sphere, Center: scene.Vec3{0, 0, 0}, Size: 2, Color: red, Flat: true},
		{Shape: scene.Cube, Center: scene.Vec3{0, 0, -3}, Size: 3, Color: blue, Flat: true},
	}}
	// The sphere pokes into the cube's bounding ball: no painter's order.
	if painter, _, _, err := gpu.WorldPath(r, worldList(w, h, world), w, h); err != nil || painter {
		t.Fatalf("painter path %v, %v: want the depth path", painter, err)
	}
	img := newImage(w, h)
	if err := r.Render(worldList(w, h, world), img); err != nil {
		t.Fatal(err)
	}
	x, y := pixelOf(t, cam, scene.Vec3{}, w, h)
	wantPx(t, img, x, y, red, 0, "nearer sphere")
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			p := at(img, x, y)
			if maxDiff(p, bytesOf(red)) > 1 && maxDiff(p, bytesOf(blue)) > 1 && maxDiff(p, bytesOf(sky)) > 1 {
				t.Fatalf("pixel (%d,%d) = %v blends colours without multisampling", x, y, p)
			}
		}
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
