package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/runner"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/pipeline"
)

// evalFlags are the one-model shortcuts of `tracegrid eval`.
type evalFlags struct {
	config, manifest, db, baseURL, model, apiKeyEnv, name string
	policies, prompts                                     []string
	concurrency, repeats, maxImages                       int
	dryRun, verbose                                       bool
	maxUSD                                                float64
}

func newEvalCmd() *cobra.Command {
	var f evalFlags
	cmd := &cobra.Command{
		Use:   "eval (--config study.yaml | --manifest M --base-url URL --model ID --policy P --prompt T …)",
		Short: "Evaluate models behind OpenAI-compatible APIs on a manifest's clips (resumable)",
		Long: `eval sends every clip of a manifest under every condition (policy × prompt), for every model
and repetition, to OpenAI-compatible chat servers, and stores one row per trial in an SQLite
database. A rerun skips finished trials: a killed run resumes with nothing lost and nothing paid
twice. --dry-run prints the requests, images, tokens and dollars it would spend. API keys are
read from the environment variable a model names (--api-key-env), never from flags or files.
The study file is documented in docs/study.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := f.study(cmd)
			if err != nil {
				return usageError{err}
			}
			set, err := st.PromptSet()
			if err != nil {
				return usageError{err}
			}
			log := logger(f.verbose)
			if f.dryRun {
				clips, err := clipInfos(st)
				if err != nil {
					return err
				}
				es, err := st.DryRun(clips, set)
				if err != nil {
					return usageError{err}
				}
				return study.WriteEstimates(os.Stdout, es)
			}
			db, err := results.Open(st.DB)
			if err != nil {
				return usageError{err}
			}
			defer db.Close()
			r, err := gpu.NewRenderer()
			if err != nil {
				return err
			}
			defer r.Close()
			log.Info("eval", "study", st.Name, "models", len(st.Models), "conditions", len(st.Conditions), "repetitions", st.Repetitions, "db", st.DB)
			sum, err := runner.Run(cmd.Context(), runner.Options{Study: st, Prompts: set, DB: db, Renderer: r, Log: log, Progress: evalProgress(log)})
			log.Info("eval finished", "trials", sum.Total, "skipped", sum.Skipped, "answered", sum.Done, "failed", sum.Failed,
				"cost_usd", fmt.Sprintf("%.4f", sum.CostUSD), "elapsed", sum.Elapsed.Round(time.Millisecond), "db", st.DB)
			if errors.Is(err, runner.ErrBudget) {
				fmt.Fprintln(os.Stderr, "tracegrid: stopped at the spending cap; raise --max-usd (or max_usd) and rerun to continue")
				return nil
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", "study YAML (docs/study.md); the flags below override it or, without it, define a one-model study")
	fl.StringVar(&f.manifest, "manifest", "", "manifest.jsonl of a render")
	fl.StringVar(&f.db, "db", "", "results database (default results.db)")
	fl.StringVar(&f.baseURL, "base-url", "", "OpenAI-compatible API root, e.g. http://127.0.0.1:8089/v1")
	fl.StringVar(&f.model, "model", "", "model id")
	fl.StringVar(&f.apiKeyEnv, "api-key-env", "", "environment variable holding the API key (empty: send none)")
	fl.StringVar(&f.name, "study", "", "study name (default: from the config file, or \"cli\")")
	fl.StringArrayVar(&f.policies, "policy", nil, "sampling policy (repeatable)")
	fl.StringArrayVar(&f.prompts, "prompt", nil, "prompt template name (repeatable); conditions are policies × prompts")
	fl.IntVar(&f.concurrency, "concurrency", 0, "requests in flight per model")
	fl.IntVar(&f.repeats, "repeats", 0, "repetitions of every trial")
	fl.IntVar(&f.maxImages, "max-images", 0, "images per request (0: unlimited)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print requests, images, tokens and cost per model and condition; send nothing")
	fl.Float64Var(&f.maxUSD, "max-usd", 0, "stop starting trials when the spend reaches this many dollars")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "debug logging")
	return cmd
}

// study builds the study from --config and/or the flags.
func (f evalFlags) study(cmd *cobra.Command) (*study.Study, error) {
	var st *study.Study
	if f.config != "" {
		var err error
		if st, err = study.Load(f.config); err != nil {
			return nil, err
		}
	} else {
		if f.manifest == "" || f.baseURL == "" || f.model == "" || len(f.policies) == 0 || len(f.prompts) == 0 {
			return nil, fmt.Errorf("give --config, or --manifest, --base-url, --model, --policy and --prompt")
		}
		st = &study.Study{Name: "cli", DB: study.DefaultDB, Repetitions: 1,
			Models: []study.Model{{Name: f.model, BaseURL: f.baseURL, ModelID: f.model, APIKeyEnv: f.apiKeyEnv, MaxRetries: 3}}}
	}
	ch := cmd.Flags().Changed
	if f.manifest != "" {
		st.Manifest = f.manifest
	}
	if f.db != "" {
		st.DB = f.db
	}
	if f.name != "" {
		st.Name = f.name
	}
	if len(f.policies) > 0 || len(f.prompts) > 0 {
		if len(f.policies) == 0 || len(f.prompts) == 0 {
			return nil, fmt.Errorf("--policy and --prompt go together (conditions are their product)")
		}
		st.Conditions, st.Policies, st.PromptNames = nil, f.policies, f.prompts
	}
	if ch("repeats") {
		st.Repetitions = f.repeats
	}
	if ch("max-usd") {
		st.MaxUSD = f.maxUSD
	}
	for i := range st.Models {
		if ch("concurrency") {
			st.Models[i].Concurrency = f.concurrency
		}
		if ch("max-images") {
			st.Models[i].MaxImages = f.maxImages
		}
	}
	st.SetDefaults()
	if err := st.Validate(); err != nil {
		return nil, err
	}
	return st, nil
}

// clipInfos lists the study's clips for a dry run.
func clipInfos(st *study.Study) ([]study.ClipInfo, error) {
	entries, _, err := pipeline.ReadManifest(st.Manifest)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, id := range st.Clips {
		want[id] = true
	}
	var out []study.ClipInfo
	for _, e := range entries {
		if len(want) > 0 && !want[e.ID] {
			continue
		}
		_, tr, _, err := pipeline.LoadClip(st.Manifest, e.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, study.ClipInfo{ID: e.ID, Domain: e.Domain, Duration: tr.Duration, FPS: float64(tr.FPS), N: tr.N,
			Events: tr.Times(), Width: tr.Width, Height: tr.Height, Seed: tr.Seed, Class: tr.Class})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("manifest %s: no clips to evaluate", filepath.Clean(st.Manifest))
	}
	return out, nil
}

// evalProgress shows done/failed/cost on a bar on a terminal, log lines
// every tenth otherwise.
func evalProgress(log *slog.Logger) func(runner.Progress) {
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		var bar *progressbar.ProgressBar
		return func(p runner.Progress) {
			if bar == nil {
				bar = progressbar.NewOptions(p.Total, progressbar.OptionSetWriter(os.Stderr), progressbar.OptionShowCount(),
					progressbar.OptionSetPredictTime(true), progressbar.OptionOnCompletion(func() { fmt.Fprintln(os.Stderr) }))
			}
			bar.Describe(fmt.Sprintf("trials (failed %d, $%.4f)", p.Failed, p.CostUSD))
			_ = bar.Set(p.Done + p.Failed + p.Skipped)
		}
	}
	last := -1
	return func(p runner.Progress) {
		done := p.Done + p.Failed + p.Skipped
		if step := done * 10 / max(p.Total, 1); step != last {
			last = step
			log.Info("progress", "trials", fmt.Sprintf("%d/%d", done, p.Total), "failed", p.Failed, "cost_usd", fmt.Sprintf("%.4f", p.CostUSD))
		}
	}
}
