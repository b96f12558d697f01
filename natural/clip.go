package natural

import (
	"errors"
	"fmt"
	"io/fs"
	"math"

	"github.com/tracegrid/tracegrid/domain"
	"github.com/tracegrid/tracegrid/internal/fsutil"
	"github.com/tracegrid/tracegrid/internal/textin"
	"github.com/tracegrid/tracegrid/pipeline"
	"github.com/tracegrid/tracegrid/trace"
)

// Clip is an imported natural video as the evaluation reads it (Load).
type Clip struct {
	Entry pipeline.Entry
	// Trace is the clip's trace: the trace file's, or for a clip annotated
	// with its count alone the count trace (CountTrace: no repetitions, no
	// events).
	Trace *trace.Trace
	// Video is the video file's path (pipeline.Entry.VideoPath).
	Video string
}

// Imported reports whether a manifest entry is an imported video (a
// registered domain without a scene: natural) rather than a rendered clip.
func Imported(e pipeline.Entry) bool {
	s, ok := domain.Lookup(e.Domain)
	return ok && !s.Scene
}

// CountTrace is the trace of an imported clip annotated with its count
// alone, built from its manifest entry: N, the video's description, no
// repetitions, no events, the whole clip as active span. The evaluation
// stores it with every trial of the clip (results.Trial.Trace), so the
// report scores such a clip on its count.
func CountTrace(e pipeline.Entry) *trace.Trace {
	nat := e.Natural
	if nat == nil {
		nat = &pipeline.NaturalVideo{}
	}
	r := e.Render
	return &trace.Trace{Schema: trace.Schema, ID: e.ID, Domain: e.Domain, N: e.N, Duration: r.Duration, FPS: r.FPS,
		Width: r.Width, Height: r.Height, ActiveEnd: r.Duration, Nuisance: map[string]any{}, Events: []trace.Event{},
		Natural: &trace.Natural{Video: nat.Source, Action: nat.Action, FrameRate: nat.FrameRate, Frames: e.Frames, Rotation: nat.Rotation}}
}

// Load reads an imported clip of a manifest for the evaluation: the video
// must be the file imported (its SHA-256 is the entry's), and the trace,
// when the entry names one, must lie inside the manifest's directory,
// validate and describe the entry (id, domain, count, duration, frame
// rate, size, rotation, frames, file name). A clip without a trace file
// gets its CountTrace, which must validate too. Errors name the clip and
// wrap pipeline.ErrManifest (or fs.ErrNotExist for a missing file).
func Load(manifestPath string, e pipeline.Entry) (*Clip, error) {
	if !Imported(e) || e.Natural == nil {
		return nil, fmt.Errorf("%w: clip %s of domain %s is not an imported video", pipeline.ErrManifest, textin.Quote(e.ID), textin.Quote(e.Domain))
	}
	video, err := e.VideoPath(manifestPath)
	if err != nil {
		return nil, err
	}
	sum, err := fsutil.FileSHA256(video)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("clip %s: video %s: %w (the manifest points at the imported file; it has moved or gone)", textin.Quote(e.ID), textin.Quote(video), fs.ErrNotExist)
		}
		return nil, fmt.Errorf("clip %s: video %s: %w", textin.Quote(e.ID), textin.Quote(video), err)
	}
	if sum != e.SHA256 {
		return nil, fmt.Errorf("%w: clip %s: video %s changed since it was imported (sha256 %.12s…, recorded %.12s…); import it again",
			pipeline.ErrManifest, textin.Quote(e.ID), textin.Quote(video), sum, e.SHA256)
	}
	var tr *trace.Trace
	if e.Trace == "" {
		tr = CountTrace(e)
		if err := tr.Validate(); err != nil {
			return nil, fmt.Errorf("%w: clip %s: its entry does not make a valid trace: %w", pipeline.ErrManifest, textin.Quote(e.ID), err)
		}
	} else {
		path, err := e.TracePath(manifestPath)
		if err != nil {
			return nil, err
		}
		if tr, err = trace.Load(path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("clip %s: trace %s: %w", textin.Quote(e.ID), textin.Quote(e.Trace), fs.ErrNotExist)
			}
			return nil, fmt.Errorf("%w: clip %s: %w", pipeline.ErrManifest, textin.Quote(e.ID), err)
		}
	}
	if err := agrees(e, tr); err != nil {
		return nil, fmt.Errorf("%w: clip %s: trace %s does not describe the manifest's entry: %s", pipeline.ErrManifest, textin.Quote(e.ID), textin.Quote(e.Trace), err)
	}
	return &Clip{Entry: e, Trace: tr, Video: video}, nil
}

// agrees checks that a natural trace describes entry e.
func agrees(e pipeline.Entry, tr *trace.Trace) error {
	nat := tr.Natural
	switch {
	case tr.ID != e.ID || tr.Domain != e.Domain:
		return fmt.Errorf("it is clip %s of domain %s", textin.Quote(tr.ID), textin.Quote(tr.Domain))
	case tr.N != e.N:
		return fmt.Errorf("n=%d, the entry %d", tr.N, e.N)
	case tr.Duration != e.Render.Duration || tr.FPS != e.Render.FPS || tr.Width != e.Render.Width || tr.Height != e.Render.Height:
		return fmt.Errorf("%v s at %d fps, %dx%d; the entry %v s at %d fps, %dx%d", tr.Duration, tr.FPS, tr.Width, tr.Height,
			e.Render.Duration, e.Render.FPS, e.Render.Width, e.Render.Height)
	case nat == nil:
		return errors.New("no natural section")
	case nat.Frames != e.Frames || math.Abs(nat.FrameRate-e.Natural.FrameRate) > 1e-9 || nat.Rotation != e.Natural.Rotation:
		return fmt.Errorf("%d frames at %v fps rotated %d°; the entry %d at %v fps rotated %d°", nat.Frames, nat.FrameRate, nat.Rotation,
			e.Frames, e.Natural.FrameRate, e.Natural.Rotation)
	case nat.Video != e.Natural.Source || nat.Action != e.Natural.Action:
		return fmt.Errorf("video %s (%s); the entry %s (%s)", textin.Quote(nat.Video), textin.Quote(nat.Action), textin.Quote(e.Natural.Source), textin.Quote(e.Natural.Action))
	}
	return nil
}
