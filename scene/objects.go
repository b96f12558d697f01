package scene

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/tracegrid/tracegrid/trace"
)

// The objects domain is CountVideoBench (§4): N static objects of a single
// class (cube or sphere × five colours) on a white ground with a regular
// line pattern, seen by a camera that stays in place and turns within
// bounded angles. There are no events: the answer is N. Each clip's
// placement and camera path come from its own generator (domain, class, N,
// seed), as the benchmark draws every video's seed independently.
//
// The placement bounds and rotation ranges below were tuned with
// `go test ./scene -run TestObjectsGridStats -v` so that, over the
// 2,600-clip grid, the share of clips in which some object leaves the view
// and the mean number that do are near the paper's 83.0 % and 3.29.
const (
	objectSize   = 1.0 // cube edge, sphere diameter (world units)
	objectMinGap = 1.6 // centre distance: > √2 (two cubes at any yaw)
	regionHalf50 = 8.0 // placement square half side up to 50 objects

	cameraFovYDeg  = 45.0
	cameraHeight   = 11.0 // eye at (0, cameraHeight, cameraBack)
	cameraBack     = 13.0
	cameraYawMax   = 23.0 // degrees either side of looking at the centre
	cameraPitchVar = 5.0  // degrees either side of the base pitch
	cameraKeys     = 3    // keys at 0, D/2, D

	objectNoise = 0.08 // surface noise amplitude (brightness fraction)
)

// MaxObjects bounds N for the objects domain (placement needs room).
const MaxObjects = 200

// ObjectColorRGB are the five class colours: distinguishable against white
// and from each other (no orange/yellow or cyan/blue pairs, CVB §4.3).
var ObjectColorRGB = map[string]RGBA{
	"red":    hex(0xd62828),
	"blue":   hex(0x1f4fd8),
	"green":  hex(0x1e9e3a),
	"yellow": hex(0xf2cc0c),
	"purple": hex(0x8a2be2),
}

// ObjectClasses lists the ten "<shape>-<colour>" classes in a fixed order.
func ObjectClasses() []string {
	var out []string
	for _, s := range trace.ObjectShapes {
		for _, c := range trace.ObjectColors {
			out = append(out, s+"-"+c)
		}
	}
	return out
}

// SplitClass splits "<shape>-<colour>" and checks both halves.
func SplitClass(class string) (shape, color string, err error) {
	shape, color, ok := trace.SplitClass(class)
	if !ok {
		return "", "", fmt.Errorf("unknown object class %q (known: %s)", class, strings.Join(ObjectClasses(), ", "))
	}
	return shape, color, nil
}

// CountVideoBench's cardinalities (§4.2): the anchors 5, 10, 20, 30, 40, 50
// with ±2 neighbours, clipped to [5, 50]; 26 values.
var CountVideoBenchCounts = []int{5, 6, 7, 8, 9, 10, 11, 12, 18, 19, 20, 21, 22, 28, 29, 30, 31, 32, 38, 39, 40, 41, 42, 48, 49, 50}

// CountVideoBench's clip format (§4.3): 5 s at 30 fps, 1920×1080, ten
// videos per (shape, colour) class and cardinality.
const (
	CountVideoBenchDuration = 5.0
	CountVideoBenchSeeds    = 10
	CountVideoBenchWidth    = 1920
	CountVideoBenchHeight   = 1080
)

// objectsDomain registers the objects domain: its own parameters (a
// class, F = 0), id and trace section, and a 3-D scene. What it supports
// in the evaluation is declared in package domain (domain.Objects).
var objectsDomain = registration{
	check: Params.validateObjects,
	id:    objectsID,
	build: func(c *Clip) (scenery, error) {
		obj, err := newObjects(c)
		if err != nil {
			return nil, err
		}
		c.states = []string{""}
		return obj, nil
	},
	truth: func(c *Clip, tr *trace.Trace) {
		tr.Class = c.P.Class
		o := c.dom.(*objectsScene).world
		tr.Objects = &o
	},
	world: true,
}

