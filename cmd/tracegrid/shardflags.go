package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/runner"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/internal/shard"
	"github.com/tracegrid/tracegrid/pipeline"
)

// Shards (docs/cluster.md): render, variants and eval take --shard I/N,
// or read the scheduler's environment (Slurm job arrays, Kubernetes
// Indexed Jobs with --shards N or TRACEGRID_SHARDS).

// registerShardFlags adds --shard and --shards.
func registerShardFlags(fl *pflag.FlagSet) {
	fl.String("shard", "", "run shard I of N only, 1-based (e.g. 2/8); default: from a Slurm array (SLURM_ARRAY_TASK_*) or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX), else the whole plan; 1/1 is the whole plan (docs/cluster.md)")
	fl.Int("shards", 0, "the number of shards N of a Kubernetes Indexed Job, whose JOB_COMPLETION_INDEX names only the index (or set TRACEGRID_SHARDS)")
}

// resolveShard picks the command's shard: --shard, else the scheduler's
// environment (shard.Resolve). It logs which shard and why; bad or
// contradictory settings are usage errors (exit 2). A --shard given with
// an empty value is one of them: it is what `--shard "$VAR"` passes when
// a job script's variable is unset, and read as "no flag" it would run
// the whole plan in every task.
func resolveShard(cmd *cobra.Command, log *slog.Logger) (shard.Shard, error) {
	flag, _ := cmd.Flags().GetString("shard")
	n, _ := cmd.Flags().GetInt("shards")
	if cmd.Flags().Changed("shard") && strings.TrimSpace(flag) == "" {
		return shard.Shard{}, usageError{errors.New(`--shard is empty (an unset variable in a job script?): give I/N, e.g. --shard 2/8, or leave the flag out to take the scheduler's environment or the whole plan`)}
	}
	s, why, err := shard.Resolve(flag, n, os.Getenv)
	if err != nil {
		return shard.Shard{}, usageError{err}
	}
	if flag == "" && strings.HasPrefix(why, "whole plan") {
		log.Debug("shard", "shard", s.String(), "why", why)
	} else {
		log.Info("shard", "shard", s.String(), "why", why)
	}
	return s, nil
}

// renderManifest is the manifest a render of shard s writes into out.
func renderManifest(out string, s shard.Shard) string {
	if s.IsWhole() {
		return out + "/" + pipeline.ManifestName
	}
	return out + "/" + pipeline.ShardsDir + "/" + s.Dir() + "/" + pipeline.ManifestName
}

// shardStudy makes st the study of its shard (the whole study for 1/1):
// the clips of its part, balanced by the requests × images each clip
// costs over the study's models and conditions (shard.EvalCost, from the
// dry run), its own database unless --db was given (results.ShardDB:
// results.db → results.2-of-3.db) seeded with what the merged database
// already holds for its clips (results.SeedShard), and its share of
// max_usd (the study's cap × the shard's part of the estimated dollars,
// so that the shards together never spend more than the cap). done is true when the shard
// has no clips: its empty database is created (so that a merge finds
// every shard) and eval has nothing more to do.
func shardStudy(cmd *cobra.Command, st *study.Study, set *prompts.Set, log *slog.Logger) (done bool, err error) {
	s, err := resolveShard(cmd, log)
	if err != nil || s.IsWhole() {
		return false, err
	}
	clips, err := runner.ClipInfos(st)
	if err != nil {
		return false, err
	}
	costs := make([]float64, len(clips))
	usd := make([]float64, len(clips))
	var total float64
	for i, c := range clips {
		es, err := st.DryRun([]study.ClipInfo{c}, set)
		if err != nil {
			return false, usageError{err}
		}
		for _, e := range es {
			if e.Requests > 0 {
				costs[i] += shard.EvalCost(e.Requests, e.Images/e.Requests)
			}
			usd[i] += e.USD
		}
		total += usd[i]
	}
	idx, err := shard.Select(costs, s)
	if err != nil {
		return false, usageError{err}
	}
	ids := make([]string, len(idx))
	var mine float64
	for k, i := range idx {
		ids[k] = clips[i].ID
		mine += usd[i]
	}
	if !cmd.Flags().Changed("db") {
		st.DB = results.ShardDB(st.DB, s)
	}
	// Another split's shard databases beside this one hold trials it
	// cannot see: running it would pay for them again. (A --db named
	// like a shard database, as the job files pass, is checked too.)
	other, err := results.OtherShardings(st.DB)
	if err != nil {
		return false, err
	}
	if len(other) > 0 {
		return false, usageError{fmt.Errorf("shard databases of another split are there (%s): a %d-way split cannot see their trials and would send them again; "+
			"run with the number of shards they were made with, or move them aside", strings.Join(other, ", "), s.Count)}
	}
	if st.MaxUSD > 0 {
		share := 1 / float64(s.Count)
		if total > 0 {
			share = mine / total
		}
		// Never 0: a cap of 0 means no cap.
		capUSD := max(st.MaxUSD*share, 1e-9)
		log.Info("shard spending cap", "max_usd", fmt.Sprintf("%.4f", capUSD), "of_study_max_usd", st.MaxUSD,
			"estimated_share", fmt.Sprintf("%.1f%%", 100*share))
		st.MaxUSD = capUSD
	}
	log.Info("eval shard", "shard", s.String(), "clips", len(ids), "of", len(clips), "db", st.DB)
	dry, _ := cmd.Flags().GetBool("dry-run")
	if base, ok := results.BaseDB(st.DB); ok && len(ids) > 0 && !dry {
		// The merged database of earlier shards (or of a single run) may
		// hold this shard's trials: copied in, they are skipped, not sent
		// again, and their cost counts against the shard's cap.
		n, err := results.SeedShard(cmd.Context(), base, st.DB, st.Name, ids)
		if err != nil {
			return false, err
		}
		if n > 0 {
			log.Info("shard database seeded from the merged database: its trials are not sent again", "trials", n, "from", base, "db", st.DB)
		}
	}
	if len(ids) == 0 {
		if dry {
			return true, nil
		}
		db, err := results.Open(st.DB)
		if err != nil {
			return true, usageError{err}
		}
		log.Info("this shard has no clips (more shards than clips): nothing to evaluate", "db", st.DB)
		return true, db.Close()
	}
	st.Clips = ids
	return false, nil
}
