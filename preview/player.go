package preview

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/frames"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/scene"
	"github.com/tracegrid/tracegrid/trace"
)

// Speeds are the playback speeds + and - step through.
var Speeds = []float64{0.25, 0.5, 1, 2, 4}

// speedNames are Speeds as the overlay writes them.
var speedNames = []string{"¼×", "½×", "1×", "2×", "4×"}

const normalSpeed = 2 // index of 1× in Speeds

// eps absorbs float error when times are compared: an event at exactly
// the playhead has happened, and a frame sampled at exactly the playhead
// is on screen.
const eps = 1e-9

// BlankColor is the scene area before a policy's first frame: the model
// has seen nothing yet.
var BlankColor = scene.RGBA{R: 0.16, G: 0.16, B: 0.16, A: 1}

// Config says what a Player shows.
type Config struct {
	Clip  *scene.Clip
	Trace *trace.Trace // the clip's trace (Clip.Trace() or the file it was checked against)
	// Plan, when set, is a sampling policy's frames for the clip: only
	// they are shown, each held until the next, with Labels as eval
	// writes them. Nil shows every clip frame.
	Plan   *sampling.Plan
	Labels chat.Labels
	// Overlay starts with the overlay on.
	Overlay bool
	// Start is the first playhead time in seconds, within [0, duration].
	Start float64
	// Paused starts paused.
	Paused bool
}

// sample is one of a plan's frames, with the clip frame it shows.
type sample struct {
	f sampling.Frame
	k int
}

// Player is the preview's state machine: the playhead time, speed, pause,
// stepping and jumps, and the draw list of what is on screen. It knows no
// window and no GL; a window feeds it keys and elapsed time and renders
// its draw lists. Not safe for concurrent use.
type Player struct {
	clip    *scene.Clip
	tr      *trace.Trace
	fps     float64
	frames  int
	dur     float64
	events  []float64
	plan    *sampling.Plan
	samples []sample // the plan's frames in time order
	labels  chat.Labels

	t       float64
	paused  bool
	speed   int // index into Speeds
	overlay bool
}

// New makes a player for a clip.
func New(c Config) (*Player, error) {
	if c.Clip == nil || c.Trace == nil {
		return nil, errors.New("preview: a player needs a clip and its trace")
	}
	p := c.Clip.P
	if c.Trace.ID != p.ID() {
		return nil, fmt.Errorf("preview: trace %s is not the trace of clip %s", c.Trace.ID, p.ID())
	}
	pl := &Player{clip: c.Clip, tr: c.Trace, fps: float64(p.FPS), frames: max(1, int(math.Round(p.Duration*float64(p.FPS)))),
		dur: p.Duration, events: c.Trace.Times(), labels: c.Labels, paused: c.Paused, speed: normalSpeed, overlay: c.Overlay}
	if !(c.Start >= 0 && c.Start <= p.Duration) {
		return nil, fmt.Errorf("preview: start time %v is outside the clip [0, %v]", c.Start, p.Duration)
	}
	pl.t = c.Start
	if c.Plan != nil {
		if len(c.Plan.Frames) == 0 {
			return nil, fmt.Errorf("preview: policy %s gives no frames for clip %s", c.Plan.Policy, p.ID())
		}
		if _, err := chat.ParseLabels(string(c.Labels)); err != nil {
			return nil, fmt.Errorf("preview: %w", err)
		}
		pl.plan = c.Plan
		for _, f := range c.Plan.Frames {
			if !(f.T >= 0 && f.T <= p.Duration) {
				return nil, fmt.Errorf("preview: policy %s samples t=%v outside clip %s [0, %v]", c.Plan.Policy, f.T, p.ID(), p.Duration)
			}
			pl.samples = append(pl.samples, sample{f: f, k: frames.ShownFrame(f.T, p.FPS, pl.frames)})
		}
		slices.SortStableFunc(pl.samples, func(a, b sample) int {
			if a.f.Index != b.f.Index {
				return a.f.Index - b.f.Index
			}
			return 0
		})
	}
	return pl, nil
}

// State is what the player shows, as the script mode reports it.
type State struct {
	T       float64 `json:"t"`     // playhead, seconds
	Frame   int     `json:"frame"` // the clip frame at the playhead (the last at or before T)
	Paused  bool    `json:"paused"`
	Speed   float64 `json:"speed"`
	Overlay bool    `json:"overlay"`
	Count   int     `json:"count"` // true events at or before T (the trace's running count)
	// With a policy: the sampled frame on screen (its index in time
	// order, -1 before the first), the clip frame it shows (-1 before the
	// first) and its label as eval writes it.
	Policy     string `json:"policy,omitempty"`
	Sample     int    `json:"sample"`
	ShownFrame int    `json:"shown_frame"`
	Label      string `json:"label,omitempty"`
}

