package egl

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

func TestHasExtension(t *testing.T) {
	list := "EGL_KHR_surfaceless_context EGL_EXT_device_base  EGL_KHR_create_context"
	for ext, want := range map[string]bool{
		"EGL_KHR_surfaceless_context": true,
		"EGL_EXT_device_base":         true,
		"EGL_KHR_create_context":      true,
		"EGL_KHR_create":              false, // a prefix is not the extension
		"EGL_EXT_device_base_x":       false,
		"":                            false,
	} {
		if got := hasExtension(list, ext); got != want {
			t.Errorf("hasExtension(%q) = %v, want %v", ext, got, want)
		}
	}
}

func TestErrorName(t *testing.T) {
	for code, want := range map[int]string{
		0x3000: "EGL_SUCCESS", 0x3008: "EGL_BAD_DISPLAY", 0x322B: "EGL_BAD_DEVICE_EXT", 0x1234: "unknown EGL error",
	} {
		if got := errorName(code); got != want {
			t.Errorf("errorName(0x%04x) = %q, want %q", code, got, want)
		}
	}
}

func TestNewUnknownPlatform(t *testing.T) {
	c, err := New("wayland")
	if err == nil {
		c.Release()
		t.Fatal("New(\"wayland\") succeeded")
	}
	if !strings.Contains(err.Error(), `"wayland"`) {
		t.Errorf("err = %v, want it to name the platform", err)
	}
}

// onThread runs f on a new goroutine locked to its own OS thread and waits.
// The goroutine exits still locked, so the thread (with whatever EGL state
// a failed test left on it) ends with it. f reports with t.Errorf.
func onThread(f func()) {
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer close(done)
		f()
	}()
	<-done
}

// probe creates and releases a context and returns its platform, skipping
// on a machine without EGL unless CI is set (CI runs on llvmpipe, where this
// must work). The test goroutine is locked to its thread meanwhile: EGL
// state is per thread, and Release leaves none behind.
func probe(t *testing.T) string {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c, err := New(PlatformAny)
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("no EGL here (set CI=1 to make this a failure): %v", err)
		}
		t.Fatalf("New: %v", err)
	}
	platform, device := c.Info()
	if platform != PlatformDevice && platform != PlatformSurfaceless && platform != platformDefault {
		t.Errorf("platform %q", platform)
	}
	if device == "" {
		t.Error("no device description")
	}
	if err := c.Release(); err != nil {
		t.Fatalf("Release: %v", err)
	}
	return platform
}

func TestContextLifecycle(t *testing.T) {
	platform := probe(t)
	// Two contexts on one display (the same device twice): releasing the
	// first must not terminate the display under the second.
	onThread(func() {
		a, err := New(platform)
		if err != nil {
			t.Errorf("New(%q): %v", platform, err)
			return
		}
		b, err := New(platform)
		if err != nil {
			t.Errorf("second New(%q): %v", platform, err)
			a.Release()
			return
		}
		if err := a.MakeCurrent(); err != nil {
			t.Errorf("MakeCurrent: %v", err)
		}
		if err := a.Release(); err != nil {
			t.Errorf("Release: %v", err)
		}
		if err := a.Release(); err != nil { // idempotent
			t.Errorf("second Release: %v", err)
		}
		if err := b.MakeCurrent(); err != nil {
			t.Errorf("MakeCurrent after releasing the other context: %v", err)
		}
		if b.GetProcAddress("glGetString") == nil {
			t.Error("no glGetString")
		}
		if err := b.Release(); err != nil {
			t.Errorf("Release of the current context: %v", err)
		}
	})
	var nilC *Context
	if err := nilC.Release(); err != nil {
		t.Errorf("nil Release: %v", err)
	}
	if err := nilC.MakeCurrent(); err == nil {
		t.Error("nil MakeCurrent succeeded")
	}
}

func TestForcedPlatforms(t *testing.T) {
	probe(t)
	for _, p := range []string{PlatformDevice, PlatformSurfaceless} {
		onThread(func() {
			c, err := New(p)
			if err != nil {
				t.Errorf("New(%q): %v", p, err)
				return
			}
			if got, _ := c.Info(); got != p {
				t.Errorf("forced %s, got %s", p, got)
			}
			if err := c.MakeCurrent(); err != nil {
				t.Errorf("%s: MakeCurrent: %v", p, err)
			}
			if err := c.Release(); err != nil {
				t.Errorf("%s: Release: %v", p, err)
			}
		})
	}
}

// TestNewDevice: NewDevice opens exactly the device it is given, counted
// as Devices lists them, and names the devices there are when the index
// is out of range.
func TestNewDevice(t *testing.T) {
	probe(t)
	devs, err := Devices()
	if err != nil {
		t.Skipf("no EGL device enumeration here: %v", err)
	}
	if len(devs) == 0 {
		t.Skip("no EGL devices")
	}
	onThread(func() {
		for i, want := range devs {
			c, err := NewDevice(i)
			if err != nil {
				t.Errorf("NewDevice(%d) (%s): %v", i, want, err)
				continue
			}
			if p, d := c.Info(); p != PlatformDevice || d != want {
				t.Errorf("NewDevice(%d): platform %q device %q, want %q %q", i, p, d, PlatformDevice, want)
			}
			if err := c.MakeCurrent(); err != nil {
				t.Errorf("NewDevice(%d): MakeCurrent: %v", i, err)
			}
			if err := c.Release(); err != nil {
				t.Errorf("NewDevice(%d): Release: %v", i, err)
			}
		}
		for _, i := range []int{len(devs), -1} {
			c, err := NewDevice(i)
			if err == nil {
				c.Release()
				t.Errorf("NewDevice(%d) succeeded with %d devices", i, len(devs))
				continue
			}
			if !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), "0: "+devs[0]) {
				t.Errorf("NewDevice(%d): err = %v, want it to list the devices", i, err)
			}
		}
	})
}
