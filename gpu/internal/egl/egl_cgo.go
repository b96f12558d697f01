package egl

// This file is the only cgo under package gpu: one-line wrappers over libEGL
// that return handles, ints and bools. Go errors are built one layer up, in
// egl.go, from eglGetError.

/*
#cgo pkg-config: egl
#include <stdlib.h>
#include <EGL/egl.h>
#include <EGL/eglext.h>

// Extension entry points are not exported by libEGL: fetch them by name.
static EGLBoolean tgQueryDevices(EGLint max, EGLDeviceEXT *devices, EGLint *n) {
	PFNEGLQUERYDEVICESEXTPROC f = (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
	if (f == NULL) {
		return EGL_FALSE;
	}
	return f(max, devices, n);
}

static const char *tgQueryDeviceString(EGLDeviceEXT device, EGLint name) {
	PFNEGLQUERYDEVICESTRINGEXTPROC f = (PFNEGLQUERYDEVICESTRINGEXTPROC)eglGetProcAddress("eglQueryDeviceStringEXT");
	if (f == NULL) {
		return NULL;
	}
	return f(device, name);
}

static EGLDisplay tgGetPlatformDisplay(EGLenum platform, void *native) {
	PFNEGLGETPLATFORMDISPLAYEXTPROC f = (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
	if (f == NULL) {
		return EGL_NO_DISPLAY;
	}
	return f(platform, native, NULL);
}

static EGLDisplay tgGetDefaultDisplay(void) {
	return eglGetDisplay(EGL_DEFAULT_DISPLAY);
}

static EGLBoolean tgMakeCurrentSurfaceless(EGLDisplay d, EGLContext c) {
	return eglMakeCurrent(d, EGL_NO_SURFACE, EGL_NO_SURFACE, c);
}

static EGLBoolean tgReleaseCurrent(EGLDisplay d) {
	return eglMakeCurrent(d, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
}
*/
import "C"

import "unsafe"

// cgo maps EGLDisplay and EGLConfig to uintptr (they may be small integers,
// not pointers); EGLContext and EGLDeviceEXT stay unsafe.Pointer.
type (
	_EGLDisplay = C.EGLDisplay
	_EGLConfig  = C.EGLConfig
	_EGLContext = C.EGLContext
	_EGLDevice  = C.EGLDeviceEXT
	_EGLint     = C.EGLint
)

const (
	_EGL_NONE                                   = C.EGL_NONE
	_EGL_EXTENSIONS                             = C.EGL_EXTENSIONS
	_EGL_VENDOR                                 = C.EGL_VENDOR
	_EGL_VERSION                                = C.EGL_VERSION
	_EGL_OPENGL_API                             = C.EGL_OPENGL_API
	_EGL_OPENGL_BIT                             = C.EGL_OPENGL_BIT
	_EGL_RENDERABLE_TYPE                        = C.EGL_RENDERABLE_TYPE
	_EGL_SURFACE_TYPE                           = C.EGL_SURFACE_TYPE
	_EGL_PBUFFER_BIT                            = C.EGL_PBUFFER_BIT
	_EGL_DONT_CARE                              = C.EGL_DONT_CARE
	_EGL_RED_SIZE                               = C.EGL_RED_SIZE
	_EGL_GREEN_SIZE                             = C.EGL_GREEN_SIZE
	_EGL_BLUE_SIZE                              = C.EGL_BLUE_SIZE
	_EGL_CONTEXT_MAJOR_VERSION                  = C.EGL_CONTEXT_MAJOR_VERSION
	_EGL_CONTEXT_MINOR_VERSION                  = C.EGL_CONTEXT_MINOR_VERSION
	_EGL_CONTEXT_OPENGL_PROFILE_MASK            = C.EGL_CONTEXT_OPENGL_PROFILE_MASK
	_EGL_CONTEXT_OPENGL_CORE_PROFILE            = C.EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT
	_EGL_PLATFORM_DEVICE_EXT                    = C.EGL_PLATFORM_DEVICE_EXT
	_EGL_PLATFORM_SURFACELESS_MESA              = C.EGL_PLATFORM_SURFACELESS_MESA
	_EGL_DRM_DEVICE_FILE_EXT                    = C.EGL_DRM_DEVICE_FILE_EXT
	_EGL_RENDERER_EXT                           = C.EGL_RENDERER_EXT
	_EGL_NO_CONFIG_KHR               _EGLConfig = 0
)

