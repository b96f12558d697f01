package variants

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/runner"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/internal/pool"
	"github.com/tracegrid/tracegrid/internal/shard"
	"github.com/tracegrid/tracegrid/pipeline"
	"github.com/tracegrid/tracegrid/scene"
	"github.com/tracegrid/tracegrid/trace"
)

// Output modes.
const (
	AsFrames = "frames"
	AsVideo  = "video"
)

// File names in the output directory.
const (
	RecordsName = "variants.jsonl"
	DatasetName = "dataset.jsonl"
)

// Errors a caller tests with errors.Is.
var (
	// ErrInput: bad input — options, a policy that cannot be written in
	// the chosen mode, a manifest entry whose files are missing or differ
	// from the manifest, a clip id the manifest lacks (exit status 2).
	ErrInput = errors.New("variants: bad input")
	// ErrOutput: the output directory cannot be used (a file, not
	// writable, in use by another run).
	ErrOutput = errors.New("variants: output")
)

// Options of a run.
type Options struct {
	// Manifest is the manifest.jsonl of a render.
	Manifest string
	// Policies to write, in the order given.
	Policies []sampling.Policy
	// Out is the output directory.
	Out string
	// As is AsFrames (default) or AsVideo.
	As string
	// Format and Quality of the images (frames; default jpg, quality 90).
	Format  encode.ImageFormat
	Quality int
	// Width and Height of the images or videos (0: the clip's size);
	// another aspect ratio is letterboxed.
	Width, Height int
	// Clips restricts the run to these clip ids (empty: every clip of the
	// manifest).
	Clips []string
	// Workers is the number of clips made at a time (0: one per CPU).
	Workers int
	// Dataset, when set, also writes dataset.jsonl.
	Dataset *DatasetOptions
	// Renderer draws every frame (one GL context for the whole run).
	Renderer *gpu.Renderer
	// Progress is called after each variant is finished or skipped.
	Progress func(done, total int)
	// Log receives what was skipped, redone or cleaned up (nil: discard).
	Log *slog.Logger
	// Shard, when set and not 1/1, makes only that shard's clips and
	// records them in Out/shards/I-of-N/variants.jsonl (shard.go).
	Shard shard.Shard
}

// DatasetOptions says which prompts dataset.jsonl holds.
type DatasetOptions struct {
	// Prompts are template names of Set (default: structured_trace).
	Prompts []string
	// Set holds the templates (nil: prompts.Default()).
	Set *prompts.Set
	// Labels is the frame label mode; "" picks the policy's default
	// (position for the policies whose times reveal the answer,
	// sampling.TimesReveal, time otherwise), as eval does.
	Labels chat.Labels
}

// Summary of a run.
type Summary struct {
	Variants int // made by this run
	Skipped  int // complete and verified from an earlier run
	Frames   int // images or video frames written by this run
	Files    int // files written by this run
	// Pictures is how many distinct pictures were rendered (and, for
	// frames, encoded): far fewer than Frames when variants share clip
	// frames or clips hold still.
	Pictures int
	Bytes    int64
	Removed  []string // temporary files of an interrupted run, deleted
	Dataset  int      // rows of dataset.jsonl (0 without Dataset)
	Elapsed  time.Duration
}

// DefaultQuality is the JPEG quality without Options.Quality.
const DefaultQuality = encode.DefaultJPEGQuality

