package score

import "math"

// FrameAccuracies are the accuracies (fractions in [0, 1]) of one model on
// one question set under TOMATO's matched input conditions (§3): a single
// random frame, a single hand-picked (best) frame, m uniformly sampled
// frames in order, and the same m frames shuffled.
type FrameAccuracies struct {
	SingleRandom float64 `json:"single_random"`
	SingleBest   float64 `json:"single_best"`
	Uniform      float64 `json:"uniform"`
	Shuffled     float64 `json:"shuffled"`
}

// Gain is a relative performance gain (to − from)/from. Defined is false
// when the baseline accuracy is not positive or an input is not a finite
// accuracy in [0, 1]; Value is then 0.
type Gain struct {
	Value   float64 `json:"value"`
	Defined bool    `json:"defined"`
}

// RelativeGain is (to − from)/from, the "relative performance gain from
// `from` to `to`" every TOMATO principle is phrased as.
func RelativeGain(from, to float64) Gain {
	if !isAccuracy(from) || !isAccuracy(to) || from == 0 {
		return Gain{}
	}
	return Gain{Value: (to - from) / from, Defined: true}
}

func isAccuracy(a float64) bool { return a >= 0 && a <= 1 && !math.IsNaN(a) }

// FramePrinciples are TOMATO's three benchmark-design metrics (§3.1–3.3).
type FramePrinciples struct {
	// MultiFrameGain κ from a single random frame to m uniform frames, and
	// from a single hand-picked frame to m uniform frames (§3.1 allows
	// either single-frame input; §5.1 reports both, Tables 3 and 4).
	MultiFrameGainRandom Gain `json:"multi_frame_gain_random"`
	MultiFrameGainBest   Gain `json:"multi_frame_gain_best"`
	// OrderSensitivity τ from m shuffled to the same m ordered frames (§3.2).
	OrderSensitivity Gain `json:"order_sensitivity"`
	// InformationDisparity ρ from a random to a hand-picked single frame
	// (§3.3); 0 is a perfectly even spread of information over frames.
	InformationDisparity Gain `json:"information_disparity"`
}

// FrameScores computes the TOMATO principles from matched-condition
// accuracies:
//
//	κ = (A_uniform − A_single)/A_single        (single = random or best)
//	τ = (A_uniform − A_shuffled)/A_shuffled
//	ρ = (A_best − A_random)/A_random
func FrameScores(a FrameAccuracies) FramePrinciples {
	return FramePrinciples{
		MultiFrameGainRandom: RelativeGain(a.SingleRandom, a.Uniform),
		MultiFrameGainBest:   RelativeGain(a.SingleBest, a.Uniform),
		OrderSensitivity:     RelativeGain(a.Shuffled, a.Uniform),
		InformationDisparity: RelativeGain(a.SingleRandom, a.SingleBest),
	}
}
