package gpu

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"

	"github.com/go-gl/gl/v3.3-core/gl"

	"github.com/tracegrid/tracegrid/internal/rgba"
	"github.com/tracegrid/tracegrid/scene"
)

// Info describes the OpenGL context a Renderer draws with.
type Info struct {
	Renderer string // GL_RENDERER, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)"
	Version  string // GL_VERSION
	Vendor   string // GL_VENDOR
	Platform string // EGL platform: "device", "surfaceless" or "default"
	Device   string // EGL device extensions (device platform), else EGL vendor and version
	// MaxSamples is GL_MAX_SAMPLES; the 3D worlds that need a depth
	// buffer (see the package doc) are drawn with min(4, MaxSamples)
	// samples a pixel, without multisampling below 2.
	MaxSamples int
}

// Image is an RGBA8 pixel buffer (rgba.Image, the one image type gpu and
// encode share). Row 0 is the top row; row j starts at Pix[j*Stride].
// Stride may exceed 4*Width (padded rows, as in video frames); padding
// bytes are never written.
type Image = rgba.Image

// Renderer draws scene.DrawLists with OpenGL into Images. It owns a GL
// thread, a GL context and the GL objects of its two passes; Close frees
// them all. Its methods are safe for concurrent use: each Render lays its
// frame out on the caller's goroutine, and frames take turns only on the
// GL thread.
type Renderer struct {
	th      *glThread
	info    Info       // set by NewRenderer, then read-only
	maxSize int        // largest framebuffer side the driver allows; read-only
	atlas   *fontAtlas // immutable, shared by all renderers
	frames  framePool  // laid-out frames, reused by Render

	closeMu sync.Mutex  // serializes Close
	closed  atomic.Bool // set by Close; Render checks it before laying out

	// Tests compare the world paths on one scene: these make every world
	// take the depth path, or the painter path draw its ground with the
	// ground shader, or a painted ground go up and come back whole rather
	// than in the objects' rectangles. Never set outside tests.
	forceDepth, forceGroundShader, forceWholeUpload atomic.Bool

	// GL thread only; all nil once released.
	ctx    glContext
	target *target    // the single-sample framebuffer drawn into and read back
	items  *itemPass  // 2D items
	world  *worldPass // 3D worlds, created by the first frame with a world
}

// errClosed is what Render returns after Close.
var errClosed = errors.New("gpu: Render after Close")

// NewRenderer starts the GL thread, creates a headless OpenGL 3.3 core
// context through EGL (see the package doc for how the display is chosen),
// compiles the shaders and uploads the glyph atlas. On error it undoes what
// it did.
func NewRenderer() (*Renderer, error) {
	atlas, err := sharedAtlas()
	if err != nil {
		return nil, err
	}
	r := &Renderer{th: startGLThread(), atlas: atlas}
	if err := r.th.Call(r.init); err != nil {
		if rerr := r.th.Call(r.release); rerr != nil {
			err = errors.Join(err, rerr)
		}
		r.th.stop()
		return nil, err
	}
	slog.Debug("gpu: OpenGL renderer", "renderer", r.info.Renderer, "version", r.info.Version,
		"vendor", r.info.Vendor, "platform", r.info.Platform, "device", r.info.Device)
	return r, nil
}

// Info describes the context; on a machine with a GPU check Renderer, since
// a fall back to llvmpipe is otherwise silent. (info never changes after
// NewRenderer, so no lock.)
func (r *Renderer) Info() Info {
	if r == nil {
		return Info{}
	}
	return r.info
}

// Render draws dl into dst and reads the pixels back into dst.Pix. The
// canvas (dl.Width × dl.Height) is scaled uniformly to fit dst and centred
// (the margins, if the aspect ratios differ, get the background colour).
func (r *Renderer) Render(dl *scene.DrawList, dst Image) error {
	return r.render(dl, dst, true)
}

// renderNoReadback draws like Render but waits with glFinish instead of
// reading pixels back; for benchmarks. dst.Pix is not used.
func (r *Renderer) renderNoReadback(dl *scene.DrawList, dst Image) error {
	return r.render(dl, dst, false)
}

