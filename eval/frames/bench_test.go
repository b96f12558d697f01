package frames

import (
	"context"
	"testing"

	"github.com/tracegrid/tracegrid/scene"
)

// BenchmarkStreamFPS16 renders and JPEG-encodes the fps:16 stream of a
// 24 s 854x480 clip (384 frames) with one GL context; frames/s counts
// frames delivered.
func BenchmarkStreamFPS16(b *testing.B) {
	for _, cell := range []struct {
		name string
		n    int
		f    float64
	}{{"bounce_ball_N06_F1.5", 6, 1.5}, {"bounce_ball_N12_F0.5", 12, 0.5}} {
		b.Run(cell.name, func(b *testing.B) {
			c, err := scene.New(scene.Params{Domain: "bounce_ball", N: cell.n, F: cell.f, Seed: 0, Duration: 24, FPS: 30, Width: 854, Height: 480})
			if err != nil {
				b.Fatal(err)
			}
			src, err := NewSource(testRenderer, Options{Format: "jpg", Quality: 90})
			if err != nil {
				b.Fatal(err)
			}
			p := plan(b, "fps:16", samplingClip(c))
			b.ReportAllocs()
			frames := 0
			for b.Loop() {
				for _, err := range src.Stream(context.Background(), c, p) {
					if err != nil {
						b.Fatal(err)
					}
					frames++
				}
			}
			b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}