// objectsID is `objects_N<nn>_<shape>-<colour>_s<seed>`.
func objectsID(p Params) string {
	return fmt.Sprintf("%s_N%02d_%s_s%02d", p.Domain, p.N, p.Class, p.Seed)
}

func (p Params) validateObjects() error {
	if _, _, err := SplitClass(p.Class); err != nil {
		return badParams("%v", err)
	}
	if p.N < 1 || p.N > MaxObjects {
		return badParams("objects: N=%d out of range [1, %d]", p.N, MaxObjects)
	}
	if p.F != 0 {
		return badParams("objects: the domain has no events, so F must be 0, got %v", p.F)
	}
	return nil
}

type objectsScene struct {
	world trace.Objects
	base  World // camera orientation is set per frame
}

func objectsRand(p Params) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%s/%d", p.Domain, p.Class, p.N)
	return rand.New(rand.NewPCG(uint64(p.Seed), h.Sum64()))
}

// regionHalf grows the placement square beyond 50 objects so the density
// stays that of N=50.
func regionHalf(n int) float64 {
	return regionHalf50 * math.Sqrt(math.Max(1, float64(n)/50))
}

// newObjects builds the clip: placement, then a camera path redrawn until
// every object is in view in some frame. Its errors name the clip by
// objectsID, not p.ID(), which reads the registry this function is part
// of.
func newObjects(c *Clip) (*objectsScene, error) {
	p := c.P
	shape, color, _ := SplitClass(p.Class)
	rng := objectsRand(p)
	half := regionHalf(p.N)
	o := trace.Objects{Shape: shape, Color: color, RegionHalf: half, MinDistance: objectMinGap}
	centers, err := place(rng, p.N, half, objectMinGap)
	if err != nil {
		return nil, fmt.Errorf("clip %s: %w", objectsID(p), err)
	}
	s := &objectsScene{}
	s.base = World{
		Camera: Camera{Eye: Vec3{0, cameraHeight, cameraBack}, FovY: cameraFovYDeg * math.Pi / 180, Near: 0.1, Far: 400},
		Ground: Ground{Half: 200, Color: RGBA{1, 1, 1, 1}, LineColor: hex(0xc4c8d0), LineSpacing: 1, LineWidth: 0.05},
		Light:  Light{Dir: normalize(Vec3{0.35, 1, 0.55}), Ambient: 0.62, Diffuse: 0.38},
	}
	col := ObjectColorRGB[color]
	sh := Cube
	if shape == "sphere" {
		sh = Sphere
	}
	for i, ctr := range centers {
		yaw := 0.0
		if sh == Cube {
			yaw = round6(rng.Float64() * 90)
		}
		center := Vec3{round6(ctr[0]), objectSize / 2, round6(ctr[1])}
		o.Items = append(o.Items, trace.Object{ID: i, Center: center, Size: objectSize, YawDeg: yaw})
		s.base.Objects = append(s.base.Objects, Object{Shape: sh, Center: center, Size: objectSize,
			Yaw: yaw * math.Pi / 180, Color: col, Noise: objectNoise, NoiseSeed: rng.Uint32()})
	}
	// The camera looks at the region's centre at yaw 0 and the base pitch.
	basePitch := -math.Atan2(cameraHeight, cameraBack) * 180 / math.Pi
	o.Camera = trace.CameraPath{Eye: [3]float64(s.base.Camera.Eye), FovYDeg: cameraFovYDeg, Interpolation: trace.InterpolationCosine}
	aspect := float64(p.Width) / float64(p.Height)
	for try := 0; ; try++ {
		if try == 1000 {
			return nil, fmt.Errorf("clip %s: no camera path in 1000 draws shows every object", objectsID(p))
		}
		o.Camera.Keys = o.Camera.Keys[:0]
		for k := range cameraKeys {
			t := p.Duration * float64(k) / float64(cameraKeys-1)
			o.Camera.Keys = append(o.Camera.Keys, trace.CameraKey{T: round6(t),
				YawDeg:   round6(uniform(rng, -cameraYawMax, cameraYawMax)),
				PitchDeg: round6(basePitch + uniform(rng, -cameraPitchVar, cameraPitchVar))})
		}
		o.Camera.Keys[len(o.Camera.Keys)-1].T = p.Duration
		s.world = o
		if s.computeInView(p, aspect) {
			break
		}
	}
	c.bg = RGBA{1, 1, 1, 1}
	c.nuisance["camera_keys"] = len(o.Camera.Keys)
	return s, nil
}

