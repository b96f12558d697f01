package perceiver

import (
	"bytes"
	"fmt"
	"image"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/tracegrid/tracegrid/domain"
	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/internal/rgba"
)

// Domains the detector knows, as the question names their events (the
// names of package domain).
const (
	BounceBall   = domain.BounceBall
	Blinking     = domain.Blinking
	StateMachine = domain.StateMachine
	// Objects is CountVideoBench's static objects: how many objects of
	// one colour and shape the video shows (ObjectsQuestion).
	Objects = domain.Objects
)

// Event is one event the detector saw.
type Event struct {
	// T is the time in seconds (from the frame labels); for an untimed
	// input it is the shown position of the frame where the event was
	// seen.
	T float64
	// Wall is the wall a bounce_ball contact was on: top, right, bottom or
	// left.
	Wall string
	// From and To are the state labels of a state_machine transition as
	// read from the frames, "" when they could not be read; FromNode and
	// ToNode number the nodes 1, 2, … in the order first highlighted.
	From, To         string
	FromNode, ToNode int
}

// Result is what the detector perceived for one request.
type Result struct {
	Domain string // "" when the question names no event the detector knows
	// Colour and Shape are the objects asked about (domain objects).
	Colour, Shape string
	Ledger        bool    // the question asks for timestamps (an event ledger)
	Timed         bool    // the frames carry time labels
	Frames        int     // pictures analysed
	Events        []Event // in time order
	// Note says why no count could be given (no known event in the
	// question, no frames, or a scene the analysis could not find); the
	// reply then holds no count.
	Note string
}

// Count is the number of events.
func (r Result) Count() int { return len(r.Events) }

// Detector is the reference perceiver: a classical event detector that
// answers counting questions from the text and pixels of a request only.
// It holds no per-request state and is safe for concurrent use.
type Detector struct {
	Limits Limits
}

// Answer reads the messages, perceives the events and writes the reply
// text. Errors are *InputError for requests that cannot be read, other
// errors for failures of the detector itself.
func (d *Detector) Answer(msgs []chat.Message) (string, error) {
	in, err := ReadMessages(msgs, d.Limits)
	if err != nil {
		return "", err
	}
	defer in.Close()
	res, err := d.Perceive(in)
	if err != nil {
		return "", err
	}
	return res.Text(), nil
}

// Perceive infers the domain and the reply format from the question and
// runs the domain's image analysis over the pictures.
func (d *Detector) Perceive(in *Input) (Result, error) {
	res := Result{Domain: InferDomain(in.Question), Ledger: WantsLedger(in.Question)}
	if res.Domain == "" {
		res.Note = "The question does not say which events to count (wall contacts of a ball, blinks of a light, or transitions of a state machine) or which objects (a colour and cube or sphere), so I cannot determine a count."
		return res, nil
	}
	frames := usableFrames(in)
	res.Frames = len(frames)
	res.Timed = len(frames) > 0 && frames[0].labelled
	if len(frames) == 0 {
		res.Note = "No frames were provided, so I cannot determine a count."
		return res, nil
	}
	var tr tracker
	switch res.Domain {
	case Objects:
		res.Colour, res.Shape, _ = ObjectsQuestion(in.Question)
		res.Ledger = false
		tr = newObjectsTracker(res.Colour, res.Shape)
	case BounceBall:
		tr = &bounceTracker{}
	case Blinking:
		tr = &blinkTracker{}
	default:
		tr = &stateTracker{}
	}
	var (
		ras      raster
		prevData []byte
		vimg     rgba.Image
		first    = true
	)
	for _, f := range frames {
		same := false
		switch {
		case f.video != nil:
			v := f.video
			if len(vimg.Pix) < 4*v.w*v.h {
				vimg = rgba.New(v.w, v.h)
			}
			vimg.Width, vimg.Height, vimg.Stride = v.w, v.h, 4*v.w
			if err := v.v.FrameAt(f.t, vimg); err != nil {
				return res, inputErr("video", "invalid_video", "the video cannot be decoded at t = %.3f s: %v", f.t, err)
			}
			w, h := 0, 0
			if !first && (v.w != ras.w || v.h != ras.h) {
				w, h = ras.w, ras.h
			}
			if w == 0 {
				ras.loadRGBA(v.w, v.h, vimg.Stride, vimg.Pix)
			} else {
				ras.load(vimg.RGBA(), w, h)
			}
			prevData = nil
		case !first && bytes.Equal(f.data, prevData):
			same = true // a static span: the same picture again
		default:
			img, _, err := image.Decode(bytes.NewReader(f.data))
			if err != nil {
				return res, inputErr(fmt.Sprintf("frame %d", f.pos+1), "invalid_image", "the image cannot be decoded: %v", err)
			}
			w, h := 0, 0
			if !first {
				w, h = ras.w, ras.h
			}
			ras.load(img, w, h)
			prevData = f.data
		}
		if first {
			if err := tr.setup(&ras); err != nil {
				res.Note = fmt.Sprintf("I could not find the scene in the frames (%v), so I cannot determine a count.", err)
				return res, nil
			}
			first = false
		}
		tr.observe(f.t, &ras, same)
	}
	res.Events = tr.events()
	return res, nil
}

