package gpu_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/scene"
)

// BenchmarkRenderParallel2 renders with two goroutines sharing one
// Renderer, each into its own padded image, as pipeline's two render
// workers do: b.N frames in all. Layout runs outside the GL thread, so one
// worker's layout overlaps the other's draw and readback.
func BenchmarkRenderParallel2(b *testing.B) {
	b.Run("854x480", func(b *testing.B) { renderParallel(b, benchList(), 854, 480, 3456) })
	b.Run("world1920x1080", func(b *testing.B) { renderParallel(b, benchWorld(), 1920, 1080, 4*1920) })
}

func renderParallel(b *testing.B, dl *scene.DrawList, w, h, stride int) {
	const workers = 2
	r := renderer(b)
	var imgs [workers]gpu.Image
	for i := range imgs {
		imgs[i] = gpu.Image{Width: w, Height: h, Stride: stride, Pix: make([]byte, stride*h)}
	}
	// A few frames before timing, rendered as timed: the first world
	// frame creates the 3D objects, and the first frames rendered at once
	// create the frames (layout buffers) the workers go on reusing.
	if err := renderWorkers(r, dl, imgs[:], 2*workers); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	err := renderWorkers(r, dl, imgs[:], b.N)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	reportFPS(b)
}

// renderWorkers renders n frames of dl with one goroutine per image.
func renderWorkers(r *gpu.Renderer, dl *scene.DrawList, imgs []gpu.Image, n int) error {
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for _, img := range imgs {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if err := r.Render(dl, img); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		return err
	}
	return nil
}
