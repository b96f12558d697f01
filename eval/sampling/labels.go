package sampling

// TimesReveal reports whether telling the model each frame's sample time
// would reveal what the policy is meant to test, so that its frames are
// labelled by position by default (docs/sampling.md, "Frame labels"):
//
//   - keyframes[:O] places its frames at the true events (t_i − O, t_i,
//     t_i + O): the times are the answer's event times.
//   - shuffled:M shows frames out of time order to test order
//     sensitivity (TOMATO): their times give the order back.
//   - single:random and single:best show one frame chosen for the clip:
//     its time says where in the clip the choice fell (single:best
//     chooses from the trace).
//
// The rate policies (fps:K, fps:K,max:M, native:R sent as frames), uniform:M and
// adaptive:B sample at times that follow from the sampling rate or the
// pixels alone, which the paper also tells the model; their times reveal
// nothing about the events and stay in the labels.
func TimesReveal(p Policy) bool {
	switch p := p.(type) {
	case keyframes, singleRandom, singleBest:
		return true
	case uniform:
		return p.shuffled
	}
	return false
}
