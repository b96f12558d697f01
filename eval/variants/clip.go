package variants

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/frames"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/internal/fsutil"
	"github.com/tracegrid/tracegrid/internal/rgba"
	"github.com/tracegrid/tracegrid/pipeline"
	"github.com/tracegrid/tracegrid/scene"
)

// stats counts what one variant wrote.
type stats struct {
	frames, files int
	bytes         int64
}

// worker makes the variants of one clip at a time: every distinct clip
// frame the clip's variants show is rendered (and, for images, encoded)
// once, and every file showing it is written from the same bytes.
type worker struct {
	opt      *Options
	finish   func(Record, stats) error
	pictures func(int)
	src      *frames.Source // images: one encoder per worker
	buf      rgba.Image     // video: the rendered picture
}

// writeFileHook, when set, replaces how image files and frames.json are
// written (tests: a disk that fills up, a kill mid-variant).
var writeFileHook func(path string, data []byte) error

// variant is one clip × policy being made.
type variant struct {
	rec       Record
	plan      sampling.Plan
	runs      map[int]int      // clip frame → how many consecutive frames (time order) show it
	timeOrder []sampling.Frame // the plan's frames by index
	shown     []int            // the clip frame each of timeOrder shows
	sink      FrameSink
	stage     string // staging directory (frames) or temporary MP4 (video)
	traceTmp  string // video: temporary trace copy
	lastID    int
	st        stats
	committed bool
}

