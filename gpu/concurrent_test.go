package gpu_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/scene"
)

// job is one draw list rendered into an image of its own size and stride.
type job struct {
	name         string
	dl           *scene.DrawList
	w, h, stride int
}

// renderJob renders j into a fresh image whose bytes start as 0x5a, so
// that padding the renderer must not touch is compared too.
func renderJob(r *gpu.Renderer, j job) ([]byte, error) {
	img := gpu.Image{Width: j.w, Height: j.h, Stride: j.stride, Pix: bytes.Repeat([]byte{0x5a}, j.stride*j.h)}
	if err := r.Render(j.dl, img); err != nil {
		return nil, fmt.Errorf("%s: %w", j.name, err)
	}
	return img.Pix, nil
}

func TestConcurrentRendersMatchAlone(t *testing.T) {
	// Two goroutines share one Renderer. Each lays out its own frames
	// while the other's are on the GL thread; every frame must come out
	// byte for byte as when rendered alone. The goroutines draw different
	// lists at different sizes (so each turn on the GL thread resizes the
	// framebuffer), with text in both (the font lookups run concurrently),
	// one goroutine alternating a world frame with a 2D one, and strides
	// that are padded and that are not whole pixels. Run it with -race.
	r := renderer(t)
	ink := scene.RGBA{R: 0.1, G: 0.1, B: 0.12, A: 1}
	world := worldList(171, 97, goldenWorld(),
		scene.Item{Kind: scene.Text, X0: 85, Y0: 12, Size: 11, Text: "3 cubes, 3 spheres", Color: ink},
		scene.Item{Kind: scene.FillCircle, X0: 20, Y0: 80, R: 6, Color: red})
	// A CountVideoBench frame, whose ground is painted on the caller's
	// goroutine and whose objects' rectangles alone go through GL.
	objects := objectsFrame(t, 20, "cube-red")
	if painter, raster, _, _ := gpu.WorldPath(r, objects, 1280, 720); !painter || !raster {
		t.Fatalf("objects frame: painter %v, raster ground %v", painter, raster)
	}
	workers := [2][]job{
		{
			{"composite 320x200", compositeList(), 320, 200, 4*320 + 64},
			{"objects 1280x720", objects, 1280, 720, 4*1280 + 12},
		},
		{
			{"world 171x97", world, 171, 97, 4*171 + 2},
			{"composite 80x50", compositeList(), 80, 50, 4 * 80},
		},
	}
	alone := map[string][]byte{}
	for _, jobs := range workers {
		for _, j := range jobs {
			pix, err := renderJob(r, j)
			if err != nil {
				t.Fatal(err)
			}
			alone[j.name] = pix
		}
	}
	if bytes.Equal(alone["composite 80x50"][:4*80*50], alone["composite 320x200"][:4*80*50]) {
		t.Fatal("the two composite sizes render the same bytes: the test could not tell them apart")
	}

	const rounds = 20
	var wg sync.WaitGroup
	for _, jobs := range workers {
		wg.Go(func() {
			for k := range rounds {
				j := jobs[k%len(jobs)]
				pix, err := renderJob(r, j)
				if err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(pix, alone[j.name]) {
					t.Errorf("%s: round %d: %d of %d bytes differ from the frame rendered alone",
						j.name, k, countDiff(pix, alone[j.name]), len(pix))
					return
				}
			}
		})
	}
	wg.Wait()
}

func countDiff(a, b []byte) int {
	n := 0
	for i := range a {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}
