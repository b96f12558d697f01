package main

import (
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"log/slog"
	"math"
	"os"

	"github.com/go-gl/glfw/v3.3/glfw"

	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/internal/fsutil"
	"github.com/tracegrid/tracegrid/preview"
	"github.com/tracegrid/tracegrid/scene"
)

// maxWait bounds how long the loop sleeps while playing: the overlay's
// time moves continuously.
const maxWait = 1.0 / 60

// run is the whole command after flag parsing.
func run(o *options) (err error) {
	if err := o.check(); err != nil {
		return err
	}
	var script []preview.Key
	if o.script != "" {
		if script, err = preview.ParseScript(o.script); err != nil {
			return usageError{err}
		}
	}
	// The clip is checked first (bad input is exit 2 with or without a
	// display); it takes milliseconds.
	clip, tr, err := o.loadClip()
	if err != nil {
		return err
	}
	if o.at > clip.P.Duration {
		return usageError{fmt.Errorf("--at %v is outside clip %s [0, %v]", o.at, clip.P.ID(), clip.P.Duration)}
	}
	if err := o.checkPolicy(clip, tr); err != nil {
		return err
	}
	if err := checkDisplay(); err != nil {
		return err
	}
	if err := initGLFW(); err != nil {
		return err
	}
	defer func() { _ = glfwCall(glfw.Terminate) }()
	// Any GLFW panic left (an error go-gl does not return) ends the
	// command with an error, never a crash.
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(*glfw.Error); !ok {
				panic(r) // a bug here, not a GLFW error: keep its stack
			}
			err = fmt.Errorf("GLFW: %v", r)
		}
	}()

	r, err := gpu.NewRenderer()
	if err != nil {
		return fmt.Errorf("OpenGL through EGL: %w", err)
	}
	defer r.Close()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if o.verbose {
		i := r.Info()
		log.Info("renderer", "renderer", i.Renderer, "version", i.Version, "platform", i.Platform)
	}
	plan, err := o.plan(r, clip, tr)
	if err != nil {
		return err
	}
	batch := o.screenshot != "" || script != nil
	pl, err := preview.New(preview.Config{Clip: clip, Trace: tr, Plan: plan, Labels: o.labelMode,
		Overlay: !o.noOverlay, Start: o.at, Paused: o.screenshot != "" && script == nil})
	if err != nil {
		return err
	}

	w, h := clip.P.Width, clip.P.Height
	if o.windowW > 0 {
		w, h = o.windowW, o.windowH
	}
	title := "tracegrid preview — " + clip.P.ID()
	if plan != nil {
		title += " — " + plan.Policy
	}
	win, err := openWindow(w, h, clip.P.Width, clip.P.Height, title, !batch)
	if err != nil {
		return err
	}
	defer win.close()
	if o.verbose {
		rend, ver := win.glInfo()
		log.Info("window", "renderer", rend, "version", ver)
	}
	v := &view{r: r, win: win}
	if !batch {
		return v.loop(pl)
	}

	// Batch: play the script (each key, then one clip frame of time),
	// or show the still.
	for _, k := range script {
		if pl.Key(k) {
			break
		}
		pl.Advance(pl.FrameDuration())
		if err := v.show(pl, true); err != nil {
			return err
		}
	}
	if err := v.show(pl, false); err != nil {
		return err
	}
	if o.windowDump != "" {
		fbW, fbH, _ := win.area()
		img, err := win.readBack(fbW, fbH)
		if err != nil {
			return err
		}
		if err := writePNG(o.windowDump, img); err != nil {
			return err
		}
	}
	if o.screenshot != "" {
		if err := v.screenshot(pl, o.screenshot); err != nil {
			return err
		}
	}
	if script != nil {
		return json.NewEncoder(os.Stdout).Encode(pl.State())
	}
	return nil
}

