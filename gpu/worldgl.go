package gpu

import (
	"fmt"
	"log/slog"
	"unsafe"

	"github.com/go-gl/gl/v3.3-core/gl"

	"github.com/tracegrid/tracegrid/shaders"
)

// worldGL holds the GL objects of the 3D path. A Renderer creates it on its
// first frame with a world, so renderers that only draw 2D pay nothing; all
// of it lives on the GL thread.
type worldGL struct {
	objects struct {
		id                           uint32
		uViewProj, uLightDir, uLight int32
	}
	ground struct {
		id                                           uint32
		uViewProj, uHalf, uColor, uLineColor, uLines int32
	}
	cube, sphere meshGL
	groundVAO    uint32 // no attributes: the core profile still needs one bound
	instVBO      uint32 // per-object attributes, shared by both meshes
	instCap      int    // instVBO size in bytes

	// The world is drawn into a multisampled framebuffer with a depth
	// buffer, then resolved into the Renderer's single-sample one.
	fbo, color, depth uint32
	fbW, fbH          int
}

// meshGL is one uploaded mesh with its vertex array object, which also
// points at the instance buffer.
type meshGL struct {
	vao, vbo, ibo uint32
	count         int32 // indices
}

// worldSamples is the MSAA sample count asked for: 4 is what GPUs resolve
// cheaply and where most of the edge quality is.
const worldSamples = 4

// ensureWorld creates the 3D path's programs, meshes and buffers once.
func (r *Renderer) ensureWorld() error {
	if r.world != nil {
		return nil
	}
	w := &worldGL{}
	r.world = w // deleteWorld frees what exists if a step below fails
	if err := r.initWorld(w); err != nil {
		r.deleteWorld()
		return err
	}
	return nil
}

func (r *Renderer) initWorld(w *worldGL) error {
	r.samples = 0
	if r.info.MaxSamples >= 2 {
		r.samples = min(worldSamples, r.info.MaxSamples)
	} else {
		slog.Debug("gpu: no multisampling for 3D worlds: edges will alias", "GL_MAX_SAMPLES", r.info.MaxSamples)
	}

	id, err := buildProgram("object", shaders.ObjectVertex, shaders.ObjectFragment, "")
	if err != nil {
		return err
	}
	w.objects.id = id
	if w.objects.uViewProj, err = uniform(id, "object", "uViewProj"); err != nil {
		return err
	}
	if w.objects.uLightDir, err = uniform(id, "object", "uLightDir"); err != nil {
		return err
	}
	if w.objects.uLight, err = uniform(id, "object", "uLight"); err != nil {
		return err
	}

	if id, err = buildProgram("ground", shaders.GroundVertex, shaders.GroundFragment, ""); err != nil {
		return err
	}
	w.ground.id = id
	for _, u := range []struct {
		loc  *int32
		name string
	}{
		{&w.ground.uViewProj, "uViewProj"}, {&w.ground.uHalf, "uHalf"}, {&w.ground.uColor, "uColor"},
		{&w.ground.uLineColor, "uLineColor"}, {&w.ground.uLines, "uLines"},
	} {
		if *u.loc, err = uniform(id, "ground", u.name); err != nil {
			return err
		}
	}

	gl.GenVertexArrays(1, &w.groundVAO)
	gl.GenBuffers(1, &w.instVBO)
	w.cube = uploadMesh(cubeMesh(), w.instVBO)
	w.sphere = uploadMesh(sphereMesh(sphereSlices, sphereStacks), w.instVBO)
	gl.BindVertexArray(r.vao) // the 2D path's, which it expects bound
	return glCheck("creating the 3D objects")
}

func uniform(prog uint32, progName, name string) (int32, error) {
	loc := gl.GetUniformLocation(prog, gl.Str(name+"\x00"))
	if loc < 0 {
		return -1, fmt.Errorf("gpu: %s shader program lacks %s", progName, name)
	}
	return loc, nil
}

// uploadMesh creates m's buffers and a vertex array object that reads them
// and, per instance, instVBO from its start.
func uploadMesh(m mesh, instVBO uint32) meshGL {
	var g meshGL
	gl.GenVertexArrays(1, &g.vao)
	gl.BindVertexArray(g.vao)
	gl.GenBuffers(1, &g.vbo)
	gl.BindBuffer(gl.ARRAY_BUFFER, g.vbo)
	gl.BufferData(gl.ARRAY_BUFFER, len(m.verts)*4, unsafe.Pointer(&m.verts[0]), gl.STATIC_DRAW)
	const stride = floatsPerVertex * 4
	gl.EnableVertexAttribArray(0)
	gl.VertexAttribPointerWithOffset(0, 3, gl.FLOAT, false, stride, 0)
	gl.EnableVertexAttribArray(1)
	gl.VertexAttribPointerWithOffset(1, 3, gl.FLOAT, false, stride, 12)
	gl.GenBuffers(1, &g.ibo)
	gl.BindBuffer(gl.ELEMENT_ARRAY_BUFFER, g.ibo) // recorded in the VAO
	gl.BufferData(gl.ELEMENT_ARRAY_BUFFER, len(m.index)*2, unsafe.Pointer(&m.index[0]), gl.STATIC_DRAW)
	g.count = int32(len(m.index))

	gl.BindBuffer(gl.ARRAY_BUFFER, instVBO)
	for loc := uint32(2); loc <= 5; loc++ {
		gl.EnableVertexAttribArray(loc)
		gl.VertexAttribDivisor(loc, 1)
	}
	pointObjects(0)
	return g
}

