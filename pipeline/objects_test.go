package pipeline

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/gpu/gputest"
	"github.com/tracegrid/tracegrid/scene"
	"github.com/tracegrid/tracegrid/trace"
)

// The countvideobench grid is CountVideoBench §4: 26 cardinalities × 100
// clips, ten per (shape, colour) class, 5 s at 30 fps, 1920×1080.
func TestCountVideoBenchGridBalance(t *testing.T) {
	s, err := BuiltinSpec(GridCountVideoBench)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if len(plan) != 2600 {
		t.Fatalf("%d clips, want 2600", len(plan))
	}
	perN := map[int]int{}
	perClass := map[[2]any]int{}
	ids := map[string]bool{}
	for _, p := range plan {
		if p.Domain != scene.ObjectsDomain || p.Duration != 5 || p.FPS != 30 || p.Width != 1920 || p.Height != 1080 || p.F != 0 {
			t.Fatalf("clip %+v", p)
		}
		perN[p.N]++
		perClass[[2]any{p.N, p.Class}]++
		ids[p.ID()] = true
	}
	want := []int{5, 6, 7, 8, 9, 10, 11, 12, 18, 19, 20, 21, 22, 28, 29, 30, 31, 32, 38, 39, 40, 41, 42, 48, 49, 50}
	if len(perN) != len(want) {
		t.Fatalf("%d cardinalities, want 26: %v", len(perN), perN)
	}
	for _, n := range want {
		if perN[n] != 100 {
			t.Errorf("N=%d: %d clips, want 100", n, perN[n])
		}
		for _, class := range scene.ObjectClasses() {
			if c := perClass[[2]any{n, class}]; c != 10 {
				t.Errorf("N=%d %s: %d clips, want 10", n, class, c)
			}
		}
	}
	if len(ids) != 2600 {
		t.Fatalf("%d distinct ids", len(ids))
	}
	if id := plan[0].ID(); id != "objects_N05_cube-red_s00" {
		t.Errorf("first id %s", id)
	}
	// A spec can narrow it and mix it with event domains.
	mixed, err := ParseSpec([]byte("grid: countvideobench\ndomains: [objects, blinking]\ncounts: [2, 3]\nfrequencies: [1.0]\nclasses: [sphere-green]\nseeds: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	mp, _ := mixed.Plan()
	if len(mp) != 8 { // 2 counts × 1 class × 2 seeds + 2 counts × 1 F × 2 seeds
		t.Fatalf("mixed spec: %d clips, want 8", len(mp))
	}
	for _, bad := range []string{
		"grid: countvideobench\nclasses: [cube-orange]\n",
		"grid: countvideobench\nclasses: []\n",
		"grid: countvideobench\ncounts: [0]\n",
	} {
		if _, err := ParseSpec([]byte(bad)); err == nil {
			t.Errorf("spec %q accepted", bad)
		}
	}
}

func objectsClip(t *testing.T, n int, class string, seed, w, h int) *scene.Clip {
	t.Helper()
	c, err := scene.New(scene.Params{Domain: scene.ObjectsDomain, N: n, Class: class, Seed: seed, Duration: 5, FPS: 30, Width: w, Height: h})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// components counts 4-connected regions of pixels where in(x, y) holds,
// ignoring regions smaller than minArea (anti-aliased specks).
func components(w, h int, in func(x, y int) bool, minArea int) (n int, areas []int) {
	seen := make([]bool, w*h)
	var stack []int
	for i := range seen {
		if seen[i] || !in(i%w, i/w) {
			continue
		}
		area := 0
		seen[i] = true
		stack = append(stack[:0], i)
		for len(stack) > 0 {
			j := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			area++
			x, y := j%w, j/w
			for _, d := range [][2]int{{1, 0}, {-1, 0}, {0, 1}, {0, -1}} {
				nx, ny := x+d[0], y+d[1]
				if nx < 0 || ny < 0 || nx >= w || ny >= h {
					continue
				}
				k := ny*w + nx
				if !seen[k] && in(nx, ny) {
					seen[k] = true
					stack = append(stack, k)
				}
			}
		}
		if area >= minArea {
			n++
			areas = append(areas, area)
		}
	}
	return n, areas
}

func saturated(img gpu.Image) func(x, y int) bool {
	return func(x, y int) bool {
		p := pixel(img, x, y)
		return max(p[0], p[1], p[2])-min(p[0], p[1], p[2]) > 60
	}
}

// A top-down render of a clip's world (the clip's own objects, lit and
// noisy as in the video, the camera replaced by one looking straight down
// over the whole region) shows exactly N separate objects: placement never
// makes two objects touch, and every object is drawn.
func TestObjectsTopDownCountIsN(t *testing.T) {
	const size = 720
	for _, tc := range []struct {
		n     int
		class string
		seed  int
	}{{5, "cube-red", 0}, {20, "sphere-yellow", 1}, {42, "cube-purple", 2}, {50, "sphere-blue", 3}, {50, "cube-green", 4}} {
		c := objectsClip(t, tc.n, tc.class, tc.seed, 640, 360)
		dl := c.State(0)
		half := c.Trace().Objects.RegionHalf
		// Nearly orthographic: from far above with a narrow field of view
		// a cube's top face lies over its own base, not over a neighbour's.
		const height = 400.0
		dl.World.Camera = scene.Camera{Eye: scene.Vec3{0, height, 0}, Pitch: -math.Pi / 2, FovY: 2 * math.Atan((half+0.5)/(height-1)), Near: 1, Far: 1000}
		dl.Width, dl.Height = size, size
		img := gpu.Image{Width: size, Height: size, Stride: 4 * size, Pix: make([]byte, 4*size*size)}
		if err := testRenderer.Render(dl, img); err != nil {
			t.Fatal(err)
		}
		got, areas := components(size, size, saturated(img), 20)
		if got != tc.n {
			t.Errorf("%s: a top-down render shows %d objects, want %d (areas %v)", c.P.ID(), got, tc.n, areas)
		}
	}
}

// Every object is drawn in at least one frame of the clip, and every
// object the trace lists as in view at a frame has visible pixels there
// (objects drawn flat in id colours; partly hidden objects still count).
func TestObjectsEveryObjectSeenAndTraceAgrees(t *testing.T) {
	const w, h = 480, 270
	for _, tc := range []struct {
		n     int
		class string
		seed  int
	}{{12, "cube-blue", 0}, {30, "sphere-red", 5}, {50, "cube-yellow", 7}} {
		c := objectsClip(t, tc.n, tc.class, tc.seed, w, h)
		tr := c.Trace()
		img := gpu.Image{Width: w, Height: h, Stride: 4 * w, Pix: make([]byte, 4*w*h)}
		idColor := func(id int) rgb { return rgb{10 + 4*id, 200 - 3*id, 77} }
		everSeen := make([]bool, tc.n)
		frames := tr.Frames()
		for k := 0; k < frames; k += 3 {
			dl := c.State(float64(k) / 30)
			for i := range dl.World.Objects {
				cc := idColor(i)
				dl.World.Objects[i].Flat = true
				dl.World.Objects[i].Color = scene.RGBA{R: float32(cc[0]) / 255, G: float32(cc[1]) / 255, B: float32(cc[2]) / 255, A: 1}
			}
			if err := testRenderer.Render(dl, img); err != nil {
				t.Fatal(err)
			}
			count := map[rgb]int{}
			for y := range h {
				for x := range w {
					count[pixel(img, x, y)]++
				}
			}
			for _, id := range tr.Objects.InView[k] {
				if count[idColor(id)] == 0 {
					t.Errorf("%s frame %d: object %d is in view by the trace but has no pixels", tr.ID, k, id)
				}
			}
			for id := range tc.n {
				if count[idColor(id)] > 0 {
					everSeen[id] = true
				}
			}
		}
		for id, ok := range everSeen {
			if !ok {
				t.Errorf("%s: object %d is in no rendered frame", tr.ID, id)
			}
		}
	}
}

// One objects frame pinned to a reviewed PNG, rendered twice (determinism).
func TestGoldenObjectsFrame(t *testing.T) {
	c := objectsClip(t, 20, "sphere-green", 1, 480, 270)
	for range 2 {
		gputest.CompareGolden(t, "objects", renderAt(t, c, 2.5), gputest.Default)
	}
}

// An objects clip goes through the pipeline: the manifest carries its
// class, the trace validates, and LoadClip rebuilds the same clip.
func TestRenderObjectsClips(t *testing.T) {
	out := t.TempDir()
	s, err := ParseSpec([]byte("grid: countvideobench\ncounts: [5, 8]\nclasses: [cube-red]\nseeds: 1\nduration: 1\nwidth: 320\nheight: 180\n"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := render(t, context.Background(), s, out)
	if err != nil || sum.Rendered != 2 {
		t.Fatalf("rendered %d, err %v", sum.Rendered, err)
	}
	clip, tr, e, err := LoadClip(filepath.Join(out, ManifestName), "objects_N08_cube-red_s00")
	if err != nil {
		t.Fatal(err)
	}
	if e.Class != "cube-red" || tr.Class != "cube-red" || tr.N != 8 || clip.P.Class != "cube-red" || !tr.IsObjects() {
		t.Fatalf("entry %+v trace class %q", e, tr.Class)
	}
	raw, _ := os.ReadFile(filepath.Join(out, ManifestName))
	if !strings.Contains(string(raw), `"class":"cube-red"`) {
		t.Fatalf("manifest lacks the class: %s", raw)
	}
	if _, err := trace.Load(filepath.Join(out, "clips", "objects_N05_cube-red_s00.trace.json")); err != nil {
		t.Fatal(err)
	}
	// A rerun verifies and keeps both.
	sum, err = render(t, context.Background(), s, out)
	if err != nil || sum.Skipped != 2 || sum.Rendered != 0 {
		t.Fatalf("rerun: %+v, %v", sum, err)
	}
}
