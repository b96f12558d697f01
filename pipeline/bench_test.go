package pipeline

import (
	"testing"

	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/gpu/gputest"
	"github.com/tracegrid/tracegrid/scene"
)

// BenchmarkRenderScenes renders and reads back the active-span frames of
// each domain at 854x480 (the frames the pipeline really draws: static
// frames are not drawn again).
func BenchmarkRenderScenes(b *testing.B) {
	for _, d := range scene.Domains() {
		b.Run(d, func(b *testing.B) {
			c, err := scene.New(scene.Params{Domain: d, N: 12, F: 0.5, Seed: 0, Duration: 24, FPS: 30, Width: 854, Height: 480})
			if err != nil {
				b.Fatal(err)
			}
			img := gpu.Image{Width: 854, Height: 480, Stride: 4 * 854, Pix: make([]byte, 4*854*480)}
			var dl scene.DrawList
			b.ReportAllocs()
			k := 0
			for b.Loop() {
				c.StateInto(float64(k%720)/30, &dl)
				if err := testRenderer.Render(&dl, img); err != nil {
					b.Fatal(err)
				}
				k++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}

// BenchmarkRenderObjects renders and reads back real objects frames at
// CountVideoBench's 1920×1080: every frame differs (the camera turns).
func BenchmarkRenderObjects1920x1080(b *testing.B) {
	for _, class := range []string{"cube-red", "sphere-blue"} {
		b.Run("N50_"+class, func(b *testing.B) {
			c, err := scene.New(scene.Params{Domain: scene.ObjectsDomain, N: 50, Class: class, Seed: 0, Duration: 5, FPS: 30, Width: 1920, Height: 1080})
			if err != nil {
				b.Fatal(err)
			}
			img := gpu.Image{Width: 1920, Height: 1080, Stride: 4 * 1920, Pix: make([]byte, 4*1920*1080)}
			var dl scene.DrawList
			// One frame outside the timing: llvmpipe compiles the
			// shaders on their first draw.
			c.StateInto(0, &dl)
			if err := testRenderer.Render(&dl, img); err != nil {
				b.Fatal(err)
			}
			k := 0
			cpu := gputest.StartCPU()
			for b.Loop() {
				c.StateInto(float64(k%150)/30, &dl)
				if err := testRenderer.Render(&dl, img); err != nil {
					b.Fatal(err)
				}
				k++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
			cpu.Report(b, k)
		})
	}
}
