package preview

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/tracegrid/tracegrid/scene"
)

// Rect is a rectangle in canvas pixels.
type Rect struct{ X0, Y0, X1, Y1 float64 }

// Overlay colours.
var (
	panelColor  = scene.RGBA{R: 0, G: 0, B: 0, A: 0.62}
	textColor   = scene.RGBA{R: 1, G: 1, B: 1, A: 1}
	dimColor    = scene.RGBA{R: 0.62, G: 0.62, B: 0.62, A: 1}
	nextColor   = scene.RGBA{R: 1, G: 0.85, B: 0.2, A: 1}
	nextBack    = scene.RGBA{R: 1, G: 0.85, B: 0.2, A: 0.3}
	eventColor  = scene.RGBA{R: 0.95, G: 0.25, B: 0.2, A: 1}
	barColor    = scene.RGBA{R: 0.5, G: 0.5, B: 0.5, A: 1}
	doneColor   = scene.RGBA{R: 0.35, G: 0.6, B: 0.95, A: 1}
	hiddenColor = scene.RGBA{R: 0.3, G: 0.3, B: 0.3, A: 1}
	seenColor   = scene.RGBA{R: 0.45, G: 0.75, B: 1, A: 1}
	headColor   = scene.RGBA{R: 1, G: 1, B: 1, A: 1}
)

// line is one line of overlay text.
type line struct {
	text  string
	color scene.RGBA
	back  bool // highlighted: a band behind the line
}

// overlayLayout are the overlay's sizes for a canvas, in canvas pixels:
// everything scales with the canvas height (480 pixels: 13-pixel text).
type overlayLayout struct {
	w, h, s            float64
	size, lh, pad, gap float64
	m                  *measurer
}

func newLayout(w, h int) overlayLayout {
	s := float64(h) / 480
	l := overlayLayout{w: float64(w), h: float64(h), s: s}
	l.size = math.Max(8, 13*s)
	l.lh = math.Round(l.size * 1.45)
	l.pad = math.Max(3, math.Round(6*s))
	l.gap = math.Max(4, math.Round(8*s))
	l.m, _ = sharedMeasurer()
	return l
}

func (l overlayLayout) width(s string) float64 {
	if l.m == nil {
		return float64(len([]rune(s))) * l.size * 0.6
	}
	return l.m.width(s, l.size)
}

// panel draws lines in a box whose left (or, with right, right) edge is at
// x and top at y, and returns the box.
func (l overlayLayout) panel(dl *scene.DrawList, x, y float64, right bool, lines []line) Rect {
	tw := 0.0
	for _, ln := range lines {
		tw = math.Max(tw, l.width(ln.text))
	}
	r := Rect{X0: x, Y0: y, X1: x + tw + 2*l.pad, Y1: y + float64(len(lines))*l.lh + 2*l.pad}
	if right {
		r.X0, r.X1 = x-(tw+2*l.pad), x
	}
	r = l.clamp(r)
	// On a canvas narrower than the panel the text may run past the
	// clamped box: the bounds cover it (within the canvas).
	bounds := r
	dl.Items = append(dl.Items, scene.Item{Kind: scene.FillRect, X0: r.X0, Y0: r.Y0, X1: r.X1, Y1: r.Y1, R: l.pad / 2, Color: panelColor})
	for i, ln := range lines {
		top := r.Y0 + l.pad + float64(i)*l.lh
		if ln.back {
			dl.Items = append(dl.Items, scene.Item{Kind: scene.FillRect, X0: r.X0 + l.pad/2, Y0: top, X1: r.X1 - l.pad/2, Y1: top + l.lh, Color: nextBack})
		}
		if ln.text == "" {
			continue
		}
		w := l.width(ln.text)
		dl.Items = append(dl.Items, scene.Item{Kind: scene.Text, X0: r.X0 + l.pad + w/2, Y0: top + l.lh/2,
			Size: l.size, Text: ln.text, Color: ln.color})
		bounds.X1 = math.Max(bounds.X1, r.X0+l.pad+w)
		bounds.Y1 = math.Max(bounds.Y1, top+l.lh)
	}
	return l.clamp(bounds)
}

