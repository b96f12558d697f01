package gpu

import "unsafe"

// glContext is the platform seam: an OpenGL 3.3 core context with no
// surface, used on the GL thread only (create, make current, draw,
// release). The renderer knows nothing else of the platform. The one
// backend is EGL (context_egl.go, over package gpu/internal/egl).
type glContext interface {
	// MakeCurrent binds the context to the calling thread.
	MakeCurrent() error
	// GetProcAddress returns a GL function's address, nil if unknown.
	GetProcAddress(name string) unsafe.Pointer
	// Info says which platform and device the context runs on, for Info.
	Info() (platform, device string)
	// Release unbinds and destroys the context; idempotent.
	Release() error
}

// newContext creates a context on the calling thread, not yet current. The
// backend's file sets it.
var newContext func() (glContext, error)
