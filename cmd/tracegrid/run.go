package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/eval/perceiver"
	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/report"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/runner"
	"github.com/tracegrid/tracegrid/eval/score"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/pipeline"
	"github.com/tracegrid/tracegrid/scene"
)

// The main job's built-in study: the reference perceiver under the
// paper's visual-access conditions with the structured-trace prompt.
var runPolicies = []string{"native:1", "fps:4", "fps:16", "keyframes"}

const (
	runPrompt = "structured_trace"
	runStudy  = "run"
	// Frames go to the perceiver at 428×240, a typical model input size
	// (half the clip's 854×480): big enough for every event to be seen,
	// and it keeps the whole job at a few minutes on two cores.
	runImageWidth, runImageHeight = 428, 240
)

// The objects clips (CountVideoBench) get the benchmark's own protocol:
// ten uniformly sampled frames and its single question, at 960×540 (half
// of 1920×1080, about what a model's image encoder keeps).
var runObjectsPolicies = []string{"uniform:10"}

const (
	runObjectsPrompt                            = "countvideobench"
	runObjectsImageWidth, runObjectsImageHeight = 960, 540
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
			log := logger(verbose)
			ctx := cmd.Context()
			spec, err := sf.spec(cmd)
			if err != nil {
				return err
			}
			r, err := gpu.NewRenderer()
			if err != nil {
				return err
			}
			defer r.Close()
			info := r.Info()
			log.Info("GL", "renderer", info.Renderer, "platform", info.Platform)

			// 1. Render.
			renderDir := filepath.Join(out, "render")
			plan, err := spec.Plan()
			if err != nil {
				return err
			}
			if err := logViewStats(log, plan); err != nil {
				return err
			}
			log.Info("1/3 render", "grid", spec.Grid, "clips", len(plan), "out", renderDir)
			sum, err := pipeline.Render(ctx, spec, pipeline.Options{Out: renderDir, Renderer: r, Log: log, Progress: progress(len(plan), log)})
			if err != nil {
				return err
			}
			log.Info("rendered", "new", sum.Rendered, "kept", sum.Skipped, "elapsed", sum.Elapsed.Round(time.Millisecond))

			// 2. Serve the perceiver on a loopback port and evaluate it.
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			srv := &http.Server{Handler: perceiver.Handler(perceiver.Options{Logger: log}), ReadHeaderTimeout: 10 * time.Second}
			go srv.Serve(ln)
			defer func() {
				sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				srv.Shutdown(sctx)
			}()
			db, err := results.Open(filepath.Join(out, "results.sqlite"))
			if err != nil {
				return err
			}
			defer db.Close()
			// Event clips and objects clips are two groups of one study,
			// each with its own conditions.
			var eventIDs, objectIDs []string
			for _, p := range plan {
				if p.Domain == scene.ObjectsDomain {
					objectIDs = append(objectIDs, p.ID())
				} else {
					eventIDs = append(eventIDs, p.ID())
				}
			}
			baseURL := "http://" + ln.Addr().String() + "/v1"
			groups := []struct {
				clips    []string
				policies []string
				prompt   string
				w, h     int
			}{
				{eventIDs, runPolicies, runPrompt, runImageWidth, runImageHeight},
				{objectIDs, runObjectsPolicies, runObjectsPrompt, runObjectsImageWidth, runObjectsImageHeight},
			}
			for _, g := range groups {
				if len(g.clips) == 0 {
					continue
				}
				st := &study.Study{
					Name: runStudy, Manifest: filepath.Join(renderDir, pipeline.ManifestName), DB: filepath.Join(out, "results.sqlite"),
					Clips: g.clips, Repetitions: 1, Policies: g.policies, PromptNames: []string{g.prompt},
					Models: []study.Model{{Name: "reference-perceiver", BaseURL: baseURL, ModelID: perceiver.ModelID,
						ImageWidth: g.w, ImageHeight: g.h, Concurrency: 2, MaxRetries: 2}},
				}
				st.SetDefaults()
				if err := st.Validate(); err != nil {
					return err
				}
				log.Info("2/3 evaluate", "model", "reference-perceiver", "clips", len(g.clips), "conditions", len(st.Conditions), "db", st.DB)
				es, err := runner.Run(ctx, runner.Options{Study: st, Prompts: prompts.Default(), DB: db, Renderer: r, Log: log, Progress: evalProgress(log)})
				if err != nil && !errors.Is(err, runner.ErrBudget) {
					return err
				}
				log.Info("evaluated", "trials", es.Total, "new", es.Done, "failed", es.Failed, "not_applicable", es.NotApplicable, "kept", es.Skipped, "elapsed", es.Elapsed.Round(time.Millisecond))
			}

			// 3. Report.
			trials, err := db.Trials(ctx, results.Filter{Study: runStudy})
			if err != nil {
				return err
			}
			rep, err := report.Build(trials, report.Options{Study: runStudy, Tolerance: score.RateTolerance, Tau: score.Tau})
			if err != nil {
				return err
			}
			reportDir := filepath.Join(out, "report")
			if err := rep.WriteWith(reportDir, report.WriteOptions{Sheets: sheetsWith(r)}); err != nil {
				return err
			}
			log.Info("3/3 report", "trials", rep.Totals.Trials, "scored", rep.Totals.Scored, "failed", rep.Totals.Failed)
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s\nsummary: %s\n", filepath.Join(reportDir, "index.html"), filepath.Join(reportDir, "summary.json"))
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "out/run", "output directory")
	sf.register(cmd)
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "debug logging")
	return cmd
}
