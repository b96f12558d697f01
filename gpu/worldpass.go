package gpu

import (
	"log/slog"

	"github.com/go-gl/gl/v3.3-core/gl"

	"github.com/tracegrid/tracegrid/shaders"
)

// worldPass draws a frame's 3D world (the CPU side is world.go and
// painter.go) into the renderer's target, by one of two paths. The painter
// path draws straight into it, with no depth buffer: the ground, then the
// objects far to near as impostors with analytic coverage. The depth path
// draws the objects' meshes and the ground into a multisampled target with
// a depth buffer and resolves it. A Renderer creates the pass on its first
// frame with a world, so renderers that only draw 2D pay nothing, and the
// multisampled buffers on the first frame that takes the depth path.
type worldPass struct {
	// Depth path.
	objects      objectProgram
	ground       groundProgram
	cube, sphere *meshGL
	groundVAO    uint32        // no attributes: the core profile still needs one bound
	instances    *streamBuffer // per-object attributes, shared by both meshes
	msaa         *target

	// Painter path.
	cubes, spheres impostorProgram
	groundView     groundViewProgram
	impostorVAO    uint32
	impostors      *streamBuffer
}

type objectProgram struct {
	*program
	uViewProj, uLightDir, uLight int32
}

type groundProgram struct {
	*program
	uViewProj, uHalf, uColor, uLineColor, uLines int32
}

type impostorProgram struct {
	*program
	uViewport, uLight int32
}

type groundViewProgram struct {
	*program
	uEye, uRay0, uRayX, uRayY, uEdge, uColor, uLineColor, uLines int32
}

// worldSamples is the MSAA sample count the depth path asks for: 4 is
// what GPUs resolve cheaply and where most of the edge quality is.
const worldSamples = 4

// newWorldPass creates the passes' programs, meshes and buffers; the
// depth path's multisampled target gets min(4, maxSamples) samples, none
// below 2. On error it frees what it made.
func newWorldPass(maxSamples int) (_ *worldPass, err error) {
	p := &worldPass{}
	defer func() {
		if err != nil {
			p.release()
		}
	}()
	samples := 0
	if maxSamples >= 2 {
		samples = min(worldSamples, maxSamples)
	} else {
		slog.Debug("gpu: no multisampling for 3D worlds: edges will alias on the depth path", "GL_MAX_SAMPLES", maxSamples)
	}
	p.msaa = newTarget(samples, true)

	if p.objects.program, err = newProgramStages("object", shaders.ObjectVertex, "", shaders.ObjectFragment, shaders.Noise); err != nil {
		return nil, err
	}
	if err := uniforms(p.objects.program, []namedUniform{
		{"uViewProj", &p.objects.uViewProj}, {"uLightDir", &p.objects.uLightDir}, {"uLight", &p.objects.uLight},
	}); err != nil {
		return nil, err
	}
	if p.ground.program, err = newProgramStages("ground", shaders.GroundVertex, "", shaders.GroundFragment, shaders.Grid); err != nil {
		return nil, err
	}
	if err := uniforms(p.ground.program, []namedUniform{
		{"uViewProj", &p.ground.uViewProj}, {"uHalf", &p.ground.uHalf}, {"uColor", &p.ground.uColor},
		{"uLineColor", &p.ground.uLineColor}, {"uLines", &p.ground.uLines},
	}); err != nil {
		return nil, err
	}
	for _, c := range []struct {
		prog    *impostorProgram
		name    string
		frag    string
		defines string
	}{
		{&p.cubes, "cube", shaders.CubeFragment, "#define CUBE\n"},
		{&p.spheres, "sphere", shaders.SphereFragment, ""},
	} {
		if c.prog.program, err = newProgramStages(c.name, shaders.ImpostorVertex, c.defines, c.frag, shaders.Noise); err != nil {
			return nil, err
		}
		if err := uniforms(c.prog.program, []namedUniform{{"uViewport", &c.prog.uViewport}, {"uLight", &c.prog.uLight}}); err != nil {
			return nil, err
		}
	}
	if p.groundView.program, err = newProgramStages("ground view", shaders.GroundViewVertex, "", shaders.GroundViewFragment, shaders.Grid); err != nil {
		return nil, err
	}
	g := &p.groundView
	if err := uniforms(g.program, []namedUniform{
		{"uEye", &g.uEye}, {"uRay0", &g.uRay0}, {"uRayX", &g.uRayX}, {"uRayY", &g.uRayY}, {"uEdge[0]", &g.uEdge},
		{"uColor", &g.uColor}, {"uLineColor", &g.uLineColor}, {"uLines", &g.uLines},
	}); err != nil {
		return nil, err
	}

	gl.GenVertexArrays(1, &p.groundVAO)
	p.instances = newStreamBuffer()
	p.cube = newMeshGL(cubeMesh(), p.instances)
	p.sphere = newMeshGL(sphereMesh(sphereSlices, sphereStacks), p.instances)
	p.impostors = newStreamBuffer()
	p.impostorVAO = newInstanceVAO(p.impostors, floatsPerImpostor/4)
	if err := glCheck("creating the 3D objects"); err != nil {
		return nil, err
	}
	return p, nil
}