// place draws n centres in the square |x|,|z| ≤ half (keeping the objects
// inside it) at least gap apart, by dart throwing with restarts.
func place(rng *rand.Rand, n int, half, gap float64) ([][2]float64, error) {
	lim := half - objectSize/2
	for restart := 0; restart < 200; restart++ {
		pts := make([][2]float64, 0, n)
		for tries := 0; len(pts) < n && tries < 20000; tries++ {
			q := [2]float64{uniform(rng, -lim, lim), uniform(rng, -lim, lim)}
			ok := true
			for _, r := range pts {
				if math.Hypot(q[0]-r[0], q[1]-r[1]) < gap+1e-6 {
					ok = false
					break
				}
			}
			if ok {
				pts = append(pts, q)
			}
		}
		if len(pts) == n {
			return pts, nil
		}
	}
	return nil, fmt.Errorf("cannot place %d objects %.2f apart in ±%.2f", n, gap, half)
}

// camera returns the camera at time t.
func (s *objectsScene) camera(t float64) Camera {
	cam := s.base.Camera
	yaw, pitch := s.world.Camera.At(t)
	cam.Yaw, cam.Pitch = yaw*math.Pi/180, pitch*math.Pi/180
	return cam
}

// inView reports whether a point projects inside the frame of the camera
// whose ViewProjection is vp (as Camera.Project decides it).
func inView(vp Mat4, p Vec3) bool {
	x, y, _, front := vp.project(p)
	return front && x >= -1 && x <= 1 && y >= -1 && y <= 1
}

// computeInView fills InView, LeftView and FramesAllInView; it reports
// false when some object is in view in no frame.
func (s *objectsScene) computeInView(p Params, aspect float64) bool {
	o := &s.world
	frames := int(math.Round(p.Duration * float64(p.FPS)))
	o.InView = make([][]int, frames)
	seen := make([]int, p.N)
	o.FramesAllInView = 0
	for k := range frames {
		vp := s.camera(float64(k) / float64(p.FPS)).ViewProjection(aspect)
		ids := []int{}
		for i, it := range o.Items {
			if inView(vp, Vec3(it.Center)) {
				ids = append(ids, i)
				seen[i]++
			}
		}
		o.InView[k] = ids
		if len(ids) == p.N {
			o.FramesAllInView++
		}
	}
	o.LeftView = []int{}
	for i, n := range seen {
		if n == 0 {
			return false
		}
		if n < frames {
			o.LeftView = append(o.LeftView, i)
		}
	}
	return true
}

func (s *objectsScene) state(t float64, dl *DrawList) {
	// The world is copied into dl's own (reused) World, so a draw list
	// never aliases another's and Equal compares real contents.
	w := dl.World
	if w == nil {
		w = &World{}
		dl.World = w
	}
	objs := append(w.Objects[:0], s.base.Objects...)
	*w = s.base
	w.Objects = objs
	w.Camera = s.camera(t)
}

func normalize(v Vec3) Vec3 {
	l := math.Sqrt(dot(v, v))
	return Vec3{v[0] / l, v[1] / l, v[2] / l}
}