func eglGetError() int { return int(C.eglGetError()) }

// eglQueryString returns "" where EGL returns NULL (check eglGetError).
func eglQueryString(d _EGLDisplay, name _EGLint) string {
	s := C.eglQueryString(d, name)
	if s == nil {
		return ""
	}
	return C.GoString(s)
}

// eglQueryDevices lists up to max devices (EGL_EXT_device_enumeration).
func eglQueryDevices(max int) ([]_EGLDevice, bool) {
	devs := make([]_EGLDevice, max)
	var n C.EGLint
	if C.tgQueryDevices(C.EGLint(max), (*C.EGLDeviceEXT)(unsafe.Pointer(&devs[0])), &n) != C.EGL_TRUE {
		return nil, false
	}
	return devs[:n], true
}

// eglQueryDeviceString returns "", false where EGL returns NULL.
func eglQueryDeviceString(dev _EGLDevice, name _EGLint) (string, bool) {
	s := C.tgQueryDeviceString(dev, name)
	if s == nil {
		return "", false
	}
	return C.GoString(s), true
}

func eglGetPlatformDisplay(platform int, native unsafe.Pointer) _EGLDisplay {
	return C.tgGetPlatformDisplay(C.EGLenum(platform), native)
}

func eglGetDefaultDisplay() _EGLDisplay { return C.tgGetDefaultDisplay() }

func eglInitialize(d _EGLDisplay) (major, minor int, ok bool) {
	var maj, min C.EGLint
	ok = C.eglInitialize(d, &maj, &min) == C.EGL_TRUE
	return int(maj), int(min), ok
}

func eglTerminate(d _EGLDisplay) bool { return C.eglTerminate(d) == C.EGL_TRUE }

func eglBindAPI(api int) bool { return C.eglBindAPI(C.EGLenum(api)) == C.EGL_TRUE }

// eglChooseConfig returns the first matching config; ok is false when the
// call fails or nothing matches (eglGetError tells which).
func eglChooseConfig(d _EGLDisplay, attribs []_EGLint) (cfg _EGLConfig, ok bool) {
	var n C.EGLint
	if C.eglChooseConfig(d, &attribs[0], &cfg, 1, &n) != C.EGL_TRUE || n < 1 {
		return 0, false
	}
	return cfg, true
}

// eglCreateContext returns nil on failure.
func eglCreateContext(d _EGLDisplay, cfg _EGLConfig, attribs []_EGLint) _EGLContext {
	return C.eglCreateContext(d, cfg, nil, &attribs[0])
}

func eglDestroyContext(d _EGLDisplay, c _EGLContext) bool {
	return C.eglDestroyContext(d, c) == C.EGL_TRUE
}

// eglMakeCurrent binds c to the calling thread without a surface
// (EGL_KHR_surfaceless_context): all drawing goes to framebuffer objects.
func eglMakeCurrent(d _EGLDisplay, c _EGLContext) bool {
	return C.tgMakeCurrentSurfaceless(d, c) == C.EGL_TRUE
}

// eglReleaseCurrent unbinds whatever context is current on this thread.
func eglReleaseCurrent(d _EGLDisplay) bool { return C.tgReleaseCurrent(d) == C.EGL_TRUE }

func eglReleaseThread() bool { return C.eglReleaseThread() == C.EGL_TRUE }

// eglGetProcAddress returns nil for unknown names.
func eglGetProcAddress(name string) unsafe.Pointer {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return unsafe.Pointer(C.eglGetProcAddress(cname))
}
