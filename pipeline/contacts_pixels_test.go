package pipeline

import (
	"math"
	"slices"
	"testing"

	"github.com/tracegrid/tracegrid/scene"
)

// TestPixelsEveryContactOnAFrame renders, with the GL path the clips are
// made with, the video frame shown at every wall contact of the paper
// grid's cells whose period is not a whole number of frames (3.5 and 4 Hz
// at 30 fps: the fastest), every count and seed, and reads the contact
// from its pixels: along the line from the ball's centre to the wall it
// hits, at most one pixel lies between the last pixel nearest the ball's
// colour (of the ball's, the wall's and the background's) and the first
// nearest the wall's. On the nominal schedule
// t_1 + (i−1)/F every other 4 Hz contact falls half-way between two
// frames, and the frames show the ball 7–18 px from the wall.
func TestPixelsEveryContactOnAFrame(t *testing.T) {
	paper, err := BuiltinSpec(GridPaper)
	if err != nil {
		t.Fatal(err)
	}
	fps := float64(paper.FPS)
	var fast []float64
	for _, f := range paper.Frequencies {
		if p := fps / f; p != math.Round(p) {
			fast = append(fast, f)
		}
	}
	if !slices.Contains(fast, slices.Max(paper.Frequencies)) {
		t.Fatalf("frequencies with a fractional period %v leave out the fastest", fast)
	}
	contacts := 0
	for _, f := range fast {
		for _, n := range paper.Counts {
			if n == 0 {
				continue
			}
			for seed := range paper.Seeds {
				c, err := scene.New(scene.Params{Domain: "bounce_ball", N: n, F: f, Seed: seed, Duration: paper.Duration,
					FPS: paper.FPS, Width: paper.Width, Height: paper.Height})
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range c.Trace().Events {
					// The frame a video shows at t: the last frame at or
					// before it (eval/frames.ShownFrame), drawn at k/fps.
					k := math.Floor(e.T*fps + 1e-6)
					if gap := edgeGap(t, c, k/fps, e.Attrs["wall"]); gap > 1 {
						t.Errorf("%s: frame %v at t_%d = %.4f s: %d px of background between the ball's edge and the %s wall, want at most 1",
							c.P.ID(), k, e.Count, e.T, gap, e.Attrs["wall"])
					}
					contacts++
				}
			}
		}
	}
	t.Logf("%d contacts at %v Hz, each shown by a frame", contacts, fast)
}

// edgeGap walks from the ball's centre toward wall in the frame rendered
// at t and returns how many pixels lie between the last pixel nearest the
// ball's colour and the first nearest the wall's (each nearest the
// background's).
func edgeGap(t *testing.T, c *scene.Clip, at float64, wall string) (gap int) {
	t.Helper()
	img := renderAt(t, c, at)
	nu := c.Trace().Nuisance
	colours := []rgb{parseHex(nu["ball_color"].(string)), parseHex(nu["wall_color"].(string)), parseHex(nu["background"].(string))}
	nearest := func(p rgb) int {
		best, bd := 0, math.MaxInt
		for i, c := range colours {
			d := 0
			for j := range p {
				d += (p[j] - c[j]) * (p[j] - c[j])
			}
			if d < bd {
				best, bd = i, d
			}
		}
		return best
	}
	ball := c.State(at).Items[1]
	dir := map[string][2]int{"left": {-1, 0}, "right": {1, 0}, "top": {0, -1}, "bottom": {0, 1}}[wall]
	x, y := int(ball.X0), int(ball.Y0)
	for ; x >= 0 && y >= 0 && x < img.Width && y < img.Height; x, y = x+dir[0], y+dir[1] {
		switch nearest(pixel(img, x, y)) {
		case 0:
			gap = 0
		case 1:
			return gap
		default:
			gap++
		}
	}
	t.Fatalf("%s: walked off the image at t=%v without meeting the %s wall", c.P.ID(), at, wall)
	return 0
}
