// Package sampling holds the visual-access interventions of
// low-frequency-trap §6 and Appendix A.2/C (native rate, uniform FPS,
// event-centred keyframes), the adaptive sampler its companion proposal
// suggests, and the frame conditions of TOMATO §3 (single random frame,
// single best frame, m ordered frames, the same m shuffled). A policy is a
// pure function from a clip to an ordered list of timestamps; only
// `adaptive` looks at pixels (never at the trace), and only `keyframes` and
// `single:best` look at the trace.
//
// Time convention, used by every policy: uniform samples take the start of
// each sampling interval, t_j = j/K (fps:K, native:R) or t_j = j·D/M
// (uniform:M; fps:K,max:M where its cap M is below K·D), j = 0, 1, …, so
// the first sample is t = 0 and every sample
// is inside [0, D). fps:4 on a 24 s clip gives 96 frames at 0, 0.25, …,
// 23.75 s. The frame shown at t is the clip's last frame at or before t.
//
// Every plan is bounded before it is allocated (docs/sampling.md, "Limits"):
// Parse refuses parameters above MaxRate, MaxPlanFrames and
// MaxKeyframeOffset, and Plan refuses a plan of more than MaxPlanFrames
// frames, a rate above the clip's own frame rate (unless Clip.Exact), and an
// adaptive pass over more than MaxAdaptivePass clip frames. Every such error
// wraps ErrPolicy.
package sampling

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"github.com/tracegrid/tracegrid/internal/textin"
)

// Frame is one sampled frame.
type Frame struct {
	// Index is the frame's place in time order, from 0.
	Index int `json:"index"`
	// Position is its place in the sequence shown to the model, from 0.
	Position int `json:"position"`
	// T is the true sample time in seconds from the start of the clip.
	T float64 `json:"t"`
}

// Limit records how a per-model image cap changed a plan.
type Limit struct {
	Max    int    `json:"max_images"`
	Mode   string `json:"mode"` // "thin"
	Before int    `json:"before"`
	After  int    `json:"after"`
}

// Plan is a policy's frames for one clip, in the order shown to the model.
type Plan struct {
	Policy string  `json:"policy"`
	Frames []Frame `json:"frames"`
	// Note explains an empty or capped plan in words (e.g. N=0 keyframes).
	Note  string `json:"note,omitempty"`
	Limit *Limit `json:"limit,omitempty"`
}

// Times returns the sample times in the order shown.
func (p Plan) Times() []float64 {
	ts := make([]float64, len(p.Frames))
	for i, f := range p.Frames {
		ts[i] = f.T
	}
	return ts
}

// PixelSource gives a cheap low-resolution greyscale view of the frame shown
// at time t. All calls return slices of the same length.
type PixelSource interface {
	LowRes(t float64) ([]byte, error)
}

// Clip is what a policy may know about a clip.
type Clip struct {
	ID       string
	Duration float64 // seconds
	FPS      float64 // the clip's frame rate
	Seed     int
	// Events are the true event times; only keyframes and single:best read
	// them.
	Events []float64
	// InView, for a clip whose domain picks single:best by the objects in
	// view (domain.BestMostInView: the static-object clips, which have no
	// events), is the number of objects in view at each frame k
	// (t = k/FPS), from the trace; only single:best reads it.
	InView []int
	// Pixels is read only by adaptive.
	Pixels PixelSource
	// Exact says the frames will be rendered at the sample times
	// themselves (tracegrid frames --exact), not taken from the clip's
	// frames. Only then may a policy sample faster than the clip's FPS:
	// otherwise the extra samples would repeat clip frames.
	Exact bool
}

// frameCount is the number of frames of the clip, at least 1; computed in
// floating point and clamped, so an absurd duration cannot overflow it.
func (c Clip) frameCount() int {
	n := math.Ceil(c.Duration*c.FPS - 1e-9)
	if !(n >= 1) {
		return 1
	}
	if n > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(n)
}