func (r *Renderer) render(dl *scene.DrawList, dst Image, readback bool) error {
	if r == nil {
		return errors.New("gpu: Render on a nil Renderer")
	}
	if dl == nil {
		return errors.New("gpu: Render: nil draw list")
	}
	if dl.Width <= 0 || dl.Height <= 0 {
		return fmt.Errorf("gpu: Render: draw list canvas %dx%d is empty", dl.Width, dl.Height)
	}
	if dst.Width > r.maxSize || dst.Height > r.maxSize {
		return fmt.Errorf("gpu: Render: %dx%d exceeds the driver's %d-pixel limit", dst.Width, dst.Height, r.maxSize)
	}
	if err := checkImage(dst, readback); err != nil {
		return err
	}
	if r.closed.Load() {
		return errClosed
	}
	// Layout happens here, on the caller's goroutine and with no lock held,
	// into a frame of its own; the GL thread only uploads and draws.
	f := r.frames.get()
	if f == nil {
		f = r.newFrame()
	}
	defer r.frames.put(f)
	f.forceDepth, f.forceGroundShader = r.forceDepth.Load(), r.forceGroundShader.Load()
	if err := f.layout(dl, dst, readback, r.atlas); err != nil {
		return err
	}
	if f.paintedGround() {
		// The ground is painted here, in parallel with other callers'
		// frames; without a readback, into the frame's own image.
		img := dst
		if !readback {
			img = f.scratchImage(dst.Width, dst.Height)
			f.dst = img
		}
		if err := f.paintGround(img, r.forceWholeUpload.Load()); err != nil {
			return err
		}
	}
	err := r.th.Call(f.draw)
	if errors.Is(err, errThreadStopped) { // Close won the race
		return errClosed
	}
	return err
}

// newFrame makes a frame that draws itself with r.
func (r *Renderer) newFrame() *frame {
	f := &frame{}
	f.draw = func() error { return r.drawFrame(f) }
	return f
}

func checkImage(dst Image, needPix bool) error {
	if dst.Width <= 0 || dst.Height <= 0 {
		return fmt.Errorf("gpu: Render: destination %dx%d is empty", dst.Width, dst.Height)
	}
	if !needPix {
		return nil
	}
	if dst.Stride < 4*dst.Width {
		return fmt.Errorf("gpu: Render: stride %d < 4*width %d", dst.Stride, 4*dst.Width)
	}
	if dst.Stride > math.MaxInt32 { // GL takes a row length in 32 bits
		return fmt.Errorf("gpu: Render: stride %d too large", dst.Stride)
	}
	// In 64 bits: the size is within the driver's limit (checked first),
	// the stride within 32 bits, so this cannot overflow.
	if need := int64(dst.Height-1)*int64(dst.Stride) + 4*int64(dst.Width); int64(len(dst.Pix)) < need {
		return fmt.Errorf("gpu: Render: Pix has %d bytes, %dx%d with stride %d needs %d",
			len(dst.Pix), dst.Width, dst.Height, dst.Stride, need)
	}
	return nil
}

// Close frees every GL object, destroys the context, releases the EGL
// display and stops the GL thread. It is idempotent and safe on nil.
func (r *Renderer) Close() error {
	if r == nil {
		return nil
	}
	r.closeMu.Lock()
	defer r.closeMu.Unlock()
	if r.closed.Load() {
		return nil
	}
	r.closed.Store(true)
	err := r.th.Call(r.release)
	r.th.stop()
	return err
}

