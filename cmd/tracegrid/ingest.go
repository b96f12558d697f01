package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/variants"
)

func newIngestCmd() *cobra.Command {
	var (
		dataset, predictions, db, study, model string
		replace                                bool
	)
	cmd := &cobra.Command{
		Use:   "ingest --dataset D/dataset.jsonl --predictions FILE [--db results.db] [--study S] [--model M]",
		Short: "Record another harness's answers to a variants dataset as trials, so report and export work on them",
		Long: `ingest reads the answers lmms-eval, VLMEvalKit or your own script gave to the rows of a
dataset.jsonl (tracegrid variants --dataset) and stores each as a trial in a results database:
the reply parsed exactly as eval parses it (with the row's frame times, so "frame k" is a time),
the clip's truth from the row's trace, the request's prompt hash. tracegrid report and export
then treat them like eval's trials (docs/variants.md).

Predictions: JSON Lines ({"id", "response"} per line, or lmms-eval's --log_samples file), a JSON
array (VLMEvalKit PRED_FORMAT=json) or a TSV/CSV table with "index" or "id" and "prediction"
(VLMEvalKit PRED_FORMAT=tsv). A trial already stored with the same answer is left alone; one
with another answer or another request is an error unless --replace.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if model == "" {
				base := filepath.Base(predictions)
				model = strings.TrimSuffix(base, filepath.Ext(base))
			}
			sum, err := variants.Ingest(cmd.Context(), variants.IngestOptions{
				Dataset: dataset, Predictions: predictions, DB: db, Study: study, Model: model, Replace: replace,
			})
			if errors.Is(err, variants.ErrInput) || errors.Is(err, results.ErrSchema) || errors.Is(err, results.ErrNotDatabase) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ingest: %d trials stored, %d unchanged, %d not applicable (no frames), %d of %d rows without an answer (study %s, model %s) → %s\n",
				sum.Stored, sum.Unchanged, sum.NotApplicable, sum.Missing, sum.Rows, study, model, db)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataset, "dataset", "", "dataset.jsonl written by tracegrid variants --dataset")
	f.StringVar(&predictions, "predictions", "", "the other harness's answers (JSONL, JSON, TSV or CSV)")
	f.StringVar(&db, "db", "results.db", "results database (created when missing)")
	f.StringVar(&study, "study", "ingest", "study name of the trials")
	f.StringVar(&model, "model", "", "model name of the trials (default: the predictions file's name without extension)")
	f.BoolVar(&replace, "replace", false, "replace stored trials whose answer differs")
	_ = cmd.MarkFlagRequired("dataset")
	_ = cmd.MarkFlagRequired("predictions")
	return cmd
}
