package gpu_test

import (
	"testing"

	"github.com/tracegrid/tracegrid/gpu"
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
