// Command tracegrid renders controlled event-counting clips with executable
// ground-truth traces, turns them into frame streams, evaluates
// video-language models on them over OpenAI-compatible APIs, and scores
// and reports the replies (README, "Commands"). The CLI only parses flags
// and calls packages — the main job (`run`) is job.Run — and owns what is
// the user's: progress bars, printed paths and the exit codes below.
package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/pipeline"
	"github.com/tracegrid/tracegrid/scene"
	"github.com/tracegrid/tracegrid/trace"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailure     = 1   // the work failed (GL, encoder, disk, network), an eval trial has no answer, the study is busy
	exitUsage       = 2   // bad input: flags, spec, study, manifest, trace, policy, a missing API key
	exitInterrupted = 130 // SIGINT/SIGTERM; finished work is kept
)

// drainTimeout bounds how long `eval` waits, after the first SIGINT or
// SIGTERM, for the requests already sent; a second signal cuts it short.
const drainTimeout = 30 * time.Second

// usageError marks errors caused by the user's input.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// hardKey is the context key of the hard-stop context (hardContext).
type hardKey struct{}

// hardContext is the context that ends on the second SIGINT/SIGTERM, or
// drainTimeout after the first: the one `eval` sends its requests under,
// while the command's own context (ending on the first signal) tells it to
// stop starting new ones. Without signal handling (tests) it is ctx.
func hardContext(ctx context.Context) context.Context {
	if h, ok := ctx.Value(hardKey{}).(context.Context); ok {
		return h
	}
	return ctx
}

// stuckGrace is how long a command may take to return once its hard
// context has ended before the process exits anyway (forceExit): a read
// that never returns (a file swapped for a FIFO after eval checked it, a
// hung network filesystem) must not make tracegrid deaf to signals.
// Finished work is safe at any instant: files are renamed into place
// whole, results are SQLite transactions.
var stuckGrace = 10 * time.Second

// forceExit ends the process; tests replace it.
var forceExit = func(code int) {
	fmt.Fprintln(os.Stderr, "tracegrid: interrupted, and the command did not stop in time (a read that does not return?); exiting; finished work is kept, rerun to resume")
	os.Exit(code)
}

// signals returns the command context, which ends on the first SIGINT or
// SIGTERM, and carries (hardContext) one that ends on the second, or
// drainTimeout after the first. A command still running stuckGrace after
// that, or at a third signal, is ended with exit 130.
func signals() (context.Context, func()) {
	hard, hardStop := context.WithCancel(context.Background())
	soft, softStop := context.WithCancel(context.WithValue(context.Background(), hardKey{}, hard))
	done := make(chan struct{})
	ch := make(chan os.Signal, 3)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case <-ch:
		case <-done:
			return
		}
		softStop()
		t := time.NewTimer(drainTimeout)
		defer t.Stop()
		select {
		case <-ch:
		case <-t.C:
		case <-hard.Done():
		case <-done:
			return
		}
		hardStop()
		stuck := time.NewTimer(stuckGrace)
		defer stuck.Stop()
		select {
		case <-ch:
		case <-stuck.C:
		case <-done:
			return
		}
		forceExit(exitInterrupted)
	}()
	var once sync.Once
	return soft, func() {
		once.Do(func() { signal.Stop(ch); close(done); softStop(); hardStop() })
	}
}

func main() {
	ctx, stop := signals()
	root := newRoot()
	err := root.ExecuteContext(ctx)
	stop()
	if err == nil {
		os.Exit(exitOK)
	}
	fmt.Fprintln(os.Stderr, "tracegrid:", err)
	os.Exit(exitCode(ctx, err))
}

// exitCode maps a command's error to the exit status (README, "Exit
// codes").
func exitCode(ctx context.Context, err error) int {
	var ue usageError
	switch {
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		fmt.Fprintln(os.Stderr, "tracegrid: interrupted; finished work is kept, rerun to resume")
		return exitInterrupted
	case errors.As(err, &ue), errors.Is(err, pipeline.ErrSpec), errors.Is(err, scene.ErrParams),
		errors.Is(err, trace.ErrInvalid), errors.Is(err, pipeline.ErrOtherPlan), errors.Is(err, fs.ErrNotExist),
		errors.Is(err, pipeline.ErrNoClip), errors.Is(err, pipeline.ErrNoScene), errors.Is(err, sampling.ErrPolicy),
		errors.Is(err, pipeline.ErrManifest), errors.Is(err, study.ErrStudy), errors.Is(err, study.ErrNoAPIKey),
		isCobraUsage(err):
		return exitUsage
	}
	return exitFailure
}

// isCobraUsage recognises the usage errors cobra returns without passing
// them through a hook: an unknown command.
func isCobraUsage(err error) bool {
	return strings.HasPrefix(err.Error(), "unknown command ")
}

// usageArgs makes every command's argument and required-flag errors
// usage errors (exit 2): cobra returns them as plain errors.
func usageArgs(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if args := c.Args; args != nil {
			c.Args = func(cmd *cobra.Command, a []string) error {
				if err := args(cmd, a); err != nil {
					return usageError{err}
				}
				return nil
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if err := cmd.ValidateRequiredFlags(); err != nil {
			return usageError{err}
		}
		if err := cmd.ValidateFlagGroups(); err != nil {
			return usageError{err}
		}
		return nil
	}
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
	root.AddCommand(newRenderCmd(), newTraceCmd(), newInfoCmd(), newFramesCmd(), newScoreCmd(), newExportCmd(), newReportCmd(), newReportDemoDBCmd(), newEvalCmd(), newServeCmd(), newRunCmd(), newPreviewCmd())
	root.AddCommand(newBenchCmds()...)
	root.AddCommand(newVariantsCmd(), newIngestCmd(), newMergeCmd(), newImportCmd(), newProbeCmd())
	usageArgs(root)
	registerCompletions(root)
	return root
}

func logger(verbose bool) *slog.Logger {
	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}
