// Package runner executes a study: every clip of a manifest under every
// condition (sampling policy × prompt), for every model and repetition,
// each trial one request (two for multi-turn verification) to an
// OpenAI-compatible server. Frames are rendered from the scenes, never
// decoded from our MP4s. Each finished trial is stored before the next is
// reported, so a killed run resumes where it stopped: finished trials are
// skipped and never requested (or paid for) twice.
package runner

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/client"
	"github.com/tracegrid/tracegrid/eval/frames"
	"github.com/tracegrid/tracegrid/eval/parse"
	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/pipeline"
	"github.com/tracegrid/tracegrid/scene"
	"github.com/tracegrid/tracegrid/trace"
)

// Progress is reported after every finished trial.
type Progress struct {
	Done, Failed, Skipped, Total int
	CostUSD                      float64
}

// Options of a run.
type Options struct {
	Study    *study.Study
	Prompts  *prompts.Set
	DB       *results.DB
	Renderer *gpu.Renderer
	// Client makes the API client of a model; nil uses client.New with the
	// key read from the model's environment variable.
	Client   func(m study.Model) (*client.Client, error)
	Progress func(Progress)
	Log      *slog.Logger
}

// Summary says what a run did.
type Summary struct {
	Total, Skipped, Done, Failed int
	CostUSD                      float64
	Elapsed                      time.Duration
	StoppedByBudget              bool
}

// ErrBudget is returned when the spend reached the study's max_usd: the
// trials in flight finished and were stored, no new one was started.
var ErrBudget = errors.New("spending cap reached")

// trial is one unit of work.
type trial struct {
	key   results.Key
	model int
	clip  *clipData
	cond  study.Condition
}

type clipData struct {
	clip  *scene.Clip
	tr    *trace.Trace
	raw   []byte // trace JSON as stored with each trial
	video string // MP4 path, for native video input
}

// Run executes the study. It returns ErrBudget (wrapped) when the spending
// cap stopped it, and ctx's error when cancelled; stored trials are kept
// in both cases.
func Run(ctx context.Context, opt Options) (Summary, error) {
	start := time.Now()
	st := opt.Study
	log := opt.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	clips, err := loadClips(st)
	if err != nil {
		return Summary{}, err
	}
	clients := make([]*client.Client, len(st.Models))
	for i, m := range st.Models {
		mk := opt.Client
		if mk == nil {
			mk = defaultClient
		}
		if clients[i], err = mk(m); err != nil {
			return Summary{}, fmt.Errorf("model %s: %w", m.Name, err)
		}
	}
	done, err := opt.DB.Done(ctx, st.Name)
	if err != nil {
		return Summary{}, err
	}
	var todo []trial
	sum := Summary{}
	for _, c := range clips {
		for _, cond := range st.Conditions {
			for mi, m := range st.Models {
				for rep := range st.Repetitions {
					k := results.Key{Study: st.Name, Model: m.Name, Clip: c.clip.P.ID(), Policy: cond.Policy, Prompt: cond.Prompt, Repeat: rep}
					sum.Total++
					if done[k] {
						sum.Skipped++
						continue
					}
					todo = append(todo, trial{key: k, model: mi, clip: c, cond: cond})
				}
			}
		}
	}
	r := &run{opt: opt, clients: clients, log: log, sum: &sum}
	r.report()
	if len(todo) > 0 && st.MaxUSD > 0 && r.spent(ctx) >= st.MaxUSD {
		sum.StoppedByBudget = true
		return sum, fmt.Errorf("%w: $%.4f already spent of $%.2f", ErrBudget, sum.CostUSD, st.MaxUSD)
	}

	// One worker per unit of total model concurrency: the clients bound
	// each model's in-flight requests and rates themselves.
	workers := 0
	for _, m := range st.Models {
		workers += max(1, m.Concurrency)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Repetitions of one (clip, condition, model) share their frames: a
	// worker takes them as one group and renders the frames once.
	jobs := make(chan []trial)
	var wg sync.WaitGroup
	var firstErr error
	var errOnce sync.Once
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err; cancel() })
	}
	for range min(workers, max(1, len(todo))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range jobs {
				if err := r.doGroup(ctx, g); err != nil {
					fail(err)
				}
			}
		}()
	}
