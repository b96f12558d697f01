package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/variants"
	"github.com/tracegrid/tracegrid/pipeline"
)

func newMergeCmd() *cobra.Command {
	var render, vars, db string
	cmd := &cobra.Command{
		Use:   "merge (--render DIR | --variants D | --db OUT.sqlite IN.sqlite…)",
		Short: "Merge the outputs of shards (--shard I/N): a render's manifests, variants records or results databases",
		Long: `merge puts the outputs of shards together (docs/cluster.md):

  --render DIR          writes DIR/manifest.jsonl from DIR/shards/I-of-N/manifest.jsonl of
                        every shard of the latest split, in plan order, after checking every
                        clip's video hash and trace;
  --variants D          writes D/variants.jsonl from D/shards/I-of-N/variants.jsonl;
  --db OUT IN…          copies every trial of the databases IN into OUT (created when missing;
                        OUT must not be one of the IN).

Each refuses, naming them and writing nothing: a shard that is missing or has not finished,
a clip, variant or trial present in two shards (a duplicate), the same one with different
hashes or answers (a conflict), and a file that no longer matches its record. A merge run
again changes nothing. Exit status: 0 merged (or nothing to change), 1 a problem above,
2 bad flags or a directory that is missing or holds no shards of the kind asked.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if db == "" && len(args) > 0 {
				return fmt.Errorf("unexpected arguments %q: only --db takes input files", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			given := 0
			for _, v := range []string{render, vars, db} {
				if v != "" {
					given++
				}
			}
			if given != 1 {
				return usageError{errors.New("give one of --render DIR, --variants D or --db OUT IN…")}
			}
			// A directory that is not there is bad input (exit 2), not a
			// finding about its shards.
			for _, d := range []string{render, vars} {
				if fi, err := os.Stat(d); d != "" && (err != nil || !fi.IsDir()) {
					return usageError{fmt.Errorf("%s is not a directory: give the --out directory of the sharded render or variants", d)}
				}
			}
			w := cmd.OutOrStdout()
			switch {
			case render != "":
				sum, err := pipeline.MergeRender(render)
				if err != nil {
					return mergeErr(err)
				}
				if sum.Shards == 0 {
					fmt.Fprintf(w, "merge: %s has no shards; its manifest (%d clips) is already whole\n", render, sum.Clips)
					return nil
				}
				fmt.Fprintf(w, "merge: %d shards, %d clips → %s/%s%s%s\n", sum.Shards, sum.Clips, strings.TrimRight(render, "/"), pipeline.ManifestName, unchanged(sum.Unchanged), others(sum.Others))
			case vars != "":
				sum, err := variants.MergeShards(vars)
				if err != nil {
					return mergeErr(err)
				}
				fmt.Fprintf(w, "merge: %d shards, %d variants (%d other records kept) → %s/%s%s%s\n", sum.Shards, sum.Variants, sum.Kept, strings.TrimRight(vars, "/"), variants.RecordsName, unchanged(sum.Unchanged), others(sum.Others))
			default:
				if len(args) == 0 {
					return usageError{errors.New("--db OUT needs input databases: tracegrid merge --db OUT.sqlite IN.sqlite…")}
				}
				sum, err := results.Merge(cmd.Context(), db, args)
				if err != nil {
					return mergeErr(err)
				}
				shards := ""
				if sum.Shards > 0 {
					shards = fmt.Sprintf(" (shards 1…%d)", sum.Shards)
				}
				fmt.Fprintf(w, "merge: %d databases%s, %d trials: %d added, %d replaced (retried), %d unchanged; %d study snapshots → %s\n",
					sum.Inputs, shards, sum.Trials, sum.Added, sum.Replaced, sum.Unchanged, sum.Snapshots, db)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&render, "render", "", "render directory whose shards to merge")
	f.StringVar(&vars, "variants", "", "variants directory whose shards to merge")
	f.StringVar(&db, "db", "", "output results database; the inputs follow as arguments")
	return cmd
}

// mergeErr keeps a merge's findings at exit status 1 (the shards are not
// yet a whole), and a directory without shards of the kind asked (or a
// missing input) at 2.
func mergeErr(err error) error {
	if errors.Is(err, pipeline.ErrNoShards) {
		return usageError{err}
	}
	return err
}

func unchanged(u bool) string {
	if u {
		return " (unchanged)"
	}
	return ""
}

func others(dirs []string) string {
	if len(dirs) == 0 {
		return ""
	}
	return fmt.Sprintf("; ignored the shards of another split: %s", strings.Join(dirs, ", "))
}
