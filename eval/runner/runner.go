// Package runner executes a study: every clip of a manifest under every
// condition (sampling policy × prompt), for every model and repetition,
// each trial one request (two for multi-turn verification) to the model's
// API through the runner's Model seam (model.go: OpenAI-compatible servers,
// Gemini; batch files in batch.go). Images come through the runner's
// FrameSource seam (source.go): a rendered clip's frames are rendered from
// its scene, never decoded from our MP4s; an imported natural video's are
// decoded from the file. Each finished trial is stored before the next is
// reported, so a killed run resumes where it stopped: finished trials are
// skipped and never requested (or paid for) twice. A run holds its study's
// lock on the database (results.DB.LockStudy), so two runs never send the
// same trial; it keeps to the study's max_usd (budget), stops gracefully
// on Options.Drain, and reports the trials without an answer by kind
// (Summary.Unanswered). The rules are documented in docs/study.md.
package runner

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tracegrid/tracegrid/domain"
	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/client"
	"github.com/tracegrid/tracegrid/eval/frames"
	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/internal/pool"
	"github.com/tracegrid/tracegrid/internal/textin"
	"github.com/tracegrid/tracegrid/natural"
	"github.com/tracegrid/tracegrid/pipeline"
	"github.com/tracegrid/tracegrid/trace"
)

// Progress is reported after every finished trial.
type Progress struct {
	Done, Failed, Skipped, Total int
	CostUSD                      float64 // spent by this run so far
}

// Options of a run.
type Options struct {
	Study   *study.Study
	Prompts *prompts.Set
	DB      *results.DB
	// Renderer draws the frames of rendered clips (RenderedFrames); a
	// study of imported videos only needs none.
	Renderer *gpu.Renderer
	// Frames, when set, is the source of every clip's images (tests hand
	// in a fake); nil picks by clip: RenderedFrames{Renderer} for a clip
	// rendered from a scene, DecodedFrames for an imported video.
	Frames FrameSource
	// Client makes the client of a model; nil uses NewModel (the model's
	// provider, with the key read from the model's environment variable,
	// its retry wait cap and request deadline, and Log). Tests hand in
	// other Models, e.g. the reference perceiver in process.
	Client   func(m study.Model) (Model, error)
	Progress func(Progress)
	Log      *slog.Logger
	// Drain, when it ends, stops the run gracefully (the CLI ends it on the
	// first Ctrl-C): no request starts after it, the requests already sent
	// are waited for and their trials stored, and Run returns an error
	// wrapping ErrInterrupted and Drain's cause. Ending ctx instead
	// abandons the requests in flight (their trials are not stored and are
	// sent again by a rerun). nil: never.
	Drain context.Context
	// NewPrompts records the trials of a condition whose template changed
	// since its stored trials were asked as a new condition (prompt
	// "<name>+<hash>") instead of refusing the run (ErrPromptChanged).
	NewPrompts bool
	// ResendBatched sends online the trials written to a batch file whose
	// output was not read back yet; without it they are left alone and
	// counted as results.KindBatchPending.
	ResendBatched bool
	// AcceptInputMismatch keeps a trial whose server reported fewer prompt
	// tokens than its frames cost as an answered trial, marked
	// (results.AuditAccepted), instead of storing it as
	// results.KindInputMismatch and stopping after MismatchStop in a row
	// (audit.go).
	AcceptInputMismatch bool
}

// Summary says what a run did.
type Summary struct {
	Total, Skipped, Done, Failed int
	// NotApplicable counts the trials stored as not applicable (their
	// condition gives no frames for the clip): never sent.
	NotApplicable int
	// CostUSD is the recorded cost of the trials this run stored; PriorUSD
	// the study's recorded spend before it (earlier, resumed runs), which
	// counts toward max_usd too.
	CostUSD, PriorUSD float64
	Elapsed           time.Duration
	StoppedByBudget   bool
	Interrupted       bool // Drain ended before every trial was stored
	// Unanswered counts the trials of this run's scope (the study's clips ×
	// conditions × models × repetitions) that have no answer when the run
	// ends, by error kind: failures stored by this run or, permanent ones,
	// by an earlier run (invalid_request, …), and NotRun for trials never
	// stored (left by the spending cap or an interrupt). Empty when every
	// trial has an answer.
	Unanswered map[string]int
}

// NotRun is the Summary.Unanswered kind of a trial that was never stored.
const NotRun = "not_run"