func (o *Options) check() error {
	bad := func(format string, a ...any) error { return fmt.Errorf("%w: %s", ErrInput, fmt.Sprintf(format, a...)) }
	if o.Renderer == nil {
		return errors.New("variants: no renderer")
	}
	if o.Manifest == "" {
		return bad("no manifest")
	}
	if o.Out == "" {
		return bad("no output directory")
	}
	if len(o.Policies) == 0 {
		return bad("no policies")
	}
	switch o.As {
	case "":
		o.As = AsFrames
	case AsFrames, AsVideo:
	default:
		return bad("output mode %q: want frames or video", o.As)
	}
	if o.Format == "" {
		o.Format = encode.ImageJPEG
	}
	f, err := encode.ParseImageFormat(string(o.Format))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInput, err)
	}
	o.Format = f
	if o.Quality == 0 {
		o.Quality = DefaultQuality
	}
	if o.Quality < 1 || o.Quality > 100 {
		return bad("JPEG quality %d out of range 1–100", o.Quality)
	}
	if (o.Width == 0) != (o.Height == 0) || o.Width < 0 || o.Height < 0 || o.Width%2 != 0 || o.Height%2 != 0 {
		return bad("size %dx%d: give both, even and positive, or neither", o.Width, o.Height)
	}
	if o.Workers < 0 {
		return bad("workers %d: give a positive number, or 0 for one per CPU", o.Workers)
	}
	if o.Workers == 0 {
		o.Workers = runtime.NumCPU()
	}
	if o.sharded() {
		if err := o.Shard.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInput, err)
		}
		if o.Dataset != nil {
			return bad("a dataset is not written by shards: merge the shards (tracegrid merge --variants), then run once with --dataset and without a shard (it verifies and reuses every variant)")
		}
	}
	seen := map[string]bool{}
	var pols []sampling.Policy
	for _, p := range o.Policies {
		if seen[p.String()] {
			continue
		}
		seen[p.String()] = true
		pols = append(pols, p)
		if o.As == AsVideo {
			if _, err := videoRate(p); err != nil {
				return err
			}
		}
	}
	o.Policies = pols
	if o.Dataset != nil {
		if err := o.Dataset.check(); err != nil {
			return err
		}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return nil
}

// videoRate is the constant frame rate of a policy written as a video:
// K of fps:K and R of native:R, a whole number of frames per second.
func videoRate(p sampling.Policy) (int, error) {
	s := p.String()
	name, arg, _ := strings.Cut(s, ":")
	if name != "fps" && name != "native" {
		return 0, fmt.Errorf("%w: policy %s has no constant frame rate, so it cannot be written as a video; --as video takes fps:K and native[:R] (write %s as frames)",
			ErrInput, s, s)
	}
	if strings.Contains(arg, ",") {
		// fps:K,max:M: K, or M/D on a clip where the cap bites
		// (sampling.ConstantRate), so no one rate for the policy.
		return 0, fmt.Errorf("%w: policy %s: its rate depends on the clip (K, or M/duration where the cap bites), and a video variant has one whole frame rate per policy; write it as frames, or use fps:K",
			ErrInput, s)
	}
	k, err := strconv.ParseFloat(arg, 64)
	if err != nil || k != math.Trunc(k) || k < 1 || k > encode.MaxFPS {
		return 0, fmt.Errorf("%w: policy %s: a video variant needs a whole number of frames per second from 1 to %d (an MP4 here has an integer frame rate); write it as frames",
			ErrInput, s, encode.MaxFPS)
	}
	return int(k), nil
}

// clipJob is one clip and the variants of it this run makes.
type clipJob struct {
	order int
	entry pipeline.Entry
	clip  *scene.Clip
	tr    *trace.Trace
	trace []byte // the trace file's bytes (video: copied beside the MP4)
	todo  []int  // indexes into Options.Policies
}

