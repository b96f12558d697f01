package gpu_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/scene"
)

// objectsFrame is a real CountVideoBench frame at 1080p.
func objectsFrame(t *testing.T, n int, class string) *scene.DrawList {
	t.Helper()
	c, err := scene.New(scene.Params{Domain: scene.ObjectsDomain, N: n, Class: class, Seed: 0, Duration: 5, FPS: 30, Width: 1920, Height: 1080})
	if err != nil {
		t.Fatal(err)
	}
	return c.State(2.5)
}

func TestWorldPathChoice(t *testing.T) {
	r := renderer(t)
	ground := scene.Ground{Half: 50, Color: white, LineColor: chalk, LineSpacing: 1, LineWidth: 0.05}
	// Steep enough that the grid lines are far apart everywhere in view.
	cam := scene.Camera{Eye: scene.Vec3{0, 6, 8}, Pitch: -0.9, FovY: 0.8, Near: 0.5, Far: 60}
	obj := func(s scene.Shape, x, y, z, size float64) scene.Object {
		return scene.Object{Shape: s, Center: scene.Vec3{x, y, z}, Size: size, Color: red}
	}
	for _, c := range []struct {
		name                  string
		dl                    *scene.DrawList
		painter, rasterGround bool
		objects               int
	}{
		{"CountVideoBench cubes", objectsFrame(t, 50, "cube-red"), true, true, -1},
		{"CountVideoBench spheres", objectsFrame(t, 50, "sphere-blue"), true, true, -1},
		{"objects on the ground", worldList(320, 180, &scene.World{Camera: cam, Ground: ground, Objects: []scene.Object{
			obj(scene.Cube, 0, 0.5, 0, 1), obj(scene.Sphere, 1.5, 0.5, 0, 1), obj(scene.Cube, -1.5, 0.5, -1, 1)}}), true, true, 3},
		{"horizon in view", worldList(320, 180, goldenWorld()), true, false, 6},
		{"interpenetrating", worldList(320, 180, &scene.World{Camera: cam, Ground: ground, Objects: []scene.Object{
			obj(scene.Cube, 0, 0.5, 0, 1), obj(scene.Sphere, 0.6, 0.5, 0, 1)}}), false, false, 2},
		{"through the near plane", worldList(320, 180, &scene.World{Camera: cam, Objects: []scene.Object{
			obj(scene.Sphere, 0, 5.8, 7.5, 1)}}), false, false, 1},
		{"beyond the far plane", worldList(320, 180, &scene.World{Camera: cam, Objects: []scene.Object{
			obj(scene.Sphere, 0, -30, -40, 30)}}), false, false, 1},
		{"sunk into the ground", worldList(320, 180, &scene.World{Camera: cam, Ground: ground, Objects: []scene.Object{
			obj(scene.Cube, 0, 0.3, 0, 1)}}), false, false, 1},
		{"sunk, but no ground", worldList(320, 180, &scene.World{Camera: cam, Objects: []scene.Object{
			obj(scene.Cube, 0, 0.3, 0, 1)}}), true, false, 1},
		{"eye under the ground", worldList(320, 180, &scene.World{
			Camera: scene.Camera{Eye: scene.Vec3{0, -2, 8}, Pitch: 0.2, FovY: 0.8, Near: 0.5, Far: 60}, Ground: ground,
			Objects: []scene.Object{obj(scene.Cube, 0, 0.5, 0, 1)}}), false, false, 1},
		{"eye under the ground, nothing on it", worldList(320, 180, &scene.World{
			Camera: scene.Camera{Eye: scene.Vec3{0, -6, 8}, Pitch: 0.9, FovY: 0.8, Near: 0.5, Far: 60}, Ground: ground}), true, true, 0},
		// An object behind the camera is left out, so it cannot force the
		// depth path.
		{"behind the camera", worldList(320, 180, &scene.World{Camera: cam, Ground: ground, Objects: []scene.Object{
			obj(scene.Cube, 0, 0.5, 0, 1), obj(scene.Cube, 0, 6, 12, 1)}}), true, true, 1},
		{"lines too close far away", worldList(320, 180, &scene.World{
			Camera: scene.Camera{Eye: scene.Vec3{0, 6, 8}, Pitch: -0.6, FovY: 0.8, Near: 0.5, Far: 60}, Ground: ground}), true, false, 0},
	} {
		painter, rasterGround, n, err := gpu.WorldPath(r, c.dl, 2*c.dl.Width, 2*c.dl.Height)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if painter != c.painter || rasterGround != c.rasterGround || c.objects >= 0 && n != c.objects {
			t.Errorf("%s: painter %v, raster ground %v, %d objects; want %v, %v, %d", c.name, painter, rasterGround, n, c.painter, c.rasterGround, c.objects)
		}
	}
}

