package trace_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/tracegrid/tracegrid/domain"
	"github.com/tracegrid/tracegrid/scene"
	"github.com/tracegrid/tracegrid/trace"
)

// TestLimitsAgreeWithScene: the trace package repeats the scene's ranges
// and domain names (scene imports trace, not the other way round).
func TestLimitsAgreeWithScene(t *testing.T) {
	if trace.MaxFPS != scene.MaxFPS || trace.MaxDuration != scene.MaxDuration || trace.MinSize != scene.MinSize || trace.MaxSize != scene.MaxSize {
		t.Errorf("trace limits fps %d, duration %v, size [%d, %d]; scene %d, %v, [%d, %d]",
			trace.MaxFPS, trace.MaxDuration, trace.MinSize, trace.MaxSize, scene.MaxFPS, scene.MaxDuration, scene.MinSize, scene.MaxSize)
	}
	// A trace may also name a domain without a scene (natural: imported
	// videos); the rendered ones are the scene's.
	var rendered []string
	for _, d := range trace.Domains {
		if domain.Of(d).Scene {
			rendered = append(rendered, d)
		}
	}
	a, b := slices.Sorted(slices.Values(rendered)), slices.Sorted(slices.Values(scene.AllDomains()))
	if !slices.Equal(a, b) || trace.ObjectsDomain != scene.ObjectsDomain {
		t.Errorf("trace domains %v, scene %v", a, b)
	}
	if want := append(scene.AllDomains(), domain.Natural); !slices.Equal(trace.Domains, want) {
		t.Errorf("trace.Domains = %v, want %v", trace.Domains, want)
	}
}

// TestSceneTracesValidate: every trace the scene writes passes the
// stricter validation and reads back: the whole paper grid, and clips at
// the edges of the ranges (the slowest and fastest frame rates, the
// shortest pulse, a span that fills the clip, objects clips).
func TestSceneTracesValidate(t *testing.T) {
	var ps []scene.Params
	for _, d := range scene.Domains() {
		for _, n := range scene.PaperCounts {
			fs := scene.PaperFrequencies
			if n == 0 {
				fs = []float64{scene.PaperNominalF}
			}
			for _, f := range fs {
				for seed := range scene.PaperSeeds {
					ps = append(ps, scene.Params{Domain: d, N: n, F: f, Seed: seed, Duration: scene.PaperDuration, FPS: 30, Width: 854, Height: 480})
				}
			}
		}
		ps = append(ps,
			scene.Params{Domain: d, N: 0, F: 1, Duration: 1, FPS: 1, Width: 64, Height: 64},
			scene.Params{Domain: d, N: 2, F: 0.5, Duration: 4, FPS: 1, Width: 64, Height: 64},            // span = the clip
			scene.Params{Domain: d, N: 5, F: 120, Seed: 3, Duration: 1, FPS: 240, Width: 64, Height: 64}, // pulse = 1/240 s
			scene.Params{Domain: d, N: 3, F: 2.5, Seed: 7, Duration: 2, FPS: 5, Width: 64, Height: 64},   // F = fps/2
			// Less than a frame of room: contacts are snapped to frames all
			// the same, and the span is clipped to the clip.
			scene.Params{Domain: d, N: 3, F: 0.8, Seed: 1, Duration: 3.751, FPS: 30, Width: 64, Height: 64},
		)
	}
	for _, n := range []int{1, 5, 50} {
		ps = append(ps, scene.Params{Domain: scene.ObjectsDomain, N: n, Class: "sphere-green", Seed: 2, Duration: 2, FPS: 10, Width: 320, Height: 180})
	}
	for _, p := range ps {
		c, err := scene.New(p)
		if err != nil {
			t.Fatalf("%s: %v", p.ID(), err)
		}
		tr := c.Trace()
		if err := tr.Validate(); err != nil {
			t.Errorf("%s (%+v): %v", p.ID(), p, err)
			continue
		}
		b, err := tr.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := trace.Read(bytes.NewReader(b)); err != nil {
			t.Errorf("%s: read back: %v", p.ID(), err)
		}
	}
}
