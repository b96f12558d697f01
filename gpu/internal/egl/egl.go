// Package egl creates headless OpenGL 3.3 core contexts through EGL, with no
// window or surface (EGL_KHR_surfaceless_context). It is package gpu's only
// platform: gpu sees a Context through a four-method interface
// (MakeCurrent, GetProcAddress, Info, Release) and knows nothing of EGL.
//
// New tries the displays in order (see Platform* and New) and returns the
// first that gives a context. A Context is used from one OS thread, the
// thread that created it: EGL binds the rendering API and the current
// context per thread.
//
// The cgo is in egl_cgo.go (one-line wrappers returning handles, ints and
// bools); this file turns failures into Go errors with the EGL error code in
// hex. Errors are not prefixed with a package name: package gpu wraps them.
package egl

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"unsafe"
)

// The platforms New may be restricted to.
const (
	PlatformAny         = ""            // devices, then surfaceless, then the default display
	PlatformDevice      = "device"      // EGL_PLATFORM_DEVICE_EXT only
	PlatformSurfaceless = "surfaceless" // EGL_PLATFORM_SURFACELESS_MESA only
	platformDefault     = "default"     // eglGetDisplay(EGL_DEFAULT_DISPLAY)
)

// Context is an OpenGL 3.3 core context with no surface. New creates it;
// MakeCurrent binds it to the calling thread; Release destroys it. All three
// must run on the same OS thread.
type Context struct {
	display  _EGLDisplay
	context  _EGLContext
	platform string // "device", "surfaceless" or "default"
	device   string // what the display runs on
}

// New creates an OpenGL 3.3 core context on the best display that gives
// one, best first: EGL devices without EGL_MESA_device_software (a real GPU,
// NVIDIA's own driver first), then software devices, then Mesa's
// surfaceless platform, then the default display. platform (PlatformAny,
// PlatformDevice or PlatformSurfaceless) keeps one platform only. Each
// candidate's context is made current once to prove it works, then
// released: call MakeCurrent before drawing. The error lists why every
// candidate failed.
func New(platform string) (*Context, error) {
	switch platform {
	case PlatformAny, PlatformDevice, PlatformSurfaceless:
	default:
		return nil, fmt.Errorf("unknown EGL platform %q: want %q or %q (or any)", platform, PlatformDevice, PlatformSurfaceless)
	}
	cands, why := displayCandidates(platform)
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
	return nil, errors.New("no EGL display: " + strings.Join(why, "; ") +
		" (without a GPU driver, Mesa's libegl-mesa0 and libgl1-mesa-dri provide llvmpipe)")
}

// Devices describes the EGL devices in the driver's enumeration order
// (eglQueryDevicesEXT), the order NewDevice's index counts in: for each its
// renderer name and DRM node where the driver tells them, then its
// extensions (EGL_NV_device_cuda: an NVIDIA GPU; EGL_MESA_device_software:
// llvmpipe).
func Devices() ([]string, error) {
	devs, err := queryDevices()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(devs))
	for i, dev := range devs {
		exts, _ := eglQueryDeviceString(dev, _EGL_EXTENSIONS)
		out[i] = describeDevice(dev, exts)
	}
	return out, nil
}

// NewDevice creates the context on EGL device index (counted as Devices
// lists them) and nowhere else: no other device and no other platform is
// tried, so a job that names its GPU never lands on another one. The error
// names the devices there are when index is out of range.
func NewDevice(index int) (*Context, error) {
	devs, err := queryDevices()
	if err != nil {
		return nil, err
	}
	if index < 0 || index >= len(devs) {
		list := make([]string, len(devs))
		for i, dev := range devs {
			exts, _ := eglQueryDeviceString(dev, _EGL_EXTENSIONS)
			list[i] = fmt.Sprintf("%d: %s", i, describeDevice(dev, exts))
		}
		return nil, fmt.Errorf("EGL device %d does not exist; the driver lists %d: %s", index, len(devs), strings.Join(list, "; "))
	}
	dev := devs[index]
	exts, _ := eglQueryDeviceString(dev, _EGL_EXTENSIONS)
	c := displayCandidate{
		platform: PlatformDevice,
		device:   describeDevice(dev, exts),
		get:      func() _EGLDisplay { return eglGetPlatformDisplay(_EGL_PLATFORM_DEVICE_EXT, unsafe.Pointer(dev)) },
		getName:  fmt.Sprintf("eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, device %d)", index),
	}
	ctx, err := tryDisplay(c)
	if err != nil {
		return nil, fmt.Errorf("EGL device %d (%s): %w", index, c.device, err)
	}
	return ctx, nil
}

