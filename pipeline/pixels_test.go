package pipeline

import (
	"math"
	"strconv"
	"testing"

	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/gpu/gputest"
	"github.com/tracegrid/tracegrid/scene"
)

// These tests read event timing back from rendered pixels: the renderer and
// the scene together must put every visual event exactly at its t_i.

func renderAt(t *testing.T, c *scene.Clip, at float64) gpu.Image {
	t.Helper()
	img := gpu.Image{Width: c.P.Width, Height: c.P.Height, Stride: 4 * c.P.Width, Pix: make([]byte, 4*c.P.Width*c.P.Height)}
	if err := testRenderer.Render(c.State(at), img); err != nil {
		t.Fatal(err)
	}
	return img
}

type rgb [3]int

func pixel(img gpu.Image, x, y int) rgb {
	o := y*img.Stride + 4*x
	return rgb{int(img.Pix[o]), int(img.Pix[o+1]), int(img.Pix[o+2])}
}

func parseHex(s string) rgb {
	v, _ := strconv.ParseUint(s[1:], 16, 32)
	return rgb{int(v >> 16 & 0xff), int(v >> 8 & 0xff), int(v & 0xff)}
}

func near(a, b rgb, tol int) bool {
	for i := range a {
		if d := a[i] - b[i]; d > tol || d < -tol {
			return false
		}
	}
	return true
}