// usableFrames returns the frames to analyse, sorted by time (stable, so
// equal times keep their shown order; later duplicates of a time are
// dropped). When every frame is labelled their label times are used; when
// none is, the shown order stands in for time (positions 0, 1, …); when
// only some are, the unlabelled ones are left out.
func usableFrames(in *Input) []frameRef {
	var fs []frameRef
	if in.Unlabelled == len(in.frames) {
		fs = append(fs, in.frames...)
		for i := range fs {
			fs[i].t = float64(fs[i].pos)
		}
		return fs
	}
	for _, f := range in.frames {
		if f.labelled {
			fs = append(fs, f)
		}
	}
	sort.SliceStable(fs, func(a, b int) bool { return fs[a].t < fs[b].t })
	out := fs[:0]
	for i, f := range fs {
		if i > 0 && f.t == fs[i-1].t {
			continue
		}
		out = append(out, f)
	}
	return out
}

// tracker is one domain's image analysis. setup sees the first frame
// analysed (in shown order) and finds the static scene; observe measures
// every frame (same: the picture is identical to the previous one, so the
// last measurement may be repeated); events then works on the
// measurements in time order.
type tracker interface {
	setup(f *raster) error
	observe(t float64, f *raster, same bool)
	events() []Event
}

// Domain words. A question names its events; words that only one domain
// uses weigh more than shared ones ("state" and "light" can appear in a
// generic instruction).
var domainWords = []struct {
	domain string
	re     *regexp.Regexp
	weight int
}{
	{BounceBall, regexp.MustCompile(`\b(?:ball|balls|bounc\w*|walls?|rebound\w*|collid\w*|collisions?)\b`), 3},
	{BounceBall, regexp.MustCompile(`\b(?:contacts?|hits?|touch\w*|box)\b`), 1},
	{Blinking, regexp.MustCompile(`\b(?:blink\w*|flash\w*|puls\w*|lamp|bulb|led|flicker\w*|lights? up|turns? on|switch(?:es)? on)\b`), 3},
	{Blinking, regexp.MustCompile(`\b(?:light|lights|lit|on-?pulses?|glow\w*)\b`), 1},
	{StateMachine, regexp.MustCompile(`\b(?:state machine|transition\w*|highlight\w*|nodes?)\b`), 3},
	{StateMachine, regexp.MustCompile(`\b(?:states?|arrows?|diagram)\b`), 1},
}

// InferDomain names the domain whose events the question asks about, by
// weighted keyword counts; "" when no domain word appears or two domains
// tie. A colour followed by cube(s) or sphere(s) ("How many red cubes are
// in this video?") weighs like a domain word of Objects.
func InferDomain(question string) string {
	q := strings.ToLower(question)
	score := map[string]int{}
	for _, w := range domainWords {
		score[w.domain] += w.weight * len(w.re.FindAllStringIndex(q, -1))
	}
	// A colour followed by cube(s) or sphere(s) asks about objects.
	score[Objects] = 3 * len(reObjectsAsk.FindAllStringIndex(q, -1))
	best, bestScore, tie := "", 0, false
	for _, d := range []string{BounceBall, Blinking, StateMachine, Objects} {
		switch s := score[d]; {
		case s > bestScore:
			best, bestScore, tie = d, s, false
		case s == bestScore && s > 0:
			tie = true
		}
	}
	if tie {
		return ""
	}
	return best
}