// init runs on the GL thread: context, functions, passes, fixed state.
func (r *Renderer) init() error {
	if newContext == nil {
		return errors.New("gpu: no GL platform built in")
	}
	ctx, err := newContext()
	if err != nil {
		return err
	}
	r.ctx = ctx
	if err := ctx.MakeCurrent(); err != nil {
		return fmt.Errorf("gpu: %w", err)
	}
	if err := gl.InitWithProcAddrFunc(ctx.GetProcAddress); err != nil {
		return fmt.Errorf("gpu: OpenGL 3.3 function %v missing", err)
	}
	platform, device := ctx.Info()
	r.info = Info{
		Renderer: glString(gl.RENDERER),
		Version:  glString(gl.VERSION),
		Vendor:   glString(gl.VENDOR),
		Platform: platform,
		Device:   device,
	}
	// The output framebuffer's colour is a texture, the multisampled
	// one's a renderbuffer: the size limit is the least of the three.
	var maxRB, maxTex int32
	var maxVP [2]int32
	gl.GetIntegerv(gl.MAX_RENDERBUFFER_SIZE, &maxRB)
	gl.GetIntegerv(gl.MAX_TEXTURE_SIZE, &maxTex)
	gl.GetIntegerv(gl.MAX_VIEWPORT_DIMS, &maxVP[0])
	r.maxSize = int(min(maxRB, maxTex, maxVP[0], maxVP[1]))
	var maxSamples int32
	gl.GetIntegerv(gl.MAX_SAMPLES, &maxSamples)
	r.info.MaxSamples = int(maxSamples)

	r.target = newTarget(0, false)
	if r.items, err = newItemPass(r.atlas); err != nil {
		return err
	}

	// The context is ours alone, so fixed state is set once.
	// Source-over with straight alpha: colour = src*a + dst*(1-a); alpha
	// accumulates as a + dst*(1-a), so an opaque background stays opaque.
	gl.Enable(gl.BLEND)
	gl.BlendFuncSeparate(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA, gl.ONE, gl.ONE_MINUS_SRC_ALPHA)
	gl.Disable(gl.DEPTH_TEST)
	gl.Disable(gl.CULL_FACE) // rotated quads may come out either way round
	gl.PixelStorei(gl.PACK_ALIGNMENT, 1)
	gl.PixelStorei(gl.UNPACK_ALIGNMENT, 1)
	return glCheck("initialization")
}

// drawFrame runs on the GL thread: clear (or, with a painted ground, upload
// the rectangles f.dirty of the painted image), the world if there is
// one, the items in one or a few instanced draws, read back (f.dirty
// only, with a painted ground).
func (r *Renderer) drawFrame(f *frame) error {
	if r.ctx == nil {
		return errClosed
	}
	dst := f.dst
	changed, err := r.target.resize(dst.Width, dst.Height)
	if err != nil {
		return err
	}
	if changed {
		gl.Viewport(0, 0, int32(dst.Width), int32(dst.Height))
	}
	r.target.bind()
	bg := [4]float32{f.bg.R, f.bg.G, f.bg.B, f.bg.A}
	raster := f.paintedGround()
	if raster {
		// f.dst holds the painted output: only what the objects and items
		// may draw over goes up, and comes back below.
		for _, rc := range f.dirty {
			r.target.upload(dst, rc)
		}
	} else {
		gl.ClearColor(bg[0], bg[1], bg[2], bg[3])
		gl.Clear(gl.COLOR_BUFFER_BIT)
	}
	if f.hasWorld {
		// Drawn into r.target before the items, so items are drawn exactly
		// as in a frame without a world.
		if r.world == nil {
			if r.world, err = newWorldPass(r.info.MaxSamples); err != nil {
				return err
			}
		}
		if err := r.world.draw(f, bg, r.target); err != nil {
			return err
		}
	}
	r.items.draw(f)

	switch {
	case f.readback && raster:
		for _, rc := range f.dirty {
			r.target.readRect(dst, rc)
		}
	case f.readback:
		r.target.read(dst)
	default:
		gl.Finish()
	}
	if err := glCheck("rendering"); err != nil {
		if f.hasWorld {
			return fmt.Errorf("%w (a world of %d objects and %d items at %dx%d)",
				err, f.nObjects, f.nItems, dst.Width, dst.Height)
		}
		return fmt.Errorf("%w (%d items at %dx%d)", err, f.nItems, dst.Width, dst.Height)
	}
	return nil
}

// release runs on the GL thread: it frees every GL object that exists,
// then the context. It copes with a partial init.
func (r *Renderer) release() error {
	if r.ctx == nil {
		return nil
	}
	var errs []error
	r.world.release()
	r.target.release()
	r.items.release()
	r.world, r.target, r.items = nil, nil, nil
	if r.info.Renderer != "" { // GL functions are loaded
		if err := glCheck("freeing GL objects"); err != nil {
			errs = append(errs, err)
		}
	}
	if err := r.ctx.Release(); err != nil {
		errs = append(errs, fmt.Errorf("gpu: %w", err))
	}
	r.ctx = nil
	return errors.Join(errs...)
}
