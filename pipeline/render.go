package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/internal/fsutil"
	"github.com/tracegrid/tracegrid/internal/pool"
	"github.com/tracegrid/tracegrid/internal/rgba"
	"github.com/tracegrid/tracegrid/internal/shard"
	"github.com/tracegrid/tracegrid/scene"
	"github.com/tracegrid/tracegrid/trace"
)

// Options of one render run.
type Options struct {
	// Out is the output directory; clips go to Out/clips.
	Out string
	// Workers is the number of clips encoded in parallel (0: one per CPU).
	Workers int
	// Renderer, if set, is used instead of creating (and closing) one.
	Renderer *gpu.Renderer
	// Progress, if set, is called after each clip with the number of clips
	// complete (skipped ones included) and the total.
	Progress func(done, total int)
	// Log receives progress and resume messages; nil discards them.
	Log *slog.Logger
	// Shard, when set and not 1/1, renders only that shard of the plan
	// into Out, with its manifest in Out/shards/I-of-N (shard.go).
	Shard shard.Shard
}

// Summary says what a run did.
type Summary struct {
	Planned  int
	Skipped  int // already complete and verified
	Rendered int
	Frames   int // frames encoded by this run
	Elapsed  time.Duration
	GL       gpu.Info
}

// ErrOutput is wrapped by errors about the output directory.
var ErrOutput = errors.New("output directory")

// ErrOtherPlan is returned when the output directory's manifest records
// clips the spec does not plan: a render directory holds one plan, and its
// manifest lists exactly that plan's clips. It wraps ErrOutput.
var ErrOtherPlan = fmt.Errorf("%w holds another plan", ErrOutput)

// framesPerWorker bounds the rendered frames waiting for one encoder: enough
// to keep the encoder busy while the GL thread serves another worker.
const framesPerWorker = 3

