package gpu

import (
	"fmt"
	"unsafe"

	"github.com/go-gl/gl/v3.3-core/gl"
)

// target is an offscreen framebuffer: RGBA8 colour and, if asked for, a
// 24-bit depth renderbuffer, both with samples samples a pixel (0: not
// multisampled). Single-sample colour is a texture, so that a painted
// ground can be uploaded into it (upload); multisampled colour is a
// renderbuffer. Its buffers are (re)allocated when the output size
// changes. The renderer reads frames back from a single-sample target; the
// world pass draws into a multisampled one and resolves it.
type target struct {
	samples  int32
	depth    bool
	fbo      uint32
	colorTex uint32 // samples == 0
	colorRB  uint32 // samples > 0
	depthRB  uint32
	w, h     int
	scratch  []byte // tightly packed rows, for read into a stride that is not whole pixels
}

// targetUnit is the texture unit the colour texture is bound to while it
// is uploaded; unit 0 keeps the glyph atlas bound for the item pass, and
// no shader samples this one.
const targetUnit = gl.TEXTURE1

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
	// A multisample resolve blit needs the same format on both sides:
	// RGBA8 in every target.
	if t.samples == 0 {
		gl.ActiveTexture(targetUnit)
		gl.GenTextures(1, &t.colorTex)
		gl.BindTexture(gl.TEXTURE_2D, t.colorTex)
		gl.TexParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST)
		gl.TexParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST)
		gl.TexParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAX_LEVEL, 0)
		gl.TexImage2D(gl.TEXTURE_2D, 0, gl.RGBA8, int32(w), int32(h), 0, gl.RGBA, gl.UNSIGNED_BYTE, nil)
		gl.BindTexture(gl.TEXTURE_2D, 0)
		gl.ActiveTexture(gl.TEXTURE0)
	} else {
		gl.GenRenderbuffers(1, &t.colorRB)
		gl.BindRenderbuffer(gl.RENDERBUFFER, t.colorRB)
		gl.RenderbufferStorageMultisample(gl.RENDERBUFFER, t.samples, gl.RGBA8, int32(w), int32(h))
	}
	if t.depth {
		gl.GenRenderbuffers(1, &t.depthRB)
		gl.BindRenderbuffer(gl.RENDERBUFFER, t.depthRB)
		gl.RenderbufferStorageMultisample(gl.RENDERBUFFER, t.samples, gl.DEPTH_COMPONENT24, int32(w), int32(h))
	}
	gl.GenFramebuffers(1, &t.fbo)
	t.bind()
	if t.colorTex != 0 {
		gl.FramebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, t.colorTex, 0)
	} else {
		gl.FramebufferRenderbuffer(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.RENDERBUFFER, t.colorRB)
	}
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
	t.readRect(dst, [4]int32{0, 0, int32(dst.Width), int32(dst.Height)})
}

// readRect copies the pixels of r (x0, y0, x1, y1, within dst's size)
// from the framebuffer, bound and single-sample, into the same pixels of
// dst.
func (t *target) readRect(dst Image, r [4]int32) {
	w, h := r[2]-r[0], r[3]-r[1]
	if w <= 0 || h <= 0 {
		return
	}
	off := int(r[1])*dst.Stride + 4*int(r[0])
	if dst.Stride%4 == 0 {
		// PACK_ROW_LENGTH (in pixels) lets GL write straight into padded rows.
		gl.PixelStorei(gl.PACK_ROW_LENGTH, int32(dst.Stride/4))
		gl.ReadPixels(r[0], r[1], w, h, gl.RGBA, gl.UNSIGNED_BYTE, unsafe.Pointer(&dst.Pix[off]))
		return
	}
	// A stride that is not a whole number of pixels cannot be expressed as
	// a row length: read tightly packed rows and copy them.
	rowBytes := 4 * int(w)
	if n := rowBytes * int(h); cap(t.scratch) < n {
		t.scratch = make([]byte, n)
	}
	t.scratch = t.scratch[:rowBytes*int(h)]
	gl.PixelStorei(gl.PACK_ROW_LENGTH, 0)
	gl.ReadPixels(r[0], r[1], w, h, gl.RGBA, gl.UNSIGNED_BYTE, unsafe.Pointer(&t.scratch[0]))
	for y := range int(h) {
		copy(dst.Pix[off+y*dst.Stride:off+y*dst.Stride+rowBytes], t.scratch[y*rowBytes:])
	}
}

// upload copies the pixels of r (x0, y0, x1, y1, within src's size) from
// src into the same pixels of the colour texture (single-sample targets
// only). GL_UNPACK_ALIGNMENT must be 1.
func (t *target) upload(src Image, r [4]int32) {
	w, h := r[2]-r[0], r[3]-r[1]
	if w <= 0 || h <= 0 {
		return
	}
	gl.ActiveTexture(targetUnit)
	gl.BindTexture(gl.TEXTURE_2D, t.colorTex)
	off := int(r[1])*src.Stride + 4*int(r[0])
	if src.Stride%4 == 0 {
		gl.PixelStorei(gl.UNPACK_ROW_LENGTH, int32(src.Stride/4))
		gl.TexSubImage2D(gl.TEXTURE_2D, 0, r[0], r[1], w, h, gl.RGBA, gl.UNSIGNED_BYTE, unsafe.Pointer(&src.Pix[off]))
	} else {
		// Rows a stride apart that is not whole pixels: one row at a time.
		gl.PixelStorei(gl.UNPACK_ROW_LENGTH, 0)
		for y := range h {
			gl.TexSubImage2D(gl.TEXTURE_2D, 0, r[0], r[1]+y, w, 1, gl.RGBA, gl.UNSIGNED_BYTE, unsafe.Pointer(&src.Pix[off+int(y)*src.Stride]))
		}
	}
	gl.PixelStorei(gl.UNPACK_ROW_LENGTH, 0)
	gl.BindTexture(gl.TEXTURE_2D, 0)
	gl.ActiveTexture(gl.TEXTURE0)
}

// deleteBuffers frees the framebuffer and its texture or renderbuffers. Deleting a
// bound framebuffer binds the default one (none here): callers rebind.
func (t *target) deleteBuffers() {
	if t.fbo != 0 {
		gl.DeleteFramebuffers(1, &t.fbo)
		t.fbo = 0
	}
	if t.colorTex != 0 {
		gl.DeleteTextures(1, &t.colorTex)
		t.colorTex = 0
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