// view draws a player's frames in a window.
type view struct {
	r         *gpu.Renderer
	win       *window
	cur, prev scene.DrawList
	img       gpu.Image
	fbW, fbH  int
	drawn     bool
}

// show renders the player's frame at the scene area's size and presents
// it; swap says whether to swap buffers (the last frame of a batch stays
// in the back buffer to be read).
func (v *view) show(pl *preview.Player, swap bool) error {
	pl.DrawList(&v.cur)
	fbW, fbH, a := v.win.area()
	if err := v.render(a); err != nil {
		return err
	}
	v.cur, v.prev = v.prev, v.cur
	v.fbW, v.fbH, v.drawn = fbW, fbH, true
	if err := v.win.present(v.img, fbW, fbH, a); err != nil {
		return err
	}
	if swap {
		return glfwCall(v.win.win.SwapBuffers)
	}
	return nil
}

// render draws v.cur into v.img at the scene area's size.
func (v *view) render(a sceneArea) error {
	if a.w == 0 {
		v.img = gpu.Image{}
		return nil
	}
	if v.img.Width != a.w || v.img.Height != a.h {
		v.img = gpu.Image{Width: a.w, Height: a.h, Stride: 4 * a.w, Pix: make([]byte, 4*a.w*a.h)}
	}
	if err := v.r.Render(&v.cur, v.img); err != nil {
		return fmt.Errorf("rendering %dx%d: %w", a.w, a.h, err)
	}
	return nil
}

// loop is interactive playback: events, the clock, and a new picture
// whenever the frame, the overlay or the window's size changes.
func (v *view) loop(pl *preview.Player) error {
	refresh := true
	v.win.win.SetRefreshCallback(func(*glfw.Window) { refresh = true })
	v.win.win.SetFramebufferSizeCallback(func(*glfw.Window, int, int) { refresh = true })
	last := glfw.GetTime()
	for !v.win.win.ShouldClose() {
		switch {
		case refresh:
			glfw.PollEvents()
		case pl.Paused():
			glfw.WaitEvents()
		default:
			glfw.WaitEventsTimeout(math.Max(0.001, math.Min(maxWait, pl.UntilChange())))
		}
		now := glfw.GetTime()
		pl.Advance(now - last) // the time that passed in the state before these keys
		last = now
		for _, k := range v.win.keys {
			if pl.Key(k) {
				v.win.win.SetShouldClose(true)
			}
		}
		v.win.keys = v.win.keys[:0]
		pl.DrawList(&v.cur)
		fbW, fbH, a := v.win.area()
		changed := !v.drawn || fbW != v.fbW || fbH != v.fbH || !v.cur.Equal(&v.prev)
		if !changed && !refresh {
			continue
		}
		if changed {
			if err := v.render(a); err != nil {
				return err
			}
			v.cur, v.prev = v.prev, v.cur
			v.fbW, v.fbH, v.drawn = fbW, fbH, true
		}
		if err := v.win.present(v.img, fbW, fbH, a); err != nil {
			return err
		}
		v.win.win.SwapBuffers()
		refresh = false
	}
	return nil
}

// screenshot renders the player's picture at the clip's own resolution
// (whatever the window's size) and writes it to path.
func (v *view) screenshot(pl *preview.Player, path string) error {
	var dl scene.DrawList
	pl.DrawList(&dl)
	img := gpu.Image{Width: dl.Width, Height: dl.Height, Stride: 4 * dl.Width, Pix: make([]byte, 4*dl.Width*dl.Height)}
	if err := v.r.Render(&dl, img); err != nil {
		return fmt.Errorf("rendering the screenshot: %w", err)
	}
	return writePNG(path, &image.NRGBA{Pix: img.Pix, Stride: img.Stride, Rect: image.Rect(0, 0, img.Width, img.Height)})
}

// writePNG writes img to path atomically (temp file + rename).
func writePNG(path string, img image.Image) error {
	err := fsutil.WriteFileAtomic(path, func(w io.Writer) error {
		return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(w, img)
	})
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
