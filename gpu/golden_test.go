package gpu_test

import (
	"bytes"
	"testing"

	"github.com/tracegrid/tracegrid/gpu/gputest"
	"github.com/tracegrid/tracegrid/scene"
)

// compositeList exercises every kind, overlaps and alpha on a small canvas.
func compositeList() *scene.DrawList {
	ink := scene.RGBA{R: 0.12, G: 0.12, B: 0.16, A: 1}
	return &scene.DrawList{
		Width: 160, Height: 100,
		Background: scene.RGBA{R: 0.97, G: 0.96, B: 0.93, A: 1},
		Items: []scene.Item{
			{Kind: scene.FillRect, X0: 8, Y0: 8, X1: 72, Y1: 52, R: 8, Color: scene.RGBA{R: 0.85, G: 0.9, B: 1, A: 1}},
			{Kind: scene.StrokeRect, X0: 8, Y0: 8, X1: 72, Y1: 52, R: 8, Width: 2, Color: ink},
			{Kind: scene.FillCircle, X0: 110, Y0: 32, R: 22, Color: scene.RGBA{R: 0.95, G: 0.45, B: 0.2, A: 1}},
			{Kind: scene.StrokeCircle, X0: 110, Y0: 32, R: 22, Width: 3, Color: ink},
			{Kind: scene.FillCircle, X0: 125, Y0: 45, R: 14, Color: scene.RGBA{R: 0.2, G: 0.6, B: 0.9, A: 0.6}},
			{Kind: scene.Line, X0: 10, Y0: 92, X1: 150, Y1: 62, Width: 1.5, Color: scene.RGBA{R: 0.3, G: 0.6, B: 0.3, A: 1}},
			{Kind: scene.Arrow, X0: 74, Y0: 30, X1: 86, Y1: 30, Width: 2, Head: 7, Color: ink},
			{Kind: scene.Arrow, X0: 40, Y0: 56, X1: 60, Y1: 80, Width: 1.5, Head: 6, Color: ink},
			{Kind: scene.Text, X0: 40, Y0: 30, Size: 12, Text: "Tracegrid", Color: ink},
			{Kind: scene.Text, X0: 110, Y0: 82, Size: 10, Text: "t = 1.25 s", Color: ink},
			{Kind: scene.FillRect, X0: 140, Y0: 4, X1: 156, Y1: 20, Color: scene.RGBA{R: 0.9, G: 0.1, B: 0.1, A: 1}},
		},
	}
}

func TestGoldenComposite(t *testing.T) {
	dl := compositeList()
	img := render(t, dl, 320, 200)
	// Rendered twice, as golden comparisons only mean something if the
	// renderer is deterministic.
	again := render(t, dl, 320, 200)
	if !bytes.Equal(img.Pix, again.Pix) {
		t.Fatal("two renders of the composite list differ")
	}
	gputest.CompareGolden(t, "composite", img, gputest.Default)
}
