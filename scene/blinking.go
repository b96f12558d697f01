package scene

import (
	"math"
	"math/rand/v2"
)

// blinkPulse is the on-time of one blink: transient, as in the paper (the
// shape is lit for a short pulse, then dark again), at most a quarter second
// and at most half the inter-event period, but never shorter than one frame
// of the clip so that every pulse is on in at least one rendered frame.
func blinkPulse(f float64, fps int) float64 {
	p := math.Min(0.25, 0.5/f)
	if frame := 1 / float64(fps); p < frame {
		p = frame
	}
	return p
}

type blinking struct {
	c       *Clip
	onItem  Item
	offItem Item
}

func newBlinking(c *Clip, rng *rand.Rand) scenery {
	p := c.P
	w, h := float64(p.Width), float64(p.Height)
	s := math.Min(w, h)
	size := uniform(rng, 0.12, 0.2) * s
	cx := w/2 + uniform(rng, -0.2, 0.2)*w
	cy := h/2 + uniform(rng, -0.15, 0.15)*h
	on := pick(rng, brights)
	shape := pick(rng, []string{"circle", "square"})
	stroke := math.Max(2, 0.008*s)
	b := &blinking{c: c}
	switch shape {
	case "circle":
		b.onItem = Item{Kind: FillCircle, X0: cx, Y0: cy, R: size, Color: on}
		b.offItem = Item{Kind: StrokeCircle, X0: cx, Y0: cy, R: size, Width: stroke, Color: dim(on, c.bg, 0.35)}
	default:
		b.onItem = Item{Kind: FillRect, X0: cx - size, Y0: cy - size, X1: cx + size, Y1: cy + size, R: 0.1 * size, Color: on}
		b.offItem = b.onItem
		b.offItem.Kind, b.offItem.Width, b.offItem.Color = StrokeRect, stroke, dim(on, c.bg, 0.35)
	}
	c.pulse = 0
	if p.N > 0 {
		c.pulse = blinkPulse(p.F, p.FPS)
	}
	c.states = []string{"off"}
	c.attrs = make([]map[string]string, p.N)
	for range p.N {
		c.states = append(c.states, "on")
	}
	c.nuisance["shape"] = shape
	c.nuisance["size"] = round6(size)
	c.nuisance["center"] = []float64{round6(cx), round6(cy)}
	c.nuisance["color_on"] = hexColor(on)
	return b
}

func (b *blinking) state(t float64, dl *DrawList) {
	k := b.c.eventsBefore(t)
	if k > 0 && t < b.c.times[k-1]+b.c.pulse-timeEps {
		dl.Items = append(dl.Items, b.onItem)
		return
	}
	dl.Items = append(dl.Items, b.offItem)
}
