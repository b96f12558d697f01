package gpu

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"unsafe"
)

// platformEnv names the environment variable that forces an EGL platform.
const platformEnv = "TRACEGRID_EGL_PLATFORM"

// eglContext is an OpenGL 3.3 core context current on the GL thread, with
// no surface. Only the GL thread touches it.
type eglContext struct {
	display  _EGLDisplay
	context  _EGLContext
	platform string // "device", "surfaceless" or "default"
	device   string // what the display runs on, for Info
}

// displayCandidate is one way to get an EGLDisplay, tried in order.
type displayCandidate struct {
	platform string
	device   string
	get      func() _EGLDisplay
	getName  string // the call get makes, for errors
}

// eglErrorf builds an error from a failed EGL call and the thread's EGL
// error code.
func eglErrorf(call string) error {
	code := eglGetError()
	return fmt.Errorf("%s failed (0x%04x %s)", call, code, eglErrorName(code))
}

func eglErrorName(code int) string {
	names := map[int]string{
		0x3000: "EGL_SUCCESS", 0x3001: "EGL_NOT_INITIALIZED", 0x3002: "EGL_BAD_ACCESS",
		0x3003: "EGL_BAD_ALLOC", 0x3004: "EGL_BAD_ATTRIBUTE", 0x3005: "EGL_BAD_CONFIG",
		0x3006: "EGL_BAD_CONTEXT", 0x3007: "EGL_BAD_CURRENT_SURFACE", 0x3008: "EGL_BAD_DISPLAY",
		0x3009: "EGL_BAD_MATCH", 0x300A: "EGL_BAD_NATIVE_PIXMAP", 0x300B: "EGL_BAD_NATIVE_WINDOW",
		0x300C: "EGL_BAD_PARAMETER", 0x300D: "EGL_BAD_SURFACE", 0x300E: "EGL_CONTEXT_LOST",
		0x322B: "EGL_BAD_DEVICE_EXT",
	}
	if n, ok := names[code]; ok {
		return n
	}
	return "unknown EGL error"
}

func hasExtension(list, ext string) bool {
	for _, e := range strings.Fields(list) {
		if e == ext {
			return true
		}
	}
	return false
}

// displayCandidates lists the displays to try, best first: EGL devices
// without EGL_MESA_device_software (a real GPU, NVIDIA's own driver first),
// then software devices, then Mesa's surfaceless platform, then the default
// display. force ("", "device" or "surfaceless") keeps one platform only.
// why says, for the error message, why platforms were left out.
func displayCandidates(force string) (cands []displayCandidate, why []string) {
	client := eglQueryString(0, _EGL_EXTENSIONS) // EGL_NO_DISPLAY: client extensions
	if force == "" || force == "device" {
		switch {
		case !hasExtension(client, "EGL_EXT_platform_device"):
			why = append(why, "device: EGL_EXT_platform_device not supported")
		case !hasExtension(client, "EGL_EXT_device_enumeration") && !hasExtension(client, "EGL_EXT_device_base"):
			why = append(why, "device: EGL_EXT_device_enumeration not supported")
		default:
			devs, ok := eglQueryDevices(16)
			if !ok {
				why = append(why, "device: "+eglErrorf("eglQueryDevicesEXT").Error())
			}
			if ok && len(devs) == 0 {
				why = append(why, "device: eglQueryDevicesEXT found no devices")
			}
			var hw, nv, sw []displayCandidate
			for i, dev := range devs {
				exts, _ := eglQueryDeviceString(dev, _EGL_EXTENSIONS)
				c := displayCandidate{
					platform: "device",
					device:   describeDevice(dev, exts),
					get:      func() _EGLDisplay { return eglGetPlatformDisplay(_EGL_PLATFORM_DEVICE_EXT, unsafe.Pointer(dev)) },
					getName:  fmt.Sprintf("eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, device %d)", i),
				}
				switch {
				case hasExtension(exts, "EGL_MESA_device_software"):
					sw = append(sw, c)
				case hasExtension(exts, "EGL_NV_device_cuda"):
					nv = append(nv, c)
				default:
					hw = append(hw, c)
				}
			}
			cands = append(append(append(cands, nv...), hw...), sw...)
		}
	}
	if force == "" || force == "surfaceless" {
		if hasExtension(client, "EGL_MESA_platform_surfaceless") {
			cands = append(cands, displayCandidate{
				platform: "surfaceless",
				get:      func() _EGLDisplay { return eglGetPlatformDisplay(_EGL_PLATFORM_SURFACELESS_MESA, nil) },
				getName:  "eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA)",
			})
		} else {
			why = append(why, "surfaceless: EGL_MESA_platform_surfaceless not supported")
		}
	}
	if force == "" {
		cands = append(cands, displayCandidate{
			platform: "default",
			get:      eglGetDefaultDisplay,
			getName:  "eglGetDisplay(EGL_DEFAULT_DISPLAY)",
		})
	}
	return cands, why
}