// Render renders every clip of the spec that is not already complete and
// verified in opt.Out. Finished clips are never lost: each is written
// atomically and recorded in the manifest before the next is reported; on
// cancellation the clip in progress is abandoned and its temporary file
// removed.
func Render(ctx context.Context, spec Spec, opt Options) (sum Summary, err error) {
	start := time.Now()
	log := opt.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opt.Out == "" {
		return sum, fmt.Errorf("%w not given: name one (an empty name would write into the current directory)", ErrOutput)
	}
	if err := spec.Validate(); err != nil {
		return sum, err
	}
	plan, err := spec.Plan()
	if err != nil {
		return sum, err
	}
	sum.Planned = len(plan)
	// Usable, not just compiled in: h264_nvenc is in Debian's libavcodec
	// but opens only with an NVIDIA driver; say so before any output.
	if err := encode.Usable(codecName(spec.Encoder)); err != nil {
		return sum, fmt.Errorf("encoder %q is not usable here: %w", codecName(spec.Encoder), err)
	}
	// The whole directory under its lock, or one shard of the plan (shard.go).
	o, err := openRenderOutput(spec, plan, opt, log)
	if err != nil {
		return sum, err
	}
	defer o.close()
	plan, clipsDir, manifestPath := o.plan, o.clipsDir, o.manifest
	sum.Planned = len(plan)
	order := make(map[string]int, len(plan))
	for i, p := range plan {
		order[p.ID()] = i
	}
	done, kept, err := verifyExisting(opt.Out, manifestPath, spec, order, log)
	if err != nil {
		return sum, err
	}
	if err := writeManifest(manifestPath, kept, order); err != nil {
		return sum, fmt.Errorf("%w: manifest: %w", ErrOutput, err)
	}
	var todo []scene.Params
	for _, p := range plan {
		if !done[p.ID()] {
			todo = append(todo, p)
		}
	}
	sum.Skipped = len(plan) - len(todo)
	if opt.Progress != nil {
		opt.Progress(sum.Skipped, len(plan))
	}
	if len(todo) == 0 {
		sum.Elapsed = time.Since(start)
		log.Info("all clips already complete", "clips", len(plan))
		return sum, nil
	}
	if sum.Skipped > 0 {
		log.Info("resuming", "complete", sum.Skipped, "remaining", len(todo))
	}

	r := opt.Renderer
	if r == nil {
		if r, err = gpu.NewRenderer(); err != nil {
			return sum, err
		}
		defer r.Close()
	}
	sum.GL = r.Info()

	mf, err := os.OpenFile(manifestPath, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return sum, fmt.Errorf("%w: manifest: %w", ErrOutput, err)
	}
	defer mf.Close()

	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	ws := make([]*worker, min(workers, len(todo)))
	for i := range ws {
		ws[i] = &worker{r: r, spec: spec, clipsDir: clipsDir, gl: sum.GL.Renderer}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Render on the workers; each finished clip, or its error, goes to the
	// collector below, which cancels ctx on the first error.
	pl, pctx := pool.New(ctx, ws)
	results := make(chan clipResult)
	go func() {
		defer close(results)
		for _, p := range todo {
			if pctx.Err() != nil {
				break
			}
			pl.Go(func(w *worker) error {
				if pctx.Err() != nil {
					return nil
				}
				e, err := w.renderClip(pctx, p)
				select {
				case results <- clipResult{p: p, entry: e, err: err}:
				case <-pctx.Done():
				}
				return nil
			})
		}
		_ = pl.Wait() // tasks return nil: their errors go to the collector
	}()

	// Collect on this goroutine: it alone writes the manifest.
	var firstErr error
	all := kept
	for res := range results {
		if res.err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("render %s: %w", res.p.ID(), res.err)
				cancel()
			}
			continue
		}
		if firstErr != nil {
			continue // a clip finished while stopping: it is complete, keep it
		}
		if err := appendManifest(mf, res.entry); err != nil {
			firstErr = fmt.Errorf("%w: manifest: %w", ErrOutput, err)
			cancel()
			continue
		}
		all = append(all, res.entry)
		sum.Rendered++
		sum.Frames += res.entry.Frames
		if opt.Progress != nil {
			opt.Progress(sum.Skipped+sum.Rendered, len(plan))
		}
	}
	if firstErr == nil && ctx.Err() != nil {
		firstErr = context.Cause(ctx)
	}
	if firstErr == nil {
		// Leave the manifest in plan order once everything is there.
		if err := writeManifest(manifestPath, all, order); err != nil {
			firstErr = fmt.Errorf("%w: manifest: %w", ErrOutput, err)
		}
	}
	sum.Elapsed = time.Since(start)
	return sum, firstErr
}

type clipResult struct {
	p     scene.Params
	entry Entry
	err   error
}

func codecName(e Encoder) string {
	if e.Codec == "" {
		return "libx264"
	}
	return e.Codec
}

// worker renders and encodes one clip at a time. Its frame buffers are
// reused from clip to clip.
type worker struct {
	r        *gpu.Renderer
	spec     Spec
	clipsDir string
	gl       string
	bufs     []*rgba.Image
}

type frameMsg struct {
	img    *rgba.Image // nil: repeat the previous frame
	repeat bool
}

func (w *worker) buffers(width, height int) []*rgba.Image {
	if len(w.bufs) == 0 || w.bufs[0].Width != width || w.bufs[0].Height != height {
		w.bufs = w.bufs[:0]
		for range framesPerWorker {
			img := rgba.New(width, height)
			w.bufs = append(w.bufs, &img)
		}
	}
	return w.bufs
}

