package score

import (
	"math"
	"testing"
)

func TestFrameScores(t *testing.T) {
	got := FrameScores(FrameAccuracies{SingleRandom: 0.2, SingleBest: 0.3, Uniform: 0.5, Shuffled: 0.4})
	want := map[string][2]float64{
		"κ random": {got.MultiFrameGainRandom.Value, (0.5 - 0.2) / 0.2}, // 1.5
		"κ best":   {got.MultiFrameGainBest.Value, (0.5 - 0.3) / 0.3},   // 0.667
		"τ":        {got.OrderSensitivity.Value, (0.5 - 0.4) / 0.4},     // 0.25
		"ρ":        {got.InformationDisparity.Value, (0.3 - 0.2) / 0.2}, // 0.5
	}
	for name, v := range want {
		if math.Abs(v[0]-v[1]) > 1e-12 {
			t.Errorf("%s = %v, want %v", name, v[0], v[1])
		}
	}
	if !got.MultiFrameGainRandom.Defined || !got.InformationDisparity.Defined {
		t.Error("gains not marked defined")
	}
	// A task solvable from one frame has κ < 0 possible (ReXTime, TOMATO
	// §5.1) and an even spread of information ρ = 0.
	even := FrameScores(FrameAccuracies{SingleRandom: 0.4, SingleBest: 0.4, Uniform: 0.3, Shuffled: 0.3})
	if even.InformationDisparity.Value != 0 || !(even.MultiFrameGainRandom.Value < 0) || even.OrderSensitivity.Value != 0 {
		t.Errorf("%+v", even)
	}
}

func TestRelativeGainUndefined(t *testing.T) {
	for _, c := range [][2]float64{{0, 0.5}, {-0.1, 0.5}, {0.2, 1.5}, {math.NaN(), 0.5}, {0.5, math.NaN()}} {
		if g := RelativeGain(c[0], c[1]); g.Defined || g.Value != 0 {
			t.Errorf("RelativeGain(%v, %v) = %+v, want undefined", c[0], c[1], g)
		}
	}
	if g := RelativeGain(0.25, 0.25); !g.Defined || g.Value != 0 {
		t.Errorf("no gain: %+v", g)
	}
}
