package job

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/tracegrid/tracegrid/domain"
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
	"github.com/tracegrid/tracegrid/trace"
)

// Conditions say how one group of clips is evaluated: the sampling
// policies, one prompt, and the size the frames are sent at.
type Conditions struct {
	Policies                []string
	Prompt                  string
	ImageWidth, ImageHeight int
}

// Study is what the main job evaluates: the reference perceiver, under
// Events on the event-domain clips and under Objects on the objects clips,
// as two groups of one study named Name in the results database.
type Study struct {
	Name string
	// Model is the perceiver's name in the results (it is served as
	// perceiver.ModelID).
	Model                   string
	Events, Objects         Conditions
	Concurrency, MaxRetries int
}

// BuiltinStudy is the study `tracegrid run` evaluates: the reference
// perceiver under the paper's visual-access conditions (native:1, fps:4,
// fps:16, keyframes) with the structured-trace prompt, frames at 428×240
// (half the default clip's 854×480, a typical model input size: big enough
// for every event to be seen, and it keeps the whole job at a few minutes
// on two cores); the objects clips (CountVideoBench) with the benchmark's
// own protocol, ten uniformly sampled frames and its single question at
// 960×540 (half of 1920×1080, about what a model's image encoder keeps).
// Each call returns a fresh value.
func BuiltinStudy() Study {
	return Study{
		Name:  "run",
		Model: "reference-perceiver",
		Events: Conditions{Policies: []string{"native:1", "fps:4", "fps:16", "keyframes"}, Prompt: "structured_trace",
			ImageWidth: 428, ImageHeight: 240},
		Objects: Conditions{Policies: []string{domain.Of(domain.Objects).Policy}, Prompt: domain.Of(domain.Objects).Prompt,
			ImageWidth: 960, ImageHeight: 540},
		Concurrency: 2, MaxRetries: 2,
	}
}

// Options of one run of the main job.
type Options struct {
	// Spec is what to render (pipeline.Render validates it).
	Spec pipeline.Spec
	// Out is the job's directory (render/, results.sqlite, report/);
	// required.
	Out string
	// Study is evaluated; the zero Study means BuiltinStudy().
	Study Study
	// Renderer, if set, renders the clips, the frames and the case sheets
	// and stays open; nil makes one and closes it.
	Renderer *gpu.Renderer
	// Log receives the job's progress lines; nil discards them.
	Log *slog.Logger
	// RenderProgress and EvalProgress, if set, are pipeline.Options.Progress
	// and runner.Options.Progress.
	RenderProgress func(done, total int)
	EvalProgress   func(runner.Progress)
}

// Result says what a run did and where the report is.
type Result struct {
	GL     gpu.Info
	Render pipeline.Summary
	// Eval has one summary per group evaluated: event clips first, then
	// objects clips; a group without clips is not evaluated.
	Eval []runner.Summary
	// Totals are the report's trial counts.
	Totals report.Totals
	// DB is the results database; ReportDir the report, with Index
	// (index.html) and Summary (summary.json) in it.
	DB, ReportDir, Index, Summary string
}

