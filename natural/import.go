package natural

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tracegrid/tracegrid/domain"
	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/internal/fsutil"
	"github.com/tracegrid/tracegrid/internal/textin"
	"github.com/tracegrid/tracegrid/pipeline"
	"github.com/tracegrid/tracegrid/trace"
)

// Options of an import.
type Options struct {
	// Videos is the folder of videos. As given (relative or absolute), it
	// decides how the manifest points at them: relative to the manifest's
	// directory, or absolute.
	Videos string
	// Annotations is the annotation table (ReadTable).
	Annotations string
	// Out is the output directory: Out/manifest.jsonl and
	// Out/clips/<id>.trace.json.
	Out string
	// EventAt places each repetition's event: trace.EventAtEnd (default,
	// ""), trace.EventAtStart or trace.EventAtMiddle.
	EventAt string
	// Strict fails the import, writing nothing, when any row or video is
	// bad.
	Strict bool
	// Progress, when set, is called after each row.
	Progress func(done, total int)
}

// Result says what an import did.
type Result struct {
	Manifest string    // the manifest written
	Layout   Layout    // the annotation table's layout
	Imported int       // entries written
	Traces   int       // of which with a trace file
	Problems []Problem // rows and videos not imported, in file order, then videos without a row
}

// VideoExtensions are the file extensions Import takes for videos when it
// lists the videos folder (for "a video without a row"); a row may still
// name any file, which is then read as a video.
var VideoExtensions = []string{".mp4", ".m4v", ".mov", ".qt", ".3gp", ".3g2", ".mkv", ".webm", ".avi", ".mpg", ".mpeg", ".ts", ".m2ts", ".mts", ".flv", ".wmv", ".ogv"}

// Import reads the videos and the annotation table and writes the
// manifest (docs/natural.md): one entry per importable row, in the table's
// order, pointing at its video; a trace file for every row with
// boundaries. It reports every bad row and video in Result.Problems and
// goes on; it fails (error wrapping ErrInput, nothing written) when
// nothing can be imported or, with Strict, when anything is bad. The
// output directory is locked while Import writes (the render lock: a
// render and an import cannot share it) and must not hold rendered clips;
// a previous import's manifest there is replaced, and its trace files
// that the new one does not name are removed.
func Import(ctx context.Context, opt Options) (Result, error) {
	res := Result{Manifest: filepath.Join(opt.Out, pipeline.ManifestName)}
	if opt.EventAt == "" {
		opt.EventAt = trace.EventAtEnd
	}
	if !slices.Contains(trace.EventAts, opt.EventAt) {
		return res, fmt.Errorf("%w: --event-at %s: want %s", ErrInput, textin.Quote(opt.EventAt), strings.Join(trace.EventAts, ", "))
	}
	if opt.Out == "" || opt.Videos == "" || opt.Annotations == "" {
		return res, fmt.Errorf("%w: the videos folder, the annotation table and the output directory are all required", ErrInput)
	}
	if st, err := os.Stat(opt.Videos); err != nil || !st.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return res, fmt.Errorf("%w: videos folder %s: %w", ErrInput, opt.Videos, err)
	}
	layout, rows, problems, err := ReadTable(opt.Annotations)
	if err != nil {
		return res, err
	}
	res.Layout = layout
	files, err := listVideos(opt.Videos)
	if err != nil {
		return res, err
	}
	named := map[string]bool{}
	for _, r := range rows {
		named[r.Name] = true
	}
	for _, p := range problems {
		named[p.Name] = true // a bad row still names its video
	}

	ids := newIDs()
	var clips []imported
	for i, r := range rows {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		c, msg := importRow(opt, r, ids)
		if msg != "" {
			problems = append(problems, Problem{Line: r.Line, Name: r.Name, Msg: msg})
		} else {
			clips = append(clips, c)
		}
		if opt.Progress != nil {
			opt.Progress(i+1, len(rows))
		}
	}
	slices.SortStableFunc(problems, func(a, b Problem) int { return a.Line - b.Line })
	for _, f := range files {
		if !named[f] {
			problems = append(problems, Problem{Name: f, Msg: "a video in the folder without an annotation row: not imported"})
		}
	}
	res.Problems = problems
	switch {
	case opt.Strict && len(problems) > 0:
		return res, fmt.Errorf("%w: --strict: %d of %d rows and videos are bad; nothing was written", ErrInput, len(problems), len(problems)+len(clips))
	case len(clips) == 0:
		return res, fmt.Errorf("%w: nothing could be imported (%d problems)", ErrInput, len(problems))
	}
	if err := write(opt.Out, clips); err != nil {
		return res, err
	}
	res.Imported = len(clips)
	for _, c := range clips {
		if c.trace != nil {
			res.Traces++
		}
	}
	return res, nil
}