// A cube seen from the front at the height of its centre, its vertical
// edges vertical lines in the picture: the row through its centre crosses
// its left and right silhouette edges at fractional columns Camera.Project
// gives. The pixel a silhouette edge crosses is covered in proportion, the
// pixels beside it are background or cube.
func TestWorldCubeEdgeCoverage(t *testing.T) {
	const w, h = 160, 120
	cam := scene.Camera{Eye: scene.Vec3{0, 0.5, 6}, FovY: 0.7, Near: 0.1, Far: 50}
	cube := scene.Object{Shape: scene.Cube, Center: scene.Vec3{0.13, 0.5, 0}, Size: 1.4, Yaw: 0.35, Color: red, Flat: true}
	dl := worldList(w, h, &scene.World{Camera: cam, Objects: []scene.Object{cube}})
	if painter, _, _, _ := gpu.WorldPath(renderer(t), dl, w, h); !painter {
		t.Fatal("not on the painter path")
	}
	img := render(t, dl, w, h)
	// The silhouette's left and right edges: the leftmost and rightmost
	// projected vertical edges.
	s, c := math.Sincos(cube.Yaw)
	left, right := math.Inf(1), math.Inf(-1)
	for _, k := range [][2]float64{{1, 1}, {1, -1}, {-1, 1}, {-1, -1}} {
		lx, lz := k[0]*cube.Size/2, k[1]*cube.Size/2
		p := scene.Vec3{cube.Center[0] + c*lx + s*lz, cube.Center[1], cube.Center[2] - s*lx + c*lz}
		x, _, _, _ := cam.Project(p, float64(w)/h)
		px := (x + 1) / 2 * w
		left, right = min(left, px), max(right, px)
	}
	y := h / 2
	mix := func(k float64) scene.RGBA {
		f := float32(k)
		return scene.RGBA{R: sky.R + (red.R-sky.R)*f, G: sky.G + (red.G-sky.G)*f, B: sky.B + (red.B-sky.B)*f, A: 1}
	}
	t.Logf("silhouette from x = %.3f to %.3f", left, right)
	intermediate := 0
	for x := 0; x < w; x++ {
		// Coverage of pixel [x, x+1] by the span [left, right].
		cover := max(0, min(float64(x+1), right)-max(float64(x), left))
		wantPx(t, img, x, y, mix(cover), 2, "row across the cube")
		if cover > 0.05 && cover < 0.95 {
			intermediate++
			wantBetween(t, img, x, y, sky, red, "silhouette pixel")
		}
	}
	if intermediate != 2 {
		t.Errorf("%d pixels partly covered, want the two the edges cross (left %.3f, right %.3f)", intermediate, left, right)
	}

	// A slanted edge too: seen from above, the silhouette's edges run
	// across rows and columns, and along a row the colour steps from sky
	// to cube through a blend, except where an edge happens to cross the
	// row on a pixel boundary (about one row in ten for an edge this steep).
	cam = scene.Camera{Eye: scene.Vec3{0, 5, 4}, Pitch: -0.9, FovY: 0.7, Near: 0.1, Far: 50}
	img = render(t, worldList(w, h, &scene.World{Camera: cam, Objects: []scene.Object{cube}}), w, h)
	rows, blended := 0, 0
	for y := 0; y < h; y++ {
		first := -1
		for x := 0; x < w; x++ {
			if maxDiff(at(img, x, y), bytesOf(sky)) > 1 {
				first = x
				break
			}
		}
		if first < 0 {
			continue
		}
		rows++
		if maxDiff(at(img, first, y), bytesOf(red)) > 12 {
			blended++
		}
	}
	t.Logf("%d of %d rows enter the cube through a blended pixel", blended, rows)
	if rows < 20 || blended*10 < rows*7 {
		t.Errorf("%d of %d rows enter the cube through a blended pixel, want at least 70%%", blended, rows)
	}
}

