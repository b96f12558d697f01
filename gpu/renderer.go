package gpu

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"unsafe"

	"github.com/go-gl/gl/v3.3-core/gl"
	"golang.org/x/image/font/sfnt"

	"github.com/tracegrid/tracegrid/scene"
	"github.com/tracegrid/tracegrid/shaders"
)

// Info describes the OpenGL context a Renderer draws with.
type Info struct {
	Renderer string // GL_RENDERER, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)"
	Version  string // GL_VERSION
	Vendor   string // GL_VENDOR
	Platform string // EGL platform: "device", "surfaceless" or "default"
	Device   string // EGL device extensions (device platform), else EGL vendor and version
	// MaxSamples is GL_MAX_SAMPLES; 3D worlds are drawn with
	// min(4, MaxSamples) samples a pixel, without multisampling below 2.
	MaxSamples int
}

// Image is an RGBA8 pixel buffer. Row 0 is the top row; row j starts at
// Pix[j*Stride]. Stride may exceed 4*Width (padded rows, as in video
// frames); padding bytes are never written.
type Image struct {
	Width, Height, Stride int
	Pix                   []byte
}

// Renderer draws scene.DrawLists with OpenGL into Images. It owns a GL
// thread, an EGL context and the GL objects below; Close frees them all.
// Its methods are safe for concurrent use (frames are drawn one at a time).
type Renderer struct {
	mu     sync.Mutex // serializes Render and Close, guards the fields below
	closed bool
	th     *glThread
	info   Info
	atlas  *fontAtlas
	buf    sfnt.Buffer // scratch for font lookups (kerning)

	// Per-frame input, set under mu before calling frameFn on the GL
	// thread; kept in fields so a frame allocates nothing.
	frameList     *scene.DrawList
	frameDst      Image
	frameTf       transform
	frameReadback bool
	frameFn       func() error
	instances     []float32 // CPU copy of the instance buffer
	runs          []run     // instance ranges, in draw order
	frameHasWorld bool
	worldFrame    worldFrame // the world's camera, ground and light (world.go)
	objects       []float32  // CPU copy of the world's instance buffer

	// GL thread only.
	egl      *eglContext
	shapes   program
	glyphs   program
	vao      uint32
	quadVBO  uint32 // the unit quad's four corners
	instVBO  uint32 // per-instance attributes
	instCap  int    // instVBO size in bytes
	atlasTex uint32
	fbo      uint32
	colorRB  uint32 // fbo's colour attachment
	fbW, fbH int
	maxSize  int // largest framebuffer side the driver allows
	scratch  []byte
	world    *worldGL // 3D objects, created by the first frame with a world
	samples  int      // MSAA samples for worlds; 0: none
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

// program is a linked shader program and the uniforms every frame sets.
type program struct {
	id                    uint32
	uViewport, uTransform int32
}

// run is a range of instances drawn with one program: one instanced draw.
// Shapes and glyphs need different fragment shaders (see shape.frag.glsl),
// so a frame is one draw per change between the two in item order; usually
// one or two.
type run struct {
	glyphs       bool
	first, count int
}

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
	r.frameFn = r.frame
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
	if err := checkImage(dst, readback); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errors.New("gpu: Render after Close")
	}
	if dst.Width > r.maxSize || dst.Height > r.maxSize {
		return fmt.Errorf("gpu: Render: %dx%d exceeds the driver's %d-pixel limit", dst.Width, dst.Height, r.maxSize)
	}
	// Layout happens here, on the caller's goroutine; the GL thread only
	// uploads and draws.
	tf := fit(dl.Width, dl.Height, dst.Width, dst.Height)
	margin := aaMargin / tf.s
	r.instances, r.runs = r.instances[:0], r.runs[:0]
	for i := range dl.Items {
		first := len(r.instances) / floatsPerInstance
		var err error
		r.instances, err = appendItem(r.instances, &dl.Items[i], margin, r.atlas, &r.buf)
		if err != nil {
			return fmt.Errorf("gpu: Render: item %d: %w", i, err)
		}
		if n := len(r.instances)/floatsPerInstance - first; n > 0 {
			r.addRun(dl.Items[i].Kind == scene.Text, first, n)
		}
	}
	r.frameHasWorld = dl.World != nil
	if r.frameHasWorld {
		if err := r.prepareWorld(dl.World, dl.Width, dl.Height, tf, dst.Width, dst.Height); err != nil {
			return err
		}
	}
	r.frameList, r.frameDst, r.frameTf, r.frameReadback = dl, dst, tf, readback
	err := r.th.Call(r.frameFn)
	r.frameList, r.frameDst = nil, Image{} // do not keep the caller's memory alive
	return err
}

