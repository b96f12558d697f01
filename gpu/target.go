package gpu

import (
	"fmt"
	"unsafe"

	"github.com/go-gl/gl/v3.3-core/gl"
)

// target is an offscreen framebuffer: an RGBA8 colour renderbuffer and, if
// asked for, a 24-bit depth renderbuffer, both with samples samples a pixel
// (0: not multisampled). Its buffers are (re)allocated when the output size
// changes. The renderer reads frames back from a single-sample target; the
// world pass draws into a multisampled one and resolves it.
type target struct {
	samples int32
	depth   bool
	fbo     uint32
	colorRB uint32
	depthRB uint32
	w, h    int
	scratch []byte // tightly packed rows, for read into a stride that is not whole pixels
}

func newTarget(samples int, depth bool) *target {
	return &target{samples: int32(samples), depth: depth}
}

func (t *target) bind() { gl.BindFramebuffer(gl.FRAMEBUFFER, t.fbo) }

// resize (re)allocates the buffers for w×h when the size differs from the
// last; changed says it did, leaving t's framebuffer bound. On error t
// holds no buffers.
func (t *target) resize(w, h int) (changed bool, err error) {
	if t.fbo != 0 && t.w == w && t.h == h {
		return false, nil
	}
	t.deleteBuffers()
	// Sample count 0 is a plain renderbuffer (glRenderbufferStorage). A
	// multisample resolve blit needs the same format on both sides: RGBA8
	// in every target.
	gl.GenRenderbuffers(1, &t.colorRB)
	gl.BindRenderbuffer(gl.RENDERBUFFER, t.colorRB)
	gl.RenderbufferStorageMultisample(gl.RENDERBUFFER, t.samples, gl.RGBA8, int32(w), int32(h))
	if t.depth {
		gl.GenRenderbuffers(1, &t.depthRB)
		gl.BindRenderbuffer(gl.RENDERBUFFER, t.depthRB)
		gl.RenderbufferStorageMultisample(gl.RENDERBUFFER, t.samples, gl.DEPTH_COMPONENT24, int32(w), int32(h))
	}
	gl.GenFramebuffers(1, &t.fbo)
	t.bind()
	gl.FramebufferRenderbuffer(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.RENDERBUFFER, t.colorRB)
	if t.depth {
		gl.FramebufferRenderbuffer(gl.FRAMEBUFFER, gl.DEPTH_ATTACHMENT, gl.RENDERBUFFER, t.depthRB)
	}
	if st := gl.CheckFramebufferStatus(gl.FRAMEBUFFER); st != gl.FRAMEBUFFER_COMPLETE {
		t.deleteBuffers()
		return true, fmt.Errorf("gpu: %dx%d framebuffer with %d samples incomplete (0x%04x)", w, h, t.samples, st)
	}
	t.w, t.h = w, h
	return true, nil
}

// read copies the framebuffer, which must be bound and single-sample, into
// dst. Window row 0 holds canvas row 0 (the vertex shader does not flip y),
// and glReadPixels returns row 0 first, so the image comes out top row
// first with no CPU flip. GL_PACK_ALIGNMENT must be 1.
func (t *target) read(dst Image) {
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
	if n := rowBytes * dst.Height; cap(t.scratch) < n {
		t.scratch = make([]byte, n)
	}
	t.scratch = t.scratch[:rowBytes*dst.Height]
	gl.PixelStorei(gl.PACK_ROW_LENGTH, 0)
	gl.ReadPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, unsafe.Pointer(&t.scratch[0]))
	for y := 0; y < dst.Height; y++ {
		copy(dst.Pix[y*dst.Stride:y*dst.Stride+rowBytes], t.scratch[y*rowBytes:])
	}
}

// deleteBuffers frees the framebuffer and its renderbuffers. Deleting a
// bound framebuffer binds the default one (none here): callers rebind.
func (t *target) deleteBuffers() {
	if t.fbo != 0 {
		gl.DeleteFramebuffers(1, &t.fbo)
		t.fbo = 0
	}
	for _, rb := range []*uint32{&t.colorRB, &t.depthRB} {
		if *rb != 0 {
			gl.DeleteRenderbuffers(1, rb)
			*rb = 0
		}
	}
	t.w, t.h = 0, 0
}

// release frees the GL objects and the scratch rows; nil-safe and
// idempotent.
func (t *target) release() {
	if t == nil {
		return
	}
	t.deleteBuffers()
	t.scratch = nil
}
