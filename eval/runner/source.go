package runner

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"

	"github.com/tracegrid/tracegrid/eval/frames"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/scene"
)

// Clip is one clip of a study as the runner and its frame sources see it:
// a clip rendered from a scene, or a video imported from outside (a domain
// without a scene: natural).
type Clip struct {
	ID, Domain string
	Duration   float64 // seconds
	// FPS is the clip's frame rate: a rendered clip's, an imported video's
	// average rate (29.97…).
	FPS float64
	// Width and Height are the frames' size as shown (an imported video's
	// displayed size, after Rotation).
	Width, Height int
	Seed          int
	// Scene rebuilds a rendered clip's frames; nil for an imported video.
	Scene *scene.Clip
	// Video is the clip's video file: a rendered clip's MP4 (sent as the
	// native video), an imported clip's file (decoded, or sent).
	Video string
	// Rotation is an imported video's display rotation in degrees,
	// clockwise (0, 90, 180, 270).
	Rotation int
}

// Imported reports whether the clip is a video from outside, whose frames
// are decoded rather than rendered.
func (c *Clip) Imported() bool { return c.Scene == nil }

// FrameSource is where a trial's images come from: the frames a plan shows
// of a clip. The runner owns this seam (STYLE.md 11: pion/mediadevices'
// video Reader). RenderedFrames renders a scene clip's frames and
// DecodedFrames decodes an imported video's; tests hand in their own
// (Options.Frames), which need no GL.
type FrameSource interface {
	// Frames encodes the plan's frames of c in shown order, as opt asks
	// (format, quality, size; Width and Height 0 keep the clip's shown
	// size). Breaking out of the loop stops the stream.
	Frames(ctx context.Context, c *Clip, plan sampling.Plan, opt frames.Options) iter.Seq2[frames.Image, error]
	// Pixels is the low-resolution view of c that adaptive sampling reads
	// (sampling.PixelSource); release frees what it holds and is safe to
	// call more than once.
	Pixels(c *Clip) (px sampling.PixelSource, release func(), err error)
}

// RenderedFrames renders a scene clip's frames on the GPU (frames.Source),
// at the frame the clip's MP4 shows at each time: never decoded from the
// MP4.
type RenderedFrames struct{ Renderer *gpu.Renderer }

// errNoScene is the error of RenderedFrames for a clip without a scene.
var errNoScene = errors.New("runner: the clip has no scene to render (an imported video's frames are decoded: DecodedFrames)")

// Frames implements FrameSource.
func (s RenderedFrames) Frames(ctx context.Context, c *Clip, plan sampling.Plan, opt frames.Options) iter.Seq2[frames.Image, error] {
	if c.Scene == nil || s.Renderer == nil {
		return failed(fmt.Errorf("clip %s: %w", c.ID, errNoScene))
	}
	src, err := frames.NewSource(s.Renderer, opt)
	if err != nil {
		return failed(err)
	}
	return src.Stream(ctx, c.Scene, plan)
}

// Pixels implements FrameSource.
func (s RenderedFrames) Pixels(c *Clip) (sampling.PixelSource, func(), error) {
	if c.Scene == nil || s.Renderer == nil {
		return nil, nil, fmt.Errorf("clip %s: %w", c.ID, errNoScene)
	}
	return frames.NewLowRes(s.Renderer, c.Scene), func() {}, nil
}

// DecodedFrames decodes an imported video's frames with libav
// (frames.OpenVideo: MP4/MOV or WebM/Matroska, read as a video from
// outside), by seeking: the frame shown at t is the last video frame at or
// before t; each frame is turned upright by the video's display rotation.
type DecodedFrames struct{}

// Frames implements FrameSource.
func (DecodedFrames) Frames(ctx context.Context, c *Clip, plan sampling.Plan, opt frames.Options) iter.Seq2[frames.Image, error] {
	return func(yield func(frames.Image, error) bool) {
		src, err := frames.NewSource(nil, opt)
		if err != nil {
			yield(frames.Image{}, err)
			return
		}
		v, err := frames.OpenVideo(c.Video)
		if err != nil {
			yield(frames.Image{}, fmt.Errorf("clip %s: %w", c.ID, err))
			return
		}
		defer v.Close()
		for img, err := range src.StreamVideoRotated(ctx, v, c.Rotation, plan) {
			if !yield(img, err) || err != nil {
				return
			}
		}
	}
}

// Pixels implements FrameSource.
func (DecodedFrames) Pixels(c *Clip) (sampling.PixelSource, func(), error) {
	v, err := frames.OpenVideo(c.Video)
	if err != nil {
		return nil, nil, fmt.Errorf("clip %s: %w", c.ID, err)
	}
	return frames.NewVideoLowRes(v), v.Close, nil
}

// failed is a stream of one error.
func failed(err error) iter.Seq2[frames.Image, error] {
	return func(yield func(frames.Image, error) bool) { yield(frames.Image{}, err) }
}

// lazyPixels asks the source for a clip's pixels on the first LowRes call
// only (adaptive sampling is the only policy that reads pixels, and an
// imported video is opened for it), and release frees them.
type lazyPixels struct {
	src     FrameSource
	clip    *Clip
	once    sync.Once
	px      sampling.PixelSource
	free    func()
	openErr error
}

// LowRes implements sampling.PixelSource.
func (l *lazyPixels) LowRes(t float64) ([]byte, error) {
	l.once.Do(func() { l.px, l.free, l.openErr = l.src.Pixels(l.clip) })
	if l.openErr != nil {
		return nil, l.openErr
	}
	return l.px.LowRes(t)
}

// release frees the pixels, if they were opened; safe to call again.
func (l *lazyPixels) release() {
	l.once.Do(func() {}) // never open after release
	if l.free != nil {
		l.free()
		l.free = nil
	}
}