// addRun appends instances [first, first+n) to the draw order, extending
// the last run when it uses the same program.
func (r *Renderer) addRun(glyphs bool, first, n int) {
	if k := len(r.runs) - 1; k >= 0 && r.runs[k].glyphs == glyphs {
		r.runs[k].count += n
		return
	}
	r.runs = append(r.runs, run{glyphs: glyphs, first: first, count: n})
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
	if need := (dst.Height-1)*dst.Stride + 4*dst.Width; len(dst.Pix) < need {
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
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.th.Call(r.release)
	r.th.stop()
	return err
}

// init runs on the GL thread: context, functions, objects.
func (r *Renderer) init() error {
	var err error
	if r.egl, err = openEGL(); err != nil {
		return err
	}
	if err := gl.InitWithProcAddrFunc(eglGetProcAddress); err != nil {
		return fmt.Errorf("gpu: OpenGL 3.3 function %v missing", err)
	}
	r.info = Info{
		Renderer: glString(gl.RENDERER),
		Version:  glString(gl.VERSION),
		Vendor:   glString(gl.VENDOR),
		Platform: r.egl.platform,
		Device:   r.egl.device,
	}
	var maxRB int32
	var maxVP [2]int32
	gl.GetIntegerv(gl.MAX_RENDERBUFFER_SIZE, &maxRB)
	gl.GetIntegerv(gl.MAX_VIEWPORT_DIMS, &maxVP[0])
	r.maxSize = int(min(maxRB, maxVP[0], maxVP[1]))
	var maxSamples int32
	gl.GetIntegerv(gl.MAX_SAMPLES, &maxSamples)
	r.info.MaxSamples = int(maxSamples)

	if r.shapes, err = newProgram("shape", shaders.QuadVertex, shaders.ShapeFragment); err != nil {
		return err
	}
	if r.glyphs, err = newProgram("glyph", shaders.QuadVertex, shaders.GlyphFragment); err != nil {
		return err
	}
	uAtlas := gl.GetUniformLocation(r.glyphs.id, gl.Str("uAtlas\x00"))
	if uAtlas < 0 {
		return errors.New("gpu: glyph shader program lacks uAtlas")
	}
	gl.UseProgram(r.glyphs.id)
	gl.Uniform1i(uAtlas, 0) // texture unit 0

	// The core profile draws nothing without a bound vertex array object.
	gl.GenVertexArrays(1, &r.vao)
	gl.BindVertexArray(r.vao)

	corners := [8]float32{-1, -1, 1, -1, -1, 1, 1, 1} // triangle strip
	gl.GenBuffers(1, &r.quadVBO)
	gl.BindBuffer(gl.ARRAY_BUFFER, r.quadVBO)
	gl.BufferData(gl.ARRAY_BUFFER, len(corners)*4, unsafe.Pointer(&corners[0]), gl.STATIC_DRAW)
	gl.EnableVertexAttribArray(0)
	gl.VertexAttribPointerWithOffset(0, 2, gl.FLOAT, false, 0, 0)

	gl.GenBuffers(1, &r.instVBO)
	gl.BindBuffer(gl.ARRAY_BUFFER, r.instVBO)
	for loc := uint32(1); loc <= 5; loc++ {
		gl.EnableVertexAttribArray(loc)
		gl.VertexAttribDivisor(loc, 1)
	}
	r.pointInstances(0)

	if err := r.uploadAtlas(); err != nil {
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
	return glCheck("initialization")
}

// newProgram builds one of the two programs; both use the same vertex
// shader and uniforms.
func newProgram(name, vertex, fragment string) (program, error) {
	id, err := buildProgram(name, vertex, fragment, shaderDefines())
	if err != nil {
		return program{}, err
	}
	p := program{
		id:         id,
		uViewport:  gl.GetUniformLocation(id, gl.Str("uViewport\x00")),
		uTransform: gl.GetUniformLocation(id, gl.Str("uTransform\x00")),
	}
	if p.uViewport < 0 || p.uTransform < 0 {
		gl.DeleteProgram(id)
		return program{}, fmt.Errorf("gpu: %s shader program lacks uViewport or uTransform", name)
	}
	return p, nil
}

// pointInstances points the per-instance attributes at instance first of
// the instance buffer, which must be bound: OpenGL 3.3 has no base-instance
// draw, so a run starting mid-buffer moves the pointers instead.
func (r *Renderer) pointInstances(first int) {
	const stride = floatsPerInstance * 4
	for loc := uint32(1); loc <= 5; loc++ {
		gl.VertexAttribPointerWithOffset(loc, 4, gl.FLOAT, false, stride, uintptr(first*stride)+uintptr(loc-1)*16)
	}
}

func (r *Renderer) uploadAtlas() error {
	img := r.atlas.img
	gl.GenTextures(1, &r.atlasTex)
	gl.ActiveTexture(gl.TEXTURE0)
	gl.BindTexture(gl.TEXTURE_2D, r.atlasTex)
	gl.PixelStorei(gl.UNPACK_ALIGNMENT, 1)
	gl.PixelStorei(gl.UNPACK_ROW_LENGTH, int32(img.Stride))
	gl.TexImage2D(gl.TEXTURE_2D, 0, gl.R8, int32(img.Rect.Dx()), int32(img.Rect.Dy()), 0,
		gl.RED, gl.UNSIGNED_BYTE, unsafe.Pointer(&img.Pix[0]))
	gl.PixelStorei(gl.UNPACK_ROW_LENGTH, 0)
	// Text is mostly smaller than the atlas glyphs: trilinear filtering over
	// mipmaps, stopping at the level where cells still do not share texels.
	gl.TexParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAX_LEVEL, atlasMaxLevel)
	gl.TexParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR_MIPMAP_LINEAR)
	gl.TexParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.LINEAR)
	gl.TexParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE)
	gl.TexParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE)
	gl.GenerateMipmap(gl.TEXTURE_2D)
	return glCheck("uploading the glyph atlas")
}

