// Package scene defines the controlled clips of low-frequency-trap §3.1 and
// Appendix A.1 as pure functions of time: for (domain, N, F, seed, duration,
// fps, size) a Clip gives the executable trace and, for any time t, the draw
// list of the frame shown at t. No GL and no I/O happen here, so every
// property of a clip can be unit-tested and any sampling time rendered
// exactly.
//
// Schedule. Events happen at t_i = t_1 + (i−1)/F, i = 1..N. The active span
// is [t_1 − 1/(2F), t_N + 1/(2F)], exactly N/F long; the seed places it in the
// clip (the "start delay"), and t_1 is snapped to a frame time of the clip's
// own frame rate when the placement leaves room, so the first event is on a
// frame. A domain whose events are instants (domain.Spec.EventsOnFrames:
// bounce_ball's contacts) puts every t_i on the frame nearest
// t_1 + (i−1)/F, at most half a frame from it, since a contact between
// two frames is shown by neither; the span keeps the nominal schedule's.
// Outside the active span nothing moves.
//
// Nuisance. The seed alone (not N or F) draws colours, geometry,
// trajectory style, initial state, orientation and the start-delay fraction,
// so seed s of every cell of a domain looks alike and only the temporal
// demand changes across the grid.
//
// Domains. Every domain with a scene registers itself the same way (a
// registration: its own parameter checks, clip id, builder and trace
// section): the event domains through eventDomain, objects through
// objectsDomain. What a domain supports beyond drawing (count-only
// scoring, its prompt, policies, single:best, view statistics) is declared
// in package domain, which scene and the evaluation both read.
package scene

import (
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"

	"github.com/tracegrid/tracegrid/domain"
	"github.com/tracegrid/tracegrid/trace"
)

// Params identify one clip.
type Params struct {
	Domain string
	N      int
	F      float64 // Hz; 0 for the objects domain, which has no events
	// Class is the objects domain's "<shape>-<colour>" (e.g. "cube-red");
	// empty for event domains.
	Class    string
	Seed     int
	Duration float64 // seconds
	FPS      int
	Width    int
	Height   int
}

// Limits on parameters, checked by Validate.
const (
	MinSize     = 64
	MaxSize     = 4096
	MaxFPS      = 240
	MaxDuration = 3600.0
	MaxN        = 10000
)

// ErrParams is wrapped by every parameter error.
var ErrParams = errors.New("invalid clip parameters")

// scenery is one domain's scene, built for one clip by its registration.
type scenery interface {
	// state appends the items of the frame at time t to dl.Items (and
	// fills dl.World for a 3-D scene).
	state(t float64, dl *DrawList)
}

// registration is how a domain plugs into the scene. Every domain whose
// domain.Spec has Scene set registers one (a test checks); what it
// supports beyond drawing (scoring, prompts, policies, reports) is
// declared in package domain, never tested here by name.
type registration struct {
	// check validates the domain's own parameters (count, frequency,
	// class) before the ranges every clip shares; fits validates what
	// depends on both (an event schedule that fits the clip and its frame
	// rate). fits may be nil.
	check, fits func(p Params) error
	// id writes the clip id.
	id func(p Params) string
	// build draws the nuisance for the clip's seed and returns its scene.
	build func(c *Clip) (scenery, error)
	// truth fills the domain's part of the clip's trace (its events or
	// its objects).
	truth func(c *Clip, tr *trace.Trace)
	// world says the scene is a 3-D world (DrawList.World); the other
	// scenes draw 2-D items only.
	world bool
}

// domains are the registered scenes by domain name.
var domains = map[string]registration{
	domain.BounceBall:   eventDomain(newBounceBall),
	domain.Blinking:     eventDomain(newBlinking),
	domain.StateMachine: eventDomain(newStateMachine),
	domain.Objects:      objectsDomain,
}

// ObjectsDomain is the static-object domain (CountVideoBench), the same
// name as domain.Objects.
const ObjectsDomain = domain.Objects