// describeDevice names a device for Info: renderer name and DRM node where
// the driver tells them, then its extensions (EGL_MESA_device_software
// there means llvmpipe).
func describeDevice(dev _EGLDevice, exts string) string {
	var parts []string
	if hasExtension(exts, "EGL_EXT_device_query_name") {
		vendor, _ := eglQueryDeviceString(dev, _EGL_VENDOR)
		name, _ := eglQueryDeviceString(dev, _EGL_RENDERER_EXT)
		if n := strings.TrimSpace(vendor + " " + name); n != "" {
			parts = append(parts, n)
		}
	}
	if hasExtension(exts, "EGL_EXT_device_drm") {
		if file, ok := eglQueryDeviceString(dev, _EGL_DRM_DEVICE_FILE_EXT); ok {
			parts = append(parts, file)
		}
	}
	return strings.Join(append(parts, strings.TrimSpace(exts)), "; ")
}

// openEGL creates an OpenGL 3.3 core context on the best display and makes
// it current on the calling thread, which must be the GL thread.
func openEGL() (*eglContext, error) {
	force := os.Getenv(platformEnv)
	switch force {
	case "", "device", "surfaceless":
	default:
		return nil, fmt.Errorf("gpu: %s=%q: want \"device\" or \"surfaceless\" (or unset)", platformEnv, force)
	}
	cands, why := displayCandidates(force)
	for _, c := range cands {
		ctx, err := tryDisplay(c)
		if err == nil {
			return ctx, nil
		}
		slog.Debug("gpu: EGL display rejected", "platform", c.platform, "device", c.device, "err", err)
		why = append(why, c.platform+": "+err.Error())
	}
	// One line, every reason: which platform failed how is the whole story.
	// The hint names the packages whose absence is the usual cause.
	return nil, errors.New("gpu: no EGL display: " + strings.Join(why, "; ") +
		" (without a GPU driver, Mesa's libegl-mesa0 and libgl1-mesa-dri provide llvmpipe)")
}

// tryDisplay initializes one candidate display and makes a context current
// on it; on failure it undoes what it did.
func tryDisplay(c displayCandidate) (_ *eglContext, err error) {
	d := c.get()
	if d == 0 {
		return nil, eglErrorf(c.getName)
	}
	major, minor, err := displayAcquire(d)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			displayRelease(d)
		}
	}()
	exts := eglQueryString(d, _EGL_EXTENSIONS)
	if !hasExtension(exts, "EGL_KHR_surfaceless_context") {
		return nil, errors.New("EGL_KHR_surfaceless_context not supported")
	}
	if major == 1 && minor < 5 && !hasExtension(exts, "EGL_KHR_create_context") {
		return nil, fmt.Errorf("EGL %d.%d without EGL_KHR_create_context cannot make a core context", major, minor)
	}
	if !eglBindAPI(_EGL_OPENGL_API) {
		return nil, eglErrorf("eglBindAPI(EGL_OPENGL_API)")
	}
	cfg, err := chooseConfig(d, exts)
	if err != nil {
		return nil, err
	}
	ctx := eglCreateContext(d, cfg, []_EGLint{
		_EGL_CONTEXT_MAJOR_VERSION, 3,
		_EGL_CONTEXT_MINOR_VERSION, 3,
		_EGL_CONTEXT_OPENGL_PROFILE_MASK, _EGL_CONTEXT_OPENGL_CORE_PROFILE,
		_EGL_NONE,
	})
	if ctx == nil {
		return nil, eglErrorf("eglCreateContext(OpenGL 3.3 core)")
	}
	if !eglMakeCurrent(d, ctx) {
		err := eglErrorf("eglMakeCurrent(EGL_NO_SURFACE)")
		eglDestroyContext(d, ctx)
		return nil, err
	}
	device := c.device
	if device == "" {
		device = strings.TrimSpace(eglQueryString(d, _EGL_VENDOR) + " EGL " + eglQueryString(d, _EGL_VERSION))
	}
	return &eglContext{display: d, context: ctx, platform: c.platform, device: device}, nil
}