// pointObjects points the bound VAO's per-object attributes at object
// first of the instance buffer, which must be bound to GL_ARRAY_BUFFER
// (OpenGL 3.3 has no base-instance draw).
func pointObjects(first int) {
	const stride = floatsPerObject * 4
	for loc := uint32(2); loc <= 5; loc++ {
		gl.VertexAttribPointerWithOffset(loc, 4, gl.FLOAT, false, stride, uintptr(first*stride)+uintptr(loc-2)*16)
	}
}

// ensureWorldFramebuffer (re)creates the multisampled colour and depth
// buffers when the output size changes.
func (r *Renderer) ensureWorldFramebuffer(w *worldGL, width, height int) error {
	if w.fbo != 0 && w.fbW == width && w.fbH == height {
		return nil
	}
	deleteWorldFramebuffer(w)
	// RGBA8 like the resolve target: a multisample resolve blit needs the
	// same format on both sides. Sample count 0 is a plain renderbuffer.
	samples := int32(r.samples)
	gl.GenRenderbuffers(1, &w.color)
	gl.BindRenderbuffer(gl.RENDERBUFFER, w.color)
	gl.RenderbufferStorageMultisample(gl.RENDERBUFFER, samples, gl.RGBA8, int32(width), int32(height))
	gl.GenRenderbuffers(1, &w.depth)
	gl.BindRenderbuffer(gl.RENDERBUFFER, w.depth)
	gl.RenderbufferStorageMultisample(gl.RENDERBUFFER, samples, gl.DEPTH_COMPONENT24, int32(width), int32(height))
	gl.GenFramebuffers(1, &w.fbo)
	gl.BindFramebuffer(gl.FRAMEBUFFER, w.fbo)
	gl.FramebufferRenderbuffer(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.RENDERBUFFER, w.color)
	gl.FramebufferRenderbuffer(gl.FRAMEBUFFER, gl.DEPTH_ATTACHMENT, gl.RENDERBUFFER, w.depth)
	st := gl.CheckFramebufferStatus(gl.FRAMEBUFFER)
	gl.BindFramebuffer(gl.FRAMEBUFFER, r.fbo)
	if st != gl.FRAMEBUFFER_COMPLETE {
		deleteWorldFramebuffer(w)
		return fmt.Errorf("gpu: %dx%d 3D framebuffer with %d samples incomplete (0x%04x)", width, height, samples, st)
	}
	w.fbW, w.fbH = width, height
	return glCheck("creating the 3D framebuffer")
}

// deleteWorldFramebuffer leaves the Renderer's own framebuffer unbound if
// w's was bound; callers rebind it.
func deleteWorldFramebuffer(w *worldGL) {
	if w.fbo != 0 {
		gl.DeleteFramebuffers(1, &w.fbo)
		w.fbo = 0
	}
	for _, rb := range []*uint32{&w.color, &w.depth} {
		if *rb != 0 {
			gl.DeleteRenderbuffers(1, rb)
			*rb = 0
		}
	}
	w.fbW, w.fbH = 0, 0
}

// deleteWorld frees every 3D object; safe when none exist.
func (r *Renderer) deleteWorld() {
	w := r.world
	if w == nil {
		return
	}
	deleteWorldFramebuffer(w)
	for _, m := range []*meshGL{&w.cube, &w.sphere} {
		if m.vao != 0 {
			gl.DeleteVertexArrays(1, &m.vao)
		}
		for _, b := range []*uint32{&m.vbo, &m.ibo} {
			if *b != 0 {
				gl.DeleteBuffers(1, b)
			}
		}
		*m = meshGL{}
	}
	if w.groundVAO != 0 {
		gl.DeleteVertexArrays(1, &w.groundVAO)
	}
	if w.instVBO != 0 {
		gl.DeleteBuffers(1, &w.instVBO)
	}
	for _, id := range []uint32{w.objects.id, w.ground.id} {
		if id != 0 {
			gl.DeleteProgram(id)
		}
	}
	r.world = nil
	if r.vao != 0 {
		gl.BindVertexArray(r.vao)
	}
}

