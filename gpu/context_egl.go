package gpu

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/tracegrid/tracegrid/gpu/internal/egl"
)

// platformEnv names the environment variable that forces an EGL platform;
// deviceEnv the one that names the EGL device to render on.
const (
	platformEnv = "TRACEGRID_EGL_PLATFORM"
	deviceEnv   = "TRACEGRID_EGL_DEVICE"
)

func init() { newContext = newEGLContext }

// newEGLContext creates a context on the EGL device TRACEGRID_EGL_DEVICE
// names, else on the best EGL display or the platform
// TRACEGRID_EGL_PLATFORM names (see the package doc).
func newEGLContext() (glContext, error) {
	force := os.Getenv(platformEnv)
	switch force {
	case egl.PlatformAny, egl.PlatformDevice, egl.PlatformSurfaceless:
	default:
		return nil, fmt.Errorf("gpu: %s=%q: want %q or %q (or unset)", platformEnv, force, egl.PlatformDevice, egl.PlatformSurfaceless)
	}
	// Empty is unset, as a job file's ${VAR:-} gives it.
	if s := os.Getenv(deviceEnv); s != "" {
		index, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || index < 0 {
			return nil, fmt.Errorf("gpu: %s=%q: want an EGL device index, 0 or more (`tracegrid info` lists the devices)", deviceEnv, s)
		}
		if force == egl.PlatformSurfaceless {
			return nil, fmt.Errorf("gpu: %s=%s names a device, but %s=%s forbids devices", deviceEnv, s, platformEnv, force)
		}
		c, err := egl.NewDevice(index)
		if err != nil {
			return nil, fmt.Errorf("gpu: %s=%d: %w", deviceEnv, index, err)
		}
		return c, nil
	}
	c, err := egl.New(force)
	if err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	return c, nil
}

// EGLDevices describes the EGL devices in the order TRACEGRID_EGL_DEVICE
// counts them (the driver's enumeration order), for `tracegrid info`.
func EGLDevices() ([]string, error) {
	d, err := egl.Devices()
	if err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	return d, nil
}
