package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/natural"
	"github.com/tracegrid/tracegrid/trace"
)

func newImportCmd() *cobra.Command {
	var opt natural.Options
	cmd := &cobra.Command{
		Use:   "import --videos DIR --annotations FILE --out DIR2 [--event-at end|start|middle] [--strict]",
		Short: "Import natural videos and their repetition annotations as a manifest of domain natural (low-frequency-trap §7)",
		Long: `import reads a folder of videos (MP4/MOV or WebM/Matroska) and an annotation table and writes
DIR2/manifest.jsonl, one entry of domain natural per annotated video, pointing at the video where it
is (relative to the manifest when --videos is relative, else absolute) with its probed duration,
frame rate, displayed size, rotation, frame count and sha256, and the annotated count; and, for
every row that gives each repetition's start and end frame, DIR2/clips/<id>.trace.json with one
event per repetition (at its end frame unless --event-at says start or middle).

Tables: the RepCount-A layout (header type,name,count,L1,L2,… with an optional leading index
column; (L1, L2), (L3, L4), … are each repetition's start and end frame, counted from 0; empty
cells at the end) or a plain name,count table (docs/natural.md).

A bad row or video (unreadable or truncated, a row for a missing file, a video without a row, a
count that disagrees with the boundary pairs, a boundary past the last frame, boundaries that go
backwards, a variable frame rate) is reported on its own line and the others are imported; the
command fails (exit 2) only when nothing could be imported, or with --strict when any row is bad
(then nothing is written).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := natural.Import(cmd.Context(), opt)
			printProblems(cmd.ErrOrStderr(), res.Problems)
			if errors.Is(err, natural.ErrInput) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "import: %d videos imported (%d with a trace of their repetitions, %s layout), %d not imported → %s\n",
				res.Imported, res.Traces, res.Layout, len(res.Problems), res.Manifest)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opt.Videos, "videos", "", "folder of the videos")
	f.StringVar(&opt.Annotations, "annotations", "", "annotation table (RepCount-A layout or name,count)")
	f.StringVar(&opt.Out, "out", "", "output directory: manifest.jsonl and clips/<id>.trace.json")
	f.StringVar(&opt.EventAt, "event-at", trace.EventAtEnd, "where a repetition's event lies: end, start or middle (of its frames' times)")
	f.BoolVar(&opt.Strict, "strict", false, "fail, writing nothing, when any row or video is bad")
	for _, name := range []string{"videos", "annotations", "out"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

// printProblems lists the rows and videos that were not imported, one a
// line.
func printProblems(w io.Writer, ps []natural.Problem) {
	for _, p := range ps {
		fmt.Fprintf(w, "import: not imported: %s\n", p)
	}
}
