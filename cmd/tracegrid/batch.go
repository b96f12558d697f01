package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/tracegrid/tracegrid/eval/runner"
)

// writeBatch is `eval --batch-out DIR`: it writes the batch input files and
// says what to do with them. Nothing is sent.
func writeBatch(ctx context.Context, opts runner.Options, dir string) error {
	out, err := runner.WriteBatch(ctx, opts, dir)
	if err != nil {
		if errors.Is(err, runner.ErrPromptChanged) {
			return usageError{err}
		}
		return err
	}
	for _, p := range out.Removed {
		fmt.Fprintf(os.Stderr, "removed %s (an earlier batch file of trials now answered or rewritten)\n", p)
	}
	for _, f := range out.Files {
		fmt.Println(f)
	}
	fmt.Fprintf(os.Stderr, "wrote %d requests in %d files; estimated $%.4f at batch prices (dry-run estimate × batch_discount); nothing was sent\n",
		out.Lines, len(out.Files), out.EstimatedUSD)
	if out.Stored > 0 {
		fmt.Fprintf(os.Stderr, "%d trials needed no request (not applicable, or refused above max_images) and were stored\n", out.Stored)
	}
	for _, reason := range sortedKeys(out.Skipped) {
		fmt.Fprintf(os.Stderr, "not written: %d trials: %s\n", out.Skipped[reason], reason)
	}
	if out.Lines > 0 {
		fmt.Fprintln(os.Stderr, "submit each file to its model's provider (docs/study.md, \"Batch\"), then record the output with --batch-in FILE…")
	}
	return nil
}

// readBatch is `eval --batch-in FILE…`: it records the output files and
// lists every line it did not record; exit 1 when there is one.
func readBatch(ctx context.Context, opts runner.Options, files []string) error {
	in, err := runner.ReadBatch(ctx, opts, files)
	if err != nil {
		return err
	}
	for _, p := range in.Problems {
		id := ""
		if p.CustomID != "" {
			id = " " + p.CustomID
		}
		fmt.Fprintf(os.Stderr, "%s:%d:%s %s: %s\n", p.File, p.Line, id, p.Kind, p.Message)
	}
	fmt.Fprintf(os.Stderr, "%d lines: %d trials recorded ($%.4f at batch prices), %d already recorded, %d not recorded\n",
		in.Lines, in.Recorded, in.CostUSD, in.AlreadyRecorded, len(in.Problems))
	if len(in.Problems) > 0 {
		kinds := map[string]int{}
		for _, p := range in.Problems {
			kinds[p.Kind]++
		}
		var parts []string
		for _, k := range sortedKeys(kinds) {
			parts = append(parts, fmt.Sprintf("%s %d", k, kinds[k]))
		}
		return fmt.Errorf("%d batch lines not recorded: %s; failed trials may be sent again (online, or in a new --batch-out)", len(in.Problems), strings.Join(parts, ", "))
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