// imported is one importable row: its entry and, with boundaries, its
// trace.
type imported struct {
	entry pipeline.Entry
	trace *trace.Trace
}

// listVideos lists the video files of dir (VideoExtensions, not hidden),
// sorted.
func listVideos(dir string) ([]string, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: videos folder: %w", ErrInput, err)
	}
	var out []string
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, ".") || de.IsDir() {
			continue
		}
		if slices.Contains(VideoExtensions, strings.ToLower(filepath.Ext(name))) {
			out = append(out, name)
		}
	}
	return out, nil
}

// MaxRateMismatch is how far, relative, a table's fps column may be from
// the video's frame rate (29.97 written as 29.97 or 30 passes).
const MaxRateMismatch = 0.01

// Display-rotation tolerance: a matrix within this many degrees of a
// multiple of 90 is taken as that rotation.
const rotationSlack = 0.5

// importRow probes one row's video and builds its entry and trace; msg
// says why the row cannot be imported.
func importRow(opt Options, r Row, ids *idSet) (imported, string) {
	path := filepath.Join(opt.Videos, r.Name)
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return imported{}, fmt.Sprintf("no file %s in the videos folder", r.Name)
	case err != nil:
		return imported{}, fmt.Sprintf("the video cannot be read: %v", err)
	case !st.Mode().IsRegular():
		return imported{}, "not a regular file"
	}
	p, err := encode.ProbeVideoFile(path)
	switch {
	case errors.Is(err, encode.ErrContainer):
		return imported{}, fmt.Sprintf("not a video this program reads (%s); remux it first (ffmpeg -i IN -c copy OUT.mp4)", encode.AcceptedContainers)
	case errors.Is(err, encode.ErrDamaged):
		return imported{}, "unreadable or truncated video: " + strings.TrimPrefix(err.Error(), "encode: "+path+": ")
	case err != nil:
		return imported{}, "the video cannot be read: " + err.Error()
	}
	rate, ok, why := p.ConstantRate()
	if !ok {
		return imported{}, fmt.Sprintf("variable frame rate (%s): the annotation's frame indices do not map to times at one rate; re-encode at a constant rate and annotate that file", why)
	}
	if p.FPS > 0 {
		rate = p.FPS
	}
	if r.FPS > 0 && math.Abs(r.FPS-rate) > MaxRateMismatch*rate {
		return imported{}, fmt.Sprintf("the table gives %.4g fps, the video is %.4g fps: its frame indices count the frames of another encoding", r.FPS, rate)
	}
	rot, msg := rotation(p)
	if msg != "" {
		return imported{}, msg
	}
	w, h := p.Width, p.Height
	if rot == 90 || rot == 270 {
		w, h = h, w
	}
	fps := int(math.Round(rate))
	switch {
	case w < trace.MinSize || h < trace.MinSize || w > trace.MaxSize || h > trace.MaxSize:
		return imported{}, fmt.Sprintf("size %dx%d is outside [%d, %d]", w, h, trace.MinSize, trace.MaxSize)
	case fps < 1 || fps > trace.MaxFPS:
		return imported{}, fmt.Sprintf("frame rate %.4g fps is outside [1, %d]", rate, trace.MaxFPS)
	case !(p.Duration > 0) || p.Duration > trace.MaxDuration:
		return imported{}, fmt.Sprintf("duration %.4g s is outside (0, %v]", p.Duration, trace.MaxDuration)
	}
	reps := make([]trace.Repetition, len(r.Bounds)/2)
	for i := range reps {
		s, e := r.Bounds[2*i], r.Bounds[2*i+1]
		reps[i] = trace.Repetition{Start: s, End: e}
		if s < p.Frames && e < p.Frames {
			reps[i].StartT, reps[i].EndT = p.Times[s], p.Times[e]
		}
	}
	if err := trace.CheckRepetitions(reps, p.Frames, p.Duration); err != nil {
		return imported{}, err.Error()
	}
	sum, err := fsutil.FileSHA256(path)
	if err != nil {
		return imported{}, "the video cannot be read: " + err.Error()
	}
	video, err := manifestPath(opt.Videos, opt.Out, r.Name)
	if err != nil {
		return imported{}, err.Error()
	}
	id := ids.add(r.Name)
	e := pipeline.Entry{ID: id, Domain: domain.Natural, N: r.Count, Video: video, External: true, SHA256: sum, Frames: p.Frames,
		Render:      pipeline.RenderSettings{Duration: p.Duration, FPS: fps, Width: w, Height: h},
		ToolVersion: pipeline.ToolVersion(),
		Natural:     &pipeline.NaturalVideo{FrameRate: rate, Rotation: rot, Source: r.Name, Action: r.Action}}
	tr := CountTrace(e)
	if len(reps) > 0 {
		e.Trace = "clips/" + id + ".trace.json"
		tr.Natural.EventAt, tr.Natural.Repetitions = opt.EventAt, reps
		tr.Events = trace.NaturalEvents(reps, opt.EventAt)
		tr.ActiveStart, tr.ActiveEnd = reps[0].StartT, reps[len(reps)-1].EndT
	}
	if err := tr.Validate(); err != nil {
		ids.remove(id)
		return imported{}, "the row does not make a valid trace: " + strings.TrimPrefix(err.Error(), "trace: ")
	}
	if e.Trace == "" {
		tr = nil
	}
	return imported{entry: e, trace: tr}, ""
}