// State reports the player's state.
func (p *Player) State() State {
	s := State{T: p.t, Frame: p.frame(), Paused: p.paused, Speed: Speeds[p.speed], Overlay: p.overlay, Sample: -1}
	s.Count, _ = p.tr.Replay(p.t)
	s.ShownFrame = s.Frame
	if p.plan != nil {
		s.Policy = p.plan.Policy
		s.ShownFrame = -1
		if i := p.shown(); i >= 0 {
			f := p.samples[i]
			s.Sample, s.ShownFrame = f.f.Index, f.k
			s.Label = p.labels.Label(f.f.Position, len(p.samples), f.f.T)
		}
	}
	return s
}

// Time is the playhead in seconds.
func (p *Player) Time() float64 { return p.t }

// Paused reports whether playback is paused.
func (p *Player) Paused() bool { return p.paused }

// Overlay reports whether the overlay is on.
func (p *Player) Overlay() bool { return p.overlay }

// SetOverlay turns the overlay on or off.
func (p *Player) SetOverlay(on bool) { p.overlay = on }

// Speed is the playback speed (1 is real time).
func (p *Player) Speed() float64 { return Speeds[p.speed] }

// FrameDuration is one clip frame in seconds.
func (p *Player) FrameDuration() float64 { return 1 / p.fps }

// frame is the clip frame at the playhead.
func (p *Player) frame() int { return frames.ShownFrame(p.t, p.clip.P.FPS, p.frames) }

// shown is the position in p.samples of the sampled frame on screen: the
// last one sampled at or before the playhead; -1 before the first.
func (p *Player) shown() int {
	return sort.Search(len(p.samples), func(i int) bool { return p.samples[i].f.T > p.t+eps }) - 1
}

// Seek moves the playhead to t, clamped to the clip.
func (p *Player) Seek(t float64) {
	if math.IsNaN(t) {
		return
	}
	p.t = math.Max(0, math.Min(p.dur, t))
}

// Advance moves the playhead by dt seconds of real time at the current
// speed, unless paused; at the end of the clip playback pauses.
func (p *Player) Advance(dt float64) {
	if p.paused || !(dt > 0) {
		return
	}
	p.t += dt * Speeds[p.speed]
	if p.t >= p.dur {
		p.t, p.paused = p.dur, true
	}
}

// UntilChange is the real time until the clip frame at the playhead
// changes while playing; +Inf when paused.
func (p *Player) UntilChange() float64 {
	if p.paused {
		return math.Inf(1)
	}
	next := math.Min(p.dur, float64(p.frame()+1)/p.fps)
	return math.Max(0, next-p.t) / Speeds[p.speed]
}

// Key applies a key; it reports whether the key quits.
func (p *Player) Key(k Key) (quit bool) {
	switch k {
	case KeyPause:
		if p.paused && p.t >= p.dur-eps {
			p.t = 0 // at the end: play again from the start
		}
		p.paused = !p.paused
	case KeyStepForward:
		p.paused = true
		if k := p.frame(); k+1 < p.frames {
			p.t = float64(k+1) / p.fps
		}
	case KeyStepBack:
		p.paused = true
		p.t = float64(max(0, p.frame()-1)) / p.fps
	case KeyNextEvent:
		p.paused = true
		if i := sort.Search(len(p.events), func(i int) bool { return p.events[i] > p.t+eps }); i < len(p.events) {
			p.t = p.events[i]
		}
	case KeyPrevEvent:
		p.paused = true
		if i := sort.Search(len(p.events), func(i int) bool { return p.events[i] >= p.t-eps }); i > 0 {
			p.t = p.events[i-1]
		}
	case KeyFaster:
		p.speed = min(len(Speeds)-1, p.speed+1)
	case KeySlower:
		p.speed = max(0, p.speed-1)
	case KeyOverlay:
		p.overlay = !p.overlay
	case KeyQuit:
		return true
	}
	return false
}

// DrawList fills dl with what the screen shows: the clip frame at the
// playhead (with a policy: the frame of the last sample at or before it,
// or a blank canvas before the first), and the overlay's items after the
// scene's when the overlay is on. The scene's items are exactly those
// frames.Source renders for the same frame, so with the overlay off the
// pixels are the clip's.
func (p *Player) DrawList(dl *scene.DrawList) {
	k := p.frame()
	if p.plan != nil {
		k = -1
		if i := p.shown(); i >= 0 {
			k = p.samples[i].k
		}
	}
	if k >= 0 {
		p.clip.StateInto(float64(k)/p.fps, dl)
	} else {
		dl.Width, dl.Height = p.clip.P.Width, p.clip.P.Height
		dl.Background, dl.World, dl.Items = BlankColor, nil, dl.Items[:0]
	}
	if p.overlay {
		p.layoutOverlay(dl)
	}
}

// OverlayBounds are the canvas rectangles the overlay draws in at the
// current state (whether or not it is on): outside them the overlay
// changes no pixel.
func (p *Player) OverlayBounds() []Rect {
	var dl scene.DrawList
	dl.Width, dl.Height = p.clip.P.Width, p.clip.P.Height
	return p.layoutOverlay(&dl)
}
