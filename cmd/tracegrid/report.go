package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/eval/report"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/score"
	"github.com/tracegrid/tracegrid/job"
)

func newReportCmd() *cobra.Command {
	var db, out, study, tolerance, naturalBins string
	var tau float64
	cmd := &cobra.Command{
		Use:   "report --db results.sqlite --out DIR",
		Short: "Write the HTML report, summary.json, CSV tables and PNG figures of a study",
		Long: `report scores every trial of a study in the results database and writes a
self-contained DIR/index.html (figures embedded, no network needed to view it),
DIR/summary.json with every number, DIR/tables/*.csv and DIR/figures/*.png:
capability-surface heatmaps, intervention curves, the paper's tables (Table 1
A–C, Table 4, Table 8, Table 9), boundary summaries, count distributions,
TOMATO frame principles, a reliability envelope per model, and for objects clips
the CountVideoBench section (EM, Acc@10%, Coverage, MAE, RMSE, |S|, PP, histograms
with local excess and deficit, EM and Coverage per cardinality, objects leaving the view).

Failed requests (a stored error) are counted and listed but not scored; an
answer whose count could not be parsed is scored incorrect.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tol, err := score.ParseTolerance(tolerance)
			if err != nil {
				return usageError{fmt.Errorf("--tolerance: %w", err)}
			}
			if math.IsNaN(tau) || tau <= 0 || tau > 1 {
				return usageError{fmt.Errorf("--tau must be in (0, 1], got %v", tau)}
			}
			if out == "" {
				return usageError{errors.New("--out is required")}
			}
			trials, err := readStudy(cmd, db, study)
			if err != nil {
				return err
			}
			var bins []int
			if naturalBins != "" {
				if bins, err = report.ParseNaturalBins(naturalBins); err != nil {
					return usageError{err}
				}
			}
			r, err := report.Build(trials, report.Options{Study: study, Tolerance: tol, Tau: tau, NaturalBins: bins})
			if errors.Is(err, score.ErrTrace) || errors.Is(err, score.ErrReport) || errors.Is(err, report.ErrTrial) {
				return usageError{fmt.Errorf("%s: %w", db, err)} // the database holds data that cannot be scored
			}
			if err != nil {
				return err
			}
			sheets := &job.CaseSheets{}
			defer sheets.Close()
			if err := r.WriteWith(out, report.WriteOptions{Sheets: sheets}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report: %d trials (%d scored, %d failed) → %s\n",
				r.Totals.Trials, r.Totals.Scored, r.Totals.Failed, filepath.Join(out, "index.html"))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&db, "db", "", "results database (SQLite) to read")
	f.StringVar(&out, "out", "", "directory to write the report into (created if missing)")
	f.StringVar(&study, "study", "", "study to report; may be omitted when the database holds only one")
	f.StringVar(&tolerance, "tolerance", "rate", "timestamp-matching window: rate (δ = 1/(2F)) or seconds, e.g. 0.5")
	f.Float64Var(&tau, "tau", score.Tau, "reliability target τ of the boundaries, in (0, 1]")
	f.StringVar(&naturalBins, "natural-bins", "", "count bins of the Natural videos section as lower edges, e.g. 0,1,2,3,4,5,6,7,10,15,20,30 (the default; docs/natural.md)")
	return cmd
}

// readStudy reads the trials of one study. Input errors are usage errors:
// no --db, a missing file or a directory, a file that is not a results
// database, a study without trials, and no --study for a database that
// holds several studies.
func readStudy(cmd *cobra.Command, path, study string) ([]results.Trial, error) {
	if path == "" {
		return nil, usageError{errors.New("--db is required")}
	}
	if fi, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, usageError{fmt.Errorf("results database %s does not exist", path)}
		}
		return nil, err
	} else if fi.IsDir() {
		return nil, usageError{fmt.Errorf("results database %s is a directory", path)}
	}
	db, err := results.OpenReadOnly(path)
	if err != nil {
		if errors.Is(err, results.ErrSchema) || errors.Is(err, results.ErrNotDatabase) || errors.Is(err, fs.ErrNotExist) {
			return nil, usageError{err}
		}
		return nil, err
	}
	defer db.Close()
	trials, err := db.Trials(cmd.Context(), results.Filter{Study: study})
	if err != nil {
		return nil, err
	}
	if len(trials) == 0 {
		if study != "" {
			return nil, usageError{fmt.Errorf("study %q: %w in %s", study, report.ErrNoTrials, path)}
		}
		return nil, usageError{fmt.Errorf("%w in %s", report.ErrNoTrials, path)}
	}
	if study == "" {
		seen := map[string]bool{}
		for _, t := range trials {
			seen[t.Study] = true
		}
		if len(seen) > 1 {
			names := make([]string, 0, len(seen))
			for s := range seen {
				names = append(names, s)
			}
			sort.Strings(names)
			return nil, usageError{fmt.Errorf("%s holds %d studies (%s): choose one with --study", path, len(names), strings.Join(names, ", "))}
		}
	}
	return trials, nil
}

// newReportDemoDBCmd writes a synthetic results database (report.DemoTrials)
// for trying the report and for make report-check. Hidden: not a user tool.
func newReportDemoDBCmd() *cobra.Command {
	var out string
	var seeds int
	cmd := &cobra.Command{
		Use:    "report-demo-db --out FILE",
		Short:  "Write a synthetic results database for trying the report",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usageError{errors.New("--out is required")}
			}
			if seeds < 1 {
				return usageError{fmt.Errorf("--seeds must be at least 1, got %d", seeds)}
			}
			if _, err := os.Stat(out); err == nil {
				return usageError{fmt.Errorf("%s exists; give a new file", out)}
			}
			db, err := results.Open(out)
			if err != nil {
				return err
			}
			trials := report.DemoTrials(seeds)
			for _, t := range trials {
				if err := db.Put(cmd.Context(), t); err != nil {
					db.Close()
					return err
				}
			}
			if err := db.Close(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report-demo-db: %d trials of study %q → %s\n", len(trials), report.DemoStudy, out)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "results database file to create")
	cmd.Flags().IntVar(&seeds, "seeds", 5, "renderings per (N, F) cell")
	return cmd
}