// newInstanceVAO makes a vertex array object whose attributes 0..n-1 are
// the consecutive vec4s of buf's instances (divisor 1), and no per-vertex
// attribute (the vertex shader uses gl_VertexID). It leaves it bound.
func newInstanceVAO(buf *streamBuffer, n int) uint32 {
	var vao uint32
	gl.GenVertexArrays(1, &vao)
	gl.BindVertexArray(vao)
	buf.bind()
	for loc := range uint32(n) {
		gl.EnableVertexAttribArray(loc)
		gl.VertexAttribDivisor(loc, 1)
	}
	pointInstanceVAO(n, 0)
	return vao
}

// pointInstanceVAO points the bound vertex array object's n attributes at
// instance first of the buffer bound to GL_ARRAY_BUFFER (OpenGL 3.3 has no
// base-instance draw).
func pointInstanceVAO(n, first int) {
	stride := int32(n * 16)
	for loc := range uint32(n) {
		gl.VertexAttribPointerWithOffset(loc, 4, gl.FLOAT, false, stride, uintptr(first*int(stride))+uintptr(loc)*16)
	}
}

// namedUniform is a uniform a program must have and where its location
// goes.
type namedUniform struct {
	name string
	loc  *int32
}

// uniforms looks up each uniform of prog in turn.
func uniforms(prog *program, us []namedUniform) error {
	for _, u := range us {
		var err error
		if *u.loc, err = prog.uniform(u.name); err != nil {
			return err
		}
	}
	return nil
}

// draw runs on the GL thread after dst was cleared to bg (or, with a
// painted ground, after the painted output went up into it): it draws
// f's world over the canvas rectangle only, into dst. It leaves dst bound, blending on, and
// depth test, culling and scissor off.
func (p *worldPass) draw(f *frame, bg [4]float32, dst *target) error {
	wf := &f.world
	sc := wf.scissor
	if sc[2] <= 0 || sc[3] <= 0 {
		return nil // the canvas covers no whole pixel
	}
	if wf.painter {
		p.drawPainter(f, dst)
		return nil
	}
	return p.drawDepth(f, bg, dst)
}

// drawPainter draws the ground and then the impostors, far to near,
// straight into dst (bound, single-sample).
func (p *worldPass) drawPainter(f *frame, dst *target) {
	wf := &f.world
	sc := wf.scissor
	gl.Enable(gl.SCISSOR_TEST)
	gl.Scissor(sc[0], sc[1], sc[2], sc[3])
	vw, vh := float32(dst.w), float32(dst.h)
	switch {
	case wf.rasterGround:
		// Painted on the CPU and uploaded by drawFrame.
	case wf.groundHalf > 0 && wf.eye[1] != 0: // a ground seen edge-on shows nothing
		g := &p.groundView
		g.use()
		gl.Uniform3fv(g.uEye, 1, &wf.eye[0])
		gl.Uniform3fv(g.uRay0, 1, &wf.ray[0][0])
		gl.Uniform3fv(g.uRayX, 1, &wf.ray[1][0])
		gl.Uniform3fv(g.uRayY, 1, &wf.ray[2][0])
		gl.Uniform3fv(g.uEdge, 6, &wf.groundEdges[0][0])
		gl.Uniform4fv(g.uColor, 1, &wf.groundCol[0])
		gl.Uniform4fv(g.uLineColor, 1, &wf.lineCol[0])
		gl.Uniform2f(g.uLines, wf.lines[0], wf.lines[1])
		gl.BindVertexArray(p.groundVAO)
		gl.DrawArrays(gl.TRIANGLE_STRIP, 0, 4)
	}
	if len(f.objRuns) > 0 {
		gl.BindVertexArray(p.impostorVAO)
		p.impostors.upload(f.impostors)
		for _, prog := range [2]*impostorProgram{&p.cubes, &p.spheres} {
			prog.use()
			gl.Uniform2f(prog.uViewport, vw, vh)
			gl.Uniform2f(prog.uLight, wf.light[0], wf.light[1])
		}
		for i, run := range f.objRuns {
			if run.sphere {
				p.spheres.use()
			} else {
				p.cubes.use()
			}
			if i > 0 {
				pointInstanceVAO(floatsPerImpostor/4, run.first)
			}
			gl.DrawArraysInstanced(gl.TRIANGLE_FAN, 0, 8, int32(run.count))
		}
		if len(f.objRuns) > 1 {
			pointInstanceVAO(floatsPerImpostor/4, 0)
		}
	}
	gl.Disable(gl.SCISSOR_TEST)
}