// drawWorld runs on the GL thread after the Renderer's framebuffer was
// cleared: it draws the world into the multisampled framebuffer, over the
// canvas rectangle only, and resolves it into the Renderer's framebuffer.
// It leaves the state as the 2D path expects it: r.fbo and r.vao bound,
// depth test, culling and scissor off.
func (r *Renderer) drawWorld(bg [4]float32) error {
	if err := r.ensureWorld(); err != nil {
		return err
	}
	w, wf := r.world, &r.worldFrame
	if err := r.ensureWorldFramebuffer(w, r.fbW, r.fbH); err != nil {
		return err
	}
	sc := wf.scissor
	if sc[2] <= 0 || sc[3] <= 0 {
		return nil // the canvas covers no whole pixel
	}
	gl.BindFramebuffer(gl.FRAMEBUFFER, w.fbo)
	// The scissor keeps the world inside the canvas (the viewport is the
	// whole output, see clipMatrix) and limits the clear and the shading
	// to it.
	gl.Enable(gl.SCISSOR_TEST)
	gl.Scissor(sc[0], sc[1], sc[2], sc[3])
	gl.ClearColor(bg[0], bg[1], bg[2], bg[3])
	gl.Clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT)
	gl.Enable(gl.DEPTH_TEST)
	gl.DepthFunc(gl.LESS)

	if wf.opaque {
		// Nothing to blend with, and on llvmpipe blending reads every
		// sample back. Objects first: the ground behind them then fails
		// the depth test before its fragment shader runs. (With LESS the
		// first of two equal depths wins either way; opaque pixels come
		// out the same in any order.)
		gl.Disable(gl.BLEND)
		r.drawObjects()
		r.drawGround()
		gl.Enable(gl.BLEND)
	} else {
		// Translucent colours blend over what is drawn before them: the
		// ground first. Translucent objects are not sorted by depth.
		r.drawGround()
		r.drawObjects()
	}
	gl.Disable(gl.DEPTH_TEST)
	// glBlitFramebuffer obeys the scissor test; the rectangle is explicit.
	gl.Disable(gl.SCISSOR_TEST)

	// Resolve: each pixel becomes the mean of its samples.
	gl.BindFramebuffer(gl.READ_FRAMEBUFFER, w.fbo)
	gl.BindFramebuffer(gl.DRAW_FRAMEBUFFER, r.fbo)
	x0, y0, x1, y1 := sc[0], sc[1], sc[0]+sc[2], sc[1]+sc[3]
	gl.BlitFramebuffer(x0, y0, x1, y1, x0, y0, x1, y1, gl.COLOR_BUFFER_BIT, gl.NEAREST)
	gl.BindFramebuffer(gl.FRAMEBUFFER, r.fbo)
	gl.BindVertexArray(r.vao)
	return nil
}

// drawGround draws the ground square, if any, depth-tested.
func (r *Renderer) drawGround() {
	w, wf := r.world, &r.worldFrame
	if wf.groundHalf <= 0 {
		return
	}
	gl.UseProgram(w.ground.id)
	gl.UniformMatrix4fv(w.ground.uViewProj, 1, false, &wf.viewProj[0])
	gl.Uniform1f(w.ground.uHalf, wf.groundHalf)
	gl.Uniform4fv(w.ground.uColor, 1, &wf.groundCol[0])
	gl.Uniform4fv(w.ground.uLineColor, 1, &wf.lineCol[0])
	gl.Uniform2f(w.ground.uLines, wf.lines[0], wf.lines[1])
	gl.BindVertexArray(w.groundVAO)
	gl.DrawArrays(gl.TRIANGLE_STRIP, 0, 4)
}

// drawObjects uploads the instances and draws the cubes, then the spheres:
// one instanced draw per mesh.
func (r *Renderer) drawObjects() {
	w, wf := r.world, &r.worldFrame
	if wf.cubes+wf.spheres == 0 {
		return
	}
	size := len(r.objects) * 4
	gl.BindBuffer(gl.ARRAY_BUFFER, w.instVBO)
	if size > w.instCap {
		w.instCap = max(size, 2*w.instCap)
	}
	// Orphaned like the 2D instance buffer, so the upload need not wait
	// for the previous frame's draws.
	gl.BufferData(gl.ARRAY_BUFFER, w.instCap, nil, gl.STREAM_DRAW)
	gl.BufferSubData(gl.ARRAY_BUFFER, 0, size, unsafe.Pointer(&r.objects[0]))

	gl.UseProgram(w.objects.id)
	gl.UniformMatrix4fv(w.objects.uViewProj, 1, false, &wf.viewProj[0])
	gl.Uniform3f(w.objects.uLightDir, wf.lightDir[0], wf.lightDir[1], wf.lightDir[2])
	gl.Uniform2f(w.objects.uLight, wf.light[0], wf.light[1])
	// Closed meshes: back faces are always hidden, so skip them. The y
	// flip in uViewProj turns counter-clockwise faces clockwise.
	gl.Enable(gl.CULL_FACE)
	gl.CullFace(gl.BACK)
	gl.FrontFace(gl.CW)
	if wf.cubes > 0 {
		gl.BindVertexArray(w.cube.vao)
		gl.DrawElementsInstanced(gl.TRIANGLES, w.cube.count, gl.UNSIGNED_SHORT, nil, int32(wf.cubes))
	}
	if wf.spheres > 0 {
		gl.BindVertexArray(w.sphere.vao)
		pointObjects(wf.cubes) // the spheres follow the cubes
		gl.DrawElementsInstanced(gl.TRIANGLES, w.sphere.count, gl.UNSIGNED_SHORT, nil, int32(wf.spheres))
	}
	gl.Disable(gl.CULL_FACE)
	gl.FrontFace(gl.CCW)
}