func paperClip(t *testing.T, domain string, n int, f float64, seed int) *scene.Clip {
	t.Helper()
	c, err := scene.New(scene.Params{Domain: domain, N: n, F: f, Seed: seed, Duration: 24, FPS: 30, Width: 854, Height: 480})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func floats(v any) []float64 {
	var out []float64
	for _, x := range v.([]float64) {
		out = append(out, x)
	}
	return out
}

// backgroundRun counts background pixels between the ball and the wall it
// hits, along the line through the ball's centre perpendicular to the wall.
func backgroundRun(t *testing.T, c *scene.Clip, at float64, wall string) int {
	img := renderAt(t, c, at)
	nu := c.Trace().Nuisance
	bg := parseHex(nu["background"].(string))
	ball := parseHex(nu["ball_color"].(string))
	// Find the ball's centre from its pixels.
	var sx, sy, cnt float64
	for y := 0; y < img.Height; y++ {
		for x := 0; x < img.Width; x++ {
			if near(pixel(img, x, y), ball, 8) {
				sx, sy, cnt = sx+float64(x), sy+float64(y), cnt+1
			}
		}
	}
	if cnt == 0 {
		t.Fatalf("%s: no ball pixels at t=%v", c.P.ID(), at)
	}
	cx, cy := int(sx/cnt), int(sy/cnt)
	dir := map[string][2]int{"left": {-1, 0}, "right": {1, 0}, "top": {0, -1}, "bottom": {0, 1}}[wall]
	dx, dy := dir[0], dir[1]
	wallColor := parseHex(nu["wall_color"].(string))
	run := 0
	for x, y := cx, cy; x >= 0 && y >= 0 && x < img.Width && y < img.Height; x, y = x+dx, y+dy {
		p := pixel(img, x, y)
		if near(p, wallColor, 8) {
			return run
		}
		if near(p, bg, 6) {
			run++
		}
	}
	t.Fatalf("%s: walked off the image without meeting the %s wall", c.P.ID(), wall)
	return 0
}

func TestPixelsBounceBallTouchesAtEventTimes(t *testing.T) {
	for _, cell := range []struct {
		n    int
		f    float64
		seed int
	}{{4, 1.0, 0}, {3, 2.5, 1}, {2, 0.5, 2}, {5, 4.0, 3}} {
		c := paperClip(t, "bounce_ball", cell.n, cell.f, cell.seed)
		frame := 1.0 / 30
		for _, e := range c.Trace().Events {
			wall := e.Attrs["wall"]
			if got := backgroundRun(t, c, e.T, wall); got != 0 {
				t.Errorf("%s: at t_%d=%.4f there are %d background pixels between ball and %s wall, want 0", c.P.ID(), e.Count, e.T, got, wall)
			}
			// One frame away the gap in pixels matches the geometry of the
			// draw list: the whole background pixels between the two
			// anti-aliased edges number between gap−2 and gap.
			for _, off := range []float64{-frame, frame} {
				want := geometricGap(c.State(e.T+off), wall)
				got := backgroundRun(t, c, e.T+off, wall)
				if want < 0.5 || float64(got) < math.Floor(want-2) || float64(got) > math.Ceil(want) {
					t.Errorf("%s: at t_%d%+.3f s the gap to the %s wall is %d px, geometry says %.2f px", c.P.ID(), e.Count, off, wall, got, want)
				}
			}
		}
	}
}

func TestPixelsBlinkOnExactlyAtEvents(t *testing.T) {
	c := paperClip(t, "blinking", 6, 3.5, 4)
	nu := c.Trace().Nuisance
	centre := floats(nu["center"])
	x, y := int(centre[0]), int(centre[1])
	on := parseHex(nu["color_on"].(string))
	bg := parseHex(nu["background"].(string))
	pulse := c.Trace().Pulse
	for _, e := range c.Trace().Events {
		for _, probe := range []struct {
			at   float64
			want rgb
			name string
		}{{e.T - 1e-4, bg, "just before"}, {e.T, on, "at"}, {e.T + pulse - 1e-4, on, "end of pulse"}, {e.T + pulse, bg, "after pulse"}} {
			if got := pixel(renderAt(t, c, probe.at), x, y); !near(got, probe.want, 2) {
				t.Errorf("%s: %s t_%d the centre is %v, want %v", c.P.ID(), probe.name, e.Count, got, probe.want)
			}
		}
	}
}

func TestPixelsStateMachineHighlightSwitchesAtEvents(t *testing.T) {
	c := paperClip(t, "state_machine", 5, 2.0, 5)
	tr := c.Trace()
	nu := tr.Nuisance
	hi := parseHex(nu["highlight_color"].(string))
	r := nu["node_radius"].(float64)
	states := nu["states"].([]string)
	centres := nu["node_centers"].([][]float64)
	// A point inside the node but clear of its label.
	lit := func(img gpu.Image, state string) bool {
		for i, s := range states {
			if s == state {
				return near(pixel(img, int(centres[i][0]+0.75*r), int(centres[i][1])), hi, 2)
			}
		}
		t.Fatalf("unknown state %q", state)
		return false
	}
	for _, e := range tr.Events {
		before, at := renderAt(t, c, e.T-1e-4), renderAt(t, c, e.T)
		if !lit(before, e.Before) || lit(before, e.After) {
			t.Errorf("%s: just before t_%d the highlight is not on %s alone", c.P.ID(), e.Count, e.Before)
		}
		if !lit(at, e.After) || lit(at, e.Before) {
			t.Errorf("%s: at t_%d the highlight is not on %s alone", c.P.ID(), e.Count, e.After)
		}
	}
	if math.IsNaN(r) {
		t.Fatal("node radius missing")
	}
}

// geometricGap is the distance from the ball's edge to the wall's inner edge
// in the draw list (box first, ball second).
func geometricGap(dl *scene.DrawList, wall string) float64 {
	box, ball := dl.Items[0], dl.Items[1]
	in := box.Width / 2
	switch wall {
	case "left":
		return ball.X0 - ball.R - (box.X0 + in)
	case "right":
		return box.X1 - in - (ball.X0 + ball.R)
	case "top":
		return ball.Y0 - ball.R - (box.Y0 + in)
	}
	return box.Y1 - in - (ball.Y0 + ball.R)
}

// TestGoldenFrames pins one frame of each domain (at its second event) to a
// reviewed PNG; each is rendered twice, and both renders must match.
func TestGoldenFrames(t *testing.T) {
	for _, d := range scene.Domains() {
		c := paperClip(t, d, 4, 1.0, 1)
		at := c.Trace().Events[1].T
		for range 2 {
			gputest.CompareGolden(t, d, renderAt(t, c, at), gputest.Default)
		}
	}
}
