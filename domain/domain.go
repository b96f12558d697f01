// Package domain names the clip domains and declares what each one
// supports, in one place every layer can import: it imports nothing, so
// the scenes, the trace schema and the evaluation (prompts, sampling,
// runner, scoring, reports, the reference perceiver) ask this registry for
// a capability instead of testing a domain's name.
//
// Three kinds of domain are registered:
//
//   - Event domains (bounce_ball, blinking, state_machine;
//     low-frequency-trap §3.1): N events at rate F, a trace of
//     timestamped events, scored on the count and on the trace.
//   - The static-object domain (objects; CountVideoBench §4): N objects of
//     one class under a turning camera, no events, scored on the count
//     alone under the benchmark's own protocol.
//   - The natural-video domain (natural; low-frequency-trap §7): videos
//     from outside (TransRAC / RepCount-A), imported by `tracegrid
//     import` (package natural), never rendered. The count is the
//     annotation's; a clip carries a trace of one event per repetition
//     only where the annotation gives each repetition's boundaries
//     (EventsOptional). Its trials are scored on the count in the shared
//     tables and reported in their own section, which adds the trace
//     measures where a trace exists (CountOnly).
package domain

import "slices"

// Domain names: the values of trace.Trace.Domain, scene.Params.Domain,
// results.Trial.Domain and a render spec's domains.
const (
	BounceBall   = "bounce_ball"
	Blinking     = "blinking"
	StateMachine = "state_machine"
	Objects      = "objects"
	// Natural is the natural-video domain (imported videos, no scene).
	Natural = "natural"
)

// Truth is what a clip's trace holds besides its parameters.
type Truth int

const (
	// TruthEvents: the events t_1…t_N with their states (trace.Event).
	TruthEvents Truth = iota
	// TruthObjects: the static objects, the camera path and which objects
	// are in view per frame (trace.Objects); no events.
	TruthObjects
)

// BestFrame is how the single:best policy chooses its one frame.
type BestFrame int

const (
	// BestMiddleEvent: the middle true event t_⌈N/2⌉, where an event is
	// on screen; the middle frame of a clip without events.
	BestMiddleEvent BestFrame = iota
	// BestMostInView: the frame with the most objects in view (the one
	// nearest the middle among equals), read from the trace's
	// objects-in-view table.
	BestMostInView
)

// Spec declares one domain and what it supports.
type Spec struct {
	Name string
	// Title is the name as the papers print it ("Bounce Ball").
	Title string
	// Truth is what the clip's trace holds.
	Truth Truth
	// EventType is the type of the trace's events ("wall_contact"); ""
	// for a domain without events.
	EventType string
	// Scene says package scene renders the domain's clips (it registers a
	// builder for each such domain).
	Scene bool
	// Class says every clip counts one object class "<shape>-<colour>"
	// (trace.Trace.Class), which its id and its question name.
	Class bool
	// CountOnly says a trial is scored on its final count alone
	// (score.TrialScore.CountOnly: no alignment, never eligible for the
	// trace metrics) and reported in its own section, outside
	// low-frequency-trap's event tables (surfaces, boundaries, Tables 1,
	// 2, 4, 8, 9, the event count distributions). A count-only domain with
	// an EventType (natural) may still carry events: its own report section
	// measures them; the shared scoring ignores them.
	CountOnly bool
	// EventPolicies says policies that place frames at the true events
	// (keyframes) apply to the domain's clips; where they do not, such a
	// trial is recorded as not applicable and never sent.
	EventPolicies bool
	// Prompt and Policy are the built-in prompt and the sampling policy of
	// the domain's own benchmark protocol; "" when the domain has none and
	// runs under the study's conditions.
	Prompt, Policy string
	// SingleBest is how single:best chooses the domain's frame.
	SingleBest BestFrame
	// ViewStats says the report summarises how often the clips' objects
	// leave the view (trace.SummarizeViews), beside the paper's figures.
	ViewStats bool
	// EventsOptional says a clip may know its count N without a trace of
	// its events: a natural video annotated with a count alone. Such a
	// clip has no trace file; policies that place frames by the true
	// events (keyframes, single:best) are not applicable to it, and it is
	// scored on its count alone.
	EventsOptional bool
	// EventsOnFrames says the domain's event is an instant, not a state
	// that lasts: a wall contact is visible only in a frame taken at that
	// instant, so the scene puts every t_i on a frame instant of the clip
	// (the nearest to t_1 + (i−1)/F, at most half a frame from it) and
	// the trace records those times. A state change (a highlight that
	// stays, a blink of at least one frame) is shown by the first frame at
	// or after t_i wherever t_i falls, so such domains keep the nominal
	// schedule.
	EventsOnFrames bool
}