// chooseConfig picks an RGB OpenGL config. We never create a surface, so
// the surface type does not matter; pbuffer configs are asked for first
// because every headless driver has them, then any, then no config at all
// (EGL_KHR_no_config_context).
func chooseConfig(d _EGLDisplay, exts string) (_EGLConfig, error) {
	base := []_EGLint{
		_EGL_RENDERABLE_TYPE, _EGL_OPENGL_BIT,
		_EGL_RED_SIZE, 8, _EGL_GREEN_SIZE, 8, _EGL_BLUE_SIZE, 8,
	}
	for _, surf := range []_EGLint{_EGL_PBUFFER_BIT, _EGL_DONT_CARE} {
		attribs := append(append([]_EGLint(nil), base...), _EGL_SURFACE_TYPE, surf, _EGL_NONE)
		if cfg, ok := eglChooseConfig(d, attribs); ok {
			return cfg, nil
		}
	}
	if hasExtension(exts, "EGL_KHR_no_config_context") || hasExtension(exts, "EGL_MESA_configless_context") {
		return _EGL_NO_CONFIG_KHR, nil
	}
	return 0, eglErrorf("eglChooseConfig(OpenGL, RGB888)")
}

// close releases the context from the calling (GL) thread, destroys it and
// releases the display. It returns the first failure but always does every
// step.
func (e *eglContext) close() error {
	if e == nil || e.context == nil {
		return nil
	}
	var errs []error
	if !eglReleaseCurrent(e.display) {
		errs = append(errs, eglErrorf("eglMakeCurrent(EGL_NO_CONTEXT)"))
	}
	if !eglDestroyContext(e.display, e.context) {
		errs = append(errs, eglErrorf("eglDestroyContext"))
	}
	e.context = nil
	if err := displayRelease(e.display); err != nil {
		errs = append(errs, err)
	}
	if !eglReleaseThread() {
		errs = append(errs, eglErrorf("eglReleaseThread"))
	}
	if len(errs) > 0 {
		return fmt.Errorf("gpu: closing EGL: %w", errors.Join(errs...))
	}
	return nil
}

// displays counts the renderers using each EGLDisplay. eglGetPlatformDisplay
// returns the same handle for the same device, and eglInitialize and
// eglTerminate are not reference counted: without this, closing one
// renderer would terminate the display under another.
var displays = struct {
	sync.Mutex
	refs map[_EGLDisplay]int
}{refs: map[_EGLDisplay]int{}}

func displayAcquire(d _EGLDisplay) (major, minor int, err error) {
	displays.Lock()
	defer displays.Unlock()
	major, minor, ok := eglInitialize(d) // a no-op returning the version when already initialized
	if !ok {
		return 0, 0, eglErrorf("eglInitialize")
	}
	displays.refs[d]++
	return major, minor, nil
}

func displayRelease(d _EGLDisplay) error {
	displays.Lock()
	defer displays.Unlock()
	displays.refs[d]--
	if displays.refs[d] > 0 {
		return nil
	}
	delete(displays.refs, d)
	if !eglTerminate(d) {
		return eglErrorf("eglTerminate")
	}
	return nil
}