// clamp keeps r inside the canvas.
func (l overlayLayout) clamp(r Rect) Rect {
	r.X0, r.Y0 = math.Max(0, r.X0), math.Max(0, r.Y0)
	r.X1, r.Y1 = math.Min(l.w, r.X1), math.Min(l.h, r.Y1)
	return r
}

// layoutOverlay appends the overlay's items to dl and returns the
// rectangles they lie in: a status panel at the top left (clip, time,
// frame, count, speed; with a policy the policy, the shown frame's label
// and how long it has been held), the true events at the top right (the
// next one highlighted) and a timeline along the bottom (event markers,
// the playhead; with a policy the stretches the model never sees grey).
func (p *Player) layoutOverlay(dl *scene.DrawList) []Rect {
	l := newLayout(dl.Width, dl.Height)
	var rects []Rect

	// Timeline, bottom.
	barH := math.Max(6, math.Round(10*l.s))
	tl := l.clamp(Rect{X0: l.gap, Y0: l.h - l.gap - barH - 2*l.pad, X1: l.w - l.gap, Y1: l.h - l.gap})
	rects = append(rects, tl)
	p.timeline(dl, l, tl, barH)

	// Status, top left.
	rects = append(rects, l.panel(dl, l.gap, l.gap, false, p.statusLines()))

	// Events, top right, as many rows as fit above the timeline.
	if len(p.events) > 0 {
		rows := int((tl.Y0-l.gap-l.gap-2*l.pad)/l.lh) - 1
		if rows >= 1 {
			rects = append(rects, l.panel(dl, l.w-l.gap, l.gap, true, p.eventLines(rows)))
		}
	}
	return rects
}

// fmtSeconds writes a time the way the overlay does: milliseconds.
func fmtSeconds(t float64) string { return strconv.FormatFloat(t, 'f', 3, 64) }

func (p *Player) statusLines() []line {
	k := p.frame()
	lines := []line{
		{text: p.clip.P.ID(), color: textColor},
		{text: fmt.Sprintf("t = %s s of %s s   frame %d (0–%d)", fmtSeconds(p.t), fmtSeconds(p.dur), k, p.frames-1), color: textColor},
	}
	if o := p.tr.Objects; o != nil {
		in := 0
		if k < len(o.InView) {
			in = len(o.InView[k])
		}
		lines = append(lines, line{text: fmt.Sprintf("%d of %d %s objects in view", in, p.tr.N, p.tr.Class), color: textColor})
	} else {
		c, state := p.tr.Replay(p.t)
		s := fmt.Sprintf("count %d of %d", c, p.tr.N)
		if state != "" {
			s += "   state " + state
		}
		lines = append(lines, line{text: s, color: textColor})
	}
	play := "playing"
	switch {
	case p.paused && p.t >= p.dur-eps:
		play = "end"
	case p.paused:
		play = "paused"
	}
	lines = append(lines, line{text: play + " " + speedNames[p.speed], color: textColor})
	if p.plan == nil {
		return lines
	}
	lines = append(lines, line{text: fmt.Sprintf("policy %s: %d frames, labels %s", p.plan.Policy, len(p.samples), p.labels), color: nextColor})
	i := p.shown()
	if i < 0 {
		return append(lines, line{text: fmt.Sprintf("no frame yet: the first is sampled at t = %s s", fmtSeconds(p.samples[0].f.T)), color: nextColor})
	}
	f := p.samples[i]
	label := p.labels.Label(f.f.Position, len(p.samples), f.f.T)
	if label == "" {
		label = "(none: no text before the image)"
	}
	return append(lines,
		line{text: "label: " + label, color: nextColor},
		line{text: fmt.Sprintf("frame sampled at %s s (clip frame %d), held %s s", fmtSeconds(f.f.T), f.k, fmtSeconds(p.t-f.f.T)), color: nextColor})
}

