// Command tracegrid-preview plays a tracegrid clip from its scene in a
// window: the same renderer and shaders as `tracegrid render` (package gpu,
// headless EGL), so what one sees is what the clip holds, with the trace
// beside it and, with --policy, exactly the frames (and labels) a model is
// shown. It is a separate binary because it links GLFW, X11 and GLX: the
// headless tracegrid binary never does, and `tracegrid preview` runs this
// one when it is installed beside it. docs/preview.md describes it.
package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/pipeline"
	"github.com/tracegrid/tracegrid/scene"
	"github.com/tracegrid/tracegrid/trace"
)

// GLFW (window, events, the window's context) must be called from the main
// OS thread: main runs on it, and nothing here starts another goroutine
// that calls GLFW. The gpu renderer has its own locked thread.
func init() { runtime.LockOSThread() }

// Exit codes, as tracegrid's (README, "Exit codes").
const (
	exitOK      = 0
	exitFailure = 1 // no display, GL, disk
	exitUsage   = 2 // bad flags, spec, manifest, trace, policy
)

// usageError marks errors caused by the user's input.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func main() {
	err := newCmd().Execute()
	if err == nil {
		os.Exit(exitOK)
	}
	fmt.Fprintln(os.Stderr, "tracegrid-preview:", err)
	os.Exit(exitCode(err))
}

// exitCode maps an error to the exit status.
func exitCode(err error) int {
	var ue usageError
	switch {
	case errors.As(err, &ue), errors.Is(err, pipeline.ErrSpec), errors.Is(err, scene.ErrParams),
		errors.Is(err, trace.ErrInvalid), errors.Is(err, fs.ErrNotExist), errors.Is(err, pipeline.ErrNoClip),
		errors.Is(err, sampling.ErrPolicy), errors.Is(err, pipeline.ErrManifest), errors.Is(err, study.ErrStudy):
		return exitUsage
	}
	return exitFailure
}

func newCmd() *cobra.Command {
	var o options
	cmd := &cobra.Command{
		Use:   "tracegrid-preview (--manifest DIR/manifest.jsonl --clip ID | --domain D --n N [--f F] [--class C] [--seed S])",
		Short: "Play a clip from its scene in a window, with its trace and what a model would see",
		Long: `tracegrid-preview plays a clip from its scene (not from the MP4) with the renderer and
shaders of tracegrid render, in a resizable window at the clip's size (--window WxH to change
it; the scene keeps its aspect ratio).

Keys: space pause/play · left/right one clip frame · shift+left/right previous/next true
event · + (or =) and - speed ¼× to 4× · o overlay (time, frame, running count, true events,
timeline) · q or Esc quit.

--policy P shows only the frames the sampling policy supplies, each held until the next, with
the stretches the model never sees grey on the timeline and the shown frame's label as eval
writes it (--labels time|position|none; default: eval's default for the policy).
Policies: ` + sampling.Policies + `

--screenshot FILE --at T renders the window once at time T and writes the scene area, at the
clip's own resolution, to a PNG (with the overlay unless --no-overlay).

The preview needs a display (an X server; xvfb-run -a for a virtual one). tracegrid render and
tracegrid frames need none.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.changed = cmd.Flags().Changed
			return run(&o)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	f := cmd.Flags()
	f.StringVar(&o.manifest, "manifest", "", "manifest.jsonl of a render")
	f.StringVar(&o.clipID, "clip", "", "clip id in the manifest")
	f.StringVar(&o.domain, "domain", "", "build the clip from parameters: "+fmt.Sprint(scene.AllDomains()))
	f.IntVar(&o.n, "n", 0, "event count N (objects: number of objects)")
	f.Float64Var(&o.f, "f", 0, "event frequency F in Hz (required for N > 0; N = 0 takes the nominal 1.0; not for objects)")
	f.StringVar(&o.class, "class", "", "objects class <shape>-<colour>, e.g. cube-red")
	f.IntVar(&o.seed, "seed", 0, "seed")
	f.Float64Var(&o.duration, "duration", 0, "clip length in seconds (default: the paper's 24 s; objects: CountVideoBench's 5 s)")
	f.IntVar(&o.fps, "fps", 0, "clip frame rate (default 30)")
	f.StringVar(&o.size, "size", "", "clip size WxH (default 854x480; objects 1920x1080)")
	f.StringVar(&o.policy, "policy", "", "show only the frames of this sampling policy: "+sampling.Policies)
	f.StringVar(&o.labels, "labels", "", "with --policy: frame labels time, position or none (default: eval's for the policy)")
	f.Float64Var(&o.at, "at", 0, "start (with --screenshot: the still's) time in seconds")
	f.StringVar(&o.screenshot, "screenshot", "", "render once at --at, write the scene area to this PNG and exit")
	f.BoolVar(&o.noOverlay, "no-overlay", false, "start with the overlay off")
	f.StringVar(&o.window, "window", "", "window size WxH (default: the clip's)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log the OpenGL renderers")
	// For tests: a key script played one presented frame per key, each
	// followed by one clip frame of time; the final state is printed as
	// JSON. And the window's framebuffer, read back after the last frame.
	f.StringVar(&o.script, "script", "", "comma-separated keys, one per frame (tick: no key), then print the state as JSON and exit")
	f.StringVar(&o.windowDump, "window-dump", "", "with --script or --screenshot: write the window's framebuffer to this PNG")
	_ = f.MarkHidden("script")
	_ = f.MarkHidden("window-dump")
	return cmd
}
