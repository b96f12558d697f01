package gpu_test

import (
	"testing"

	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/scene"
)

// BenchmarkLayout is the CPU work a Render call does on the caller's
// goroutine, outside the GL thread: laying out the items (text included)
// and the world's objects.
func BenchmarkLayout(b *testing.B) {
	r := renderer(b)
	for _, c := range []struct {
		name string
		w, h int
		dl   func() *scene.DrawList
	}{{"854x480", 854, 480, benchList}, {"world1920x1080", 1920, 1080, benchWorld}} {
		b.Run(c.name, func(b *testing.B) {
			dl := c.dl()
			b.ReportAllocs()
			for b.Loop() {
				if err := gpu.Layout(r, dl, c.w, c.h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