// Limits on every plan (docs/sampling.md, "Limits").
const (
	// MaxPlanFrames caps the frames of one plan and the M of uniform:M,
	// shuffled:M and the B of adaptive:B. The paper's densest condition is
	// fps:16 on a 24 s clip, 384 frames, and chat APIs take a few hundred
	// images per request at most; 10,000 frames (several hundred MB of
	// JPEGs at 854×480) is far beyond any request and still a bounded
	// directory for tracegrid frames.
	MaxPlanFrames = 10000
	// MaxRate caps K of fps:K and R of native:R, in samples per second.
	// Without --exact a rate is further bounded by the clip's own frame
	// rate (at most 240 fps for a rendered clip); 1,000/s is room for
	// --exact sampling between frames, finer than 1 ms.
	MaxRate = 1000
	// MaxKeyframeOffset caps O of keyframes:O in seconds (the paper uses
	// 0.1 s; offsets are clamped to the clip anyway).
	MaxKeyframeOffset = 60
	// MaxAdaptivePass caps the clip frames adaptive:B reads in its
	// low-resolution pass: the longest clip a render spec allows is
	// 3,600 s at 240 fps, 864,000 frames.
	MaxAdaptivePass = 1000000
)

// Policy maps a clip to frames.
type Policy interface {
	// String is the canonical policy string, e.g. "fps:4".
	String() string
	Plan(c Clip) (Plan, error)
}

// ErrPolicy is wrapped by every error about a policy string.
var ErrPolicy = errors.New("invalid sampling policy")

// Policies lists the accepted forms, for help texts and errors.
const Policies = "native[:R], fps:K[,max:M], keyframes[:OFFSET], adaptive:B, single:random, single:best, uniform:M, shuffled:M"

// Parse reads a policy string.
func Parse(s string) (Policy, error) {
	if base, limit, ok := strings.Cut(s, ","); ok {
		return parseCapped(s, base, limit) // fps:K,max:M (capped.go)
	}
	name, arg, hasArg := strings.Cut(strings.TrimSpace(s), ":")
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w %q: %s (accepted: %s)", ErrPolicy, s, fmt.Sprintf(format, a...), Policies)
	}
	positive := func(ceiling float64, unit string) (float64, error) {
		v, err := strconv.ParseFloat(arg, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return 0, bad("%q is not a positive number", arg)
		}
		if v > ceiling {
			return 0, bad("%s is above the limit of %s %s", arg, fmtNum(ceiling), unit)
		}
		return v, nil
	}
	count := func() (int, error) {
		v, err := strconv.Atoi(arg)
		if err != nil && errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(arg, "-") {
			return 0, bad("%s is above the limit of %d frames per plan", arg, MaxPlanFrames)
		}
		if err != nil || v <= 0 {
			return 0, bad("%q is not a positive whole number", arg)
		}
		if v > MaxPlanFrames {
			return 0, bad("%d is above the limit of %d frames per plan", v, MaxPlanFrames)
		}
		return v, nil
	}
	switch name {
	case "native":
		if !hasArg {
			return rate{name: "native", k: 1}, nil
		}
		k, err := positive(MaxRate, "frames per second")
		if err != nil {
			return nil, err
		}
		return rate{name: "native", k: k}, nil
	case "fps":
		if !hasArg {
			return nil, bad("fps needs a rate, e.g. fps:4")
		}
		k, err := positive(MaxRate, "frames per second")
		if err != nil {
			return nil, err
		}
		return rate{name: "fps", k: k}, nil
	case "keyframes":
		if !hasArg {
			return keyframes{offset: DefaultKeyframeOffset}, nil
		}
		o, err := positive(MaxKeyframeOffset, "seconds")
		if err != nil {
			return nil, err
		}
		return keyframes{offset: o}, nil
	case "adaptive":
		b, err := count()
		if err != nil {
			return nil, err
		}
		return adaptive{budget: b}, nil
	case "uniform", "shuffled":
		m, err := count()
		if err != nil {
			return nil, err
		}
		return uniform{m: m, shuffled: name == "shuffled"}, nil
	case "single":
		switch arg {
		case "random":
			return singleRandom{}, nil
		case "best":
			return singleBest{}, nil
		}
		return nil, bad("single takes random or best")
	}
	if name == "max" {
		return nil, bad("max:M is a frame cap: write it after its policy, as in fps:2,max:768")
	}
	return nil, bad("unknown policy %q", name)
}

// DefaultKeyframeOffset is the paper's ±0.1 s around each event (§6).
const DefaultKeyframeOffset = 0.1

// inOrder numbers frames at the given times in time order and shows them
// in that order.
func inOrder(policy string, ts []float64) Plan {
	p := Plan{Policy: policy, Frames: make([]Frame, len(ts))}
	for i, t := range ts {
		p.Frames[i] = Frame{Index: i, Position: i, T: t}
	}
	return p
}

// rate samples uniformly at k frames per second: fps:K and native:R.
type rate struct {
	name string
	k    float64
}