// renderClip writes the trace and the video of one clip atomically and
// returns its manifest entry.
func (w *worker) renderClip(ctx context.Context, p scene.Params) (Entry, error) {
	clip, err := scene.New(p)
	if err != nil {
		return Entry{}, err
	}
	id := p.ID()
	tr := clip.Trace()
	traceJSON, err := tr.Marshal()
	if err != nil {
		return Entry{}, err
	}
	if len(traceJSON) > trace.MaxBytes {
		// Validate refuses such specs; this is the exact check.
		return Entry{}, fmt.Errorf("%w: the trace of clip %s is %d bytes, above the %d MiB limit for a trace", ErrSpec, id, len(traceJSON), trace.MaxBytes>>20)
	}
	videoPath := filepath.Join(w.clipsDir, id+".mp4")
	tracePath := filepath.Join(w.clipsDir, id+".trace.json")
	tmp := filepath.Join(w.clipsDir, "."+id+".mp4.tmp")
	enc := w.spec.Encoder
	ew, err := encode.Create(tmp, encode.Options{
		Width: p.Width, Height: p.Height, FPS: p.FPS,
		Codec: codecName(enc), Preset: enc.Preset, CRF: enc.CRF, Lossless: enc.Lossless, Threads: enc.Threads,
	})
	if err != nil {
		os.Remove(tmp)
		return Entry{}, err
	}
	frames := frameCount(p.Duration, p.FPS)
	if err := w.encodeFrames(ctx, clip, ew, frames); err != nil {
		ew.Abort()
		os.Remove(tmp)
		return Entry{}, err
	}
	if err := ew.Close(); err != nil {
		os.Remove(tmp)
		return Entry{}, err
	}
	if err := syncFile(tmp); err != nil {
		os.Remove(tmp)
		return Entry{}, err
	}
	if err := fsutil.WriteFileAtomic(tracePath, func(wr io.Writer) error { _, err := wr.Write(traceJSON); return err }); err != nil {
		os.Remove(tmp)
		return Entry{}, err
	}
	if err := os.Rename(tmp, videoPath); err != nil {
		os.Remove(tmp)
		return Entry{}, err
	}
	sum, err := fsutil.FileSHA256(videoPath)
	if err != nil {
		return Entry{}, err
	}
	return Entry{
		ID: id, Domain: p.Domain, N: p.N, F: p.F, Class: p.Class, Seed: p.Seed,
		Video: filepath.ToSlash(filepath.Join("clips", id+".mp4")), Trace: filepath.ToSlash(filepath.Join("clips", id+".trace.json")),
		SHA256: sum, Frames: frames, Render: settingsOf(w.spec), ToolVersion: ToolVersion(), GLRenderer: w.gl,
	}, nil
}

// encodeFrames overlaps rendering and encoding: a producer renders frame
// k+1.. into a small pool of buffers while this goroutine encodes frame k.
// A frame whose draw list equals the previous one is not rendered or
// converted again; the encoder repeats its last picture.
func (w *worker) encodeFrames(ctx context.Context, clip *scene.Clip, ew *encode.Writer, frames int) error {
	p := clip.P
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	bufs := w.buffers(p.Width, p.Height)
	free := make(chan *rgba.Image, len(bufs))
	for _, b := range bufs {
		free <- b
	}
	out := make(chan frameMsg, len(bufs))
	var prodErr error
	prodDone := make(chan struct{})
	go func() {
		defer close(prodDone)
		defer close(out)
		var cur, prev scene.DrawList
		for k := range frames {
			clip.StateInto(float64(k)/float64(p.FPS), &cur)
			msg := frameMsg{repeat: k > 0 && cur.Equal(&prev)}
			if !msg.repeat {
				select {
				case msg.img = <-free:
				case <-ctx.Done():
					return
				}
				if err := w.r.Render(&cur, *msg.img); err != nil {
					prodErr = fmt.Errorf("frame %d: %w", k, err)
					return
				}
				cur, prev = prev, cur
			}
			select {
			case out <- msg:
			case <-ctx.Done():
				return
			}
		}
	}()
	var encErr error
	n := 0
	for msg := range out {
		if encErr != nil {
			continue // drain so the producer can finish
		}
		if msg.repeat {
			encErr = ew.Repeat()
		} else {
			encErr = ew.WriteRGBA(*msg.img)
			free <- msg.img
		}
		if encErr != nil {
			encErr = fmt.Errorf("frame %d: %w", n, encErr)
			cancel()
		}
		n++
	}
	<-prodDone
	switch {
	case encErr != nil:
		return encErr
	case prodErr != nil:
		return prodErr
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case n != frames:
		return fmt.Errorf("encoded %d of %d frames", n, frames)
	}
	return nil
}