// do makes the clip's variants that this run still lacks.
func (w *worker) do(ctx context.Context, j *clipJob) error {
	opt := w.opt
	var low *frames.LowRes
	var vs []*variant
	nframes := clipFrames(j.clip)
	for _, i := range j.todo {
		p := opt.Policies[i]
		var px sampling.PixelSource
		if isAdaptive(p) {
			if low == nil {
				low = frames.NewLowRes(opt.Renderer, j.clip)
			}
			px = low
		}
		plan, err := p.Plan(samplingClip(j, px))
		if err != nil {
			if errors.Is(err, sampling.ErrPolicy) {
				return fmt.Errorf("%w: %w", ErrInput, err)
			}
			return fmt.Errorf("variants: clip %s, policy %s: %w", j.entry.ID, p, err)
		}
		v := &variant{rec: opt.record(j, p), plan: plan, runs: map[int]int{}, lastID: -1}
		v.rec.Note = plan.Note
		v.rec.Frames = len(plan.Frames)
		// The sinks take each variant's frames in time order (by index),
		// all frames showing one clip frame in a row: that needs the clip
		// frames to rise with the index, as the sample times do.
		v.timeOrder = slices.SortedFunc(slices.Values(plan.Frames), func(a, b sampling.Frame) int { return cmp.Compare(a.Index, b.Index) })
		prev := -1
		for _, f := range v.timeOrder {
			k := frames.ShownFrame(f.T, j.clip.P.FPS, nframes)
			if k < prev {
				return fmt.Errorf("variants: clip %s, policy %s: frame %d (t=%v) shows clip frame %d before frame %d: the plan's times are not in index order", j.entry.ID, p, f.Index, f.T, k, prev)
			}
			prev = k
			v.runs[k]++
			v.shown = append(v.shown, k)
		}
		vs = append(vs, v)
	}
	defer func() {
		for _, v := range vs {
			if !v.committed {
				v.abort()
			}
		}
	}()
	// The distinct clip frames, in time order.
	var ks []int
	for _, v := range vs {
		for k := range v.runs {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	ks = slices.Compact(ks)

	var err error
	if opt.As == AsVideo {
		err = w.video(ctx, j, vs, ks)
	} else {
		err = w.images(ctx, j, vs, ks)
	}
	if err != nil {
		return err
	}
	for _, v := range vs {
		if err := v.commit(opt.Out); err != nil {
			return err
		}
		if err := w.finish(v.rec, v.st); err != nil {
			return err
		}
	}
	return nil
}

// deliver gives picture p (clip frame p.ClipFrame) to every variant that
// shows it: a new picture is written once then repeated, the same picture
// as a variant's last is only repeated.
func deliver(vs []*variant, p Picture) error {
	for _, v := range vs {
		n := v.runs[p.ClipFrame]
		if n == 0 {
			continue
		}
		var err error
		if v.lastID == p.ID {
			err = v.sink.Repeat(n)
		} else {
			if err = v.sink.Write(p); err == nil {
				err = v.sink.Repeat(n - 1)
			}
			v.lastID = p.ID
		}
		if err != nil {
			return fmt.Errorf("variants: clip %s, policy %s: %w", v.rec.Clip, v.rec.Policy, err)
		}
		v.st.frames += n
	}
	return nil
}

// images writes image variants: the distinct clip frames are streamed
// through one frames.Source (render, then JPEG/PNG encode; a frame equal
// to the previous one reuses its bytes), each into every staging
// directory that shows it.
func (w *worker) images(ctx context.Context, j *clipJob, vs []*variant, ks []int) error {
	opt := w.opt
	if w.src == nil {
		src, err := frames.NewSource(opt.Renderer, frames.Options{Format: opt.Format, Quality: opt.Quality, Width: opt.Width, Height: opt.Height, Workers: 1})
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInput, err)
		}
		w.src = src
	}
	hashes := map[*byte]string{} // encoded picture → sha256 (computed once)
	for _, v := range vs {
		polDir := filepath.Join(opt.Out, PolicyDir(v.rec.Policy))
		if err := os.MkdirAll(polDir, 0o755); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrOutput, polDir, err)
		}
		stage, err := os.MkdirTemp(polDir, "."+v.rec.Clip+".tmp-*")
		if err != nil {
			return fmt.Errorf("%w: staging directory in %s: %w", ErrOutput, polDir, err)
		}
		v.stage = stage
		if err := os.Chmod(stage, 0o755); err != nil { // MkdirTemp makes it 0700
			return fmt.Errorf("%w: %w", ErrOutput, err)
		}
		idx := frames.Index{Clip: v.rec.Clip, Source: "scene", Policy: v.plan.Policy, Format: string(opt.Format),
			Width: v.rec.Settings.Width, Height: v.rec.Settings.Height, Note: v.plan.Note, Limit: v.plan.Limit,
			Events: j.tr.Times(), Generator: pipeline.ToolVersion()}
		dir := frames.NewDir(stage, idx, true)
		if writeFileHook != nil {
			dir.SetWriteFile(writeFileHook)
		}
		v.rec.SHA256 = map[string]string{}
		dir.Wrote = func(name string, data []byte) {
			sum, ok := "", false
			if name != frames.IndexName && len(data) > 0 {
				sum, ok = hashes[&data[0]]
			}
			if !ok {
				sum = sha(data)
				if name != frames.IndexName && len(data) > 0 {
					hashes[&data[0]] = sum
				}
			}
			v.rec.SHA256[v.rec.Path+"/"+name] = sum
			v.st.files++
			v.st.bytes += int64(len(data))
		}
		v.sink = newImageSink(dir, v.timeOrder, v.shown)
	}
	fps := float64(j.clip.P.FPS)
	want := sampling.Plan{Policy: "distinct clip frames", Frames: make([]sampling.Frame, len(ks))}
	for i, k := range ks {
		want.Frames[i] = sampling.Frame{Index: i, Position: i, T: float64(k) / fps}
	}
	id, pics := -1, 0
	var last *byte
	for img, err := range w.src.Stream(ctx, j.clip, want) {
		if err != nil {
			return err
		}
		if len(img.Data) == 0 || &img.Data[0] != last {
			id++
			pics++
			if len(img.Data) > 0 {
				last = &img.Data[0]
			}
		}
		if err := deliver(vs, Picture{ClipFrame: img.ClipFrame, ID: id, Data: img.Data}); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	w.pictures(pics)
	for _, v := range vs {
		if err := v.sink.Close(); err != nil {
			return fmt.Errorf("variants: clip %s, policy %s: %w", v.rec.Clip, v.rec.Policy, err)
		}
	}
	return nil
}