// Run writes every clip × policy of the manifest (or of Options.Clips)
// into Options.Out, skipping the variants an earlier run finished and
// that still verify. Each variant appears whole or not at all: images are
// written into a staging directory that is renamed into place (an MP4
// and its trace are renamed into place), and only then is its record
// appended to variants.jsonl. A cancelled ctx stops after the pictures in
// flight; finished variants are kept. On return variants.jsonl is
// rewritten atomically in manifest × policy order (records of clips and
// policies outside this run are kept as they were).
func Run(ctx context.Context, opt Options) (Summary, error) {
	start := time.Now()
	var sum Summary
	if err := opt.check(); err != nil {
		return sum, err
	}
	jobs, selected, part, err := loadClips(opt)
	if err != nil {
		return sum, err
	}
	if err := prepareOut(opt.Out); err != nil {
		return sum, err
	}
	out, err := openOutput(opt, selected, part) // the whole directory, or one shard (shard.go)
	if err != nil {
		return sum, err
	}
	defer out.close()
	sum.Removed = out.removed
	for _, r := range sum.Removed {
		opt.Log.Info("removed a temporary file left by an interrupted run", "path", r)
	}
	recPath := out.records
	old, torn, err := readRecords(recPath)
	if err != nil {
		return sum, fmt.Errorf("%w: %w", ErrOutput, err)
	}
	if torn {
		opt.Log.Warn("the last line of variants.jsonl was cut short by an interrupted run; its variant is made again")
	}
	latest := map[key]Record{}
	var order []key
	for _, r := range old {
		if _, ok := latest[r.key()]; !ok {
			order = append(order, r.key())
		}
		latest[r.key()] = r
	}

	// What is already done and verified.
	total := len(jobs) * len(opt.Policies)
	done := 0
	progress := func() {
		done++
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
	}
	kept := map[key]Record{}
	for _, j := range jobs {
		for i, p := range opt.Policies {
			want := opt.record(j, p)
			rec, ok := latest[want.key()]
			if ok {
				if why := verify(opt.Out, rec, want); why == "" {
					kept[want.key()] = rec
					sum.Skipped++
					progress()
					continue
				} else {
					opt.Log.Info("making a variant again", "clip", want.Clip, "policy", want.Policy, "as", want.As, "reason", why)
				}
			}
			j.todo = append(j.todo, i)
		}
	}

	f, err := os.OpenFile(recPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return sum, fmt.Errorf("%w: %s: %w", ErrOutput, recPath, err)
	}
	var (
		mu    sync.Mutex
		fresh = map[key]Record{}
	)
	finish := func(r Record, st stats) error {
		mu.Lock()
		defer mu.Unlock()
		if err := appendRecord(f, r); err != nil {
			return fmt.Errorf("%w: appending to %s: %w", ErrOutput, recPath, err)
		}
		fresh[r.key()] = r
		sum.Variants++
		sum.Frames += st.frames
		sum.Files += st.files
		sum.Bytes += st.bytes
		progress()
		return nil
	}
	addPictures := func(n int) {
		mu.Lock()
		sum.Pictures += n
		mu.Unlock()
	}

	// One worker (its image encoder, its frame buffer) per clip at a time;
	// the first error cancels the others.
	ws := make([]*worker, min(opt.Workers, max(1, len(jobs))))
	for i := range ws {
		ws[i] = &worker{opt: &opt, finish: finish, pictures: addPictures}
	}
	pl, wctx := pool.New(ctx, ws)
	for _, j := range jobs {
		if len(j.todo) == 0 {
			continue
		}
		if wctx.Err() != nil {
			break
		}
		pl.Go(func(w *worker) error {
			if wctx.Err() != nil {
				return nil
			}
			return w.do(wctx, j)
		})
	}
	firstErr := pl.Wait()
	closeErr := f.Close()

	// Rewrite variants.jsonl in plan order: this run's clips × policies,
	// then the records of others as they were.
	var recs []Record
	inRun := map[key]bool{}
	for _, j := range jobs {
		for _, p := range opt.Policies {
			k := opt.record(j, p).key()
			inRun[k] = true
			if r, ok := fresh[k]; ok {
				recs = append(recs, r)
			} else if r, ok := kept[k]; ok {
				recs = append(recs, r)
			}
		}
	}
	for _, k := range order {
		if !inRun[k] {
			recs = append(recs, latest[k])
		}
	}
	if firstErr == nil && ctx.Err() != nil {
		firstErr = context.Cause(ctx)
	}
	if firstErr != nil && !errors.Is(firstErr, context.Canceled) && !errors.Is(firstErr, ErrInput) {
		firstErr = fmt.Errorf("%w (the %d variants finished are kept in %s; rerun to resume)", firstErr, sum.Variants+sum.Skipped, opt.Out)
	}
	if firstErr == nil && closeErr != nil {
		firstErr = fmt.Errorf("%w: %s: %w", ErrOutput, recPath, closeErr)
	}
	if err := writeRecords(recPath, recs); err != nil && firstErr == nil {
		firstErr = fmt.Errorf("%w: rewriting %s: %w", ErrOutput, recPath, err)
	}
	if firstErr == nil && opt.Dataset != nil {
		n, err := writeDataset(opt, jobs)
		if err != nil {
			firstErr = err
		}
		sum.Dataset = n
	}
	sum.Elapsed = time.Since(start)
	return sum, firstErr
}

