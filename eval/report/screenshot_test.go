package report

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
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

// TestRunReportCases checks the report of the small end-to-end study make
// report-check runs (REPORT_RUN_DIR: `tracegrid run --spec
// scripts/report-check.yaml`) and a browser screenshot of its Cases page,
// cases.html (REPORT_CASES_SCREENSHOT): the keyframes condition is
// labelled by position with its controls n/a, every case card has a
// contact sheet on disk, and the screenshot shows sheets (their dark
// background) rather than a blank page.
func TestRunReportCases(t *testing.T) {
	dir, shot := os.Getenv("REPORT_RUN_DIR"), os.Getenv("REPORT_CASES_SCREENSHOT")
	if dir == "" || shot == "" {
		t.Skip("REPORT_RUN_DIR and REPORT_CASES_SCREENSHOT not set (make report-check sets them)")
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Totals   Totals        `json:"totals"`
		Surfaces []SurfaceCell `json:"surfaces"`
		Cases    []Case        `json:"cases"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	na := 0
	for _, c := range sum.Surfaces {
		if c.Policy == "keyframes" && c.Labels != "position" {
			t.Errorf("keyframes cell with %q labels", c.Labels)
		}
		if c.NotApplicable {
			na++
			if c.Policy != "keyframes" || c.N != 0 {
				t.Errorf("n/a cell %+v", c)
			}
		}
	}
	if na == 0 || sum.Totals.NotApplicable == 0 {
		t.Errorf("no n/a keyframes control (%d cells, %d trials)", na, sum.Totals.NotApplicable)
	}
	if len(sum.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range sum.Cases {
		if c.Sheet == "" {
			t.Errorf("case %s %s %s has no sheet", c.Class, c.Clip, c.Policy)
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(c.Sheet))); err != nil {
			t.Error(err)
		}
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", shot, err)
	}
	bd := img.Bounds()
	var dark, total int
	for y := bd.Min.Y; y < bd.Max.Y; y += 2 {
		for x := bd.Min.X; x < bd.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			total++
			// The sheets' background (frames.sheetBG, 24 24 28) and the
			// scenes' dark backgrounds.
			if r>>8 < 60 && g>>8 < 60 && bl>>8 < 70 {
				dark++
			}
		}
	}
	t.Logf("%s: %dx%d, %.1f%% dark (contact sheets)", shot, bd.Dx(), bd.Dy(), 100*float64(dark)/float64(total))
	if dark < total/10 {
		t.Errorf("only %d of %d sampled pixels are dark: the case sheets did not render", dark, total)
	}
}
