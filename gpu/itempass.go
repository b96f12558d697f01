package gpu

import (
	"unsafe"

	"github.com/go-gl/gl/v3.3-core/gl"

	"github.com/tracegrid/tracegrid/shaders"
)

// itemPass draws a frame's items: instances of one unit quad, with the
// shape or the glyph program (see run). It owns the two programs, the quad,
// the instance buffer and the glyph atlas texture.
type itemPass struct {
	shapes, glyphs itemProgram
	vao            uint32 // the quad's corners and the instance attributes
	quad           uint32 // vertex buffer: the unit quad's four corners
	instances      *streamBuffer
	atlas          *atlasTexture
}

// itemProgram is one of the two item programs and the uniforms every frame
// sets: the output size and the canvas-to-output transform.
type itemProgram struct {
	*program
	uViewport, uTransform int32
}

// newItemPass creates the pass's GL objects; on error it frees what it
// made.
func newItemPass(atlas *fontAtlas) (_ *itemPass, err error) {
	p := &itemPass{}
	defer func() {
		if err != nil {
			p.release()
		}
	}()
	if p.shapes, err = newItemProgram("shape", shaders.ShapeFragment); err != nil {
		return nil, err
	}
	if p.glyphs, err = newItemProgram("glyph", shaders.GlyphFragment); err != nil {
		return nil, err
	}
	uAtlas, err := p.glyphs.uniform("uAtlas")
	if err != nil {
		return nil, err
	}
	p.glyphs.use()
	gl.Uniform1i(uAtlas, 0) // texture unit 0

	// The core profile draws nothing without a bound vertex array object.
	gl.GenVertexArrays(1, &p.vao)
	gl.BindVertexArray(p.vao)

	corners := [8]float32{-1, -1, 1, -1, -1, 1, 1, 1} // triangle strip
	gl.GenBuffers(1, &p.quad)
	gl.BindBuffer(gl.ARRAY_BUFFER, p.quad)
	gl.BufferData(gl.ARRAY_BUFFER, len(corners)*4, unsafe.Pointer(&corners[0]), gl.STATIC_DRAW)
	gl.EnableVertexAttribArray(0)
	gl.VertexAttribPointerWithOffset(0, 2, gl.FLOAT, false, 0, 0)

	p.instances = newStreamBuffer()
	p.instances.bind()
	for loc := uint32(1); loc <= 5; loc++ {
		gl.EnableVertexAttribArray(loc)
		gl.VertexAttribDivisor(loc, 1)
	}
	pointInstances(0)

	if p.atlas, err = newAtlasTexture(atlas); err != nil {
		return nil, err
	}
	return p, nil
}

// newItemProgram builds one of the two programs; both use the same vertex
// shader and uniforms.
func newItemProgram(name, fragment string) (itemProgram, error) {
	prog, err := newProgram(name, shaders.QuadVertex, fragment, shaderDefines())
	if err != nil {
		return itemProgram{}, err
	}
	p := itemProgram{program: prog}
	if p.uViewport, err = prog.uniform("uViewport"); err == nil {
		p.uTransform, err = prog.uniform("uTransform")
	}
	if err != nil {
		prog.release()
		return itemProgram{}, err
	}
	return p, nil
}

// pointInstances points the per-instance attributes at instance first of
// the instance buffer, which must be bound, in the pass's vertex array
// object, which must be bound: OpenGL 3.3 has no base-instance draw, so a
// run starting mid-buffer moves the pointers instead.
func pointInstances(first int) {
	const stride = floatsPerInstance * 4
	for loc := uint32(1); loc <= 5; loc++ {
		gl.VertexAttribPointerWithOffset(loc, 4, gl.FLOAT, false, stride, uintptr(first*stride)+uintptr(loc-1)*16)
	}
}

// draw uploads f's instances and draws its runs into the bound framebuffer,
// blending over what is there.
func (p *itemPass) draw(f *frame) {
	if len(f.runs) == 0 {
		return
	}
	gl.BindVertexArray(p.vao)
	p.instances.upload(f.instances)
	tf := f.tf
	for _, prog := range [2]*itemProgram{&p.shapes, &p.glyphs} {
		prog.use()
		gl.Uniform2f(prog.uViewport, float32(f.dst.Width), float32(f.dst.Height))
		gl.Uniform3f(prog.uTransform, float32(tf.s), float32(tf.offX), float32(tf.offY))
	}
	for i, run := range f.runs {
		if run.glyphs {
			p.glyphs.use()
		} else {
			p.shapes.use()
		}
		if i > 0 || run.first != 0 {
			pointInstances(run.first)
		}
		gl.DrawArraysInstanced(gl.TRIANGLE_STRIP, 0, 4, int32(run.count))
	}
	if len(f.runs) > 1 || f.runs[0].first != 0 {
		pointInstances(0)
	}
}

// release frees every GL object the pass made; nil-safe and idempotent.
func (p *itemPass) release() {
	if p == nil {
		return
	}
	p.instances.release()
	if p.quad != 0 {
		gl.DeleteBuffers(1, &p.quad)
		p.quad = 0
	}
	if p.vao != 0 {
		gl.DeleteVertexArrays(1, &p.vao)
		p.vao = 0
	}
	p.atlas.release()
	p.shapes.program.release()
	p.glyphs.program.release()
}