// next is the index of the next true event after the playhead
// (len(events) when none is left).
func (p *Player) next() int {
	return sort.Search(len(p.events), func(i int) bool { return p.events[i] > p.t+eps })
}

func (p *Player) eventLines(rows int) []line {
	n, next := len(p.events), p.next()
	start := 0
	if n > rows {
		start = max(0, min(n-rows, next-rows/3))
	}
	end := min(n, start+rows)
	head := fmt.Sprintf("true events (%d)", n)
	if start > 0 || end < n {
		head = fmt.Sprintf("true events %d–%d of %d", start+1, end, n)
	}
	lines := []line{{text: head, color: textColor}}
	digits := len(strconv.Itoa(n))
	for i := start; i < end; i++ {
		ln := line{text: fmt.Sprintf("%*d   %s s", digits, i+1, fmtSeconds(p.events[i])), color: textColor}
		switch {
		case i < next:
			ln.color = dimColor
		case i == next:
			ln.color, ln.back = nextColor, true
		}
		lines = append(lines, ln)
	}
	return lines
}

// timeline draws the bar in r: without a policy the elapsed part in blue;
// with one the whole bar dark grey (hidden) except the clip frames a
// sampled frame shows, in blue (what the model sees); then the true events in red (the next one
// highlighted) and the playhead.
func (p *Player) timeline(dl *scene.DrawList, l overlayLayout, r Rect, barH float64) {
	dl.Items = append(dl.Items, scene.Item{Kind: scene.FillRect, X0: r.X0, Y0: r.Y0, X1: r.X1, Y1: r.Y1, R: l.pad / 2, Color: panelColor})
	x0, x1 := r.X0+l.pad, r.X1-l.pad
	y0 := r.Y0 + l.pad
	y1 := y0 + barH
	if x1 <= x0 {
		return
	}
	x := func(t float64) float64 { return x0 + (x1-x0)*math.Max(0, math.Min(1, t/p.dur)) }
	rect := func(a, b float64, c scene.RGBA) {
		dl.Items = append(dl.Items, scene.Item{Kind: scene.FillRect, X0: a, Y0: y0, X1: b, Y1: y1, Color: c})
	}
	if p.plan == nil {
		rect(x0, x1, barColor)
		if e := x(p.t); e > x0 {
			rect(x0, e, doneColor)
		}
	} else {
		rect(x0, x1, hiddenColor)
		// The clip frames the samples show, merged where they touch, each
		// at least one pixel wide.
		minW := math.Max(1, l.s)
		ks := make([]int, 0, len(p.samples))
		for _, s := range p.samples {
			ks = append(ks, s.k)
		}
		sort.Ints(ks)
		for i := 0; i < len(ks); {
			j := i
			for j+1 < len(ks) && ks[j+1] <= ks[j]+1 {
				j++
			}
			a, b := x(float64(ks[i])/p.fps), x(float64(ks[j]+1)/p.fps)
			if b-a < minW {
				b = math.Min(x1, a+minW)
				a = b - minW
			}
			rect(a, b, seenColor)
			i = j + 1
		}
	}
	next := p.next()
	lw := math.Max(1, math.Round(1.5*l.s))
	for i, t := range p.events {
		c, w := eventColor, lw
		if i == next {
			c, w = nextColor, 2*lw
		}
		ex := x(t)
		dl.Items = append(dl.Items, scene.Item{Kind: scene.Line, X0: ex, Y0: r.Y0 + l.pad/3, X1: ex, Y1: r.Y1 - l.pad/3, Width: w, Color: c})
	}
	hw := math.Max(1, math.Round(1.5*l.s))
	hx := math.Max(r.X0, math.Min(r.X1-2*hw, x(p.t)-hw))
	dl.Items = append(dl.Items, scene.Item{Kind: scene.FillRect, X0: hx, Y0: r.Y0 + 1, X1: hx + 2*hw, Y1: r.Y1 - 1, Color: headColor})
}