// AllDomains lists every domain: the event domains, then the others
// (objects).
func AllDomains() []string {
	var others []string
	for _, n := range sortedDomains() {
		if !isEvent(n) {
			others = append(others, n)
		}
	}
	return append(Domains(), others...)
}

// Domains lists the event domains (low-frequency-trap) in a fixed order.
func Domains() []string {
	var names []string
	for _, n := range sortedDomains() {
		if isEvent(n) {
			names = append(names, n)
		}
	}
	return names
}

func sortedDomains() []string { return slices.Sorted(maps.Keys(domains)) }

func isEvent(name string) bool { return domain.Of(name).Truth == domain.TruthEvents }

// FormatF writes a frequency the way clip ids do: at least one decimal
// ("1.5", "2.0"), more only when needed ("0.25"), so distinct values never
// share an id.
func FormatF(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if f == math.Trunc(f) {
		s += ".0"
	}
	return s
}

// ID is the clip id `<domain>_N<nn>_F<f.f>_s<seed>`, e.g. bounce_ball_N08_F1.5_s03,
// or for the objects domain `objects_N<nn>_<shape>-<colour>_s<seed>`.
func (p Params) ID() string {
	if r, ok := domains[p.Domain]; ok {
		return r.id(p)
	}
	return eventID(p)
}

// badParams is a parameter error (it wraps ErrParams).
func badParams(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrParams, fmt.Sprintf(format, args...))
}

// Validate reports the first parameter that cannot make a clip.
func (p Params) Validate() error {
	r, ok := domains[p.Domain]
	if !ok {
		return badParams("unknown domain %q (known: %v)", p.Domain, AllDomains())
	}
	if err := r.check(p); err != nil {
		return err
	}
	if p.Seed < 0 {
		return badParams("seed %d must be non-negative", p.Seed)
	}
	if !(p.Duration > 0) || p.Duration > MaxDuration {
		return badParams("duration %v s out of range (0, %v]", p.Duration, MaxDuration)
	}
	if p.FPS < 1 || p.FPS > MaxFPS {
		return badParams("fps %d out of range [1, %d]", p.FPS, MaxFPS)
	}
	for _, d := range []struct {
		name string
		v    int
	}{{"width", p.Width}, {"height", p.Height}} {
		if d.v < MinSize || d.v > MaxSize {
			return badParams("%s %d out of range [%d, %d]", d.name, d.v, MinSize, MaxSize)
		}
		if d.v%2 != 0 {
			return badParams("%s %d is odd; yuv420p needs even sizes", d.name, d.v)
		}
	}
	if r.fits == nil {
		return nil
	}
	return r.fits(p)
}

// Clip is one scene instance. It is immutable after New and safe for
// concurrent use.
type Clip struct {
	P     Params
	times []float64
	// states[i] is the state after event i (states[0] before any event).
	states   []string
	attrs    []map[string]string
	nuisance map[string]any
	pulse    float64
	start    float64 // active span
	end      float64
	// last is the nominal t_N = t_1 + (N−1)/F, which the active span
	// ends 1/(2F) after; the times are snapped from it where the domain
	// puts its events on frames (domain.Spec.EventsOnFrames).
	last float64
	bg   RGBA
	reg  registration
	dom  scenery
}

// New validates p and builds the clip.
func New(p Params) (*Clip, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	c := &Clip{P: p, nuisance: map[string]any{}, reg: domains[p.Domain]}
	dom, err := c.reg.build(c)
	if err != nil {
		return nil, err
	}
	c.dom = dom
	return c, nil
}

// seedRand gives the nuisance generator: a function of the domain and seed
// only, never of N or F.
func seedRand(domainName string, seed int) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(domainName))
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
}

