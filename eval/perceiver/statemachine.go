package perceiver

import (
	"math"
	"sort"
)

// stateTracker finds the filled (highlighted) node in each frame, tells
// the nodes apart by position and reads their labels (see the package
// doc, "state_machine").
type stateTracker struct {
	bg     rgb
	nodes  []smNode
	obs    []stateObs
	mask   []bool
	labels []int32
}

// smNode is one node position that was seen highlighted.
type smNode struct {
	x, y, r float64
	crop    *raster // the node's neighbourhood in the first frame it was highlighted
	label   string  // read by ocr; "" when unreadable
	read    bool
}

type stateObs struct {
	t    float64
	node int // index into nodes; −1 when no highlight was found
}

func (s *stateTracker) setup(f *raster) (err error) {
	s.bg, err = sceneBackground(f)
	return err
}

// observe finds the highlight: the largest solid blob (pixels it covers
// fill at least half its bounding box, which rings, arrows and text never
// do) that is roughly round, and assigns it to a known node position or a
// new one.
func (s *stateTracker) observe(t float64, f *raster, same bool) {
	if same && len(s.obs) > 0 {
		o := s.obs[len(s.obs)-1]
		o.t = t
		s.obs = append(s.obs, o)
		return
	}
	n := f.w * f.h
	if cap(s.mask) < n {
		s.mask = make([]bool, n)
		s.labels = make([]int32, n)
	}
	mask := s.mask[:n]
	for i := range mask {
		mask[i] = f.distAt(3*i, s.bg) > fgThreshold
	}
	cs := components(mask, f.w, f.h, s.labels)
	best := -1
	for i, c := range cs {
		bw, bh := c.maxX-c.minX+1, c.maxY-c.minY+1
		if c.n < 20 || 2*c.n < bw*bh || bw > 2*bh || bh > 2*bw {
			continue
		}
		if best < 0 || c.n > cs[best].n {
			best = i
		}
	}
	o := stateObs{t: t, node: -1}
	if best >= 0 {
		c := cs[best]
		x := float64(c.minX+c.maxX+1) / 2
		y := float64(c.minY+c.maxY+1) / 2
		r := float64(c.maxX-c.minX+1+c.maxY-c.minY+1) / 4
		o.node = s.nodeAt(x, y, r, f)
	}
	s.obs = append(s.obs, o)
}

// nodeAt returns the index of the node at (x, y), adding it (with a crop
// of the frame for reading its label) when no known node is within half a
// radius.
func (s *stateTracker) nodeAt(x, y, r float64, f *raster) int {
	for i, nd := range s.nodes {
		if math.Hypot(nd.x-x, nd.y-y) < 0.5*math.Max(r, nd.r) {
			return i
		}
	}
	s.nodes = append(s.nodes, smNode{x: x, y: y, r: r, crop: cropAround(f, x, y, r+2)})
	return len(s.nodes) - 1
}

// cropAround copies the square of half-size h around (x, y).
func cropAround(f *raster, x, y, h float64) *raster {
	x0, y0 := max(0, int(x-h)), max(0, int(y-h))
	x1, y1 := min(f.w, int(math.Ceil(x+h))), min(f.h, int(math.Ceil(y+h)))
	c := &raster{w: x1 - x0, h: y1 - y0}
	c.pix = make([]uint8, 3*c.w*c.h)
	for yy := y0; yy < y1; yy++ {
		copy(c.pix[3*(yy-y0)*c.w:], f.pix[3*(yy*f.w+x0):3*(yy*f.w+x1)])
	}
	return c
}

// events reports each change of the highlighted node, at the first frame
// that shows the new one. Frames without a highlight are skipped.
func (s *stateTracker) events() []Event {
	obs := append([]stateObs(nil), s.obs...)
	sort.SliceStable(obs, func(i, j int) bool { return obs[i].t < obs[j].t })
	// Number the nodes by first highlight in time order.
	number := map[int]int{}
	var evs []Event
	prev := -1
	for _, o := range obs {
		if o.node < 0 {
			continue
		}
		if _, ok := number[o.node]; !ok {
			number[o.node] = len(number) + 1
		}
		if prev >= 0 && o.node != prev {
			evs = append(evs, Event{T: o.t, FromNode: number[prev], ToNode: number[o.node],
				From: s.label(prev), To: s.label(o.node)})
		}
		prev = o.node
	}
	// Labels are given only when every node read differently: two nodes
	// read alike means at least one reading is wrong.
	seen := map[string]bool{}
	for i := range s.nodes {
		l := s.label(i)
		if seen[l] {
			for k := range evs {
				evs[k].From, evs[k].To = "", ""
			}
			break
		}
		if l != "" {
			seen[l] = true
		}
	}
	return evs
}

// label reads (once) the label of node i.
func (s *stateTracker) label(i int) string {
	nd := &s.nodes[i]
	if !nd.read {
		nd.read = true
		nd.label = readLabel(nd.crop, nd.r)
	}
	return nd.label
}