// queryDevices lists the EGL devices, or says why it cannot.
func queryDevices() ([]_EGLDevice, error) {
	client := eglQueryString(0, _EGL_EXTENSIONS) // EGL_NO_DISPLAY: client extensions
	switch {
	case !hasExtension(client, "EGL_EXT_platform_device"):
		return nil, errors.New("EGL devices: EGL_EXT_platform_device not supported")
	case !hasExtension(client, "EGL_EXT_device_enumeration") && !hasExtension(client, "EGL_EXT_device_base"):
		return nil, errors.New("EGL devices: EGL_EXT_device_enumeration not supported")
	}
	devs, ok := eglQueryDevices(16)
	if !ok {
		return nil, eglErrorf("eglQueryDevicesEXT")
	}
	return devs, nil
}

// MakeCurrent binds c to the calling thread, with no surface: all drawing
// goes to framebuffer objects.
func (c *Context) MakeCurrent() error {
	if c == nil || c.context == nil {
		return errors.New("eglMakeCurrent: no context")
	}
	if !eglBindAPI(_EGL_OPENGL_API) { // per thread
		return eglErrorf("eglBindAPI(EGL_OPENGL_API)")
	}
	if !eglMakeCurrent(c.display, c.context) {
		return eglErrorf("eglMakeCurrent(EGL_NO_SURFACE)")
	}
	return nil
}

// GetProcAddress returns an OpenGL (or EGL) function's address, nil for
// unknown names; for gl.InitWithProcAddrFunc.
func (c *Context) GetProcAddress(name string) unsafe.Pointer { return eglGetProcAddress(name) }

// Info says which platform the display is on ("device", "surfaceless" or
// "default") and what it runs on: for a device, its renderer name, DRM node
// and extensions (EGL_MESA_device_software there means llvmpipe); else the
// EGL vendor and version.
func (c *Context) Info() (platform, device string) {
	if c == nil {
		return "", ""
	}
	return c.platform, c.device
}

// Release unbinds c from the calling thread, destroys it, releases the
// display (terminated with its last context) and the thread's EGL state.
// It does every step and returns all failures; it is idempotent and safe on
// nil.
func (c *Context) Release() error {
	if c == nil || c.context == nil {
		return nil
	}
	var errs []error
	if !eglReleaseCurrent(c.display) {
		errs = append(errs, eglErrorf("eglMakeCurrent(EGL_NO_CONTEXT)"))
	}
	if !eglDestroyContext(c.display, c.context) {
		errs = append(errs, eglErrorf("eglDestroyContext"))
	}
	c.context = nil
	if err := displayRelease(c.display); err != nil {
		errs = append(errs, err)
	}
	if !eglReleaseThread() {
		errs = append(errs, eglErrorf("eglReleaseThread"))
	}
	if len(errs) > 0 {
		return fmt.Errorf("closing EGL: %w", errors.Join(errs...))
	}
	return nil
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
	return fmt.Errorf("%s failed (0x%04x %s)", call, code, errorName(code))
}

func errorName(code int) string {
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

// displayCandidates lists the displays to try, best first (see New).
// force ("", "device" or "surfaceless") keeps one platform only. why says,
// for the error message, why platforms were left out.
func displayCandidates(force string) (cands []displayCandidate, why []string) {
	client := eglQueryString(0, _EGL_EXTENSIONS) // EGL_NO_DISPLAY: client extensions
	if force == PlatformAny || force == PlatformDevice {
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
					platform: PlatformDevice,
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
	if force == PlatformAny || force == PlatformSurfaceless {
		if hasExtension(client, "EGL_MESA_platform_surfaceless") {
			cands = append(cands, displayCandidate{
				platform: PlatformSurfaceless,
				get:      func() _EGLDisplay { return eglGetPlatformDisplay(_EGL_PLATFORM_SURFACELESS_MESA, nil) },
				getName:  "eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA)",
			})
		} else {
			why = append(why, "surfaceless: EGL_MESA_platform_surfaceless not supported")
		}
	}
	if force == PlatformAny {
		cands = append(cands, displayCandidate{
			platform: platformDefault,
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

// tryDisplay initializes one candidate display, creates a context on it
// and proves it can be made current; on failure it undoes what it did.
func tryDisplay(c displayCandidate) (_ *Context, err error) {
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
			err = errors.Join(err, displayRelease(d))
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
	// A context some drivers create but cannot bind is no context: prove
	// it here, where the next candidate can still be tried.
	if !eglMakeCurrent(d, ctx) {
		err := eglErrorf("eglMakeCurrent(EGL_NO_SURFACE)")
		eglDestroyContext(d, ctx)
		return nil, err
	}
	if !eglReleaseCurrent(d) {
		err := eglErrorf("eglMakeCurrent(EGL_NO_CONTEXT)")
		eglDestroyContext(d, ctx)
		return nil, err
	}
	device := c.device
	if device == "" {
		device = strings.TrimSpace(eglQueryString(d, _EGL_VENDOR) + " EGL " + eglQueryString(d, _EGL_VERSION))
	}
	return &Context{display: d, context: ctx, platform: c.platform, device: device}, nil
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

// displays counts the contexts using each EGLDisplay. eglGetPlatformDisplay
// returns the same handle for the same device, and eglInitialize and
// eglTerminate are not reference counted: without this, releasing one
// context would terminate the display under another.
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