func frameCount(duration float64, fps int) int {
	return int(math.Round(duration * float64(fps)))
}

func settingsOf(s Spec) RenderSettings {
	e := s.Encoder
	e.Codec = codecName(e)
	return RenderSettings{Duration: s.Duration, FPS: s.FPS, Width: s.Width, Height: s.Height, Encoder: e}
}

// verifyExisting reads the manifest and keeps the entries whose files are
// present and intact: the video's hash matches, and the trace on disk is
// byte-identical to the one this version would write. A manifest that
// records a clip the spec does not plan is refused (ErrOtherPlan): the
// manifest must end up listing exactly the plan's clips, and dropping
// another plan's entries would orphan its files. A manifest holding part
// of the plan (an interrupted run, or a plan grown by more seeds) is
// resumed. Clips of the plan this manifest lacks are then looked for in
// the directory's other manifests (reuseOtherSplits): a clip another
// split made is verified the same way and reused, not rendered again.
func verifyExisting(out, manifestPath string, spec Spec, order map[string]int, log *slog.Logger) (done map[string]bool, kept []Entry, err error) {
	entries, skipped, err := ReadManifest(manifestPath)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrOutput, err)
	}
	if skipped > 0 {
		log.Warn("manifest lines unreadable; their clips will be rendered again", "lines", skipped)
	}
	done = map[string]bool{}
	want := settingsOf(spec)
	latest := map[string]Entry{} // the last line for an id wins
	var ids []string
	for _, e := range entries {
		if _, ok := latest[e.ID]; !ok {
			ids = append(ids, e.ID)
		}
		latest[e.ID] = e
	}
	var foreign []string
	for _, id := range ids {
		if _, planned := order[id]; !planned {
			foreign = append(foreign, id)
		}
	}
	if len(foreign) > 0 {
		return nil, nil, otherPlanError(out, foreign, len(ids))
	}
	for _, id := range ids {
		e := latest[id]
		if reason := verifyEntry(out, e, want); reason != "" {
			log.Info("re-rendering clip", "id", id, "reason", reason)
			continue
		}
		done[id] = true
		kept = append(kept, e)
	}
	return done, reuseOtherSplits(out, manifestPath, want, order, done, kept, log), nil
}

// reuseOtherSplits adds to kept (and done) the clips of order that are not
// done but that another manifest of the directory records and verifies:
// DIR/manifest.jsonl (a merged or unsharded render) and every shard's
// DIR/shards/I-of-N/manifest.jsonl, whatever its N. All of them name the
// same plan (OpenShard and CheckShardPlan refuse another), their paths are
// relative to DIR, and a shard of this run's split that may be writing
// meanwhile never writes this run's clips, so what verifies here stays
// valid. Without this a render of another split, or a plain render after
// the shards, would render every finished clip again. Manifests that
// cannot be read are passed over: their clips are rendered.
func reuseOtherSplits(out, manifestPath string, want RenderSettings, order map[string]int, done map[string]bool, kept []Entry, log *slog.Logger) []Entry {
	if len(done) == len(order) {
		return kept
	}
	paths := []string{filepath.Join(out, ManifestName)}
	shardManifests, _ := filepath.Glob(filepath.Join(out, ShardsDir, "*", ManifestName))
	paths = append(paths, shardManifests...)
	reused := 0
	for _, path := range paths {
		if filepath.Clean(path) == filepath.Clean(manifestPath) {
			continue
		}
		entries, _, err := ReadManifest(path)
		if err != nil {
			log.Info("not reusing the clips of another manifest: unreadable", "manifest", path, "err", err)
			continue
		}
		last := map[string]int{} // the last line for an id wins
		for i, e := range entries {
			last[e.ID] = i
		}
		for i, e := range entries {
			if _, planned := order[e.ID]; !planned || done[e.ID] || last[e.ID] != i {
				continue
			}
			if reason := verifyEntry(out, e, want); reason != "" {
				log.Info("not reusing a clip of another manifest", "id", e.ID, "manifest", path, "reason", reason)
				continue
			}
			done[e.ID] = true
			kept = append(kept, e)
			reused++
		}
	}
	if reused > 0 {
		log.Info("reusing verified clips recorded by another split or run", "clips", reused)
	}
	return kept
}

