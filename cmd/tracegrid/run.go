package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/job"
)

func newRunCmd() *cobra.Command {
	var (
		sf      specFlags
		out     string
		verbose bool
	)
	cmd := &cobra.Command{
		Use:   "run [--out DIR]",
		Short: "The main job: render the default grid, evaluate the reference perceiver on it, write the report",
		Long: `run does the whole study on built-in defaults with no API key: it renders the grid
(--grid, default "default") into DIR/render, starts the reference perceiver in-process on a
loopback port, evaluates it under native:1, fps:4, fps:16 and keyframes with the structured-trace
prompt into DIR/results.sqlite, and writes the report to DIR/report (index.html, summary.json).
Objects clips (--grid countvideobench) are evaluated as CountVideoBench does: ten uniformly
sampled frames and the question "How many <colour> <shape>s are in this video?".
Rerunning resumes: finished clips and trials are kept.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usageError{fmt.Errorf("--out is empty: name the output directory")}
			}
			spec, err := sf.spec(cmd)
			if err != nil {
				return err
			}
			log := logger(verbose)
			res, err := job.Run(cmd.Context(), job.Options{Spec: spec, Out: out, Study: job.BuiltinStudy(), Log: log,
				RenderProgress: progress("clips", log), EvalProgress: evalProgress(log)})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s\nsummary: %s\n", res.Index, res.Summary)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "out/run", "output directory")
	sf.register(cmd)
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "debug logging")
	return cmd
}
