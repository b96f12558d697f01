package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/internal/fsutil"
)

func newExportCmd() *cobra.Command {
	var dbPath, format, out, study, model string
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Export a results database as JSONL or CSV, one row per trial",
		Long: `Export writes the trials of a results database, ordered by study, model, clip,
policy, prompt and repeat, as JSON Lines (one object per trial) or CSV (one row
per trial; lists, usage and trace are JSON text in their cells). The output
file is replaced atomically (written beside it, then renamed over it), and may
not be the database or one of its -wal, -shm or -journal files; --out - writes
to stdout. The database is opened read-only, so a run may still be writing it.
Columns, in order:
` + strings.Join(results.ExportColumns(), ", ") + ".",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			i := slices.Index(exportFormats, format)
			if i < 0 {
				return usageError{fmt.Errorf("unknown --format %q: want jsonl or csv", format)}
			}
			write := exportWriters[i]
			if dbPath == "" {
				return usageError{errors.New("--db is required")}
			}
			if out == "" {
				return usageError{errors.New("--out is empty: give a file, or - for stdout")}
			}
			if out != "-" {
				if err := notAnInput(out, dbPath); err != nil {
					return usageError{err}
				}
			}
			db, err := results.OpenReadOnly(dbPath)
			if err != nil {
				return usageError{err}
			}
			defer db.Close()
			ctx := cmd.Context()
			trials, err := db.Trials(ctx, results.Filter{Study: study, Model: model})
			if err != nil {
				return err
			}
			if len(trials) == 0 && (study != "" || model != "") {
				studies, err := db.Studies(ctx)
				if err != nil {
					return err
				}
				return usageError{fmt.Errorf("no trials in %s for --study %q --model %q (studies: %s)", dbPath, study, model, strings.Join(studies, ", "))}
			}
			if out == "-" {
				bw := bufio.NewWriter(os.Stdout)
				if err := write(bw, trials); err != nil {
					return err
				}
				return bw.Flush()
			}
			if err := fsutil.WriteFileAtomic(out, func(w io.Writer) error { return write(w, trials) }); err != nil {
				return fmt.Errorf("export to %s: %w", out, err)
			}
			fmt.Fprintf(os.Stderr, "exported %d trials to %s\n", len(trials), out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dbPath, "db", "", "results database (required)")
	f.StringVar(&format, "format", "jsonl", "output format: jsonl or csv")
	f.StringVarP(&out, "out", "o", "-", "output file; - for stdout")
	f.StringVar(&study, "study", "", "export only this study")
	f.StringVar(&model, "model", "", "export only this model")
	return cmd
}

// exportFormats are export's --format values (shell completion offers
// them too), each written by the exportWriters entry of the same index.
var (
	exportFormats = []string{"jsonl", "csv"}
	exportWriters = []func(io.Writer, []results.Trial) error{results.WriteJSONL, results.WriteCSV}
)

// notAnInput refuses an export output that is the database or one of its
// SQLite side files: the same cleaned absolute path, the same path once
// the directories' symbolic links are resolved, or (for files that exist)
// the same file by os.SameFile, hard links and symbolic links included.
func notAnInput(out, db string) error {
	outAbs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		in, err := filepath.Abs(db + suffix)
		if err != nil {
			return err
		}
		same := outAbs == in || resolved(outAbs) == resolved(in)
		if !same {
			a, errA := os.Stat(outAbs)
			b, errB := os.Stat(in)
			same = errA == nil && errB == nil && os.SameFile(a, b)
		}
		if same {
			what := "the results database"
			if suffix != "" {
				what = "the results database's " + suffix + " file"
			}
			return fmt.Errorf("--out %s is %s %s: export writes a new file; choose another name", out, what, db)
		}
	}
	return nil
}

// resolved is p with its directory's symbolic links resolved (the file
// itself need not exist), or p when that fails.
func resolved(p string) string {
	dir, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return p
	}
	return filepath.Join(dir, filepath.Base(p))
}