// Answered reports whether every trial of the run's scope has an answer.
func (s Summary) Answered() bool { return len(s.Unanswered) == 0 }

// ErrBudget is returned when the spend reached the study's max_usd: the
// trials in flight finished and were stored, no new one was started.
var ErrBudget = errors.New("spending cap reached")

// ErrInterrupted is returned (wrapping Drain's cause) when Options.Drain
// ended the run: the trials in flight were finished and stored, no new one
// was started.
var ErrInterrupted = errors.New("interrupted")

// Ceilings on the token usage a server may report for one request; a
// reply that reports more (or a negative count, or more completion tokens
// than decoding.max_tokens allowed) is recorded as a provider error
// (results.KindBadUsage), never as spend beyond what the request could
// cost. No current model takes 10 M tokens of context or writes 1 M.
const (
	MaxPromptTokens     = 10_000_000
	MaxCompletionTokens = 1_000_000
)

// trial is one unit of work.
type trial struct {
	key   results.Key
	model int
	clip  *clipData
	cond  study.Condition
}

type clipData struct {
	entry pipeline.Entry
	clip  *Clip
	tr    *trace.Trace
	raw   []byte // trace JSON as stored with each trial
}

// trialKey is the results key of one trial; the one place a key is built
// from a study's parts.
func trialKey(st *study.Study, m study.Model, clip string, cond study.Condition, rep int) results.Key {
	return results.Key{Study: st.Name, Model: m.Name, Clip: clip, Policy: cond.Policy, Labels: cond.WithDefaults().Labels, Prompt: cond.KeyPrompt(), Repeat: rep}
}

// condKey is k without its clip and repetition: the model × condition
// whose trials share an expected cost.
func condKey(k results.Key) results.Key {
	k.Clip, k.Repeat = "", 0
	return k
}

// Run executes the study. It holds the study's lock on the database for
// its whole length (results.DB.LockStudy: a second run of the same study on
// the same database is refused with results.ErrBusy, and sends nothing).
// It returns ErrBudget (wrapped) when the spending cap stopped it,
// ErrInterrupted (wrapped) when Options.Drain did, and ctx's error when
// cancelled; stored trials are kept in every case. A trial that failed is
// stored and counted in Summary.Unanswered, not returned as an error.
func Run(ctx context.Context, opt Options) (Summary, error) {
	start := time.Now()
	st := opt.Study
	log := opt.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	drain := opt.Drain
	if drain == nil {
		drain = context.Background()
	}
	clips, err := loadClips(st)
	if err != nil {
		return Summary{}, err
	}
	if err := checkVideoConditions(st, clips); err != nil {
		return Summary{}, err
	}
	models, err := makeModels(opt, log)
	if err != nil {
		return Summary{}, err
	}
	defer func() {
		for _, m := range models {
			closeModel(m)
		}
	}()
	lock, err := opt.DB.LockStudy(st.Name)
	if err != nil {
		return Summary{}, err
	}
	defer lock.Unlock()
	// A changed template is refused (or, with NewPrompts, renamed) before
	// anything is sent; the study as run is recorded.
	hashes, err := prepareStudy(ctx, &opt)
	if err != nil {
		return Summary{}, err
	}
	st = opt.Study
	audit, err := newAuditor(ctx, opt, log)
	if err != nil {
		return Summary{}, err
	}
	stored, err := opt.DB.Outcomes(ctx, st.Name)
	if err != nil {
		return Summary{}, err
	}
	var todo []trial
	var scope []results.Key
	sum := Summary{}
	for _, c := range clips {
		for _, cond := range st.Conditions {
			for mi, m := range st.Models {
				for rep := range st.Repetitions {
					k := trialKey(st, m, c.entry.ID, cond, rep)
					scope = append(scope, k)
					sum.Total++
					if o, ok := stored[k]; ok && o.Done() {
						sum.Skipped++
						continue
					}
					todo = append(todo, trial{key: k, model: mi, clip: c, cond: cond})
				}
			}
		}
	}
	for _, o := range stored {
		sum.PriorUSD += o.CostUSD
	}
	todo, pending, err := holdBatched(ctx, opt, todo)
	if err != nil {
		return Summary{}, err
	}
	r := &run{opt: opt, models: models, log: log, sum: &sum, drain: drain, hashes: hashes, audit: audit}
	finish := func(err error) (Summary, error) {
		sum.Elapsed = time.Since(start)
		sum.Unanswered, sum.Interrupted = unanswered(context.WithoutCancel(ctx), opt.DB, st.Name, scope, drain)
		countPending(&sum, pending, stored)
		return sum, err
	}
	r.report()
	if st.MaxUSD > 0 {
		if len(todo) > 0 && sum.PriorUSD >= st.MaxUSD {
			sum.StoppedByBudget = true
			return finish(fmt.Errorf("%w: $%.4f already spent of $%.2f", ErrBudget, sum.PriorUSD, st.MaxUSD))
		}
		r.budget = newBudget(st.MaxUSD, sum.PriorUSD, stored, estimates(st, clips, opt.Prompts, log))
	}

	// One worker per unit of total model concurrency: the clients bound
	// each model's in-flight requests and rates themselves.
	workers := 0
	for _, m := range st.Models {
		workers += max(1, m.Concurrency)
	}
	// Repetitions of one (clip, condition, model) share their frames: a
	// worker takes them as one group and renders the frames once. The
	// first error stops the run (it cancels the pool's context); the drain
	// and the spending cap stop new groups from starting.
	pl, gctx := pool.Limit(ctx, min(workers, max(1, len(todo))))
	for _, g := range groups(todo) {
		if r.stopping() || gctx.Err() != nil {
			break
		}
		pl.Go(func(int) error { return r.doGroup(gctx, g) })
	}
	firstErr := pl.Wait()
	sum.StoppedByBudget = r.budget.isStopped()
	sum, _ = finish(nil)
	switch {
	case firstErr != nil:
		return sum, firstErr
	case ctx.Err() != nil:
		return sum, ctx.Err()
	case audit.stopped() != nil:
		return sum, audit.stopped()
	case sum.Interrupted:
		return sum, fmt.Errorf("%w: %w; the requests in flight were finished and stored", ErrInterrupted, context.Cause(drain))
	case sum.StoppedByBudget:
		return sum, fmt.Errorf("%w: $%.4f spent (this run $%.4f), cap $%.2f", ErrBudget, sum.PriorUSD+sum.CostUSD, sum.CostUSD, st.MaxUSD)
	}
	return sum, nil
}

