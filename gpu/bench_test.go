package gpu_test

import (
	"testing"

	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/gpu/gputest"
	"github.com/tracegrid/tracegrid/scene"
)

// benchList is a typical frame: ten items, two of them text.
func benchList() *scene.DrawList {
	ink := scene.RGBA{R: 0.1, G: 0.1, B: 0.12, A: 1}
	return &scene.DrawList{
		Width: 854, Height: 480,
		Background: scene.RGBA{R: 0.98, G: 0.98, B: 0.96, A: 1},
		Items: []scene.Item{
			{Kind: scene.FillRect, X0: 20, Y0: 20, X1: 834, Y1: 460, R: 12, Color: scene.RGBA{R: 0.92, G: 0.94, B: 1, A: 1}},
			{Kind: scene.StrokeRect, X0: 20, Y0: 20, X1: 834, Y1: 460, R: 12, Width: 2, Color: ink},
			{Kind: scene.FillCircle, X0: 300, Y0: 240, R: 60, Color: scene.RGBA{R: 0.9, G: 0.4, B: 0.2, A: 1}},
			{Kind: scene.StrokeCircle, X0: 300, Y0: 240, R: 60, Width: 4, Color: ink},
			{Kind: scene.FillCircle, X0: 560, Y0: 200, R: 30, Color: scene.RGBA{R: 0.2, G: 0.5, B: 0.9, A: 0.7}},
			{Kind: scene.Line, X0: 60, Y0: 420, X1: 800, Y1: 380, Width: 3, Color: ink},
			{Kind: scene.Arrow, X0: 370, Y0: 240, X1: 520, Y1: 205, Width: 3, Head: 14, Color: ink},
			{Kind: scene.FillRect, X0: 640, Y0: 300, X1: 760, Y1: 360, Color: scene.RGBA{R: 0.3, G: 0.7, B: 0.3, A: 1}},
			{Kind: scene.Text, X0: 427, Y0: 60, Size: 28, Text: "Bounce: node 3 of 12", Color: ink},
			{Kind: scene.Text, X0: 700, Y0: 440, Size: 14, Text: "t = 12.345 s", Color: ink},
		},
	}
}

func reportFPS(b *testing.B) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "frames/s")
	}
}

// BenchmarkRender854x480 is a frame as the pipeline needs it: draw and read
// back into a padded, video-like buffer.
func BenchmarkRender854x480(b *testing.B) {
	r := renderer(b)
	dl := benchList()
	const w, h = 854, 480
	img := gpu.Image{Width: w, Height: h, Stride: 3456} // 854*4 rounded up to 64
	img.Pix = make([]byte, img.Stride*h)
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Render(dl, img); err != nil {
			b.Fatal(err)
		}
	}
	reportFPS(b)
}

// BenchmarkRenderOnly draws the same frame and waits with glFinish, without
// the read back.
func BenchmarkRenderOnly(b *testing.B) {
	r := renderer(b)
	dl := benchList()
	b.ReportAllocs()
	for b.Loop() {
		if err := gpu.RenderNoReadback(r, dl, 854, 480); err != nil {
			b.Fatal(err)
		}
	}
	reportFPS(b)
}

// benchWorld is a busy 3D frame: a lined ground up to the horizon and 50
// lit, noisy objects, half cubes and half spheres, on a 1920×1080 canvas.
func benchWorld() *scene.DrawList {
	palette := []scene.RGBA{
		{R: 0.85, G: 0.2, B: 0.2, A: 1}, {R: 0.2, G: 0.4, B: 0.9, A: 1},
		{R: 0.95, G: 0.8, B: 0.15, A: 1}, {R: 0.2, G: 0.75, B: 0.3, A: 1}, {R: 0.8, G: 0.8, B: 0.8, A: 1},
	}
	var objs []scene.Object
	for i := range 50 {
		row, col := i/10, i%10
		o := scene.Object{
			Shape:     scene.Cube,
			Center:    scene.Vec3{-9 + 2*float64(col), 0.5, -2 - 2.5*float64(row)},
			Size:      1,
			Yaw:       0.3 * float64(i),
			Color:     palette[i%len(palette)],
			Noise:     0.12,
			NoiseSeed: uint32(i),
		}
		if (row+col)%2 == 1 {
			o.Shape = scene.Sphere
		}
		objs = append(objs, o)
	}
	return &scene.DrawList{
		Width: 1920, Height: 1080,
		Background: scene.RGBA{R: 0.55, G: 0.7, B: 0.9, A: 1},
		World: &scene.World{
			Camera: scene.Camera{Eye: scene.Vec3{0, 4, 6}, Pitch: -0.35, FovY: 0.9, Near: 0.1, Far: 200},
			Ground: scene.Ground{
				Half: 50, LineSpacing: 1, LineWidth: 0.05,
				Color: scene.RGBA{R: 0.35, G: 0.55, B: 0.3, A: 1}, LineColor: scene.RGBA{R: 0.9, G: 0.9, B: 0.85, A: 1},
			},
			Light:   scene.Light{Dir: scene.Vec3{0.4, 0.8, 0.45}, Ambient: 0.35, Diffuse: 0.65},
			Objects: objs,
		},
	}
}

