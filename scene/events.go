package scene

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/tracegrid/tracegrid/domain"
	"github.com/tracegrid/tracegrid/trace"
)

// eventDomain registers an event domain (low-frequency-trap §3.1): N
// events at rate F on the schedule of Clip.schedule, in a 2-D scene that
// draw builds from the seed's generator, after the start delay and the
// background have been drawn from it.
func eventDomain(draw func(c *Clip, rng *rand.Rand) scenery) registration {
	return registration{
		check: checkEvents,
		fits:  fitsEvents,
		id:    eventID,
		build: func(c *Clip) (scenery, error) {
			p := c.P
			rng := seedRand(p.Domain, p.Seed)
			// The start-delay fraction is the first draw, so it is the same
			// for a seed in every cell; the delay itself scales with the
			// room left.
			u := rng.Float64()
			c.schedule(u)
			c.nuisance["start_delay"] = round6(c.start)
			c.nuisance["start_fraction"] = round6(u)
			c.bg = pick(rng, backgrounds)
			c.nuisance["background"] = hexColor(c.bg)
			return draw(c, rng), nil
		},
		truth: eventTruth,
	}
}

// eventID is `<domain>_N<nn>_F<f.f>_s<seed>`.
func eventID(p Params) string {
	return fmt.Sprintf("%s_N%02d_F%s_s%02d", p.Domain, p.N, FormatF(p.F), p.Seed)
}

func checkEvents(p Params) error {
	if p.Class != "" {
		classed := domain.Where(func(s domain.Spec) bool { return s.Class })
		return badParams("class %q applies only to the %s domain", p.Class, strings.Join(classed, ", "))
	}
	if p.N < 0 || p.N > MaxN {
		return badParams("count N=%d out of range [0, %d]", p.N, MaxN)
	}
	if !(p.F > 0) || math.IsInf(p.F, 0) {
		return badParams("frequency F=%v must be positive", p.F)
	}
	return nil
}

func fitsEvents(p Params) error {
	if p.N == 0 {
		return nil
	}
	if span := float64(p.N) / p.F; span > p.Duration+1e-9 {
		return badParams("N=%d at F=%v Hz spans N/F = %.3g s, longer than the %.3g s clip", p.N, p.F, span, p.Duration)
	}
	// Two events closer than two frames apart cannot both be seen in the
	// video. This also guarantees that a blink (at least one frame, at most
	// half a period) fits between two events.
	if 2*p.F > float64(p.FPS) {
		return badParams("F=%v Hz is above half the frame rate (%d fps): successive events would not be distinguishable", p.F, p.FPS)
	}
	return nil
}

// eventTruth fills the trace's events, typed as the domain declares.
func eventTruth(c *Clip, tr *trace.Trace) {
	typ := domain.Of(c.P.Domain).EventType
	for i, t := range c.times {
		before := c.states[i]
		if c.pulse > 0 {
			before = c.states[0]
		}
		tr.Events[i] = trace.Event{T: t, Type: typ, Before: before, After: c.states[i+1], Count: i + 1, Attrs: c.attrs[i]}
	}
}