// unanswered counts the scope's trials without an answer in the database,
// by error kind (NotRun for those not stored), and reports whether drain
// ended with trials not stored.
func unanswered(ctx context.Context, db *results.DB, studyName string, scope []results.Key, drain context.Context) (map[string]int, bool) {
	out := map[string]int{}
	stored, err := db.Outcomes(ctx, studyName)
	if err != nil {
		out["unknown (results unreadable)"] = len(scope)
		return out, drain.Err() != nil
	}
	notRun := 0
	for _, k := range scope {
		o, ok := stored[k]
		switch {
		case !ok:
			out[NotRun]++
			notRun++
		case !o.Answered():
			kind := o.ErrorKind
			if kind == "" {
				kind = "error"
			}
			out[kind]++
		}
	}
	if len(out) == 0 {
		out = nil
	}
	return out, drain.Err() != nil && notRun > 0
}

// SelectEntries returns the manifest entries a study evaluates, in
// manifest order: all of them, or those its clips: list names. An id the
// manifest does not list is an error wrapping study.ErrStudy and
// pipeline.ErrNoClip, naming the study file's line and the field (every
// such id is reported).
func SelectEntries(st *study.Study, entries []pipeline.Entry) ([]pipeline.Entry, error) {
	if len(st.Clips) == 0 {
		return entries, nil
	}
	want := map[string]bool{}
	for _, id := range st.Clips {
		want[id] = true
	}
	have := map[string]bool{}
	var out []pipeline.Entry
	for _, e := range entries {
		have[e.ID] = true
		if want[e.ID] {
			out = append(out, e)
		}
	}
	var errs []error
	for i, id := range st.Clips {
		if !have[id] {
			errs = append(errs, st.FieldError(fmt.Sprintf("clips[%d]", i),
				fmt.Errorf("%s: %w: %s lists %d clips", textin.Quote(id), pipeline.ErrNoClip, st.Manifest, len(entries))))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// loadClips rebuilds the study's clips from the manifest (strictly read:
// pipeline.LoadManifest), with their paths checked to stay inside the
// manifest's directory; an imported video is read back by natural.Load
// (the file still the one imported, its trace or its count).
func loadClips(st *study.Study) ([]*clipData, error) {
	entries, err := pipeline.LoadManifest(st.Manifest)
	if err != nil {
		return nil, err
	}
	entries, err = SelectEntries(st, entries)
	if err != nil {
		return nil, err
	}
	out := make([]*clipData, 0, len(entries))
	for _, e := range entries {
		c, tr, err := loadClip(st.Manifest, e)
		if err != nil {
			return nil, err
		}
		raw, err := tr.Marshal()
		if err != nil {
			return nil, err
		}
		out = append(out, &clipData{entry: e, clip: c, tr: tr, raw: raw})
	}
	return out, nil
}

// loadClip reads one manifest entry: a rendered clip's scene, or an
// imported video.
func loadClip(manifest string, e pipeline.Entry) (*Clip, *trace.Trace, error) {
	if natural.Imported(e) {
		nc, err := natural.Load(manifest, e)
		if err != nil {
			return nil, nil, err
		}
		r := e.Render
		return &Clip{ID: e.ID, Domain: e.Domain, Duration: r.Duration, FPS: e.Natural.FrameRate, Width: r.Width, Height: r.Height,
			Seed: e.Seed, Video: nc.Video, Rotation: e.Natural.Rotation}, nc.Trace, nil
	}
	sc, tr, err := pipeline.LoadEntry(manifest, e)
	if err != nil {
		return nil, nil, err
	}
	video, err := e.VideoPath(manifest)
	if err != nil {
		return nil, nil, err
	}
	// The scene's own id seeds the random frame conditions, as it always
	// has (the render writes it as the entry's id).
	p := sc.P
	return &Clip{ID: p.ID(), Domain: e.Domain, Duration: p.Duration, FPS: float64(p.FPS), Width: p.Width, Height: p.Height,
		Seed: p.Seed, Scene: sc, Video: video}, tr, nil
}

// ClipInfos lists the study's clips for a dry run: the same selection and
// checks as Run, so the estimate and the run agree on what is sent.
func ClipInfos(st *study.Study) ([]study.ClipInfo, error) {
	clips, err := loadClips(st)
	if err != nil {
		return nil, err
	}
	out := make([]study.ClipInfo, len(clips))
	for i, c := range clips {
		out[i] = clipInfo(c)
	}
	return out, nil
}

func clipInfo(c *clipData) study.ClipInfo {
	tr := c.tr
	return study.ClipInfo{ID: c.entry.ID, Domain: c.entry.Domain, Duration: tr.Duration, FPS: c.clip.FPS, N: tr.N,
		Events: tr.Times(), Width: tr.Width, Height: tr.Height, Seed: tr.Seed, Class: tr.Class}
}

// estimates is the dry-run cost of one trial per model × condition key
// (its dollars over its trials sent), the expected cost of a trial until
// one of that model and condition is observed. Nil, with a warning, when
// the dry run cannot be made.
func estimates(st *study.Study, clips []*clipData, set *prompts.Set, log *slog.Logger) map[results.Key]float64 {
	infos := make([]study.ClipInfo, len(clips))
	for i, c := range clips {
		infos[i] = clipInfo(c)
	}
	es, err := st.DryRun(infos, set)
	if err != nil || len(es) != len(st.Models)*len(st.Conditions) {
		log.Warn("no dry-run estimate for the spending cap; until a trial's cost is observed, only the recorded spend is checked", "err", err)
		return nil
	}
	out := map[results.Key]float64{}
	for mi, m := range st.Models {
		for ci, cond := range st.Conditions {
			e := es[mi*len(st.Conditions)+ci]
			tmpl, err := set.Get(cond.Prompt)
			if err != nil || e.Requests == 0 {
				continue
			}
			trials := e.Requests / max(1, tmpl.Turns())
			out[condKey(trialKey(st, m, "", cond, 0))] = e.USD / float64(trials)
		}
	}
	return out
}

// budget keeps a run to max_usd. A trial may start only while the
// recorded spend plus the expected cost of the trials in flight is below
// the cap; otherwise it waits for one in flight to finish, and once the
// recorded spend alone reaches the cap the run stops starting trials. A
// trial's expected cost is the larger of the dry-run estimate and the
// largest cost observed for an answered trial of its model and condition
// (this run's or stored). An estimate can be wrong by any factor (video
// token counts often are), so until a model × condition has an observed
// cost, its trials are probes: one probe is in flight at a time in the
// whole run, and a trial of another, observed condition may run beside it.
// The spend can thus pass the cap by one probe's cost, or by one trial's
// cost when the expected costs hold, not by the concurrency's. A nil
// *budget has no cap.
type budget struct {
	cap float64

	mu       sync.Mutex
	spent    float64                 // recorded spend of the study
	reserved float64                 // expected cost of the trials in flight
	est      map[results.Key]float64 // the dry-run estimate, by condKey
	expect   map[results.Key]float64 // by condKey: max(estimate, largest observed)
	observed map[results.Key]bool    // a cost of an answered trial is known
	probing  bool                    // a trial of an unobserved condition is in flight
	wake     chan struct{}           // closed and replaced when spent, reserved or probing change
	stopped  bool
}

// slot is an admitted trial's reservation.
type slot struct {
	reserved float64
	probe    bool // its condition had no observed cost when it started
}

var errStop = errors.New("run stopping")

func newBudget(limit, spent float64, stored map[results.Key]results.Outcome, est map[results.Key]float64) *budget {
	b := &budget{cap: limit, spent: spent, est: map[results.Key]float64{}, expect: map[results.Key]float64{},
		observed: map[results.Key]bool{}, wake: make(chan struct{})}
	for k, v := range est {
		b.est[k] = v
		b.expect[k] = v
	}
	for k, o := range stored {
		if o.Answered() && !o.Failed {
			b.observe(condKey(k), o.CostUSD)
		}
	}
	return b
}

func (b *budget) observe(ck results.Key, cost float64) {
	b.expect[ck] = max(b.expect[ck], b.est[ck], cost)
	b.observed[ck] = true
}

// admit waits until a trial of condition ck may start and reserves its
// expected cost; errStop when the cap (or drain) stops the run.
func (b *budget) admit(ctx, drain context.Context, ck results.Key) (slot, error) {
	if b == nil {
		return slot{}, nil
	}
	for {
		b.mu.Lock()
		if !b.stopped && b.spent >= b.cap {
			b.stopped = true
		}
		if b.stopped {
			b.mu.Unlock()
			return slot{}, errStop
		}
		if b.spent+b.reserved < b.cap && (b.observed[ck] || !b.probing) {
			s := slot{reserved: b.expect[ck], probe: !b.observed[ck]}
			b.reserved += s.reserved
			b.probing = b.probing || s.probe
			b.mu.Unlock()
			return s, nil
		}
		wake := b.wake
		b.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return slot{}, ctx.Err()
		case <-drain.Done():
			return slot{}, errStop
		}
	}
}

// release returns a trial's reservation and records its actual cost;
// answered says the cost is an observation of its condition's cost.
func (b *budget) release(ck results.Key, s slot, actual float64, answered bool) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.reserved -= s.reserved
	if b.reserved < 1e-12 {
		b.reserved = 0
	}
	if s.probe {
		b.probing = false
	}
	b.spent += actual
	if answered {
		b.observe(ck, actual)
	}
	close(b.wake)
	b.wake = make(chan struct{})
	b.mu.Unlock()
}

func (b *budget) isStopped() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stopped
}

