package main

import (
	"bytes"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/go-gl/glfw/v3.3/glfw"
)

// errNoDisplay is wrapped by the error of a preview that cannot open a
// window.
var errNoDisplay = errors.New("no display")

// displayAdvice is what the no-display error says besides the cause.
const displayAdvice = `the preview opens a window and needs an X server: run it in a desktop session or over
ssh -X, or give it a virtual one with xvfb-run (Debian packages xvfb and xauth):
    xvfb-run -a tracegrid-preview …
tracegrid render and tracegrid frames need no display (they render headless through EGL)`

func displayError(cause string) error {
	return fmt.Errorf("%w: %s\n%s", errNoDisplay, cause, displayAdvice)
}

// checkDisplay fails at once when there is no X display to open: GLFW 3.3
// only logs a missing DISPLAY from Init and then panics on the next call
// (PLATFORM-NOTES), so the preview checks before Init.
func checkDisplay() error {
	if os.Getenv("DISPLAY") == "" {
		return displayError("DISPLAY is not set")
	}
	return nil
}

// initGLFW initialises GLFW and checks that it worked. Init reports a
// platform error (an X server that cannot be reached, say) only to the log
// and returns nil, after which every GLFW call panics with
// NotInitialized; so the log is captured, and a harmless call made under
// recover tells whether GLFW is usable.
func initGLFW() error {
	var logged bytes.Buffer
	prev, flags := log.Writer(), log.Flags()
	log.SetOutput(&logged)
	log.SetFlags(0)
	err := glfw.Init()
	log.SetOutput(prev)
	log.SetFlags(flags)
	msg := strings.TrimSpace(logged.String())
	if err != nil {
		return displayError(fmt.Sprintf("GLFW: %v", err))
	}
	if err := glfwCall(func() { glfw.GetTime() }); err != nil {
		if msg == "" {
			msg = err.Error()
		}
		return displayError(fmt.Sprintf("cannot open display %q: %s", os.Getenv("DISPLAY"), msg))
	}
	if msg != "" {
		fmt.Fprintln(os.Stderr, "tracegrid-preview: GLFW:", msg)
	}
	return nil
}

// glfwCall runs f and turns a GLFW panic (go-gl/glfw panics on errors it
// does not return) into an error.
func glfwCall(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(*glfw.Error); !ok {
				panic(r)
			}
			err = fmt.Errorf("GLFW: %v", r)
		}
	}()
	f()
	return nil
}
