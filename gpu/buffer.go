package gpu

import (
	"unsafe"

	"github.com/go-gl/gl/v3.3-core/gl"
)

// streamBuffer is a vertex buffer refilled every frame: per-instance
// attributes, for the items or the world's objects.
type streamBuffer struct {
	id  uint32
	cap int // allocated size in bytes
}

func newStreamBuffer() *streamBuffer {
	b := &streamBuffer{}
	gl.GenBuffers(1, &b.id)
	return b
}

func (b *streamBuffer) bind() { gl.BindBuffer(gl.ARRAY_BUFFER, b.id) }

// upload binds the buffer to GL_ARRAY_BUFFER (it stays bound) and copies
// data to its start. data must not be empty.
func (b *streamBuffer) upload(data []float32) {
	size := len(data) * 4
	b.bind()
	if size > b.cap {
		b.cap = max(size, 2*b.cap)
	}
	// Orphan the old storage so a GPU still reading the previous frame's
	// instances need not stall this upload.
	gl.BufferData(gl.ARRAY_BUFFER, b.cap, nil, gl.STREAM_DRAW)
	gl.BufferSubData(gl.ARRAY_BUFFER, 0, size, unsafe.Pointer(&data[0]))
}

// release deletes the buffer; nil-safe and idempotent.
func (b *streamBuffer) release() {
	if b == nil || b.id == 0 {
		return
	}
	gl.DeleteBuffers(1, &b.id)
	b.id, b.cap = 0, 0
}