func (r rate) String() string { return r.name + ":" + fmtNum(r.k) }

func (r rate) Plan(c Clip) (Plan, error) {
	if err := c.check(); err != nil {
		return Plan{}, err
	}
	if !c.Exact && r.k > c.FPS*(1+1e-9) {
		return Plan{}, planError(r, c, "%s samples/s is faster than the clip's own %s fps: the extra samples would repeat clip frames (at most %s here; a rendered clip can be sampled between its frames with --exact)",
			fmtNum(r.k), fmtNum(c.FPS), fmtNum(c.FPS))
	}
	fn := math.Ceil(c.Duration*r.k - 1e-9)
	if err := checkFrames(r, c, fn); err != nil {
		return Plan{}, err
	}
	n := int(fn)
	ts := make([]float64, n)
	for j := range ts {
		ts[j] = float64(j) / r.k
	}
	return inOrder(r.String(), ts), nil
}

// uniform takes m frames at the start of m equal intervals; shuffled shows
// the same frames in a seed-fixed random order.
type uniform struct {
	m        int
	shuffled bool
}

func (u uniform) String() string {
	if u.shuffled {
		return "shuffled:" + strconv.Itoa(u.m)
	}
	return "uniform:" + strconv.Itoa(u.m)
}

func (u uniform) Plan(c Clip) (Plan, error) {
	if err := c.check(); err != nil {
		return Plan{}, err
	}
	if err := checkFrames(u, c, float64(u.m)); err != nil {
		return Plan{}, err
	}
	if n := c.frameCount(); !c.Exact && u.m > n {
		return Plan{}, planError(u, c, "%d frames from a clip of %d frames would repeat clip frames (at most %d here; a rendered clip can be sampled between its frames with --exact)", u.m, n, n)
	}
	ts := make([]float64, u.m)
	for j := range ts {
		ts[j] = float64(j) * c.Duration / float64(u.m)
	}
	p := inOrder(u.String(), ts)
	if u.shuffled && u.m > 1 {
		perm := clipRand(c, "shuffled").Perm(u.m)
		// A permutation that happens to be the identity would make the
		// order condition identical to uniform: rotate it by one instead.
		if sort.IntsAreSorted(perm) {
			perm = append(perm[1:], perm[0])
		}
		for i := range p.Frames {
			p.Frames[i].Position = perm[i]
		}
		sort.Slice(p.Frames, func(a, b int) bool { return p.Frames[a].Position < p.Frames[b].Position })
	}
	return p, nil
}

// keyframes takes t_i − o, t_i, t_i + o for every true event, clamped to
// the clip.
type keyframes struct{ offset float64 }

func (k keyframes) String() string { return "keyframes:" + fmtNum(k.offset) }

func (k keyframes) Plan(c Clip) (Plan, error) {
	if err := c.check(); err != nil {
		return Plan{}, err
	}
	if err := checkFrames(k, c, 3*float64(len(c.Events))); err != nil {
		return Plan{}, err
	}
	ts := make([]float64, 0, 3*len(c.Events))
	for _, t := range c.Events {
		for _, dt := range []float64{-k.offset, 0, k.offset} {
			ts = append(ts, math.Max(0, math.Min(c.Duration, t+dt)))
		}
	}
	sort.Float64s(ts)
	p := inOrder(k.String(), ts)
	if len(c.Events) == 0 {
		p.Note = "the clip has no true events (N=0): keyframes gives no frames"
	}
	return p, nil
}

// singleRandom is one frame at a seed-fixed random frame time.
type singleRandom struct{}

func (singleRandom) String() string { return "single:random" }

func (s singleRandom) Plan(c Clip) (Plan, error) {
	if err := c.check(); err != nil {
		return Plan{}, err
	}
	k := clipRand(c, "single").IntN(c.frameCount())
	return inOrder(s.String(), []float64{float64(k) / c.FPS}), nil
}

// singleBest is the one frame a human picker would show for a counting
// question: the middle true event t_⌈N/2⌉, where an event is on screen
// (contact, lit pulse, new highlight). A static-object clip gets the frame
// with the most objects in view (the one nearest the middle among equals);
// a no-event clip its middle frame. The model never sees the trace, only
// the frame.
type singleBest struct{}

func (singleBest) String() string { return "single:best" }

