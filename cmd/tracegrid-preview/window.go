package main

import (
	"fmt"
	"image"
	"math"

	gl "github.com/go-gl/gl/v2.1/gl"
	"github.com/go-gl/glfw/v3.3/glfw"

	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/preview"
)

// The window shows frames the gpu renderer drew offscreen (EGL, its own
// thread and context): the pixels are uploaded into a texture of the
// window's own OpenGL context (GLX, on the main thread) and drawn as one
// quad, 1:1 in the scene area. The window's GL functions come from the
// go-gl v2.1 binding, initialised with GLFW's GetProcAddress: package gpu
// uses the v3.3-core binding, whose function table holds the EGL context's
// functions and must not be overwritten with GLX ones.

// window is the preview window and its presenter.
type window struct {
	win   *glfw.Window
	tex   uint32
	texW  int
	texH  int
	clipW int
	clipH int
	keys  []preview.Key // pressed since the last poll
}

// openWindow creates the window at w×h (hidden when !visible), makes its
// context current on this (the main) thread and sets up the presenter.
// A visible window swaps with vsync; a hidden one (screenshots, scripts)
// never waits for a display refresh.
func openWindow(w, h, clipW, clipH int, title string, visible bool) (_ *window, err error) {
	glfw.DefaultWindowHints()
	glfw.WindowHint(glfw.Resizable, glfw.True)
	glfw.WindowHint(glfw.Visible, boolHint(visible))
	glfw.WindowHint(glfw.DoubleBuffer, glfw.True)
	glfw.WindowHint(glfw.ContextVersionMajor, 2)
	glfw.WindowHint(glfw.ContextVersionMinor, 1)
	var win *glfw.Window
	if err := glfwCall(func() { win, err = glfw.CreateWindow(w, h, title, nil, nil) }); err != nil {
		return nil, fmt.Errorf("opening a %dx%d window: %w", w, h, err)
	}
	if err != nil || win == nil {
		return nil, fmt.Errorf("opening a %dx%d window with an OpenGL 2.1 context: %v", w, h, err)
	}
	wd := &window{win: win, clipW: clipW, clipH: clipH}
	defer func() {
		if err != nil {
			wd.close()
		}
	}()
	if err := glfwCall(func() {
		win.MakeContextCurrent()
		glfw.SwapInterval(boolHint(visible))
	}); err != nil {
		return nil, err
	}
	if err := gl.InitWithProcAddrFunc(glfw.GetProcAddress); err != nil {
		return nil, fmt.Errorf("the window's OpenGL functions: %w", err)
	}
	gl.GenTextures(1, &wd.tex)
	gl.BindTexture(gl.TEXTURE_2D, wd.tex)
	gl.TexParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST)
	gl.TexParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST)
	gl.TexParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE)
	gl.TexParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE)
	if err := glError("setting up the window's texture"); err != nil {
		return nil, err
	}
	win.SetKeyCallback(wd.onKey)
	return wd, nil
}

func boolHint(b bool) int {
	if b {
		return glfw.True
	}
	return glfw.False
}

// close destroys the window; nil-safe and idempotent.
func (w *window) close() {
	if w == nil || w.win == nil {
		return
	}
	if w.tex != 0 {
		gl.DeleteTextures(1, &w.tex)
		w.tex = 0
	}
	_ = glfwCall(func() { w.win.Destroy() })
	w.win = nil
}

// onKey queues the player key a key press stands for. Arrows and speed
// keys repeat while held.
func (w *window) onKey(_ *glfw.Window, key glfw.Key, _ int, action glfw.Action, mods glfw.ModifierKey) {
	if action == glfw.Release {
		return
	}
	repeat := action == glfw.Repeat
	shift := mods&glfw.ModShift != 0
	k := preview.KeyNone
	switch key {
	case glfw.KeySpace:
		k = preview.KeyPause
	case glfw.KeyLeft:
		k = preview.KeyStepBack
		if shift {
			k = preview.KeyPrevEvent
		}
	case glfw.KeyRight:
		k = preview.KeyStepForward
		if shift {
			k = preview.KeyNextEvent
		}
	case glfw.KeyEqual, glfw.KeyKPAdd:
		k = preview.KeyFaster
	case glfw.KeyMinus, glfw.KeyKPSubtract:
		k = preview.KeySlower
	case glfw.KeyO:
		k = preview.KeyOverlay
	case glfw.KeyQ, glfw.KeyEscape:
		k = preview.KeyQuit
	}
	if k == preview.KeyNone || repeat && (k == preview.KeyPause || k == preview.KeyOverlay || k == preview.KeyQuit) {
		return
	}
	w.keys = append(w.keys, k)
}

// sceneArea is the part of the framebuffer the scene fills: the clip's
// aspect ratio, as large as fits, centred; x, y from the bottom left (GL).
type sceneArea struct{ x, y, w, h int }