// Where two lit faces meet, the pixels on the crease take shades between
// the faces': the crease is anti-aliased too.
func TestWorldCubeCrease(t *testing.T) {
	const w, h = 160, 120
	col := scene.RGBA{R: 0.8, G: 0.6, B: 0.4, A: 1}
	// Front and right faces seen at 45°, lit from the right: the front
	// face gets ambient only, the right one ambient + diffuse.
	cam := scene.Camera{Eye: scene.Vec3{0, 0.5, 6}, FovY: 0.7, Near: 0.1, Far: 50}
	cube := scene.Object{Shape: scene.Cube, Center: scene.Vec3{0.05, 0.5, 0}, Size: 1.4, Yaw: math.Pi / 4, Color: col}
	world := &scene.World{Camera: cam, Light: scene.Light{Dir: scene.Vec3{1, 0, 0}, Ambient: 0.3, Diffuse: 0.6}, Objects: []scene.Object{cube}}
	img := render(t, worldList(w, h, world), w, h)
	// The crease is the vertical edge nearest the camera, at the cube's
	// centre line: the corner (0, 0.5, +0.7√2) turned.
	x, _, _, _ := cam.Project(scene.Vec3{cube.Center[0], 0.5, cube.Size / math.Sqrt2}, float64(w)/h)
	px := (x + 1) / 2 * w
	y := h / 2
	// The faces' normals are (±1, 0, 1)/√2 after the turn: the left one
	// away from the light's side.
	dim, lit := scale(col, 0.3), scale(col, float32(0.3+0.6/math.Sqrt2))
	col0 := int(math.Floor(px))
	wantPx(t, img, col0-2, y, dim, 1, "left face")
	wantPx(t, img, col0+2, y, lit, 1, "right face")
	frac := px - float64(col0) // of pixel col0 lies left of the crease
	f := float32(frac)
	want := scene.RGBA{R: dim.R*f + lit.R*(1-f), G: dim.G*f + lit.G*(1-f), B: dim.B*f + lit.B*(1-f), A: 1}
	t.Logf("crease at x = %.3f", px)
	wantPx(t, img, col0, y, want, 2, "pixel on the crease")
}

// The same scene drawn by the painter path and by the depth path (meshes,
// multisampled) differ only along edges, and there by little.
func TestWorldPathsAgree(t *testing.T) {
	renderer(t)
	r, err := gpu.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Info().MaxSamples < 4 {
		t.Skip("no 4× multisampling to compare with")
	}
	for _, c := range []struct {
		name string
		dl   *scene.DrawList
	}{
		{"golden world", worldList(320, 180, goldenWorld())},
		{"cubes", objectsFrame(t, 20, "cube-green")},
		{"spheres", objectsFrame(t, 20, "sphere-yellow")},
	} {
		const w, h = 480, 270
		draw := func(depth bool) gpu.Image {
			gpu.ForcePaths(r, depth, false)
			img := newImage(w, h)
			if err := r.Render(c.dl, img); err != nil {
				t.Fatal(err)
			}
			return img
		}
		painter, depth := draw(false), draw(true)
		far, sum := 0, 0.0
		for y := range h {
			for x := range w {
				d := maxDiff(at(painter, x, y), at(depth, x, y))
				sum += float64(d)
				if d > 24 {
					far++
				}
			}
		}
		mean := sum / (w * h)
		t.Logf("%s: %d of %d pixels differ by more than 24 levels, mean difference %.2f", c.name, far, w*h, mean)
		if far > w*h/100 || mean > 1.5 {
			t.Errorf("%s: the paths disagree: %d pixels far apart, mean difference %.2f", c.name, far, mean)
		}
	}
	gpu.ForcePaths(r, false, false)
}

