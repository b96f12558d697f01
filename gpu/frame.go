package gpu

import (
	"fmt"
	"github.com/tracegrid/tracegrid/gpu/internal/raster"
	"math"
	"sync"

	"golang.org/x/image/font/sfnt"

	"github.com/tracegrid/tracegrid/scene"
)

// frame is one Render call's draw list laid out, on the caller's
// goroutine, into what the GL thread uploads and draws: item instances and
// the runs that draw them, and the world's camera, light and objects.
// Layout needs no lock, so callers lay out in parallel and only take turns
// on the GL thread. Frames are reused through a framePool, so a steady
// stream of frames allocates nothing.
type frame struct {
	dst      Image
	bg       scene.RGBA
	tf       transform
	readback bool

	instances []float32 // the items' quads, floatsPerInstance each
	runs      []run     // instance ranges, in draw order

	hasWorld    bool
	world       worldFrame     // the world's camera, ground and light (world.go)
	objects     []float32      // depth path: the objects, floatsPerObject each
	impostors   []float32      // painter path: the objects, floatsPerImpostor each, far to near
	objRuns     []objectRun    // painter path: impostor ranges of one shape
	groundLines []raster.Line  // painter path, wf.rasterGround: the grid lines for raster.Ground
	objRects    [][4]int32     // painter path: each impostor's pixels, x0, y0, x1, y1 in output px (image rows are GL's window rows)
	dirty       [][4]int32     // wf.rasterGround: the rectangles the GL thread uploads, draws in and reads back
	scratch     []byte         // wf.rasterGround without readback: the image the ground is painted into
	bounds      []objectBounds // the objects in view (layout scratch)

	nItems, nObjects int // for error messages

	forceDepth, forceGroundShader bool // see Renderer

	// buf is this frame's scratch for font lookups (kerning): an sfnt.Font
	// is safe for concurrent use only with a Buffer per caller.
	buf sfnt.Buffer

	draw func() error // draws this frame on the GL thread; made once
}

// transform maps canvas pixels to output pixels: scale, then offset.
type transform struct{ s, offX, offY float64 }

// fit scales the canvas uniformly to fit the output and centres it.
func fit(canvasW, canvasH, outW, outH int) transform {
	s := math.Min(float64(outW)/float64(canvasW), float64(outH)/float64(canvasH))
	// Whole-pixel offsets keep integer canvas edges on pixel edges.
	return transform{
		s:    s,
		offX: math.Round((float64(outW) - s*float64(canvasW)) / 2),
		offY: math.Round((float64(outH) - s*float64(canvasH)) / 2),
	}
}

// run is a range of instances drawn with one program: one instanced draw.
// Shapes and glyphs need different fragment shaders (see shape.frag.glsl),
// so a frame is one draw per change between the two in item order; usually
// one or two.
type run struct {
	glyphs       bool
	first, count int
}

// layout fills f from dl for output dst; dl and dst must have been checked.
// It reads the atlas, which is immutable, and nothing of the Renderer.
func (f *frame) layout(dl *scene.DrawList, dst Image, readback bool, atlas *fontAtlas) error {
	f.dst, f.bg, f.readback = dst, dl.Background, readback
	f.tf = fit(dl.Width, dl.Height, dst.Width, dst.Height)
	f.nItems, f.nObjects = len(dl.Items), 0
	margin := aaMargin / f.tf.s
	f.instances, f.runs = f.instances[:0], f.runs[:0]
	for i := range dl.Items {
		first := len(f.instances) / floatsPerInstance
		var err error
		f.instances, err = appendItem(f.instances, &dl.Items[i], margin, atlas, &f.buf)
		if err != nil {
			return fmt.Errorf("gpu: Render: item %d: %w", i, err)
		}
		if n := len(f.instances)/floatsPerInstance - first; n > 0 {
			f.addRun(dl.Items[i].Kind == scene.Text, first, n)
		}
	}
	f.hasWorld = dl.World != nil
	if f.hasWorld {
		f.nObjects = len(dl.World.Objects)
		return f.layoutWorld(dl.World, dl.Width, dl.Height, f.tf, dst.Width, dst.Height)
	}
	return nil
}

// addRun appends instances [first, first+n) to the draw order, extending
// the last run when it uses the same program.
func (f *frame) addRun(glyphs bool, first, n int) {
	if k := len(f.runs) - 1; k >= 0 && f.runs[k].glyphs == glyphs {
		f.runs[k].count += n
		return
	}
	f.runs = append(f.runs, run{glyphs: glyphs, first: first, count: n})
}

// framePool keeps a Renderer's frames between Render calls: as many as
// callers ever rendered at once, each keeping the capacity its buffers grew
// to. A free list rather than a sync.Pool: the garbage collector empties a
// sync.Pool (and the race detector drops what is put into one at random),
// and every refill would allocate the frame and its buffers again.
type framePool struct {
	mu   sync.Mutex
	free []*frame
}

// get returns a free frame, or nil if there is none.
func (p *framePool) get() *frame {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.free)
	if n == 0 {
		return nil
	}
	f := p.free[n-1]
	p.free[n-1] = nil
	p.free = p.free[:n-1]
	return f
}

// put returns f for reuse, without the caller's pixel memory.
func (p *framePool) put(f *frame) {
	f.dst = Image{}
	p.mu.Lock()
	p.free = append(p.free, f)
	p.mu.Unlock()
}

// paintedGround reports whether f's ground is painted on the CPU
// (ground.go) and uploaded, rather than cleared and drawn by GL. f.world
// is only laid out for a frame with a world.
func (f *frame) paintedGround() bool {
	return f.hasWorld && f.world.painter && f.world.rasterGround
}

// scratchImage is the frame's own w×h image, for a ground painted without
// a readback (benchmarks); kept between frames.
func (f *frame) scratchImage(w, h int) Image {
	if n := 4 * w * h; cap(f.scratch) < n {
		f.scratch = make([]byte, n)
	}
	return Image{Width: w, Height: h, Stride: 4 * w, Pix: f.scratch[:4*w*h]}
}