// otherPlanError names the directory, how many of its clips the plan
// lacks (with a few ids), and the two ways on.
func otherPlanError(out string, foreign []string, recorded int) error {
	ids := foreign[:min(3, len(foreign))]
	more := ""
	if len(foreign) > len(ids) {
		more = fmt.Sprintf(" and %d more", len(foreign)-len(ids))
	}
	return fmt.Errorf("%w: %s records %d clips, %d of them not in this plan (%s%s); a render directory holds one plan: render into a new --out directory, or delete %s to replace it",
		ErrOtherPlan, out, recorded, len(foreign), strings.Join(ids, ", "), more, out)
}

func verifyEntry(out string, e Entry, want RenderSettings) string {
	if e.Render != want {
		return "render settings changed"
	}
	if e.Frames != frameCount(want.Duration, want.FPS) {
		return "frame count differs"
	}
	// The manifest's own paths, held inside the directory (a crafted
	// manifest must not make a render hash or parse files elsewhere), and
	// reasons that never quote a file's content.
	manifest := filepath.Join(out, ManifestName)
	if e.External {
		return "an external entry is not a rendered clip"
	}
	video, err := e.VideoPath(manifest)
	if err != nil {
		return "video path: " + err.Error()
	}
	sum, err := fsutil.FileSHA256(video)
	if err != nil {
		return "video missing"
	}
	if sum != e.SHA256 {
		return "video hash mismatch"
	}
	tracePath, err := e.TracePath(manifest)
	if err != nil {
		return "trace path: " + err.Error()
	}
	tr, err := trace.Load(tracePath)
	if err != nil {
		return "trace unreadable"
	}
	clip, err := scene.New(scene.Params{Domain: tr.Domain, N: tr.N, F: tr.F, Class: tr.Class, Seed: tr.Seed, Duration: want.Duration, FPS: want.FPS, Width: want.Width, Height: want.Height})
	if err != nil {
		return "trace parameters invalid: " + err.Error()
	}
	a, errA := clip.Trace().Marshal()
	b, errB := tr.Marshal()
	if errA != nil || errB != nil || !bytes.Equal(a, b) || tr.ID != e.ID {
		return "trace differs from the scene's"
	}
	return ""
}

// lockDir takes an exclusive lock on the output directory so two runs
// never write the same clips.
func lockDir(dir string) (unlock func(), err error) {
	l, err := fsutil.TryLock(filepath.Join(dir, ".tracegrid.lock"))
	var le *fsutil.LockError
	switch {
	case errors.As(err, &le):
		return nil, fmt.Errorf("%w %s is in use by another tracegrid run: %w", ErrOutput, dir, le.Err)
	case err != nil:
		return nil, fmt.Errorf("%w %s is not writable: %w", ErrOutput, dir, err)
	}
	return func() { _ = l.Unlock() }, nil
}

// removeStaleTemps deletes temporary files a killed run left behind. The
// directory lock guarantees no live run owns them.
func removeStaleTemps(dir string, log *slog.Logger) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if name := e.Name(); strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp") {
			if os.Remove(filepath.Join(dir, name)) == nil {
				log.Info("removed a temporary file left by an interrupted run", "file", name)
			}
		}
	}
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
