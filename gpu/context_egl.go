package gpu

import (
	"fmt"
	"os"

	"github.com/tracegrid/tracegrid/gpu/internal/egl"
)

// platformEnv names the environment variable that forces an EGL platform.
const platformEnv = "TRACEGRID_EGL_PLATFORM"

func init() { newContext = newEGLContext }

// newEGLContext creates a context on the best EGL display, or on the
// platform TRACEGRID_EGL_PLATFORM names (see the package doc).
func newEGLContext() (glContext, error) {
	force := os.Getenv(platformEnv)
	switch force {
	case egl.PlatformAny, egl.PlatformDevice, egl.PlatformSurfaceless:
	default:
		return nil, fmt.Errorf("gpu: %s=%q: want %q or %q (or unset)", platformEnv, force, egl.PlatformDevice, egl.PlatformSurfaceless)
	}
	c, err := egl.New(force)
	if err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	return c, nil
}