// schedule places the N events. u in [0,1) is the seed's start fraction.
func (c *Clip) schedule(u float64) {
	p := c.P
	if p.N == 0 {
		c.start, c.end = 0, 0
		return
	}
	half := 1 / (2 * p.F)
	room := p.Duration - float64(p.N)/p.F
	if room < 0 {
		room = 0
	}
	t1 := half + u*room
	// Snap t_1 to the nearest frame time that keeps the span in the clip.
	// A domain whose events must be on frames snaps it even when no frame
	// time leaves the span whole (less than a frame of room): the span is
	// then clipped to the clip.
	fps := float64(p.FPS)
	onFrames := domain.Of(p.Domain).EventsOnFrames
	lo, hi := math.Ceil((half-1e-9)*fps), math.Floor((half+room+1e-9)*fps)
	if k := math.Round(t1 * fps); lo <= hi {
		t1 = math.Max(lo, math.Min(hi, k)) / fps
	} else if onFrames {
		t1 = k / fps
	}
	c.times = make([]float64, p.N)
	for i := range c.times {
		c.times[i] = t1 + float64(i)/p.F
	}
	// The nominal last event; the span is [t_1 − 1/(2F), this + 1/(2F)],
	// exactly N/F, whether or not the events are snapped.
	c.last = c.times[p.N-1]
	if onFrames {
		// Every event on the frame nearest t_1 + (i−1)/F, in whole frames
		// from t_1 (a frame itself), so the offsets are the same for every
		// seed and the time is the very float64(k)/fps the frame is drawn
		// at: a contact between two frames would be shown by neither.
		k1 := math.Round(t1 * fps)
		for i := range c.times {
			c.times[i] = (k1 + math.Round(float64(i)*fps/p.F)) / fps
		}
	}
	c.start = t1 - half
	c.end = c.last + half
	if c.start < 0 {
		c.start = 0
	}
	if c.end > p.Duration {
		c.end = p.Duration
	}
}

// Times returns the event times t_1..t_N.
func (c *Clip) Times() []float64 { return slices.Clone(c.times) }

// ActiveSpan returns the interval outside which every frame is the same as
// its neighbour.
func (c *Clip) ActiveSpan() (start, end float64) { return c.start, c.end }

// timeEps absorbs float error when a time is compared with an event time:
// t_i = t_1 + (i−1)/F and the frame time k/fps can be the same instant and
// differ in their last bits (12.666666666666668 and 380/30 =
// 12.666666666666666), and then the frame at the event must show it.
const timeEps = 1e-9

// eventsBefore returns how many events happened at or before t (within
// timeEps).
func (c *Clip) eventsBefore(t float64) int {
	return sort.Search(len(c.times), func(i int) bool { return c.times[i] > t+timeEps })
}

// State returns the draw list of the frame at time t (any real t; times
// outside [0, Duration] show the first or last frame's content).
func (c *Clip) State(t float64) *DrawList {
	dl := &DrawList{}
	c.StateInto(t, dl)
	return dl
}

// StateInto is State without allocation when dl's item slice has capacity.
func (c *Clip) StateInto(t float64, dl *DrawList) {
	dl.Width, dl.Height = c.P.Width, c.P.Height
	dl.Background = c.bg
	dl.Items = dl.Items[:0]
	if !c.reg.world {
		dl.World = nil
	}
	c.dom.state(t, dl)
}

// Trace returns the executable ground truth of the clip.
func (c *Clip) Trace() *trace.Trace {
	p := c.P
	tr := &trace.Trace{
		Schema: trace.Schema, ID: p.ID(), Domain: p.Domain, N: p.N, F: p.F, Seed: p.Seed,
		Duration: p.Duration, FPS: p.FPS, Width: p.Width, Height: p.Height,
		ActiveStart: c.start, ActiveEnd: c.end, InitialState: c.states[0],
		Pulse: c.pulse, Nuisance: c.nuisance, Events: make([]trace.Event, len(c.times)),
	}
	c.reg.truth(c, tr)
	return tr
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// The paper's task space (§3.1): counts, frequencies, seeds per cell, the
// nominal frequency of the N=0 controls and the clip length.
var (
	PaperCounts      = []int{0, 1, 2, 3, 4, 5, 6, 8, 10, 12}
	PaperFrequencies = []float64{0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0}
)

const (
	PaperSeeds    = 10
	PaperNominalF = 1.0
	PaperDuration = 24.0
	DefaultFPS    = 30
	DefaultWidth  = 854
	DefaultHeight = 480
)