// run is the state shared by the workers.
type run struct {
	opt    Options
	models []Model
	log    *slog.Logger
	drain  context.Context
	budget *budget
	hashes map[string]string // study.TemplateHash by template name
	audit  *auditor          // the input audit (audit.go)
	mu     sync.Mutex
	sum    *Summary
}

// stopping reports whether no new trial may start: the drain ended or the
// cap stopped the run.
func (r *run) stopping() bool {
	return r.drain.Err() != nil || r.budget.isStopped() || r.audit.stopped() != nil
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

// doGroup renders the group's frames once and runs its trials in order;
// each trial waits for admission (drain, spending cap) before it starts,
// and the group ends at the first one refused.
func (r *run) doGroup(ctx context.Context, g []trial) error {
	if r.stopping() || ctx.Err() != nil {
		return nil
	}
	var p prepared
	p.in, p.plan, p.bytes, p.err = r.input(ctx, g[0], r.opt.Study.Models[g[0].model])
	for _, t := range g {
		if ctx.Err() != nil || r.drain.Err() != nil || r.audit.stopped() != nil {
			return nil
		}
		ck := condKey(t.key)
		slot, err := r.budget.admit(ctx, r.drain, ck)
		if err != nil {
			return nil // stopping: the trial is left for a rerun
		}
		rec, stored, err := r.do(ctx, t, p)
		cost := 0.0
		if stored {
			cost = rec.CostUSD
		}
		r.budget.release(ck, slot, cost, stored && rec.Error == "")
		if err != nil {
			return err
		}
	}
	return nil
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

// do runs one trial and stores it; stored says whether it was. Only an
// error that stops the whole run (the database, rendering) is returned; a
// failed request is stored. A trial whose request ctx cancelled is not
// stored (a rerun sends it again); Options.Drain does not cancel requests.
func (r *run) do(ctx context.Context, t trial, p prepared) (rec results.Trial, stored bool, err error) {
	m := r.opt.Study.Models[t.model]
	tmpl, err := r.opt.Prompts.Get(t.cond.Prompt)
	if err != nil {
		return rec, false, err
	}
	in, plan, bytes, err := p.in, p.plan, p.bytes, p.err
	rec = results.Trial{
		Key: t.key, Domain: t.clip.tr.Domain, N: t.clip.tr.N, F: t.clip.tr.F, Seed: t.clip.tr.Seed, Trace: t.clip.raw,
		FrameTimes: plan.Times(), Images: len(plan.Frames), ImageBytes: bytes,
	}
	if err != nil {
		var ne notSentError
		var na notApplicableError
		switch {
		case errors.As(err, &na):
			// The condition supplies no frames for this clip: nothing
			// to ask, no request, no cost; kept out of every
			// denominator of a report.
			rec.Error, rec.ErrorKind = err.Error(), results.KindNotApplicable
		case errors.As(err, &ne):
			// The policy asks for more images than the model takes and
			// the model refuses thinning: recorded as a permanent
			// failure, not sent.
			rec.Error, rec.ErrorKind = err.Error(), results.KindInvalidRequest
		default:
			return rec, false, err
		}
		rec.FinishedAt = time.Now().UTC()
		return rec, true, r.store(ctx, rec)
	}
	msgs, err := tmpl.Build(in)
	if err != nil {
		return rec, false, err
	}
	rec.PromptHash = prompts.Hash(msgs)
	rec.TemplateHash = r.hashes[t.cond.Prompt]
	req := requestFor(r.opt.Study, m, t.cond, msgs)
	videoRequest(&req, m, t.cond, plan, t.clip.clip.Duration)
	resp, err := r.models[t.model].Chat(ctx, req)
	rec.Attempts = resp.Attempts
	blocked := resp.Blocked
	if err == nil {
		err = r.answer(&rec, resp, req.MaxTokens, thoughtsApart(m))
		// A reply withheld for safety ends the trial: there is nothing to
		// verify in a second turn.
		if follow, ok := tmpl.FollowUpMessage(in); ok && err == nil && !blocked {
			req.Messages = append(append(msgs, chat.Message{Role: chat.RoleAssistant, Parts: []chat.Part{chat.Text(resp.Text)}}), follow)
			resp2, err2 := r.models[t.model].Chat(ctx, req)
			rec.Attempts += resp2.Attempts
			if err2 == nil {
				err2 = r.answer(&rec, resp2, req.MaxTokens, thoughtsApart(m))
				blocked = resp2.Blocked
			}
			err = err2
		}
	}
	rec.CostUSD = m.Prices.Cost(rec.Usage.PromptTokens, rec.Usage.CompletionTokens, 1)
	if err != nil {
		if ctx.Err() != nil {
			return rec, false, nil // cancelled: not stored, redone on resume
		}
		var ce *client.Error
		var bu badUsageError
		switch {
		case errors.As(err, &ce):
			rec.ErrorKind = string(ce.Kind)
			rec.Attempts += ce.Attempts
		case errors.As(err, &bu):
			rec.ErrorKind = results.KindBadUsage
		default:
			rec.ErrorKind = "error"
		}
		rec.Error = err.Error()
	} else if r.audit.check(&rec, m, inputOf(t, m, p, msgs), tmpl.Turns()) {
		score(&rec, t.clip.tr.Domain, blocked)
	}
	rec.FinishedAt = time.Now().UTC()
	return rec, true, r.store(ctx, rec)
}

// answer adds one turn's reply to the trial: its text, latency and usage.
// Usage the request could not have had — a negative count, more
// completion tokens than max_tokens allowed, or more than the ceilings —
// is a badUsageError, and is added clamped to what it could have been, so
// that a server's report never becomes negative or unbounded spend. With
// thoughtsApart (Gemini, whose maxOutputTokens bounds the answer while
// the thinking budget bounds the thoughts), max_tokens bounds the
// completion tokens less the reasoning tokens.
func (r *run) answer(rec *results.Trial, resp client.Response, maxTokens int, thoughtsApart bool) error {
	rec.Responses = append(rec.Responses, resp.Text)
	record(rec, resp)
	rec.LatencyMS += resp.Latency.Milliseconds()
	if thoughtsApart && maxTokens > 0 {
		maxTokens += min(max(resp.Usage.ReasoningTokens, 0), MaxCompletionTokens)
	}
	u, problem := checkUsage(resp.Usage, maxTokens)
	rec.Usage.PromptTokens += u.PromptTokens
	rec.Usage.CompletionTokens += u.CompletionTokens
	rec.Usage.TotalTokens += u.TotalTokens
	rec.Usage.ReasoningTokens += min(max(resp.Usage.ReasoningTokens, 0), u.CompletionTokens)
	if problem != "" {
		return badUsageError{fmt.Sprintf("the server reported impossible token usage (prompt_tokens %d, completion_tokens %d, total_tokens %d): %s; recorded as prompt %d, completion %d",
			resp.Usage.PromptTokens, resp.Usage.CompletionTokens, resp.Usage.TotalTokens, problem, u.PromptTokens, u.CompletionTokens)}
	}
	return nil
}

// badUsageError is a reply whose reported usage is impossible.
type badUsageError struct{ msg string }

func (e badUsageError) Error() string { return e.msg }

// checkUsage returns the usage clamped into what one request could use
// and, when it had to clamp, what was wrong.
func checkUsage(u client.Usage, maxTokens int) (client.Usage, string) {
	completionCap, capName := MaxCompletionTokens, fmt.Sprintf("the %d ceiling", MaxCompletionTokens)
	if maxTokens > 0 && maxTokens < completionCap {
		completionCap, capName = maxTokens, fmt.Sprintf("max_tokens %d", maxTokens)
	}
	var problems []string
	out := u
	if u.PromptTokens < 0 || u.CompletionTokens < 0 || u.TotalTokens < 0 {
		problems = append(problems, "a negative token count")
	}
	if u.PromptTokens > MaxPromptTokens {
		problems = append(problems, fmt.Sprintf("prompt_tokens above the %d ceiling", MaxPromptTokens))
	}
	if u.CompletionTokens > completionCap {
		problems = append(problems, "completion_tokens above "+capName)
	}
	out.PromptTokens = min(max(u.PromptTokens, 0), MaxPromptTokens)
	out.CompletionTokens = min(max(u.CompletionTokens, 0), completionCap)
	out.TotalTokens = min(max(u.TotalTokens, 0), MaxPromptTokens+completionCap)
	return out, strings.Join(problems, ", ")
}

func (r *run) store(ctx context.Context, rec results.Trial) error {
	// Store even when ctx is being cancelled: the trial was paid for.
	if err := r.opt.DB.Put(context.WithoutCancel(ctx), rec); err != nil {
		return fmt.Errorf("store trial %v: %w", rec.Key, err)
	}
	r.mu.Lock()
	switch {
	case rec.ErrorKind == results.KindNotApplicable:
		r.sum.NotApplicable++
	case rec.Error != "":
		r.sum.Failed++
	default:
		r.sum.Done++
	}
	r.sum.CostUSD += rec.CostUSD
	r.mu.Unlock()
	r.report()
	return nil
}

// notSentError is a trial the runner records as failed without sending
// it: its plan exceeds the model's max_images under limit_mode refuse.
type notSentError struct{ error }

// notApplicableError is a condition that supplies no frames for a clip
// (keyframes on an N = 0 control or a static-object clip; keyframes or
// single:best on a natural video annotated with its count alone): recorded
// as results.KindNotApplicable, never sent.
type notApplicableError struct{ error }

// input renders the condition's frames for the model (or attaches the
// clip's video for native input to a video-capable model).
func (r *run) input(ctx context.Context, t trial, m study.Model) (prompts.Input, sampling.Plan, int64, error) {
	c := t.clip
	in := prompts.Input{Domain: c.tr.Domain, Class: c.tr.Class, Duration: c.clip.Duration, Detail: m.Detail,
		Labels: chat.Labels(t.cond.WithDefaults().Labels)}
	pol, err := sampling.Parse(t.cond.Policy)
	if err != nil {
		return in, sampling.Plan{}, 0, err
	}
	if !domain.Of(c.tr.Domain).EventPolicies && study.EventPolicy(pol) {
		// Keyframes centre frames on true events, and a static-object clip
		// has none: it would show no frames while asking for N objects.
		return in, sampling.Plan{Policy: t.cond.Policy}, 0, notApplicableError{fmt.Errorf(
			"not applicable: policy %s places frames at the true events, and objects clip %s has none (CountVideoBench samples uniform:10)", pol, c.clip.ID)}
	}
	if domain.Of(c.tr.Domain).MissingEvents(c.tr.N, len(c.tr.Events)) && needsEvents(pol) {
		// A natural video annotated with its count alone: where its
		// repetitions are is not known, so no frame can be placed by them
		// (and single:best's fallback, the middle frame, is not the best).
		return in, sampling.Plan{Policy: t.cond.Policy}, 0, notApplicableError{fmt.Errorf(
			"not applicable: policy %s places frames by the true events, and clip %s is annotated with its count alone (no repetition boundaries, no trace)", pol, c.clip.ID)}
	}
	if m.Video.Supported && isNative(t.cond.Policy) && !t.cond.Video() {
		b, err := os.ReadFile(c.clip.Video)
		if err != nil {
			return in, sampling.Plan{}, 0, err
		}
		in.VideoURL = "data:" + videoMIME(b) + ";base64," + base64.StdEncoding.EncodeToString(b)
		return in, sampling.Plan{Policy: t.cond.Policy}, int64(len(b)), nil
	}
	src := r.source(c.clip)
	px := &lazyPixels{src: src, clip: c.clip}
	defer px.release()
	sc := sampling.Clip{ID: c.clip.ID, Duration: c.clip.Duration, FPS: c.clip.FPS, Seed: c.clip.Seed, Events: c.tr.Times(),
		InView: InViewCounts(c.tr), Pixels: px}
	plan, err := pol.Plan(sc)
	if err != nil {
		return in, plan, 0, err
	}
	if len(plan.Frames) == 0 {
		// Keyframes on an N = 0 control: no event, no frame. Asking with
		// no frames would score the control on a guess.
		why := plan.Note
		if why == "" {
			why = "the policy gives no frames for this clip"
		}
		return in, plan, 0, notApplicableError{fmt.Errorf("not applicable: policy %s on clip %s: %s", pol, c.clip.ID, why)}
	}
	if t.cond.Video() {
		return videoInput(ctx, src, c.clip, m, in, plan) // as: video (video.go)
	}
	capped, err := sampling.ApplyLimit(plan, m.MaxImages, m.LimitMode)
	if err != nil {
		return in, plan, 0, notSentError{err}
	}
	format, err := encode.ParseImageFormat(orDefault(m.ImageFormat, "jpg"))
	if err != nil {
		return in, capped, 0, err
	}
	var total int64
	for img, err := range src.Frames(ctx, c.clip, capped, frames.Options{Format: format, Quality: m.JPEGQuality, Width: m.ImageWidth, Height: m.ImageHeight, Workers: 1}) {
		if err != nil {
			return in, capped, 0, err
		}
		total += int64(len(img.Data))
		in.Frames = append(in.Frames, prompts.Frame{Position: img.Frame.Position, T: img.Frame.T,
			DataURL: "data:" + img.MIME + ";base64," + base64.StdEncoding.EncodeToString(img.Data)})
	}
	return in, capped, total, nil
}

// source is where clip c's images come from: Options.Frames when set,
// else by the clip (rendered or imported).
func (r *run) source(c *Clip) FrameSource {
	switch {
	case r.opt.Frames != nil:
		return r.opt.Frames
	case c.Imported():
		return DecodedFrames{}
	}
	return RenderedFrames{Renderer: r.opt.Renderer}
}

// needsEvents reports whether a policy places its frames by the clip's
// true events: keyframes, and single:best (the middle event).
func needsEvents(p sampling.Policy) bool {
	return study.EventPolicy(p) || p.String() == "single:best"
}

// videoMIME is the media type of a native video: WebM/Matroska or MP4
// (MP4 and QuickTime alike; our clips are MP4).
func videoMIME(head []byte) string {
	if c, err := encode.SniffContainer(head[:min(len(head), 16)]); err == nil && c == encode.ContainerMatroska {
		return "video/webm"
	}
	return "video/mp4"
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

// InViewCounts is, for a clip whose domain picks single:best by the
// objects in view (domain.BestMostInView: the static-object clips), the
// number of objects in view per frame (single:best reads it); nil for
// other clips.
func InViewCounts(tr *trace.Trace) []int {
	if domain.Of(tr.Domain).SingleBest != domain.BestMostInView || tr.Objects == nil {
		return nil
	}
	out := make([]int, len(tr.Objects.InView))
	for k, ids := range tr.Objects.InView {
		out[k] = len(ids)
	}
	return out
}