// Grid lines drawn one by one agree with the ground shader's: seen from
// above (axis-aligned lines, where the shader's box filter is exact) and
// in a CountVideoBench view.
func TestWorldGridLinesAgree(t *testing.T) {
	renderer(t)
	r, err := gpu.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	top := &scene.World{Camera: topDown, Ground: scene.Ground{Half: 20, Color: grass, LineColor: chalk, LineSpacing: 1.3, LineWidth: 0.07}}
	cvb := objectsFrame(t, 5, "cube-red")
	cvb.World.Objects = nil
	for _, c := range []struct {
		name          string
		dl            *scene.DrawList
		w, h          int
		tol, farShare int // levels, and pixels in 1000 beyond them
	}{
		{"top-down", worldList(200, 200, top), 200, 200, 3, 0},
		// The shader's filter is the pixel's axis-aligned footprint, wider
		// than the band's own across slanted lines: those are fainter and
		// broader there.
		{"CountVideoBench view", cvb, 960, 540, 48, 20},
	} {
		draw := func(shader bool) gpu.Image {
			gpu.ForcePaths(r, false, shader)
			if painter, rasterGround, _, _ := gpu.WorldPath(r, c.dl, c.w, c.h); !painter || rasterGround == shader {
				t.Fatalf("%s: painter %v, raster ground %v", c.name, painter, rasterGround)
			}
			img := newImage(c.w, c.h)
			if err := r.Render(c.dl, img); err != nil {
				t.Fatal(err)
			}
			return img
		}
		lines, shader := draw(false), draw(true)
		far, worst := 0, 0
		var sumL, sumS float64
		for y := range c.h {
			for x := range c.w {
				d := maxDiff(at(lines, x, y), at(shader, x, y))
				worst = max(worst, d)
				if d > c.tol {
					far++
				}
				sumL += float64(at(lines, x, y)[0])
				sumS += float64(at(shader, x, y)[0])
			}
		}
		n := float64(c.w * c.h)
		t.Logf("%s: worst difference %d, %d pixels beyond %d; mean red %.2f (lines) %.2f (shader)", c.name, worst, far, c.tol, sumL/n, sumS/n)
		if far*1000 > c.farShare*c.w*c.h {
			t.Errorf("%s: %d pixels differ by more than %d levels", c.name, far, c.tol)
		}
		// The same amount of line colour overall.
		if math.Abs(sumL-sumS)/n > 1 {
			t.Errorf("%s: mean red %.2f with lines, %.2f with the shader", c.name, sumL/n, sumS/n)
		}
	}
	gpu.ForcePaths(r, false, false)
}

