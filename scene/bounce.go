package scene

import (
	"math"
	"math/rand/v2"
	"sort"
)

// bounceBall is a ball in a box. Its centre moves in straight lines at
// constant speed between consecutive wall contacts; at each t_i its edge
// lies exactly on the inner edge of a wall. Consecutive contacts are on
// different walls and away from corners, so a segment between them lies
// strictly inside the box and the ball touches nothing in between. Before
// the active span it rests at an interior point from which it reaches the
// first contact in 1/(2F); after the last contact it travels to an
// interior rest point, which it reaches at the end of the active span:
// 1/(2F) after the nominal t_N, so within half a frame of 1/(2F) after
// the contact the frames show (domain.Spec.EventsOnFrames).
type bounceBall struct {
	c        *Clip
	box      Item // the walls, drawn as a stroked rectangle
	ball     Item
	contacts []vec // ball centre at t_i
	rest0    vec   // centre before the active span
	rest1    vec   // centre after it
	half     float64
	// tail is how long the ball travels after the last contact: 1/(2F)
	// plus the nominal t_N's lead over the snapped one (0 when none).
	tail float64
}

type vec struct{ x, y float64 }

func lerp(a, b vec, u float64) vec { return vec{a.x + (b.x-a.x)*u, a.y + (b.y-a.y)*u} }

// Wall names, in clockwise order.
var walls = []string{"top", "right", "bottom", "left"}

func newBounceBall(c *Clip, rng *rand.Rand) scenery {
	p := c.P
	w, h := float64(p.Width), float64(p.Height)
	s := math.Min(w, h)
	mx := uniform(rng, 0.05, 0.12) * w
	my := uniform(rng, 0.06, 0.12) * h
	wallW := math.Max(2, math.Round(0.008*s))
	r := uniform(rng, 0.035, 0.06) * s
	wallColor := pick(rng, lines)
	ballColor := pick(rng, brights)
	// Centre range: the ball's edge touches a wall's inner edge exactly at
	// the range's bounds.
	x0, x1 := mx+wallW/2+r, w-mx-wallW/2-r
	y0, y1 := my+wallW/2+r, h-my-wallW/2-r
	b := &bounceBall{
		c:    c,
		box:  Item{Kind: StrokeRect, X0: mx, Y0: my, X1: w - mx, Y1: h - my, Width: wallW, Color: wallColor},
		ball: Item{Kind: FillCircle, R: r, Color: ballColor},
		half: 1 / (2 * p.F),
	}
	interior := func() vec {
		return vec{uniform(rng, x0+0.3*(x1-x0), x1-0.3*(x1-x0)), uniform(rng, y0+0.3*(y1-y0), y1-0.3*(y1-y0))}
	}
	b.rest0 = interior()
	b.rest1 = interior()
	// The trajectory style: ping-pong between left and right, between top
	// and bottom, or around the box in either direction.
	style := pick(rng, []string{"horizontal", "vertical", "clockwise", "counterclockwise"})
	first := rng.IntN(4)
	wallAt := func(i int) int {
		switch style {
		case "horizontal":
			return []int{1, 3}[(first+i)%2]
		case "vertical":
			return []int{0, 2}[(first+i)%2]
		case "clockwise":
			return (first + i) % 4
		default:
			return ((first-i)%4 + 4) % 4
		}
	}
	if p.N > 0 {
		b.tail = b.half + (c.last - c.times[p.N-1])
	}
	c.states = []string{"none"}
	c.attrs = make([]map[string]string, p.N)
	for i := range p.N {
		wall := wallAt(i)
		// Along-wall position away from corners (15% of the range), so a
		// contact never touches the adjacent wall too.
		ax := uniform(rng, x0+0.15*(x1-x0), x1-0.15*(x1-x0))
		ay := uniform(rng, y0+0.15*(y1-y0), y1-0.15*(y1-y0))
		var pt vec
		switch wall {
		case 0:
			pt = vec{ax, y0}
		case 1:
			pt = vec{x1, ay}
		case 2:
			pt = vec{ax, y1}
		case 3:
			pt = vec{x0, ay}
		}
		b.contacts = append(b.contacts, pt)
		c.states = append(c.states, walls[wall])
		c.attrs[i] = map[string]string{"wall": walls[wall]}
	}
	c.nuisance["style"] = style
	c.nuisance["ball_radius"] = round6(r)
	c.nuisance["box"] = []float64{round6(mx), round6(my), round6(w - mx), round6(h - my)}
	c.nuisance["wall_width"] = wallW
	c.nuisance["ball_color"] = hexColor(ballColor)
	c.nuisance["wall_color"] = hexColor(wallColor)
	c.nuisance["rest_start"] = []float64{round6(b.rest0.x), round6(b.rest0.y)}
	c.nuisance["rest_end"] = []float64{round6(b.rest1.x), round6(b.rest1.y)}
	return b
}

// centre gives the ball's centre at time t.
func (b *bounceBall) centre(t float64) vec {
	ts := b.c.times
	n := len(ts)
	if n == 0 {
		return b.rest0
	}
	switch {
	case t <= ts[0]-b.half:
		return b.rest0
	case t < ts[0]:
		return lerp(b.rest0, b.contacts[0], (t-(ts[0]-b.half))/b.half)
	case t >= ts[n-1]+b.tail:
		return b.rest1
	case t >= ts[n-1]:
		return lerp(b.contacts[n-1], b.rest1, (t-ts[n-1])/b.tail)
	}
	// ts[k-1] <= t < ts[k], exactly: the motion is continuous, so a time
	// a float's last bits from a contact is drawn a float's last bits from
	// the wall (eventsBefore's tolerance is for states that switch).
	k := sort.Search(n, func(i int) bool { return ts[i] > t })
	if t == ts[k-1] {
		return b.contacts[k-1]
	}
	return lerp(b.contacts[k-1], b.contacts[k], (t-ts[k-1])/(ts[k]-ts[k-1]))
}

func (b *bounceBall) state(t float64, dl *DrawList) {
	ball := b.ball
	pos := b.centre(t)
	ball.X0, ball.Y0 = pos.x, pos.y
	dl.Items = append(dl.Items, b.box, ball)
}