// record is the record a variant of this run must have (without its
// files, frame count and note).
func (o *Options) record(j *clipJob, p sampling.Policy) Record {
	pol := p.String()
	r := Record{Clip: j.entry.ID, Policy: pol, As: o.As, ClipSHA256: j.entry.SHA256, ToolVersion: pipeline.ToolVersion()}
	w, h := o.Width, o.Height
	if w == 0 {
		w, h = j.entry.Render.Width, j.entry.Render.Height
	}
	r.Settings = Settings{Width: w, Height: h}
	if o.As == AsVideo {
		k, _ := videoRate(p)
		enc := j.entry.Render.Encoder
		r.Settings.FPS, r.Settings.Encoder = k, &enc
		r.Path = PolicyDir(pol) + "/" + j.entry.ID + ".mp4"
	} else {
		r.Settings.Format = string(o.Format)
		if o.Format == encode.ImageJPEG {
			r.Settings.Quality = o.Quality
		}
		r.Path = PolicyDir(pol) + "/" + j.entry.ID
	}
	return r
}

// prepareOut makes the output directory, or says why it cannot be one.
// An --out that names an existing file (the manifest, a clip) is a wrong
// flag value, bad input; a directory that cannot be created or written
// is an output failure.
func prepareOut(out string) error {
	if fi, err := os.Stat(out); err == nil && !fi.IsDir() {
		return fmt.Errorf("%w: output directory %s is a file; name a directory (it is created when missing)", ErrInput, out)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("%w: output directory %s cannot be created: %w", ErrOutput, out, err)
	}
	probe, err := os.CreateTemp(out, ".write-probe.tmp-*")
	if err != nil {
		return fmt.Errorf("%w: output directory %s is not writable: %w", ErrOutput, out, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

// maxProblems is how many bad manifest entries an error lists by name.
const maxProblems = 5

// loadClips reads the manifest, selects the clips (selected; with a
// shard, part is the shard's part of them, else selected) and checks each
// one of part: its video is there with the manifest's sha256 and its trace
// is the one the scene reproduces. Every problem is collected, so one run
// names all bad entries (up to maxProblems, then a count).
func loadClips(opt Options) (jobs []*clipJob, selected, part []pipeline.Entry, err error) {
	entries, err := pipeline.LoadManifest(opt.Manifest)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil, fmt.Errorf("%w: manifest %s: %w", ErrInput, opt.Manifest, err)
		}
		return nil, nil, nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	byID := map[string]pipeline.Entry{}
	for _, e := range entries {
		byID[e.ID] = e
	}
	selected = entries
	if len(opt.Clips) > 0 {
		selected = nil
		var unknown []string
		seen := map[string]bool{}
		for _, id := range opt.Clips {
			if seen[id] {
				continue
			}
			seen[id] = true
			e, ok := byID[id]
			if !ok {
				unknown = append(unknown, id)
				continue
			}
			selected = append(selected, e)
		}
		if len(unknown) > 0 {
			return nil, nil, nil, fmt.Errorf("%w: %w: %s not in %s (%d clips)", ErrInput, pipeline.ErrNoClip, strings.Join(unknown, ", "), opt.Manifest, len(entries))
		}
	}
	if len(selected) == 0 {
		return nil, nil, nil, fmt.Errorf("%w: %s lists no clips", ErrInput, opt.Manifest)
	}
	part = selected
	if opt.sharded() {
		if part, err = opt.shardEntries(selected); err != nil {
			return nil, nil, nil, err
		}
	}
	var problems []string
	for i, e := range part {
		j, err := loadClip(opt.Manifest, e)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		j.order = i
		jobs = append(jobs, j)
	}
	if len(problems) > 0 {
		more := ""
		if len(problems) > maxProblems {
			more = fmt.Sprintf("; and %d more", len(problems)-maxProblems)
			problems = problems[:maxProblems]
		}
		return nil, nil, nil, fmt.Errorf("%w: %d of %d clips in %s cannot be used, nothing was written: %s%s", ErrInput, len(problems), len(part), opt.Manifest, strings.Join(problems, "; "), more)
	}
	// Every policy must plan on every clip; adaptive plans are made from
	// pixels by the workers (their parameters were checked when parsed).
	for _, j := range jobs {
		for _, p := range opt.Policies {
			if isAdaptive(p) {
				continue
			}
			if _, err := p.Plan(samplingClip(j, nil)); err != nil {
				return nil, nil, nil, fmt.Errorf("%w: %w", ErrInput, err)
			}
		}
	}
	return jobs, selected, part, nil
}

func isAdaptive(p sampling.Policy) bool { return strings.HasPrefix(p.String(), "adaptive:") }

// loadClip checks one manifest entry and rebuilds its scene.
func loadClip(manifest string, e pipeline.Entry) (*clipJob, error) {
	vp, err := e.VideoPath(manifest)
	if err != nil {
		return nil, err
	}
	got, err := fileSHA256(vp)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("clip %s: video %s is missing", e.ID, e.Video)
	}
	if err != nil {
		return nil, fmt.Errorf("clip %s: video %s: %w", e.ID, e.Video, err)
	}
	if got != e.SHA256 {
		return nil, fmt.Errorf("clip %s: video %s has sha256 %.12s…, the manifest records %.12s…: the file changed after it was rendered (render it again)", e.ID, e.Video, got, e.SHA256)
	}
	tp, err := e.TracePath(manifest)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(tp)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("clip %s: trace %s is missing", e.ID, e.Trace)
	}
	if err != nil {
		return nil, fmt.Errorf("clip %s: trace %s: %w", e.ID, e.Trace, err)
	}
	clip, tr, err := pipeline.LoadEntry(manifest, e)
	if err != nil {
		return nil, err
	}
	// The id names the output paths: it must be the one the parameters
	// make (which is also a safe file name).
	if e.ID != clip.P.ID() {
		return nil, fmt.Errorf("clip %q: the id does not match its parameters, which make clip %s", e.ID, clip.P.ID())
	}
	return &clipJob{entry: e, clip: clip, tr: tr, trace: raw}, nil
}

// samplingClip is what the policies know of a clip.
func samplingClip(j *clipJob, pixels sampling.PixelSource) sampling.Clip {
	p := j.clip.P
	c := sampling.Clip{ID: p.ID(), Duration: p.Duration, FPS: float64(p.FPS), Seed: p.Seed, Events: j.tr.Times(), Pixels: pixels}
	if j.tr.IsObjects() {
		c.InView = runner.InViewCounts(j.tr)
	}
	return c
}

// clipFrames is the clip's frame count.
func clipFrames(c *scene.Clip) int {
	return int(math.Round(c.P.Duration * float64(c.P.FPS)))
}