// ensureFramebuffer (re)creates the offscreen framebuffer when the output
// size changes.
func (r *Renderer) ensureFramebuffer(w, h int) error {
	if r.fbo != 0 && r.fbW == w && r.fbH == h {
		return nil
	}
	r.deleteFramebuffer()
	gl.GenRenderbuffers(1, &r.colorRB)
	gl.BindRenderbuffer(gl.RENDERBUFFER, r.colorRB)
	gl.RenderbufferStorage(gl.RENDERBUFFER, gl.RGBA8, int32(w), int32(h))
	gl.GenFramebuffers(1, &r.fbo)
	gl.BindFramebuffer(gl.FRAMEBUFFER, r.fbo)
	gl.FramebufferRenderbuffer(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.RENDERBUFFER, r.colorRB)
	if st := gl.CheckFramebufferStatus(gl.FRAMEBUFFER); st != gl.FRAMEBUFFER_COMPLETE {
		r.deleteFramebuffer()
		return fmt.Errorf("gpu: %dx%d framebuffer incomplete (0x%04x)", w, h, st)
	}
	r.fbW, r.fbH = w, h
	gl.Viewport(0, 0, int32(w), int32(h))
	return nil
}

func (r *Renderer) deleteFramebuffer() {
	if r.fbo != 0 {
		gl.BindFramebuffer(gl.FRAMEBUFFER, 0)
		gl.DeleteFramebuffers(1, &r.fbo)
		r.fbo = 0
	}
	if r.colorRB != 0 {
		gl.DeleteRenderbuffers(1, &r.colorRB)
		r.colorRB = 0
	}
	r.fbW, r.fbH = 0, 0
}