// video writes MP4 variants: every distinct clip frame is rendered once
// and sent to each video that shows it; a picture equal to a video's last
// one is repeated without conversion.
func (w *worker) video(ctx context.Context, j *clipJob, vs []*variant, ks []int) error {
	opt := w.opt
	p := j.clip.P
	width, height := vs[0].rec.Settings.Width, vs[0].rec.Settings.Height
	if w.buf.Width != width || w.buf.Height != height {
		w.buf = rgba.New(width, height)
	}
	for _, v := range vs {
		polDir := filepath.Join(opt.Out, PolicyDir(v.rec.Policy))
		if err := os.MkdirAll(polDir, 0o755); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrOutput, polDir, err)
		}
		tmp, err := fsutil.CreateTemp(polDir, "."+v.rec.Clip+".mp4.tmp-*")
		if err != nil {
			return fmt.Errorf("%w: temporary file in %s: %w", ErrOutput, polDir, err)
		}
		v.stage = tmp.Name()
		if err := tmp.Close(); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrOutput, v.stage, err)
		}
		tt, err := fsutil.CreateTemp(polDir, "."+v.rec.Clip+".trace.json.tmp-*")
		if err != nil {
			return fmt.Errorf("%w: temporary file in %s: %w", ErrOutput, polDir, err)
		}
		v.traceTmp = tt.Name()
		_, werr := tt.Write(j.trace)
		if cerr := tt.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return fmt.Errorf("%w: writing %s: %w", ErrOutput, v.traceTmp, werr)
		}
		enc := v.rec.Settings.Encoder
		ew, err := encode.Create(v.stage, encode.Options{Width: width, Height: height, FPS: v.rec.Settings.FPS,
			Codec: enc.Codec, Preset: enc.Preset, CRF: enc.CRF, Lossless: enc.Lossless, Threads: enc.Threads})
		if err != nil {
			return fmt.Errorf("variants: clip %s, policy %s: %w", v.rec.Clip, v.rec.Policy, err)
		}
		v.sink = &videoSink{w: ew}
	}
	var cur, prev scene.DrawList
	id := -1
	for _, k := range ks {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		j.clip.StateInto(float64(k)/float64(p.FPS), &cur)
		if id < 0 || !cur.Equal(&prev) {
			if err := opt.Renderer.Render(&cur, w.buf); err != nil {
				return fmt.Errorf("variants: clip %s, clip frame %d: %w", j.entry.ID, k, err)
			}
			cur, prev = prev, cur
			id++
		}
		if err := deliver(vs, Picture{ClipFrame: k, ID: id, Pixels: w.buf}); err != nil {
			return err
		}
	}
	w.pictures(id + 1)
	for _, v := range vs {
		vsink := v.sink.(*videoSink)
		if vsink.frames != v.rec.Frames {
			return fmt.Errorf("variants: clip %s, policy %s: %d of %d video frames encoded", v.rec.Clip, v.rec.Policy, vsink.frames, v.rec.Frames)
		}
		err := v.sink.Close()
		v.sink = nil
		if err != nil {
			return fmt.Errorf("variants: clip %s, policy %s: %w", v.rec.Clip, v.rec.Policy, err)
		}
	}
	return nil
}

// commit moves a finished variant into place and completes its record.
func (v *variant) commit(out string) error {
	final := filepath.Join(out, filepath.FromSlash(v.rec.Path))
	if v.rec.As == AsVideo {
		sumV, err := fileSHA256(v.stage)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrOutput, v.stage, err)
		}
		fi, err := os.Stat(v.stage)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrOutput, v.stage, err)
		}
		tracePath := final[:len(final)-len(".mp4")] + ".trace.json"
		traceRel := v.rec.Path[:len(v.rec.Path)-len(".mp4")] + ".trace.json"
		sumT, err := fileSHA256(v.traceTmp)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrOutput, v.traceTmp, err)
		}
		ti, _ := os.Stat(v.traceTmp)
		if err := os.Rename(v.traceTmp, tracePath); err != nil {
			return fmt.Errorf("%w: %w", ErrOutput, err)
		}
		if err := os.Rename(v.stage, final); err != nil {
			return fmt.Errorf("%w: %w", ErrOutput, err)
		}
		v.rec.SHA256 = map[string]string{v.rec.Path: sumV, traceRel: sumT}
		v.st.files, v.st.bytes = 2, fi.Size()
		if ti != nil {
			v.st.bytes += ti.Size()
		}
		v.committed = true
		return nil
	}
	// A directory cannot be renamed over a non-empty one: an older,
	// unverified copy goes first (a kill in between leaves no variant,
	// which the rerun makes).
	if err := os.RemoveAll(final); err != nil {
		return fmt.Errorf("%w: removing the old %s: %w", ErrOutput, final, err)
	}
	if err := os.Rename(v.stage, final); err != nil {
		return fmt.Errorf("%w: %w", ErrOutput, err)
	}
	v.committed = true
	return nil
}

// abort removes what an unfinished variant wrote.
func (v *variant) abort() {
	if vs, ok := v.sink.(*videoSink); ok && vs != nil {
		vs.w.Abort()
	}
	if v.stage != "" {
		os.RemoveAll(v.stage)
	}
	if v.traceTmp != "" {
		os.Remove(v.traceTmp)
	}
}
