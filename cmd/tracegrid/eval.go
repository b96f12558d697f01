package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"sort"
	"strings"
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
	config, manifest, db, baseURL, model, apiKeyEnv, name, labels string
	sendAs, server                                                string
	policies, prompts                                             []string
	concurrency, repeats, maxImages                               int
	dryRun, verbose, json                                         bool
	maxUSD                                                        float64
	batchOut                                                      string
	batchIn                                                       []string
	newPrompts, resendBatched                                     bool
	acceptInputMismatch                                           bool
}

func newEvalCmd() *cobra.Command {
	var f evalFlags
	cmd := &cobra.Command{
		Use:   "eval (--config study.yaml | --manifest M --base-url URL --model ID --policy P --prompt T …) [--batch-out DIR | --batch-in FILE…]",
		Short: "Evaluate models (OpenAI-compatible APIs, Gemini) on a manifest's clips (resumable)",
		Long: `eval sends every clip of a manifest under every condition (policy × prompt), for every model
and repetition, to the models' APIs — OpenAI-compatible chat servers, or Gemini through its own
API — and stores one row per trial in an SQLite database. A rerun skips finished trials: a
killed run resumes with nothing lost and nothing paid twice. --dry-run prints the requests,
images, tokens and dollars it would spend; with --json as one JSON object, and after a run
--json prints a last line {"summary": …} (answered, failed, unanswered by kind, spend). The
manifest and every video and trace it names must be regular files (exit 2). API keys are read from the environment variable a
model names (--api-key-env; without it, flag mode reads OPENAI_API_KEY when set), never from
flags or files. The study file is documented in docs/study.md.

--batch-out DIR writes the trials without an answer as OpenAI Batch input files (one model per
file, split at 50,000 lines and 200 MB; vLLM's run-batch reads them too) and sends nothing;
submitting them is your step. --batch-in FILE… records batch output files as trials at the
models' batch prices (idempotent; failed, unknown and malformed lines are listed; exit 1 when
any). A template changed since a condition's stored trials is refused (exit 2) unless
--new-prompts records it as a new condition.

One run at a time per study and database: a second is refused (exit 1) while the first holds
the study's lock. The first Ctrl-C (or SIGTERM) starts no new request, waits up to 30 s for
the requests already sent and stores their replies, then exits 130; a second Ctrl-C stops at
once. Exit status: 0 when every trial has an answer; 1 when any has none (failed, or left
by --max-usd or an interrupt: a line counts them by error kind); 2 for bad input (flags,
study, manifest, a missing API key); 130 when interrupted.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && len(f.batchIn) == 0 {
				return fmt.Errorf("unexpected arguments %q (only --batch-in takes several files)", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f.batchIn = append(f.batchIn, args...)
			if f.batchOut != "" && len(f.batchIn) > 0 || (f.batchOut != "" || len(f.batchIn) > 0) && f.dryRun {
				return usageError{errors.New("--batch-out, --batch-in and --dry-run are separate steps; give one")}
			}
			st, err := f.study(cmd)
			if err != nil {
				return usageError{err}
			}
			set, err := st.PromptSet()
			if err != nil {
				return usageError{err}
			}
			log := logger(f.verbose)
			// Every file the manifest names is checked before anything
			// reads it, and what reads the files before the run (their
			// hashes, the dry run) ends on a signal: a path that blocks
			// or never ends cannot hang eval.
			if err := checkManifestFiles(st); err != nil {
				return err
			}
			var done bool
			err = interruptibly(cmd.Context(), func() (err error) {
				done, err = shardStudy(cmd, st, set, log) // --shard (shardflags.go)
				return err
			})
			if err != nil || done {
				return err
			}
			// The dry run plans every trial: a plan the clips cannot have
			// (fps:60 on a 30 fps clip, a sampling bound) is bad input found
			// before anything is sent, not a failure halfway through.
			var es []study.Estimate
			err = interruptibly(cmd.Context(), func() error {
				clips, err := runner.ClipInfos(st)
				if err != nil {
					return err
				}
				if es, err = st.DryRun(clips, set); err != nil {
					return usageError{err}
				}
				return nil
			})
			if err != nil {
				return err
			}
			if f.dryRun {
				if f.json {
					return writeEstimatesJSON(os.Stdout, es)
				}
				return study.WriteEstimates(os.Stdout, es)
			}
			// Every key before anything is opened: a missing one is bad
			// input. Batch files need none (nothing is sent).
			if f.batchOut == "" && len(f.batchIn) == 0 {
				for _, m := range st.Models {
					if _, err := m.APIKey(); err != nil {
						return usageError{err}
					}
				}
			}
			for _, p := range f.batchIn {
				if _, err := os.Stat(p); err != nil {
					return usageError{fmt.Errorf("--batch-in: %w", err)}
				}
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
			opts := runner.Options{Study: st, Prompts: set, DB: db, Renderer: r, Log: log, Progress: evalProgress(log),
				NewPrompts: f.newPrompts, ResendBatched: f.resendBatched, AcceptInputMismatch: f.acceptInputMismatch}
			switch {
			case f.batchOut != "":
				return writeBatch(cmd.Context(), opts, f.batchOut)
			case len(f.batchIn) > 0:
				return readBatch(cmd.Context(), opts, f.batchIn)
			}
			log.Info("eval", "study", st.Name, "models", len(st.Models), "conditions", len(st.Conditions), "repetitions", st.Repetitions, "db", st.DB)
			// The first Ctrl-C (cmd.Context) stops new requests and waits
			// for those in flight; the second, or drainTimeout, abandons them
			// (hardContext).
			drain := cmd.Context()
			finished := make(chan struct{})
			defer close(finished)
			go func() {
				select {
				case <-drain.Done():
					select {
					case <-finished: // ended after the run (the process exiting)
						return
					default:
					}
					log.Warn("interrupted: no new requests; storing the replies in flight", "wait_up_to", drainTimeout, "stop_now", "Ctrl-C again")
				case <-finished:
				}
			}()
			opts.Drain = drain
			sum, err := runner.Run(hardContext(drain), opts)
			if sum.Total == 0 && err != nil {
				if errors.Is(err, runner.ErrPromptChanged) {
					return usageError{err}
				}
				return err // refused before it started (bad clips, the study's lock)
			}
			log.Info("eval finished", "trials", sum.Total, "skipped", sum.Skipped, "answered", sum.Done, "failed", sum.Failed, "not_applicable", sum.NotApplicable,
				"cost_usd", fmt.Sprintf("%.4f", sum.CostUSD), "study_spend_usd", fmt.Sprintf("%.4f", sum.PriorUSD+sum.CostUSD),
				"elapsed", sum.Elapsed.Round(time.Millisecond), "db", st.DB)
			if f.json {
				if err := writeSummaryJSON(os.Stdout, st, sum); err != nil {
					return err
				}
			}
			switch {
			case errors.Is(err, runner.ErrBudget):
				fmt.Fprintf(os.Stderr, "tracegrid: stopped at the spending cap ($%.4f spent of $%.2f); raise --max-usd (or max_usd) and rerun to continue\n",
					sum.PriorUSD+sum.CostUSD, st.MaxUSD)
			case err != nil:
				return err
			}
			if !sum.Answered() {
				// Exit 1: a trial that was to run has no answer.
				return fmt.Errorf("%s; rerun to retry those that can be", unansweredLine(sum))
			}
			return nil
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
	fl.StringVar(&f.labels, "labels", "", "frame labels for every condition: time, position or none (default per policy: position for keyframes, shuffled:M and single:*, time otherwise)")
	fl.StringVar(&f.sendAs, "as", "", "how every condition's frames are sent: images, or video (one constant-rate MP4 of the sampled frames; in flag mode the model is then taken to accept video_url parts) (docs/study.md, \"Frames as one video\")")
	fl.StringVar(&f.server, "server", "", "every openai model's server kind: vllm, sglang or other (what a video request carries to keep every frame)")
	fl.IntVar(&f.concurrency, "concurrency", 0, "requests in flight per model")
	fl.IntVar(&f.repeats, "repeats", 0, "repetitions of every trial")
	fl.IntVar(&f.maxImages, "max-images", 0, "images per request (0: unlimited)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print requests, images, tokens and cost per model and condition; send nothing")
	fl.Float64Var(&f.maxUSD, "max-usd", 0, "stop starting trials when the spend reaches this many dollars")
	fl.StringVar(&f.batchOut, "batch-out", "", "write the trials without an answer as OpenAI Batch input files into this directory; send nothing")
	fl.StringArrayVar(&f.batchIn, "batch-in", nil, "record batch output files (JSONL) as trials; more files may follow as arguments")
	fl.BoolVar(&f.newPrompts, "new-prompts", false, "record a condition whose template changed since its stored trials as a new condition (prompt \"<name>+<hash>\") instead of refusing")
	fl.BoolVar(&f.resendBatched, "resend-batched", false, "send online the trials written to batch files whose output was not read back (paying for them again if the batch also runs)")
	fl.BoolVar(&f.acceptInputMismatch, "accept-input-mismatch", false, "keep a trial whose server reported fewer prompt tokens than its frames cost as answered, marked, instead of input_mismatch (docs/study.md, \"Input audit\")")
	fl.BoolVar(&f.json, "json", false, "print as JSON: the estimate with --dry-run; after a run, a last line {\"summary\": …} (docs/study.md)")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "debug logging")
	registerShardFlags(fl)
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
		// Flag mode: OPENAI_BASE_URL and OPENAI_API_KEY stand in for flags
		// that are not given, as in OpenAI's own clients.
		baseURL, keyEnv := f.baseURL, f.apiKeyEnv
		if baseURL == "" {
			baseURL = strings.TrimSpace(os.Getenv("OPENAI_BASE_URL"))
		}
		if keyEnv == "" && !cmd.Flags().Changed("api-key-env") && strings.TrimSpace(os.Getenv("OPENAI_API_KEY")) != "" {
			keyEnv = "OPENAI_API_KEY"
		}
		if f.manifest == "" || baseURL == "" || f.model == "" || len(f.policies) == 0 || len(f.prompts) == 0 {
			return nil, fmt.Errorf("give --config, or --manifest, --base-url (or OPENAI_BASE_URL), --model, --policy and --prompt")
		}
		st = &study.Study{Name: "cli", DB: study.DefaultDB, Repetitions: 1,
			Models: []study.Model{{Name: f.model, BaseURL: baseURL, ModelID: f.model, APIKeyEnv: keyEnv, MaxRetries: 3}}}
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
		if ch("server") {
			st.Models[i].Server = f.server
		}
		if f.config == "" && f.sendAs == study.SendVideo {
			// Flag mode declares the model: asking for video says its
			// server takes a video_url part.
			st.Models[i].Video.Supported = true
		}
	}
	st.SetDefaults()
	for i := range st.Conditions {
		if ch("labels") {
			st.Conditions[i].Labels = f.labels
		}
		if ch("as") {
			st.Conditions[i].SendAs = f.sendAs
			if !ch("labels") {
				st.Conditions[i].Labels = ""
			}
			st.Conditions[i] = st.Conditions[i].WithDefaults()
		}
	}
	if err := st.Validate(); err != nil {
		return nil, err
	}
	return st, nil
}

// checkManifestFiles refuses, as bad input (exit 2), a study manifest
// that is not a regular file (a directory: give its manifest.jsonl) and
// any video or trace of its selected clips that exists but is not a
// regular file: a FIFO blocks its reader until a writer comes, /dev/zero
// never ends. tracegrid import refuses such videos the same way
// (natural.importRow). It only stats the paths; a missing file is left
// to the loaders, whose errors name the clip.
func checkManifestFiles(st *study.Study) error {
	if fi, err := os.Stat(st.Manifest); err == nil && fi.IsDir() {
		return usageError{fmt.Errorf("the manifest %s is a directory: give the manifest.jsonl file in it", st.Manifest)}
	}
	if err := regularFile(st.Manifest, "the manifest"); err != nil {
		return err
	}
	entries, err := pipeline.LoadManifest(st.Manifest)
	if err != nil {
		return err
	}
	if entries, err = runner.SelectEntries(st, entries); err != nil {
		return err
	}
	for _, e := range entries {
		video, err := e.VideoPath(st.Manifest)
		if err != nil {
			return err
		}
		if err := regularFile(video, "clip "+e.ID+": video"); err != nil {
			return err
		}
		if e.Trace == "" {
			continue
		}
		tr, err := e.TracePath(st.Manifest)
		if err != nil {
			return err
		}
		if err := regularFile(tr, "clip "+e.ID+": trace"); err != nil {
			return err
		}
	}
	return nil
}

// regularFile is a usage error when path exists and is not a regular
// file (after symbolic links); what names it in the message.
func regularFile(path, what string) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return nil // the loaders report a missing or unreadable file
	case fi.IsDir():
		return usageError{fmt.Errorf("%s %s is a directory, not a file", what, path)}
	case !fi.Mode().IsRegular():
		return usageError{fmt.Errorf("%s %s is not a regular file (%s): only regular files are read", what, path, fileKind(fi.Mode()))}
	}
	return nil
}

// fileKind names a non-regular file's type for messages.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "mode " + m.String()
}

// interruptibly runs fn, which only reads, and returns its error, or
// ctx's as soon as ctx ends (a signal: exit 130), abandoning fn's
// goroutine to the process's exit. A read that does not return (a hung
// network file system, a file swapped for a FIFO after the check) then
// cannot keep eval from ending on SIGINT or SIGTERM.
func interruptibly(ctx context.Context, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// writeEstimatesJSON writes the dry run as one JSON object: the rows of
// study.WriteEstimates's table (study.Estimate's fields) and their total.
func writeEstimatesJSON(w io.Writer, es []study.Estimate) error {
	// The total has the table's numeric columns (no model, policy, prompt).
	var total struct {
		Requests     int     `json:"requests"`
		Images       int     `json:"images"`
		VideoFrames  int     `json:"video_frames"`
		Refused      int     `json:"refused"`
		Unsupported  int     `json:"unsupported"`
		InputTokens  int     `json:"input_tokens"`
		OutputTokens int     `json:"output_tokens"`
		USD          float64 `json:"usd"`
	}
	for _, e := range es {
		total.Requests += e.Requests
		total.Images += e.Images
		total.VideoFrames += e.VideoFrames
		total.Refused += e.Refused
		total.Unsupported += e.Unsupported
		total.InputTokens += e.InputTokens
		total.OutputTokens += e.OutputTokens
		total.USD += e.USD
	}
	if es == nil {
		es = []study.Estimate{}
	}
	return json.NewEncoder(w).Encode(map[string]any{"estimates": es, "total": total})
}

// evalSummary is the last line of `eval --json` (docs/study.md, "Output").
type evalSummary struct {
	Study string `json:"study"`
	DB    string `json:"db"`
	// This run's trials: to run, found finished, answered, failed, not
	// applicable.
	Trials        int `json:"trials"`
	Skipped       int `json:"skipped"`
	Answered      int `json:"answered"`
	Failed        int `json:"failed"`
	NotApplicable int `json:"not_applicable"`
	// Unanswered counts the trials of the study's scope without an answer
	// by error kind (runner.Summary.Unanswered; "not_run" for those never
	// stored); empty when every trial has one.
	Unanswered      map[string]int `json:"unanswered"`
	CostUSD         float64        `json:"cost_usd"`
	StudySpendUSD   float64        `json:"study_spend_usd"`
	MaxUSD          float64        `json:"max_usd"`
	StoppedByBudget bool           `json:"stopped_by_budget"`
	Interrupted     bool           `json:"interrupted"`
	ElapsedS        float64        `json:"elapsed_s"`
}

// writeSummaryJSON writes {"summary": …} as one line.
func writeSummaryJSON(w io.Writer, st *study.Study, sum runner.Summary) error {
	un := sum.Unanswered
	if un == nil {
		un = map[string]int{}
	}
	return json.NewEncoder(w).Encode(map[string]evalSummary{"summary": {
		Study: st.Name, DB: st.DB, Trials: sum.Total, Skipped: sum.Skipped, Answered: sum.Done, Failed: sum.Failed,
		NotApplicable: sum.NotApplicable, Unanswered: un, CostUSD: sum.CostUSD, StudySpendUSD: sum.PriorUSD + sum.CostUSD,
		MaxUSD: st.MaxUSD, StoppedByBudget: sum.StoppedByBudget, Interrupted: sum.Interrupted,
		ElapsedS: sum.Elapsed.Seconds()}})
}

// unansweredLine is the summary of the trials without an answer, by
// kind, most frequent first: "3 of 42 trials have no answer: auth 2,
// not_run 1".
func unansweredLine(sum runner.Summary) string {
	kinds := make([]string, 0, len(sum.Unanswered))
	n := 0
	for k, c := range sum.Unanswered {
		kinds = append(kinds, k)
		n += c
	}
	sort.Slice(kinds, func(i, j int) bool {
		a, b := sum.Unanswered[kinds[i]], sum.Unanswered[kinds[j]]
		return a > b || a == b && kinds[i] < kinds[j]
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d", k, sum.Unanswered[k])
	}
	return fmt.Sprintf("%d of %d trials have no answer: %s", n, sum.Total, strings.Join(parts, ", "))
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