func (w *window) area() (fbW, fbH int, a sceneArea) {
	fbW, fbH = w.win.GetFramebufferSize()
	if fbW <= 0 || fbH <= 0 {
		return fbW, fbH, sceneArea{}
	}
	s := math.Min(float64(fbW)/float64(w.clipW), float64(fbH)/float64(w.clipH))
	a.w = max(1, min(fbW, int(math.Round(float64(w.clipW)*s))))
	a.h = max(1, min(fbH, int(math.Round(float64(w.clipH)*s))))
	a.x, a.y = (fbW-a.w)/2, (fbH-a.h)/2
	return fbW, fbH, a
}

// present draws img (the scene area's pixels, top row first) 1:1 into the
// scene area of the back buffer, with black margins around it.
func (w *window) present(img gpu.Image, fbW, fbH int, a sceneArea) error {
	gl.Viewport(0, 0, int32(fbW), int32(fbH))
	gl.ClearColor(0, 0, 0, 1)
	gl.Clear(gl.COLOR_BUFFER_BIT)
	if a.w == 0 || img.Width != a.w || img.Height != a.h {
		return glError("clearing the window")
	}
	gl.BindTexture(gl.TEXTURE_2D, w.tex)
	gl.PixelStorei(gl.UNPACK_ALIGNMENT, 1)
	gl.PixelStorei(gl.UNPACK_ROW_LENGTH, int32(img.Stride/4))
	if img.Width != w.texW || img.Height != w.texH {
		gl.TexImage2D(gl.TEXTURE_2D, 0, gl.RGBA8, int32(img.Width), int32(img.Height), 0, gl.RGBA, gl.UNSIGNED_BYTE, gl.Ptr(&img.Pix[0]))
		w.texW, w.texH = img.Width, img.Height
	} else {
		gl.TexSubImage2D(gl.TEXTURE_2D, 0, 0, 0, int32(img.Width), int32(img.Height), gl.RGBA, gl.UNSIGNED_BYTE, gl.Ptr(&img.Pix[0]))
	}
	gl.PixelStorei(gl.UNPACK_ROW_LENGTH, 0)
	gl.Viewport(int32(a.x), int32(a.y), int32(a.w), int32(a.h))
	gl.MatrixMode(gl.PROJECTION)
	gl.LoadIdentity()
	gl.MatrixMode(gl.MODELVIEW)
	gl.LoadIdentity()
	gl.Disable(gl.BLEND)
	gl.Disable(gl.DEPTH_TEST)
	gl.Enable(gl.TEXTURE_2D)
	gl.TexEnvi(gl.TEXTURE_ENV, gl.TEXTURE_ENV_MODE, gl.REPLACE)
	// Texture row 0 is the image's top row: v = 0 at the top of the area.
	gl.Begin(gl.QUADS)
	gl.TexCoord2f(0, 1)
	gl.Vertex2f(-1, -1)
	gl.TexCoord2f(1, 1)
	gl.Vertex2f(1, -1)
	gl.TexCoord2f(1, 0)
	gl.Vertex2f(1, 1)
	gl.TexCoord2f(0, 0)
	gl.Vertex2f(-1, 1)
	gl.End()
	gl.Disable(gl.TEXTURE_2D)
	return glError("presenting a frame")
}

// readBack returns the back buffer, top row first.
func (w *window) readBack(fbW, fbH int) (*image.NRGBA, error) {
	img := image.NewNRGBA(image.Rect(0, 0, fbW, fbH))
	buf := make([]byte, 4*fbW*fbH)
	gl.ReadBuffer(gl.BACK)
	gl.PixelStorei(gl.PACK_ALIGNMENT, 1)
	gl.ReadPixels(0, 0, int32(fbW), int32(fbH), gl.RGBA, gl.UNSIGNED_BYTE, gl.Ptr(&buf[0]))
	if err := glError("reading the window back"); err != nil {
		return nil, err
	}
	for y := range fbH {
		copy(img.Pix[y*img.Stride:y*img.Stride+4*fbW], buf[(fbH-1-y)*4*fbW:(fbH-y)*4*fbW])
	}
	return img, nil
}

// glError reports the window context's pending GL errors.
func glError(what string) error {
	var codes []uint32
	for range 8 {
		c := gl.GetError()
		if c == gl.NO_ERROR {
			break
		}
		codes = append(codes, c)
	}
	if len(codes) == 0 {
		return nil
	}
	return fmt.Errorf("%s: OpenGL error %#x", what, codes)
}

// glInfo is the window context's GL_RENDERER and GL_VERSION.
func (w *window) glInfo() (renderer, version string) {
	str := func(name uint32) string {
		if p := gl.GetString(name); p != nil {
			return gl.GoStr(p)
		}
		return ""
	}
	return str(gl.RENDERER), str(gl.VERSION)
}