feed:
	for _, g := range groups(todo) {
		if r.overBudget() {
			break
		}
		select {
		case jobs <- g:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	sum.StoppedByBudget = r.stopped
	sum.Elapsed = time.Since(start)
	switch {
	case firstErr != nil:
		return sum, firstErr
	case ctx.Err() != nil:
		return sum, ctx.Err()
	case sum.StoppedByBudget:
		return sum, fmt.Errorf("%w: $%.4f spent, cap $%.2f", ErrBudget, sum.CostUSD, st.MaxUSD)
	}
	return sum, nil
}

func defaultClient(m study.Model) (*client.Client, error) {
	key, err := m.APIKey()
	if err != nil {
		return nil, err
	}
	return client.New(client.Config{
		BaseURL: m.BaseURL, APIKey: key, Model: m.ModelID,
		Timeout:     time.Duration(m.TimeoutSeconds * float64(time.Second)),
		Concurrency: m.Concurrency, RequestsPerMinute: m.RequestsPerMinute, TokensPerMinute: m.TokensPerMinute,
		MaxRetries: retries(m.MaxRetries),
	})
}

// loadClips rebuilds the study's clips from the manifest.
func loadClips(st *study.Study) ([]*clipData, error) {
	entries, _, err := pipeline.ReadManifest(st.Manifest)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("manifest %s lists no clips", st.Manifest)
	}
	want := map[string]bool{}
	for _, id := range st.Clips {
		want[id] = true
	}
	var out []*clipData
	for _, e := range entries {
		if len(want) > 0 && !want[e.ID] {
			continue
		}
		delete(want, e.ID)
		c, tr, e, err := pipeline.LoadClip(st.Manifest, e.ID)
		if err != nil {
			return nil, err
		}
		raw, err := tr.Marshal()
		if err != nil {
			return nil, err
		}
		out = append(out, &clipData{clip: c, tr: tr, raw: raw, video: filepath.Join(filepath.Dir(st.Manifest), filepath.FromSlash(e.Video))})
	}
	for id := range want {
		return nil, fmt.Errorf("%w: %q", pipeline.ErrNoClip, id)
	}
	return out, nil
}

// run is the state shared by the workers.
type run struct {
	opt     Options
	clients []*client.Client
	log     *slog.Logger
	mu      sync.Mutex
	sum     *Summary
	stopped bool // the spending cap stopped the run
}

// overBudget reports (and remembers) that the spend reached max_usd.
func (r *run) overBudget() bool {
	limit := r.opt.Study.MaxUSD
	if limit <= 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sum.CostUSD >= limit {
		r.stopped = true
	}
	return r.stopped
}

// groups splits the work into runs of trials that differ only in their
// repetition (todo is ordered clip, condition, model, repetition).
func groups(todo []trial) [][]trial {
	var out [][]trial
	for i, t := range todo {
		if i > 0 {
			p := todo[i-1]
			if p.clip == t.clip && p.cond == t.cond && p.model == t.model {
				out[len(out)-1] = append(out[len(out)-1], t)
				continue
			}
		}
		out = append(out, []trial{t})
	}
	return out
}

// prepared is a group's request input, built once.
type prepared struct {
	in    prompts.Input
	plan  sampling.Plan
	bytes int64
	err   error
}

// doGroup renders the group's frames once and runs its trials in order,
// stopping early at the spending cap or on cancellation.
func (r *run) doGroup(ctx context.Context, g []trial) error {
	var p prepared
	p.in, p.plan, p.bytes, p.err = r.input(ctx, g[0], r.opt.Study.Models[g[0].model])
	for i, t := range g {
		if ctx.Err() != nil || (i > 0 && r.overBudget()) {
			return nil
		}
		if err := r.do(ctx, t, p); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) cost() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sum.CostUSD
}

// spent adds the cost already stored for this study (a resumed run keeps
// counting toward the same cap).
func (r *run) spent(ctx context.Context) float64 {
	ts, err := r.opt.DB.Trials(ctx, results.Filter{Study: r.opt.Study.Name})
	if err != nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range ts {
		r.sum.CostUSD += t.CostUSD
	}
	return r.sum.CostUSD
}