// frame runs on the GL thread: clear, the world if there is one, the items
// in one or a few instanced draws, read back.
func (r *Renderer) frame() error {
	dl, dst := r.frameList, r.frameDst
	if err := r.ensureFramebuffer(dst.Width, dst.Height); err != nil {
		return err
	}
	bg := dl.Background
	gl.ClearColor(bg.R, bg.G, bg.B, bg.A)
	gl.Clear(gl.COLOR_BUFFER_BIT)
	if r.frameHasWorld {
		// Resolved into r.fbo before the items are drawn, so items are
		// drawn exactly as in a frame without a world.
		if err := r.drawWorld([4]float32{bg.R, bg.G, bg.B, bg.A}); err != nil {
			return err
		}
	}

	if len(r.runs) > 0 {
		size := len(r.instances) * 4
		gl.BindBuffer(gl.ARRAY_BUFFER, r.instVBO)
		if size > r.instCap {
			r.instCap = max(size, 2*r.instCap)
		}
		// Orphan the old storage so a GPU still reading the previous frame's
		// instances need not stall this upload.
		gl.BufferData(gl.ARRAY_BUFFER, r.instCap, nil, gl.STREAM_DRAW)
		gl.BufferSubData(gl.ARRAY_BUFFER, 0, size, unsafe.Pointer(&r.instances[0]))

		tf := r.frameTf
		for _, p := range []*program{&r.shapes, &r.glyphs} {
			gl.UseProgram(p.id)
			gl.Uniform2f(p.uViewport, float32(dst.Width), float32(dst.Height))
			gl.Uniform3f(p.uTransform, float32(tf.s), float32(tf.offX), float32(tf.offY))
		}
		for i, run := range r.runs {
			if run.glyphs {
				gl.UseProgram(r.glyphs.id)
			} else {
				gl.UseProgram(r.shapes.id)
			}
			if i > 0 || run.first != 0 {
				r.pointInstances(run.first)
			}
			gl.DrawArraysInstanced(gl.TRIANGLE_STRIP, 0, 4, int32(run.count))
		}
		if len(r.runs) > 1 || r.runs[0].first != 0 {
			r.pointInstances(0)
		}
	}

	if r.frameReadback {
		r.readPixels(dst)
	} else {
		gl.Finish()
	}
	if err := glCheck("rendering"); err != nil {
		if r.frameHasWorld {
			return fmt.Errorf("%w (a world of %d objects and %d items at %dx%d)",
				err, len(dl.World.Objects), len(dl.Items), dst.Width, dst.Height)
		}
		return fmt.Errorf("%w (%d items at %dx%d)", err, len(dl.Items), dst.Width, dst.Height)
	}
	return nil
}

// readPixels copies the framebuffer into dst. Window row 0 holds canvas row
// 0 (the vertex shader does not flip y), and glReadPixels returns row 0
// first, so the image comes out top row first with no CPU flip.
func (r *Renderer) readPixels(dst Image) {
	w, h := int32(dst.Width), int32(dst.Height)
	if dst.Stride%4 == 0 {
		// PACK_ROW_LENGTH (in pixels) lets GL write straight into padded rows.
		gl.PixelStorei(gl.PACK_ROW_LENGTH, int32(dst.Stride/4))
		gl.ReadPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, unsafe.Pointer(&dst.Pix[0]))
		return
	}
	// A stride that is not a whole number of pixels cannot be expressed as
	// a row length: read tightly packed rows and copy them.
	rowBytes := 4 * dst.Width
	if n := rowBytes * dst.Height; cap(r.scratch) < n {
		r.scratch = make([]byte, n)
	}
	r.scratch = r.scratch[:rowBytes*dst.Height]
	gl.PixelStorei(gl.PACK_ROW_LENGTH, 0)
	gl.ReadPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, unsafe.Pointer(&r.scratch[0]))
	for y := 0; y < dst.Height; y++ {
		copy(dst.Pix[y*dst.Stride:y*dst.Stride+rowBytes], r.scratch[y*rowBytes:])
	}
}

// release runs on the GL thread: it frees every GL object that exists,
// then the context. It copes with a partial init.
func (r *Renderer) release() error {
	if r.egl == nil {
		return nil
	}
	var errs []error
	if r.egl.context != nil {
		r.deleteWorld()
		r.deleteFramebuffer()
		for _, b := range []*uint32{&r.instVBO, &r.quadVBO} {
			if *b != 0 {
				gl.DeleteBuffers(1, b)
				*b = 0
			}
		}
		if r.vao != 0 {
			gl.DeleteVertexArrays(1, &r.vao)
			r.vao = 0
		}
		if r.atlasTex != 0 {
			gl.DeleteTextures(1, &r.atlasTex)
			r.atlasTex = 0
		}
		for _, p := range []*program{&r.shapes, &r.glyphs} {
			if p.id != 0 {
				gl.DeleteProgram(p.id)
				*p = program{}
			}
		}
		r.instCap = 0
		if r.info.Renderer != "" { // GL functions are loaded
			if err := glCheck("freeing GL objects"); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := r.egl.close(); err != nil {
		errs = append(errs, err)
	}
	r.egl = nil
	return errors.Join(errs...)
}
