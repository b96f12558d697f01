package gpu

import (
	"unsafe"

	"github.com/go-gl/gl/v3.3-core/gl"
)

// meshGL is one uploaded mesh (world.go builds them) with its vertex array
// object, which also reads the world pass's per-object instance buffer.
type meshGL struct {
	vao, vbo, ibo uint32
	count         int32 // indices
}

// newMeshGL uploads m and makes a vertex array object that reads it and,
// per instance, instances from its start. It leaves that object bound.
func newMeshGL(m mesh, instances *streamBuffer) *meshGL {
	g := &meshGL{}
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

	instances.bind()
	for loc := uint32(2); loc <= 5; loc++ {
		gl.EnableVertexAttribArray(loc)
		gl.VertexAttribDivisor(loc, 1)
	}
	pointObjects(0)
	return g
}

// pointObjects points the bound vertex array object's per-object
// attributes at object first of the instance buffer, which must be bound
// to GL_ARRAY_BUFFER (OpenGL 3.3 has no base-instance draw).
func pointObjects(first int) {
	const stride = floatsPerObject * 4
	for loc := uint32(2); loc <= 5; loc++ {
		gl.VertexAttribPointerWithOffset(loc, 4, gl.FLOAT, false, stride, uintptr(first*stride)+uintptr(loc-2)*16)
	}
}

// draw draws n instances, starting at instance first of the instance
// buffer, which must be bound to GL_ARRAY_BUFFER.
func (g *meshGL) draw(first, n int) {
	gl.BindVertexArray(g.vao)
	pointObjects(first) // the last frame may have left another offset
	gl.DrawElementsInstanced(gl.TRIANGLES, g.count, gl.UNSIGNED_SHORT, nil, int32(n))
}

// release deletes the mesh's objects; nil-safe and idempotent.
func (g *meshGL) release() {
	if g == nil {
		return
	}
	if g.vao != 0 {
		gl.DeleteVertexArrays(1, &g.vao)
		g.vao = 0
	}
	for _, b := range []*uint32{&g.vbo, &g.ibo} {
		if *b != 0 {
			gl.DeleteBuffers(1, b)
			*b = 0
		}
	}
}