func (r *run) report() {
	if r.opt.Progress == nil {
		return
	}
	r.mu.Lock()
	p := Progress{Done: r.sum.Done, Failed: r.sum.Failed, Skipped: r.sum.Skipped, Total: r.sum.Total, CostUSD: r.sum.CostUSD}
	r.mu.Unlock()
	r.opt.Progress(p)
}

// do runs one trial and stores it. Only an error that stops the whole run
// (the database, rendering) is returned; a failed request is stored.
func (r *run) do(ctx context.Context, t trial, p prepared) error {
	m := r.opt.Study.Models[t.model]
	tmpl, err := r.opt.Prompts.Get(t.cond.Prompt)
	if err != nil {
		return err
	}
	in, plan, bytes, err := p.in, p.plan, p.bytes, p.err
	rec := results.Trial{
		Key: t.key, Domain: t.clip.tr.Domain, N: t.clip.tr.N, F: t.clip.tr.F, Seed: t.clip.tr.Seed, Trace: t.clip.raw,
		FrameTimes: plan.Times(), Images: len(plan.Frames), ImageBytes: bytes,
	}
	if err != nil {
		var ne notSentError
		if !errors.As(err, &ne) {
			return err
		}
		// The policy asks for more images than the model takes and the
		// model refuses thinning, or cannot sample this clip at all:
		// recorded as a permanent failure, not sent.
		rec.Error, rec.ErrorKind, rec.FinishedAt = err.Error(), results.KindInvalidRequest, time.Now().UTC()
		return r.store(ctx, rec)
	}
	msgs, err := tmpl.Build(in)
	if err != nil {
		return err
	}
	rec.PromptHash = prompts.Hash(msgs)
	d := r.opt.Study.Decoding
	req := client.Request{Messages: msgs, Temperature: d.Temperature, MaxTokens: d.MaxTokens, Seed: d.Seed}
	resp, err := r.clients[t.model].Chat(ctx, req)
	rec.Attempts = resp.Attempts
	if err == nil {
		rec.Responses = append(rec.Responses, resp.Text)
		rec.Usage = results.Usage(resp.Usage)
		rec.LatencyMS = resp.Latency.Milliseconds()
		if follow, ok := tmpl.FollowUpMessage(in); ok {
			req.Messages = append(append(msgs, chat.Message{Role: chat.RoleAssistant, Parts: []chat.Part{chat.Text(resp.Text)}}), follow)
			resp2, err2 := r.clients[t.model].Chat(ctx, req)
			rec.Attempts += resp2.Attempts
			if err2 == nil {
				rec.Responses = append(rec.Responses, resp2.Text)
				rec.Usage.PromptTokens += resp2.Usage.PromptTokens
				rec.Usage.CompletionTokens += resp2.Usage.CompletionTokens
				rec.Usage.TotalTokens += resp2.Usage.TotalTokens
				rec.LatencyMS += resp2.Latency.Milliseconds()
			}
			err = err2
		}
	}
	rec.CostUSD = float64(rec.Usage.PromptTokens)*m.Prices.InputPerMTok/1e6 + float64(rec.Usage.CompletionTokens)*m.Prices.OutputPerMTok/1e6
	if err != nil {
		if ctx.Err() != nil {
			return nil // cancelled: not stored, redone on resume
		}
		var ce *client.Error
		if errors.As(err, &ce) {
			rec.ErrorKind = string(ce.Kind)
			rec.Attempts += ce.Attempts
		} else {
			rec.ErrorKind = "error"
		}
		rec.Error = err.Error()
	} else {
		// The final reply is scored: the revised ledger in multi-turn
		// verification, the only one otherwise.
		p := parse.Parse(rec.Responses[len(rec.Responses)-1], t.clip.tr.Domain)
		rec.Count, rec.CountSource, rec.Events, rec.ParseFlags = p.Count, p.CountSource, p.Events, p.Flags
	}
	rec.FinishedAt = time.Now().UTC()
	return r.store(ctx, rec)
}