// The painter path's order hides what the depth buffer hides: random
// flat-coloured objects that the painter path can order, drawn both ways,
// agree on every pixel away from an edge.
func TestWorldPaintOrder(t *testing.T) {
	renderer(t)
	r, err := gpu.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rng := rand.New(rand.NewPCG(7, 8))
	const w, h = 320, 240
	checked := 0
	for trial := range 12 {
		cam := scene.Camera{Eye: scene.Vec3{rng.Float64()*4 - 2, 1 + rng.Float64()*6, 9}, Yaw: rng.Float64()*0.4 - 0.2,
			Pitch: -0.2 - rng.Float64()*0.6, FovY: 0.9, Near: 0.1, Far: 100}
		// Dart throwing: footprints apart, except that on odd trials
		// an object may stand over another if their bounding balls are.
		var objs []scene.Object
		for tries := 0; len(objs) < 14 && tries < 5000; tries++ {
			o := scene.Object{Shape: scene.Shape(rng.IntN(2)), Size: 0.6 + rng.Float64()*1.2, Yaw: rng.Float64() * math.Pi, Flat: true}
			o.Center = scene.Vec3{rng.Float64()*8 - 4, o.Size / 2, rng.Float64()*8 - 6}
			if trial%2 == 1 {
				o.Center[1] += rng.Float64() * 3
			}
			ok := true
			for _, p := range objs {
				dx, dy, dz := o.Center[0]-p.Center[0], o.Center[1]-p.Center[1], o.Center[2]-p.Center[2]
				foot, ball := (o.Size+p.Size)*math.Sqrt2/2, (o.Size+p.Size)*math.Sqrt(3)/2
				if dx*dx+dz*dz < foot*foot && (trial%2 == 0 || dx*dx+dy*dy+dz*dz < ball*ball) {
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			id := len(objs) + 1
			o.Color = scene.RGBA{R: float32(id*17%256) / 255, G: float32(255-id*13) / 255, B: 0.5, A: 1}
			objs = append(objs, o)
		}
		dl := worldList(w, h, &scene.World{Camera: cam, Objects: objs,
			Ground: scene.Ground{Half: 30, Color: grass, LineColor: chalk, LineSpacing: 1, LineWidth: 0.05}})
		gpu.ForcePaths(r, false, false)
		if painter, _, _, _ := gpu.WorldPath(r, dl, w, h); !painter {
			continue // overlapping bounds: the depth path draws it anyway
		}
		checked++
		painter := newImage(w, h)
		if err := r.Render(dl, painter); err != nil {
			t.Fatal(err)
		}
		gpu.ForcePaths(r, true, false)
		depth := newImage(w, h)
		if err := r.Render(dl, depth); err != nil {
			t.Fatal(err)
		}
		// Pixels whose 5×5 neighbourhood in the depth render is one
		// object's colour are that object's in the painter render.
		isObj := func(p [4]uint8) bool { return p[2] == 128 && p[1] != bytesOf(grass)[1] }
		wrong := 0
		for y := 2; y < h-2; y++ {
			for x := 2; x < w-2; x++ {
				p := at(depth, x, y)
				if !isObj(p) {
					continue
				}
				same := true
				for dy := -2; dy <= 2 && same; dy++ {
					for dx := -2; dx <= 2; dx++ {
						if at(depth, x+dx, y+dy) != p {
							same = false
							break
						}
					}
				}
				if same && maxDiff(at(painter, x, y), p) > 1 {
					wrong++
				}
			}
		}
		if wrong > 0 {
			t.Errorf("trial %d: %d object pixels differ from the depth-buffered render", trial, wrong)
		}
	}
	gpu.ForcePaths(r, false, false)
	if checked < 10 {
		t.Errorf("only %d of 12 random worlds took the painter path", checked)
	}
}

// The painted ground's frames come out the same whether only the objects'
// rectangles go up to GL and come back or the whole output does: no
// object reaches outside its rectangle. CountVideoBench frames of both
// shapes and three counts, the camera in a few places.
func TestRasterGroundRectangles(t *testing.T) {
	renderer(t)
	r, err := gpu.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const w, h = 1920, 1080 // at 960×540 some of these frames' lines are too close to paint
	for _, n := range []int{1, 5, 50} {
		for _, class := range []string{"cube-red", "sphere-blue"} {
			c, err := scene.New(scene.Params{Domain: scene.ObjectsDomain, N: n, Class: class, Seed: 3, Duration: 5, FPS: 30, Width: w, Height: h})
			if err != nil {
				t.Fatal(err)
			}
			for _, at := range []float64{0, 4.2} {
				dl := c.State(at)
				// At the canvas's size, and letterboxed (the canvas 180
				// rows from the top of 1920×1440) with no items: the
				// rectangles are in output pixels, not the canvas's.
				for _, out := range []struct {
					name   string
					ow, oh int
				}{{"", w, h}, {", letterboxed", 1920, 1440}} {
					if painter, raster, _, _ := gpu.WorldPath(r, dl, out.ow, out.oh); !painter || !raster {
						t.Fatalf("N=%d %s at %g s%s: painter %v, raster ground %v", n, class, at, out.name, painter, raster)
					}
					var imgs [2]gpu.Image
					for i, whole := range []bool{false, true} {
						gpu.ForceWholeUpload(r, whole)
						imgs[i] = newImage(out.ow, out.oh)
						if err := r.Render(dl, imgs[i]); err != nil {
							t.Fatal(err)
						}
					}
					gpu.ForceWholeUpload(r, false)
					if !bytes.Equal(imgs[0].Pix, imgs[1].Pix) {
						t.Errorf("N=%d %s at %g s%s: the objects' rectangles and the whole output give different frames", n, class, at, out.name)
					}
				}
			}
		}
	}
}

// A painted ground in odd layouts: rows a stride apart that is not whole
// pixels (uploaded and read row by row) or padded, a canvas letterboxed in
// the output (the margins get the background), an item on top (the whole
// output goes up), and no readback.
func TestRasterGroundLayouts(t *testing.T) {
	r := renderer(t)
	dl := objectsFrame(t, 5, "cube-red")
	const w, h = 960, 540 // below this the lines are too close to paint
	ref := render(t, dl, w, h)
	for _, pad := range []int{3, 12} {
		img := gpu.Image{Width: w, Height: h, Stride: 4*w + pad}
		img.Pix = make([]byte, (h-1)*img.Stride+4*w)
		if err := r.Render(dl, img); err != nil {
			t.Fatal(err)
		}
		for y := range h {
			if !bytes.Equal(img.Pix[y*img.Stride:y*img.Stride+4*w], ref.Pix[y*ref.Stride:y*ref.Stride+4*w]) {
				t.Fatalf("stride %d: row %d differs from the tightly packed render", img.Stride, y)
			}
		}
	}
	if err := gpu.RenderNoReadback(r, dl, w, h); err != nil {
		t.Fatalf("RenderNoReadback: %v", err)
	}

	// The 1920×1080 canvas in a 960×640 output: scaled to 960×540, 50 rows
	// of margin above and below, the canvas rows as before, an item over
	// the middle (canvas pixels 900–1020 × 480–600, output 450–510 ×
	// 290–350).
	const bh, top = 640, 50
	boxed := *dl
	boxed.Background = scene.RGBA{R: 0.2, G: 0.1, B: 0.6, A: 1}
	boxed.Items = []scene.Item{{Kind: scene.FillRect, X0: 900, Y0: 480, X1: 1020, Y1: 600, Color: blue}}
	if painter, raster, _, _ := gpu.WorldPath(r, &boxed, w, bh); !painter || !raster {
		t.Fatalf("letterboxed: painter %v, raster ground %v", painter, raster)
	}
	img := render(t, &boxed, w, bh)
	for _, y := range []int{0, top - 1, top + h, bh - 1} {
		for _, x := range []int{0, w / 2, w - 1} {
			wantPx(t, img, x, y, boxed.Background, 0, "margin")
		}
	}
	wantPx(t, img, 480, top+270, blue, 0, "item over the world")
	// The canvas's rows away from the item are the unboxed frame's, up to
	// a level of rounding (the camera's transform differs by the offset).
	for y := range h {
		if y >= 239 && y <= 301 {
			continue
		}
		row, want := img.Pix[(y+top)*img.Stride:(y+top)*img.Stride+4*w], ref.Pix[y*ref.Stride:y*ref.Stride+4*w]
		for i := range row {
			if d := int(row[i]) - int(want[i]); d < -1 || d > 1 {
				t.Fatalf("letterboxed canvas pixel (%d, %d) channel %d: %d, alone %d", i/4, y, i%4, row[i], want[i])
			}
		}
	}
}