// BenchmarkRenderWorld1920x1080 draws benchWorld and reads it back, as the
// pipeline would.
func BenchmarkRenderWorld1920x1080(b *testing.B) {
	r := renderer(b)
	dl := benchWorld()
	const w, h = 1920, 1080
	img := gpu.Image{Width: w, Height: h, Stride: 4 * w}
	img.Pix = make([]byte, img.Stride*h)
	// One frame before timing: the first world frame creates the 3D
	// objects and llvmpipe compiles the shaders on their first draw.
	if err := r.Render(dl, img); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Render(dl, img); err != nil {
			b.Fatal(err)
		}
	}
	reportFPS(b)
}

// BenchmarkRenderWorldNoReadback is BenchmarkRenderWorld1920x1080 without
// the readback: draw and glFinish only (render only). benchWorld takes the
// painter path, its ground drawn by the ground view shader (the horizon is
// in view).
func BenchmarkRenderWorldNoReadback(b *testing.B) {
	r := renderer(b)
	dl := benchWorld()
	if err := gpu.RenderNoReadback(r, dl, 1920, 1080); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := gpu.RenderNoReadback(r, dl, 1920, 1080); err != nil {
			b.Fatal(err)
		}
	}
	reportFPS(b)
}

// BenchmarkRenderObjectsNoReadback draws real CountVideoBench frames (50
// objects of one class, the camera turning, 1920×1080) and waits with
// glFinish: render only, the frames `make bench`'s objects pipeline
// renders. The painter metric is 1 when the frames take the painter path
// (analytic anti-aliasing, no depth buffer), as they must on every driver.
func BenchmarkRenderObjectsNoReadback(b *testing.B) {
	r := renderer(b)
	for _, class := range []string{"cube-red", "sphere-blue"} {
		b.Run("N50_"+class, func(b *testing.B) {
			c := objectsClip(b, class)
			var dl scene.DrawList
			c.StateInto(0, &dl)
			painter, _, _, err := gpu.WorldPath(r, &dl, 1920, 1080)
			if err != nil {
				b.Fatal(err)
			}
			renderClipFrames(b, r, c)
			p := 0.0
			if painter {
				p = 1
			}
			b.ReportMetric(p, "painter")
		})
	}
}

// objectsClip is the benchmarks' CountVideoBench clip: 50 objects of
// class, seed 0, 5 s at 30 fps, 1920×1080.
func objectsClip(b *testing.B, class string) *scene.Clip {
	c, err := scene.New(scene.Params{Domain: scene.ObjectsDomain, N: 50, Class: class, Seed: 0, Duration: 5, FPS: 30, Width: 1920, Height: 1080})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// renderClipFrames draws c's frames in turn, render only (after one frame
// outside the timing, which creates the world pass), b.N of them, and
// reports frames/s.
func renderClipFrames(b *testing.B, r *gpu.Renderer, c *scene.Clip) {
	var dl scene.DrawList
	c.StateInto(0, &dl)
	if err := gpu.RenderNoReadback(r, &dl, 1920, 1080); err != nil {
		b.Fatal(err)
	}
	k := 0
	cpu := gputest.StartCPU()
	for b.Loop() {
		c.StateInto(float64(k%150)/30, &dl)
		if err := gpu.RenderNoReadback(r, &dl, 1920, 1080); err != nil {
			b.Fatal(err)
		}
		k++
	}
	reportFPS(b)
	cpu.Report(b, k)
}

// BenchmarkObjectsPaths measures the steps of drawing real CountVideoBench
// frames (50 objects of one class, 1920×1080, render only) one against
// another in one run: the depth path (4× MSAA meshes, resolved; how every
// world was drawn before the painter path), the painter path with its
// ground shaded per pixel by the ground view shader, and the painter path
// as frames take it (the ground and its grid lines painted on the CPU and
// uploaded under the objects). Each reports frames/s and the CPU time a
// frame (all threads). BENCHMARKS.md records the figures.
func BenchmarkObjectsPaths(b *testing.B) {
	r := renderer(b)
	defer gpu.ForcePaths(r, false, false)
	steps := []struct {
		name                string
		depth, groundShader bool
	}{
		{"depth_msaa", true, false},
		{"painter_groundshader", false, true},
		{"painter_raster", false, false},
	}
	for _, class := range []string{"cube-red", "sphere-blue"} {
		c := objectsClip(b, class)
		for _, s := range steps {
			b.Run("N50_"+class+"/"+s.name, func(b *testing.B) {
				gpu.ForcePaths(r, s.depth, s.groundShader)
				renderClipFrames(b, r, c)
			})
		}
	}
}
