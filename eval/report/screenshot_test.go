package report

import (
	"image/png"
	"os"
	"testing"
)

// TestScreenshot checks a browser screenshot of a report (make
// report-check sets REPORT_SCREENSHOT): it must decode, have the window's
// size, and show a page rather than a blank or error screen: many colours,
// a good share of non-white pixels, and heatmap cells in the report's
// colour scale.
func TestScreenshot(t *testing.T) {
	path := os.Getenv("REPORT_SCREENSHOT")
	if path == "" {
		t.Skip("REPORT_SCREENSHOT not set (make report-check sets it)")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b := img.Bounds()
	if b.Dx() < 1000 || b.Dy() < 2000 {
		t.Fatalf("screenshot is %dx%d, want the 1400x3000 window", b.Dx(), b.Dy())
	}
	colours := map[[3]uint8]bool{}
	var inked, heat, total int
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			c := [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8)}
			colours[c] = true
			total++
			if int(c[0])+int(c[1])+int(c[2]) < 3*235 {
				inked++
			}
			// The dark half of the accuracy scale (accuracy ≥ 0.5).
			for a := 0.5; a <= 1; a += 0.125 {
				rc := AccuracyColor(a)
				if absDiff(c[0], rc.R)+absDiff(c[1], rc.G)+absDiff(c[2], rc.B) < 24 {
					heat++
					break
				}
			}
		}
	}
	t.Logf("%s: %dx%d, %d colours, %.1f%% inked, %.1f%% heatmap cells", path, b.Dx(), b.Dy(), len(colours),
		100*float64(inked)/float64(total), 100*float64(heat)/float64(total))
	if len(colours) < 100 {
		t.Errorf("only %d distinct colours: a blank or error page?", len(colours))
	}
	if inked < total/20 {
		t.Errorf("only %d of %d sampled pixels are not white: a blank page?", inked, total)
	}
	if heat < total/200 {
		t.Errorf("only %d of %d sampled pixels are heatmap colours: the figures did not render", heat, total)
	}
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}