// rotation is the video's display rotation as a multiple of 90, or why it
// cannot be used.
func rotation(p encode.VideoProbe) (int, string) {
	switch {
	case math.IsNaN(p.Rotation):
		return 0, "its display matrix is not a rotation"
	case p.Mirrored:
		return 0, "its display matrix mirrors the picture, which this program does not apply"
	}
	q := math.Round(p.Rotation/90) * 90
	if math.Abs(p.Rotation-q) > rotationSlack {
		return 0, fmt.Sprintf("display rotation %.4g° is not a multiple of 90°", p.Rotation)
	}
	return int(q) % 360, ""
}

// manifestPath is the manifest's path to the video: relative to the
// output directory when the videos folder was given relative, else
// absolute; slash-separated.
func manifestPath(videos, out, name string) (string, error) {
	file := filepath.Join(videos, name)
	if filepath.IsAbs(videos) {
		return filepath.ToSlash(filepath.Clean(file)), nil
	}
	absFile, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(absOut, absFile)
	if err != nil {
		return filepath.ToSlash(absFile), nil
	}
	return filepath.ToSlash(rel), nil
}

// write writes the trace files and the manifest under the output
// directory's lock.
func write(out string, clips []imported) error {
	if err := os.MkdirAll(filepath.Join(out, "clips"), 0o755); err != nil {
		return fmt.Errorf("natural: %w", err)
	}
	lock, err := fsutil.TryLock(filepath.Join(out, pipeline.RenderLockName))
	if err != nil {
		if errors.Is(err, fsutil.ErrLocked) {
			return fmt.Errorf("%w: %s is in use by another render or import", ErrInput, out)
		}
		return fmt.Errorf("natural: %w", err)
	}
	defer lock.Unlock()
	manifest := filepath.Join(out, pipeline.ManifestName)
	old, err := previousTraces(manifest)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, c := range clips {
		if c.trace == nil {
			continue
		}
		b, err := c.trace.Marshal()
		if err != nil {
			return err
		}
		keep[c.entry.Trace] = true
		if err := writeShared(filepath.Join(out, filepath.FromSlash(c.entry.Trace)), func(w io.Writer) error {
			_, err := w.Write(b)
			return err
		}); err != nil {
			return err
		}
	}
	if err := writeShared(manifest, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for _, c := range clips {
			if err := enc.Encode(c.entry); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	for _, t := range old {
		if !keep[t] {
			if err := os.Remove(filepath.Join(out, filepath.FromSlash(t))); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("natural: removing the previous import's trace: %w", err)
			}
		}
	}
	return nil
}

// previousTraces lists the trace files of the manifest a previous import
// wrote; a manifest with any other entry (a render's) is refused.
func previousTraces(manifest string) ([]string, error) {
	f, err := os.Open(manifest)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("natural: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, pipeline.MaxManifestLine)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var e pipeline.Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || !Imported(e) {
			return nil, fmt.Errorf("%w: %s holds a manifest that is not an import's (rendered clips, or unreadable): import into a directory of its own", ErrInput, manifest)
		}
		if e.Trace != "" && strings.HasPrefix(e.Trace, "clips/") && !strings.Contains(e.Trace[len("clips/"):], "/") &&
			!strings.Contains(e.Trace, "..") {
			out = append(out, e.Trace)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInput, manifest, err)
	}
	return out, nil
}

// writeShared writes path atomically, readable by all (a manifest and
// traces are for sharing).
func writeShared(path string, fn func(io.Writer) error) error {
	if err := fsutil.WriteFileAtomic(path, fn); err != nil {
		return fmt.Errorf("natural: write %s: %w", path, err)
	}
	return nil
}