// MissingEvents reports whether a clip of the domain with n true events
// and a trace listing events of them lacks the trace of its events: a
// clip of a domain whose events are optional (EventsOptional) that lists
// fewer events than its count.
func (s Spec) MissingEvents(n, events int) bool { return s.EventsOptional && events < n }

// event is the declaration every event domain shares.
func event(name, title, eventType string) Spec {
	return Spec{Name: name, Title: title, Truth: TruthEvents, EventType: eventType, Scene: true,
		EventPolicies: true, SingleBest: BestMiddleEvent}
}

// onFrames marks an event domain whose events are instants
// (EventsOnFrames).
func onFrames(s Spec) Spec {
	s.EventsOnFrames = true
	return s
}

// registry holds the registered domains in the papers' order.
var registry = []Spec{
	onFrames(event(BounceBall, "Bounce Ball", "wall_contact")),
	event(Blinking, "Blinking", "pulse_on"),
	event(StateMachine, "State Machine", "transition"),
	{
		Name: Objects, Title: "Objects", Truth: TruthObjects, Scene: true, Class: true, CountOnly: true,
		// CountVideoBench §5.1: ten uniformly sampled frames and the bare
		// question.
		Prompt: "countvideobench", Policy: "uniform:10",
		SingleBest: BestMostInView, ViewStats: true,
	},
	{
		// low-frequency-trap §7: repetition counting on natural videos,
		// exact match by count bin; the events, where annotated, are the
		// repetitions. No protocol of its own: the study's conditions
		// (zero_shot, natural_direct, cot) apply.
		Name: Natural, Title: "Natural videos", Truth: TruthEvents, EventType: "repetition", CountOnly: true,
		EventPolicies: true, SingleBest: BestMiddleEvent, EventsOptional: true,
	},
}

// Lookup returns the registered domain called name.
func Lookup(name string) (Spec, bool) {
	for _, s := range registry {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// Of returns the registered domain called name, or for any other name
// what consumers assume of a domain they do not know: an event domain
// with no rule of its own (events, event policies, single:best at the
// middle event), titled by its name. Use Lookup to tell the two apart.
func Of(name string) Spec {
	if s, ok := Lookup(name); ok {
		return s
	}
	return Spec{Name: name, Title: name, Truth: TruthEvents, EventPolicies: true, SingleBest: BestMiddleEvent}
}

// Specs returns the registered domains in the papers' order (a new slice
// on every call).
func Specs() []Spec { return slices.Clone(registry) }

// Names lists the registered domains in the papers' order: bounce_ball,
// blinking, state_machine, objects, natural.
func Names() []string {
	out := make([]string, len(registry))
	for i, s := range registry {
		out[i] = s.Name
	}
	return out
}

// Where lists, in the papers' order, the registered domains for which
// has is true, e.g. Where(func(s Spec) bool { return s.CountOnly }).
func Where(has func(Spec) bool) []string {
	var out []string
	for _, s := range registry {
		if has(s) {
			out = append(out, s.Name)
		}
	}
	return out
}

// Rank is a domain's position in the papers' order, and ok false for a
// name that is not registered.
func Rank(name string) (rank int, ok bool) {
	for i, s := range registry {
		if s.Name == name {
			return i, true
		}
	}
	return 0, false
}
