package perceiver

import (
	"errors"
	"math"
	"sort"
)

// blinkTracker finds the lamp and reads whether it is filled (on) or only
// outlined (off) in each frame (see the package doc, "blinking").
type blinkTracker struct {
	bg     rgb
	cx, cy float64 // the shape's centre
	probe  float64 // radius of the central disk that is read
	obs    []blinkObs
}

type blinkObs struct {
	t  float64
	on bool
}

func (b *blinkTracker) setup(f *raster) error {
	var err error
	if b.bg, err = sceneBackground(f); err != nil {
		return err
	}
	mask := make([]bool, f.w*f.h)
	for i := range mask {
		mask[i] = f.distAt(3*i, b.bg) > fgThreshold
	}
	cs := components(mask, f.w, f.h, nil)
	if len(cs) == 0 {
		return errors.New("no shape")
	}
	// The lamp is the component with the largest extent: a ring when off,
	// a disk or square when on; either way its bounding box centres it.
	sort.Slice(cs, func(i, j int) bool {
		return (cs[i].maxX-cs[i].minX+1)*(cs[i].maxY-cs[i].minY+1) > (cs[j].maxX-cs[j].minX+1)*(cs[j].maxY-cs[j].minY+1)
	})
	c := cs[0]
	b.cx = float64(c.minX+c.maxX+1) / 2
	b.cy = float64(c.minY+c.maxY+1) / 2
	half := float64(max(c.maxX-c.minX+1, c.maxY-c.minY+1)) / 2
	if half < 3 {
		return errors.New("shape too small")
	}
	b.probe = 0.35 * half
	return nil
}

// observe reads the fraction of the central disk that is not background:
// ~0 when the lamp is an outline (off), ~1 when it is filled (on).
func (b *blinkTracker) observe(t float64, f *raster, same bool) {
	if same && len(b.obs) > 0 {
		b.obs = append(b.obs, blinkObs{t: t, on: b.obs[len(b.obs)-1].on})
		return
	}
	r := b.probe
	fg, all := 0, 0
	for y := max(0, int(b.cy-r)); y <= min(f.h-1, int(b.cy+r)); y++ {
		for x := max(0, int(b.cx-r)); x <= min(f.w-1, int(b.cx+r)); x++ {
			if math.Hypot(float64(x)+0.5-b.cx, float64(y)+0.5-b.cy) > r {
				continue
			}
			all++
			if f.distAt(3*(y*f.w+x), b.bg) > fgThreshold {
				fg++
			}
		}
	}
	b.obs = append(b.obs, blinkObs{t: t, on: all > 0 && 2*fg > all})
}

// events reports each off→on change (and a first frame that is already
// on) at the time of the first frame that shows the lamp on.
func (b *blinkTracker) events() []Event {
	obs := append([]blinkObs(nil), b.obs...)
	sort.SliceStable(obs, func(i, j int) bool { return obs[i].t < obs[j].t })
	var evs []Event
	for i, o := range obs {
		if o.on && (i == 0 || !obs[i-1].on) {
			evs = append(evs, Event{T: o.t})
		}
	}
	return evs
}