// drawDepth draws the world into the multisampled target, over the canvas
// rectangle only, and resolves it into dst.
func (p *worldPass) drawDepth(f *frame, bg [4]float32, dst *target) error {
	wf := &f.world
	changed, err := p.msaa.resize(dst.w, dst.h)
	if changed {
		dst.bind()
		if err == nil {
			err = glCheck("creating the 3D framebuffer")
		}
	}
	if err != nil {
		return err
	}
	sc := wf.scissor
	p.msaa.bind()
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
		p.drawObjects(wf, f.objects)
		p.drawGround(wf)
		gl.Enable(gl.BLEND)
	} else {
		// Translucent colours blend over what is drawn before them: the
		// ground first. Translucent objects are not sorted by depth.
		p.drawGround(wf)
		p.drawObjects(wf, f.objects)
	}
	gl.Disable(gl.DEPTH_TEST)
	// glBlitFramebuffer obeys the scissor test; the rectangle is explicit.
	gl.Disable(gl.SCISSOR_TEST)

	// Resolve: each pixel becomes the mean of its samples.
	gl.BindFramebuffer(gl.READ_FRAMEBUFFER, p.msaa.fbo)
	gl.BindFramebuffer(gl.DRAW_FRAMEBUFFER, dst.fbo)
	x0, y0, x1, y1 := sc[0], sc[1], sc[0]+sc[2], sc[1]+sc[3]
	gl.BlitFramebuffer(x0, y0, x1, y1, x0, y0, x1, y1, gl.COLOR_BUFFER_BIT, gl.NEAREST)
	dst.bind()
	return nil
}

// drawGround draws the ground square, if any, depth-tested.
func (p *worldPass) drawGround(wf *worldFrame) {
	if wf.groundHalf <= 0 {
		return
	}
	g := &p.ground
	g.use()
	gl.UniformMatrix4fv(g.uViewProj, 1, false, &wf.viewProj[0])
	gl.Uniform1f(g.uHalf, wf.groundHalf)
	gl.Uniform4fv(g.uColor, 1, &wf.groundCol[0])
	gl.Uniform4fv(g.uLineColor, 1, &wf.lineCol[0])
	gl.Uniform2f(g.uLines, wf.lines[0], wf.lines[1])
	gl.BindVertexArray(p.groundVAO)
	gl.DrawArrays(gl.TRIANGLE_STRIP, 0, 4)
}

// drawObjects uploads the instances and draws the cubes, then the spheres:
// one instanced draw per mesh.
func (p *worldPass) drawObjects(wf *worldFrame, objects []float32) {
	if wf.cubes+wf.spheres == 0 {
		return
	}
	p.instances.upload(objects)
	o := &p.objects
	o.use()
	gl.UniformMatrix4fv(o.uViewProj, 1, false, &wf.viewProj[0])
	gl.Uniform3f(o.uLightDir, wf.lightDir[0], wf.lightDir[1], wf.lightDir[2])
	gl.Uniform2f(o.uLight, wf.light[0], wf.light[1])
	// Closed meshes: back faces are always hidden, so skip them. The y
	// flip in uViewProj turns counter-clockwise faces clockwise.
	gl.Enable(gl.CULL_FACE)
	gl.CullFace(gl.BACK)
	gl.FrontFace(gl.CW)
	if wf.cubes > 0 {
		p.cube.draw(0, wf.cubes)
	}
	if wf.spheres > 0 {
		p.sphere.draw(wf.cubes, wf.spheres) // the spheres follow the cubes
	}
	gl.Disable(gl.CULL_FACE)
	gl.FrontFace(gl.CCW)
}

// release frees every GL object the pass made; nil-safe and idempotent.
func (p *worldPass) release() {
	if p == nil {
		return
	}
	p.msaa.release()
	p.cube.release()
	p.sphere.release()
	if p.groundVAO != 0 {
		gl.DeleteVertexArrays(1, &p.groundVAO)
		p.groundVAO = 0
	}
	p.instances.release()
	p.objects.program.release()
	p.ground.program.release()
	if p.impostorVAO != 0 {
		gl.DeleteVertexArrays(1, &p.impostorVAO)
		p.impostorVAO = 0
	}
	p.impostors.release()
	p.cubes.program.release()
	p.spheres.program.release()
	p.groundView.program.release()
}