var (
	reLedgerAsk = regexp.MustCompile(`\b(?:timestamps?|ledger|mm:ss|m:ss|time stamps?|list (?:each|every|all)|each (?:event|bounce|blink|transition|contact)|every (?:event|bounce|blink|transition|contact)|when (?:each|every|it|they|the)|running (?:count|total|tally)|step[- ]by[- ]step|times? (?:of|at which))\b`)
	reShortAsk  = regexp.MustCompile(`\b(?:only (?:the |a |one )?(?:final )?(?:number|count|integer|answer)|just (?:the |a )?(?:number|count|integer)|do not (?:list|explain|give)|don't (?:list|explain|give)|without (?:listing|explanation|timestamps|explaining)|no explanation)\b`)
)

// WantsLedger reports whether the question asks for the events with their
// times (an event ledger); a request for only the number wins.
func WantsLedger(question string) bool {
	q := strings.ToLower(question)
	if reShortAsk.MatchString(q) {
		return false
	}
	return reLedgerAsk.MatchString(q)
}

// Text writes the reply: a ledger of "mm:ss.ss — what — running count k"
// lines and a boxed final count when a ledger was asked for, else one
// sentence and the boxed count. Without a count (Note set) it explains
// why and gives no number.
func (r Result) Text() string {
	if r.Note != "" {
		return r.Note
	}
	var b strings.Builder
	if r.Domain == Objects {
		noun := r.Colour + " " + r.Shape + "s"
		if len(r.Events) == 0 {
			fmt.Fprintf(&b, "No %s are visible in the frames: \\boxed{0}", noun)
		} else {
			fmt.Fprintf(&b, "Counting the distinct %s across the frames, each once although the camera turns: \\boxed{%d}", noun, len(r.Events))
		}
		return b.String()
	}
	noun := map[string]string{BounceBall: "wall contacts", Blinking: "blinks", StateMachine: "state transitions"}[r.Domain]
	if r.Ledger {
		if len(r.Events) == 0 {
			fmt.Fprintf(&b, "No %s were observed in the frames.\n", noun)
		} else {
			fmt.Fprintf(&b, "Event ledger (%s):\n", r.timeNote())
			for i, e := range r.Events {
				fmt.Fprintf(&b, "%s — %s — running count %d\n", r.when(e), r.what(e), i+1)
			}
		}
		fmt.Fprintf(&b, "Final answer: \\boxed{%d}", len(r.Events))
		return b.String()
	}
	fmt.Fprintf(&b, "Counting %s across the frames: \\boxed{%d}", noun, len(r.Events))
	return b.String()
}

func (r Result) timeNote() string {
	if !r.Timed {
		return "the frames carry no time labels, so events are placed at frame positions"
	}
	if r.Domain == BounceBall {
		return "times from the frame labels, contact times interpolated between frames"
	}
	return "times from the frame labels, at the first frame showing the change"
}

// when writes an event's time as mm:ss.ss (or the frame position when
// the frames are untimed).
func (r Result) when(e Event) string {
	if !r.Timed {
		return fmt.Sprintf("frame %d", int(e.T)+1)
	}
	cs := int(math.Round(math.Max(0, e.T) * 100))
	return fmt.Sprintf("%02d:%02d.%02d", cs/6000, cs/100%60, cs%100)
}

func (r Result) what(e Event) string {
	switch r.Domain {
	case BounceBall:
		return "contact with the " + e.Wall + " wall"
	case Blinking:
		return "the light turns on"
	}
	if e.From != "" && e.To != "" {
		return fmt.Sprintf("transition %s → %s", e.From, e.To)
	}
	return fmt.Sprintf("transition of the highlight (node #%d to node #%d, numbered in order of first highlight)", e.FromNode, e.ToNode)
}