func (r *run) store(ctx context.Context, rec results.Trial) error {
	// Store even when ctx is being cancelled: the trial was paid for.
	if err := r.opt.DB.Put(context.WithoutCancel(ctx), rec); err != nil {
		return fmt.Errorf("store trial %v: %w", rec.Key, err)
	}
	r.mu.Lock()
	if rec.Error != "" {
		r.sum.Failed++
	} else {
		r.sum.Done++
	}
	r.sum.CostUSD += rec.CostUSD
	r.mu.Unlock()
	r.report()
	return nil
}

// notSentError is a trial the runner records as failed without sending
// it: its plan exceeds the model's max_images under limit_mode refuse, or
// its policy cannot sample the clip (keyframes on an objects clip).
type notSentError struct{ error }

// input renders the condition's frames for the model (or attaches the
// clip's video for native input to a video-capable model).
func (r *run) input(ctx context.Context, t trial, m study.Model) (prompts.Input, sampling.Plan, int64, error) {
	c := t.clip
	in := prompts.Input{Domain: c.tr.Domain, Class: c.tr.Class, Duration: c.clip.P.Duration, Detail: m.Detail}
	pol, err := sampling.Parse(t.cond.Policy)
	if err != nil {
		return in, sampling.Plan{}, 0, err
	}
	if c.tr.IsObjects() && study.EventPolicy(pol) {
		// Keyframes centre frames on true events, and a static-object clip
		// has none: it would show no frames while asking for N objects.
		return in, sampling.Plan{Policy: t.cond.Policy}, 0, notSentError{fmt.Errorf(
			"policy %s places frames at the true events, and objects clip %s has none (CountVideoBench samples uniform:10)", pol, c.clip.P.ID())}
	}
	if m.Video.Supported && isNative(t.cond.Policy) {
		b, err := os.ReadFile(c.video)
		if err != nil {
			return in, sampling.Plan{}, 0, err
		}
		in.VideoURL = "data:video/mp4;base64," + base64.StdEncoding.EncodeToString(b)
		return in, sampling.Plan{Policy: t.cond.Policy}, int64(len(b)), nil
	}
	sc := sampling.Clip{ID: c.clip.P.ID(), Duration: c.clip.P.Duration, FPS: float64(c.clip.P.FPS), Seed: c.clip.P.Seed, Events: c.tr.Times(),
		InView: InViewCounts(c.tr), Pixels: frames.NewLowRes(r.opt.Renderer, c.clip)}
	plan, err := pol.Plan(sc)
	if err != nil {
		return in, plan, 0, err
	}
	capped, err := sampling.ApplyLimit(plan, m.MaxImages, m.LimitMode)
	if err != nil {
		return in, plan, 0, notSentError{err}
	}
	format, err := encode.ParseImageFormat(orDefault(m.ImageFormat, "jpg"))
	if err != nil {
		return in, capped, 0, err
	}
	src, err := frames.NewSource(r.opt.Renderer, frames.Options{Format: format, Quality: m.JPEGQuality, Width: m.ImageWidth, Height: m.ImageHeight, Workers: 1})
	if err != nil {
		return in, capped, 0, err
	}
	var total int64
	for img, err := range src.Stream(ctx, c.clip, capped) {
		if err != nil {
			return in, capped, 0, err
		}
		total += int64(len(img.Data))
		in.Frames = append(in.Frames, prompts.Frame{Position: img.Frame.Position, T: img.Frame.T,
			DataURL: "data:" + img.MIME + ";base64," + base64.StdEncoding.EncodeToString(img.Data)})
	}
	return in, capped, total, nil
}

func isNative(policy string) bool {
	return policy == "native" || len(policy) > 7 && policy[:7] == "native:"
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// retries maps the study's max_retries (0 = none) to the client's (whose
// 0 means its default and a negative value none).
func retries(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// InViewCounts is, for a static-object clip, the number of objects in view
// per frame (single:best reads it); nil for event clips.
func InViewCounts(tr *trace.Trace) []int {
	if !tr.IsObjects() {
		return nil
	}
	out := make([]int, len(tr.Objects.InView))
	for k, ids := range tr.Objects.InView {
		out[k] = len(ids)
	}
	return out
}