func (s singleBest) Plan(c Clip) (Plan, error) {
	if err := c.check(); err != nil {
		return Plan{}, err
	}
	t := c.Duration / 2
	if n := len(c.Events); n > 0 {
		t = c.Events[(n-1)/2]
	} else if len(c.InView) > 0 {
		mid, best := float64(len(c.InView)-1)/2, 0
		for k, v := range c.InView {
			if v > c.InView[best] || v == c.InView[best] && math.Abs(float64(k)-mid) < math.Abs(float64(best)-mid) {
				best = k
			}
		}
		t = float64(best) / c.FPS
	}
	return inOrder(s.String(), []float64{t}), nil
}

func (c Clip) check() error {
	if !(c.Duration > 0) || !(c.FPS > 0) {
		return fmt.Errorf("sampling: clip %s needs a positive duration and frame rate (got %v s, %v fps)", textin.Quote(c.ID), c.Duration, c.FPS)
	}
	if math.IsInf(c.Duration, 0) || math.IsInf(c.FPS, 0) {
		return fmt.Errorf("sampling: clip %s needs a finite duration and frame rate (got %v s, %v fps)", textin.Quote(c.ID), c.Duration, c.FPS)
	}
	if !sort.Float64sAreSorted(c.Events) {
		return fmt.Errorf("sampling: clip %s: event times are not sorted", textin.Quote(c.ID))
	}
	return nil
}

// planError is an error about a policy applied to one clip; it wraps
// ErrPolicy, so callers treat it as bad input.
func planError(p Policy, c Clip, format string, a ...any) error {
	return fmt.Errorf("%w %s on clip %s: %s", ErrPolicy, p, textin.Quote(c.ID), fmt.Sprintf(format, a...))
}

// checkFrames refuses a plan of n frames above MaxPlanFrames before any of
// it is allocated. n is a float so that an absurd duration cannot overflow.
func checkFrames(p Policy, c Clip, n float64) error {
	if n > MaxPlanFrames {
		return planError(p, c, "it gives %s frames over %s s, more than the limit of %d frames per plan", fmtCount(n), fmtNum(c.Duration), MaxPlanFrames)
	}
	return nil
}

// fmtCount prints a frame count that may be too large for an int.
func fmtCount(n float64) string {
	if n < 1e15 {
		return strconv.FormatFloat(n, 'f', 0, 64)
	}
	return strconv.FormatFloat(n, 'g', 3, 64)
}

// clipRand is a generator fixed by the clip (id and seed) and the purpose,
// so every run shows the same "random" frames in the same order.
func clipRand(c Clip, purpose string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(c.ID + "\x00" + purpose))
	return rand.New(rand.NewPCG(uint64(c.Seed), h.Sum64()))
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// ApplyLimit caps a plan at max images. Mode "refuse" returns an error
// when the plan is larger; mode "thin" keeps max frames spread uniformly
// over the plan's time order (the frame at the start of each of max equal
// groups), keeps their shown order, renumbers Index and Position, and
// records the change in plan.Limit. Nothing is ever dropped silently.
func ApplyLimit(p Plan, maxImages int, mode string) (Plan, error) {
	if maxImages <= 0 || len(p.Frames) <= maxImages {
		return p, nil
	}
	switch mode {
	case "refuse", "":
		return Plan{}, fmt.Errorf("sampling: policy %s gives %d frames, more than max_images %d (set the limit mode to thin to subsample uniformly)", p.Policy, len(p.Frames), maxImages)
	case "thin":
	default:
		return Plan{}, fmt.Errorf("sampling: unknown limit mode %q (refuse or thin)", mode)
	}
	byIndex := append([]Frame(nil), p.Frames...)
	sort.Slice(byIndex, func(a, b int) bool { return byIndex[a].Index < byIndex[b].Index })
	keep := map[int]bool{}
	for j := range maxImages {
		keep[byIndex[j*len(byIndex)/maxImages].Index] = true
	}
	var kept []Frame
	for _, f := range p.Frames { // shown order
		if keep[f.Index] {
			kept = append(kept, f)
		}
	}
	// Renumber: Position by shown order, Index by time order.
	order := append([]Frame(nil), kept...)
	sort.Slice(order, func(a, b int) bool { return order[a].Index < order[b].Index })
	newIndex := map[int]int{}
	for i, f := range order {
		newIndex[f.Index] = i
	}
	for i := range kept {
		kept[i].Index, kept[i].Position = newIndex[kept[i].Index], i
	}
	out := Plan{Policy: p.Policy, Frames: kept, Note: p.Note,
		Limit: &Limit{Max: maxImages, Mode: "thin", Before: len(p.Frames), After: len(kept)}}
	return out, nil
}
