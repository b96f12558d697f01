package scene

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// stateMachine is a diagram of 4–6 labelled states on a ring with directed
// arrows: the ring in one direction plus a few chords. Exactly one state is
// highlighted; at each t_i the highlight moves along an outgoing arrow of
// the current state to another state and stays there.
type stateMachine struct {
	c       *Clip
	static  []Item // arrows
	nodes   []vec
	labels  []string
	radius  float64
	base    Item // node template
	hiColor RGBA
	txColor RGBA
	hiText  RGBA
	visited []int // visited[i] = node index after i events
}

type edge struct{ from, to int }

func newStateMachine(c *Clip, rng *rand.Rand) scenery {
	p := c.P
	w, h := float64(p.Width), float64(p.Height)
	s := math.Min(w, h)
	k := 4 + rng.IntN(3)
	labelSets := [][]string{
		{"A", "B", "C", "D", "E", "F"},
		{"S1", "S2", "S3", "S4", "S5", "S6"},
		{"P", "Q", "R", "S", "T", "U"},
	}
	labels := pick(rng, labelSets)[:k]
	orient := uniform(rng, 0, 2*math.Pi)
	clockwise := rng.IntN(2) == 0
	ringR := uniform(rng, 0.32, 0.36) * s
	nodeR := uniform(rng, 0.075, 0.09) * s
	cx, cy := w/2, h/2
	m := &stateMachine{c: c, radius: nodeR, labels: labels}
	for i := range k {
		a := orient + 2*math.Pi*float64(i)/float64(k)
		if !clockwise {
			a = orient - 2*math.Pi*float64(i)/float64(k)
		}
		m.nodes = append(m.nodes, vec{cx + ringR*math.Cos(a), cy + ringR*math.Sin(a)})
	}
	// Edges: the ring i→i+1, plus chords i→i+2 for a seed-chosen subset of
	// i, never both directions of one pair (they would draw on top of each
	// other).
	var edges []edge
	for i := range k {
		edges = append(edges, edge{i, (i + 1) % k})
	}
	hasPair := func(a, b int) bool {
		for _, e := range edges {
			if (e.from == a && e.to == b) || (e.from == b && e.to == a) {
				return true
			}
		}
		return false
	}
	for i := range k {
		j := (i + 2) % k
		if rng.IntN(2) == 0 && !hasPair(i, j) {
			edges = append(edges, edge{i, j})
		}
	}
	fg := pick(rng, lines)
	m.hiColor = pick(rng, brights)
	m.txColor = fg
	m.hiText = RGBA{0.05, 0.05, 0.05, 1}
	stroke := math.Max(2, 0.007*s)
	m.base = Item{Kind: StrokeCircle, R: nodeR, Width: stroke, Color: fg}
	head := 0.035 * s
	for _, e := range edges {
		a, b := m.nodes[e.from], m.nodes[e.to]
		dx, dy := b.x-a.x, b.y-a.y
		d := math.Hypot(dx, dy)
		ux, uy := dx/d, dy/d
		gap := nodeR + stroke + 0.01*s
		m.static = append(m.static, Item{
			Kind: Arrow, X0: a.x + ux*gap, Y0: a.y + uy*gap, X1: b.x - ux*gap, Y1: b.y - uy*gap,
			Width: stroke, Head: head, Color: dim(fg, c.bg, 0.8),
		})
	}
	// The walk: the initial state is the seed's; each event follows a
	// seed-chosen outgoing arrow. Every node has an outgoing ring arrow to
	// a different node, so a move always exists.
	cur := rng.IntN(k)
	m.visited = []int{cur}
	c.states = []string{labels[cur]}
	c.attrs = make([]map[string]string, p.N)
	for i := range p.N {
		var outs []int
		for _, e := range edges {
			if e.from == cur {
				outs = append(outs, e.to)
			}
		}
		next := outs[rng.IntN(len(outs))]
		c.attrs[i] = map[string]string{"from": labels[cur], "to": labels[next]}
		cur = next
		m.visited = append(m.visited, cur)
		c.states = append(c.states, labels[cur])
	}
	var edgeNames []string
	for _, e := range edges {
		edgeNames = append(edgeNames, fmt.Sprintf("%s->%s", labels[e.from], labels[e.to]))
	}
	c.nuisance["states"] = labels
	c.nuisance["edges"] = edgeNames
	c.nuisance["orientation_rad"] = round6(orient)
	c.nuisance["clockwise"] = clockwise
	c.nuisance["highlight_color"] = hexColor(m.hiColor)
	c.nuisance["initial_state"] = labels[m.visited[0]]
	c.nuisance["node_radius"] = round6(nodeR)
	centres := make([][]float64, k)
	for i, n := range m.nodes {
		centres[i] = []float64{round6(n.x), round6(n.y)}
	}
	c.nuisance["node_centers"] = centres
	return m
}

func (m *stateMachine) state(t float64, dl *DrawList) {
	cur := m.visited[m.c.eventsBefore(t)]
	dl.Items = append(dl.Items, m.static...)
	size := 0.8 * m.radius
	for i, n := range m.nodes {
		node := m.base
		node.X0, node.Y0 = n.x, n.y
		text := Item{Kind: Text, X0: n.x, Y0: n.y, Size: size, Text: m.labels[i], Color: m.txColor}
		if i == cur {
			node.Kind, node.Width, node.Color = FillCircle, 0, m.hiColor
			text.Color = m.hiText
		}
		dl.Items = append(dl.Items, node, text)
	}
}