// Run does the main job: render, serve the perceiver, evaluate, report.
// A spending cap reached in a group (runner.ErrBudget) does not stop it;
// every other error does, and is returned as the stage gave it (so
// errors.Is finds pipeline's, study's and runner's sentinels).
func Run(ctx context.Context, opt Options) (res Result, err error) {
	if opt.Out == "" {
		return res, errors.New("job: no output directory")
	}
	log := opt.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	st := opt.Study
	if st.Name == "" {
		st = BuiltinStudy()
	}
	r := opt.Renderer
	if r == nil {
		if r, err = gpu.NewRenderer(); err != nil {
			return res, err
		}
		defer r.Close()
	}
	res.GL = r.Info()
	log.Info("GL", "renderer", res.GL.Renderer, "platform", res.GL.Platform)

	// 1. Render.
	renderDir := filepath.Join(opt.Out, "render")
	plan, err := opt.Spec.Plan()
	if err != nil {
		return res, err
	}
	if err := LogViewStats(log, plan); err != nil {
		return res, err
	}
	log.Info("1/3 render", "grid", opt.Spec.Grid, "clips", len(plan), "out", renderDir)
	res.Render, err = pipeline.Render(ctx, opt.Spec, pipeline.Options{Out: renderDir, Renderer: r, Log: log, Progress: opt.RenderProgress})
	if err != nil {
		return res, err
	}
	log.Info("rendered", "new", res.Render.Rendered, "kept", res.Render.Skipped, "elapsed", res.Render.Elapsed.Round(time.Millisecond))

	// 2. Serve the perceiver on a loopback port and evaluate it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return res, err
	}
	srv := &http.Server{Handler: perceiver.Handler(perceiver.Options{Logger: log}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	res.DB = filepath.Join(opt.Out, "results.sqlite")
	db, err := results.Open(res.DB)
	if err != nil {
		return res, err
	}
	defer db.Close()
	// Event clips and objects clips are two groups of one study,
	// each with its own conditions.
	var eventIDs, objectIDs []string
	for _, p := range plan {
		if domain.Of(p.Domain).Prompt != "" { // a domain with its own protocol
			objectIDs = append(objectIDs, p.ID())
		} else {
			eventIDs = append(eventIDs, p.ID())
		}
	}
	baseURL := "http://" + ln.Addr().String() + "/v1"
	groups := []struct {
		clips []string
		c     Conditions
	}{
		{eventIDs, st.Events},
		{objectIDs, st.Objects},
	}
	for _, g := range groups {
		if len(g.clips) == 0 {
			continue
		}
		s := &study.Study{
			Name: st.Name, Manifest: filepath.Join(renderDir, pipeline.ManifestName), DB: res.DB,
			Clips: g.clips, Repetitions: 1, Policies: g.c.Policies, PromptNames: []string{g.c.Prompt},
			Models: []study.Model{{Name: st.Model, BaseURL: baseURL, ModelID: perceiver.ModelID,
				ImageWidth: g.c.ImageWidth, ImageHeight: g.c.ImageHeight, Concurrency: st.Concurrency, MaxRetries: st.MaxRetries}},
		}
		s.SetDefaults()
		if err := s.Validate(); err != nil {
			return res, err
		}
		log.Info("2/3 evaluate", "model", st.Model, "clips", len(g.clips), "conditions", len(s.Conditions), "db", s.DB)
		es, err := runner.Run(ctx, runner.Options{Study: s, Prompts: prompts.Default(), DB: db, Renderer: r, Log: log, Progress: opt.EvalProgress})
		if err != nil && !errors.Is(err, runner.ErrBudget) {
			return res, err
		}
		res.Eval = append(res.Eval, es)
		log.Info("evaluated", "trials", es.Total, "new", es.Done, "failed", es.Failed, "not_applicable", es.NotApplicable, "kept", es.Skipped, "elapsed", es.Elapsed.Round(time.Millisecond))
	}

	// 3. Report.
	trials, err := db.Trials(ctx, results.Filter{Study: st.Name})
	if err != nil {
		return res, err
	}
	rep, err := report.Build(trials, report.Options{Study: st.Name, Tolerance: score.RateTolerance, Tau: score.Tau})
	if err != nil {
		return res, err
	}
	res.ReportDir = filepath.Join(opt.Out, "report")
	if err := rep.WriteWith(res.ReportDir, report.WriteOptions{Sheets: SheetsWith(r)}); err != nil {
		return res, err
	}
	res.Totals = rep.Totals
	res.Index, res.Summary = filepath.Join(res.ReportDir, "index.html"), filepath.Join(res.ReportDir, "summary.json")
	log.Info("3/3 report", "trials", rep.Totals.Trials, "scored", rep.Totals.Scored, "failed", rep.Totals.Failed)
	return res, nil
}

// LogViewStats states, for the objects clips of a plan, how often objects
// leave the view, next to CountVideoBench's 83.0 % and 3.29 (§4.3). The
// traces are pure functions of the parameters, so nothing is rendered.
func LogViewStats(log *slog.Logger, plan []scene.Params) error {
	var trs []*trace.Trace
	for _, p := range plan {
		if !domain.Of(p.Domain).ViewStats {
			continue
		}
		c, err := scene.New(p)
		if err != nil {
			return err
		}
		trs = append(trs, c.Trace())
	}
	if len(trs) == 0 {
		return nil
	}
	v := trace.SummarizeViews(trs)
	log.Info("objects in view", "clips", v.Clips,
		"share_with_an_object_leaving", fmt.Sprintf("%.1f%% (paper 83.0%%)", 100*v.Share),
		"mean_objects_leaving", fmt.Sprintf("%.2f (paper 3.29)", v.MeanLeaving))
	return nil
}
