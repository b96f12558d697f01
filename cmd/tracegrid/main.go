// Command tracegrid renders controlled event-counting clips with executable
// ground-truth traces (and, in later stages, samples, evaluates and scores
// models on them). The CLI is thin: flags → package calls.
package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/pipeline"
	"github.com/tracegrid/tracegrid/scene"
	"github.com/tracegrid/tracegrid/trace"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailure     = 1   // the work failed (GL, encoder, disk)
	exitUsage       = 2   // bad input: flags, spec, trace
	exitInterrupted = 130 // SIGINT/SIGTERM; finished work is kept
)

// usageError marks errors caused by the user's input.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRoot()
	err := root.ExecuteContext(ctx)
	if err == nil {
		os.Exit(exitOK)
	}
	fmt.Fprintln(os.Stderr, "tracegrid:", err)
	var ue usageError
	switch {
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		fmt.Fprintln(os.Stderr, "tracegrid: interrupted; finished clips are kept, rerun to resume")
		os.Exit(exitInterrupted)
	case errors.As(err, &ue), errors.Is(err, pipeline.ErrSpec), errors.Is(err, scene.ErrParams),
		errors.Is(err, trace.ErrEvents), errors.Is(err, trace.ErrSchema), errors.Is(err, fs.ErrNotExist),
		errors.Is(err, pipeline.ErrNoClip), errors.Is(err, sampling.ErrPolicy):
		os.Exit(exitUsage)
	}
	os.Exit(exitFailure)
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "tracegrid",
		Short:         "Controlled event-counting videos with executable traces, for profiling video-language models",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       pipeline.ToolVersion(),
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newRenderCmd(), newTraceCmd(), newInfoCmd(), newFramesCmd(), newScoreCmd(), newExportCmd(), newReportCmd(), newReportDemoDBCmd(), newEvalCmd(), newServeCmd(), newRunCmd())
	root.AddCommand(newBenchCmds()...)
	return root
}

func logger(verbose bool) *slog.Logger {
	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}
