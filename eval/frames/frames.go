// Package frames turns a sampling plan into encoded images (JPEG or PNG, in
// memory) for a model request. For our own clips it never decodes video:
// each frame is rendered on the GPU straight from the scene, at the frame
// the clip's MP4 shows at the sample time (or, with Exact, at the sample
// time itself), so the images hold the same pixels as the MP4 before
// compression. External videos (tracegrid frames --video, imported
// natural clips) are decoded with libav by seeking, and turned upright by
// their display rotation (StreamVideoRotated).
//
// One Source (and one GL context) serves any number of clips; a stream
// keeps at most Options.Buffer images in flight, encodes them on parallel
// workers, and reuses the bytes of a frame identical to the previous one.
package frames

import (
	"context"
	"fmt"
	"iter"
	"math"
	"runtime"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/internal/pool"
	"github.com/tracegrid/tracegrid/internal/rgba"
	"github.com/tracegrid/tracegrid/scene"
)

// Options of a frame source.
type Options struct {
	Format  encode.ImageFormat // jpg (default) or png
	Quality int                // JPEG quality 1–100 (0: the encoder's default)
	// Width and Height of the images; 0 keeps the clip's size. Another
	// aspect ratio letterboxes the scene with its background colour.
	Width, Height int
	// Exact renders the scene at the sample time itself instead of at the
	// last clip frame at or before it.
	Exact bool
	// Buffer bounds the images rendered ahead of the consumer (default 4).
	Buffer int
	// Workers encode images in parallel (default: one per CPU).
	Workers int
}

// Image is one encoded frame.
type Image struct {
	Frame sampling.Frame
	// ClipFrame is the index of the clip frame shown (the last frame at or
	// before Frame.T); -1 with Options.Exact or for external videos whose
	// frame grid is not ours.
	ClipFrame int
	Data      []byte
	MIME      string
}

// Source renders sampled frames of clips.
type Source struct {
	r   *gpu.Renderer
	opt Options
}

// NewSource makes a source drawing with r (which the caller owns).
func NewSource(r *gpu.Renderer, opt Options) (*Source, error) {
	if opt.Format == "" {
		opt.Format = encode.ImageFormat("jpg")
	}
	if _, err := encode.ParseImageFormat(string(opt.Format)); err != nil {
		return nil, err
	}
	if opt.Quality < 0 || opt.Quality > 100 {
		return nil, fmt.Errorf("frames: JPEG quality %d out of range [1, 100]", opt.Quality)
	}
	if (opt.Width == 0) != (opt.Height == 0) || opt.Width < 0 || opt.Height < 0 || opt.Width%2 != 0 || opt.Height%2 != 0 {
		return nil, fmt.Errorf("frames: image size %dx%d: give both, even and positive, or neither", opt.Width, opt.Height)
	}
	if opt.Buffer <= 0 {
		opt.Buffer = 4
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.NumCPU()
	}
	return &Source{r: r, opt: opt}, nil
}

// ShownFrame is the index of the clip frame shown at time t: the last frame
// whose time k/fps is at or before t, clamped to the clip. The small
// epsilon absorbs float error in sums like t_i − 0.1.
func ShownFrame(t float64, fps, frames int) int {
	k := int(math.Floor(t*float64(fps) + 1e-6))
	return max(0, min(frames-1, k))
}

func (s *Source) size(c *scene.Clip) (int, int) {
	if s.opt.Width > 0 {
		return s.opt.Width, s.opt.Height
	}
	return c.P.Width, c.P.Height
}

// Stream renders and encodes the plan's frames in the plan's (shown) order.
// Stop early by breaking out of the loop; the stream then stops rendering.
func (s *Source) Stream(ctx context.Context, clip *scene.Clip, plan sampling.Plan) iter.Seq2[Image, error] {
	w, h := s.size(clip)
	frames := int(math.Round(clip.P.Duration * float64(clip.P.FPS)))
	var cur, prev scene.DrawList
	first := true
	produce := func(f sampling.Frame, dst rgba.Image) (bool, int, error) {
		t, k := f.T, -1
		if !s.opt.Exact {
			k = ShownFrame(f.T, clip.P.FPS, frames)
			t = float64(k) / float64(clip.P.FPS)
		}
		clip.StateInto(t, &cur)
		if !first && cur.Equal(&prev) {
			return true, k, nil
		}
		first = false
		if err := s.r.Render(&cur, dst); err != nil {
			return false, k, fmt.Errorf("frames: %s at t=%v: %w", clip.P.ID(), f.T, err)
		}
		cur, prev = prev, cur
		return false, k, nil
	}
	return s.stream(ctx, plan, w, h, produce)
}

// producer fills dst with the pixels of frame f, or reports that they are
// identical to the previous frame's (then dst is untouched).
type producer func(f sampling.Frame, dst rgba.Image) (same bool, clipFrame int, err error)

// slot is one image on its way to the consumer.
type slot struct {
	img  Image
	err  error
	done chan struct{} // closed when img.Data or err is set
	prev *slot         // identical picture: reuse prev's bytes
}

// stream runs produce on this stream's goroutine (GL calls are serialized
// by the renderer anyway) and encodes on a pool of Workers encoders,
// delivering in plan order with at most Buffer images ahead of the
// consumer. An encode error is the error of its own image, delivered in
// its place.
func (s *Source) stream(ctx context.Context, plan sampling.Plan, w, h int, produce producer) iter.Seq2[Image, error] {
	return func(yield func(Image, error) bool) {
		encs := make([]*encode.ImageEncoder, 0, s.opt.Workers)
		defer func() {
			for _, e := range encs {
				e.Close()
			}
		}()
		for range s.opt.Workers {
			enc, err := encode.NewImageEncoder(s.opt.Format, w, h, s.opt.Quality)
			if err != nil {
				yield(Image{}, fmt.Errorf("frames: %w", err))
				return
			}
			encs = append(encs, enc)
		}
		mime := encs[0].MIME()
		ctx, cancel := context.WithCancel(ctx)
		encoders, ctx := pool.New(ctx, encs)
		bufs := make(chan *rgba.Image, s.opt.Buffer+s.opt.Workers)
		for range cap(bufs) {
			img := rgba.New(w, h)
			bufs <- &img
		}
		slots := make(chan *slot, s.opt.Buffer)
		go func() {
			defer close(slots)
			var last *slot
			for _, f := range plan.Frames {
				var buf *rgba.Image
				select {
				case buf = <-bufs:
				case <-ctx.Done():
					return
				}
				sl := &slot{img: Image{Frame: f, MIME: mime}, done: make(chan struct{})}
				same, k, err := produce(f, *buf)
				sl.img.ClipFrame = k
				switch {
				case err != nil:
					sl.err = err
					close(sl.done)
					bufs <- buf
				case same && last != nil:
					sl.prev = last
					close(sl.done)
					bufs <- buf
				default:
					if ctx.Err() != nil {
						return
					}
					encoders.Go(func(enc *encode.ImageEncoder) error {
						sl.img.Data, sl.err = enc.Encode(*buf)
						close(sl.done)
						bufs <- buf
						return nil
					})
					last = sl
				}
				select {
				case slots <- sl:
				case <-ctx.Done():
					return
				}
				if err != nil {
					return
				}
			}
		}()
		defer func() {
			cancel()
			for range slots { // let the producer finish
			}
			_ = encoders.Wait() // tasks return nil; then the encoders are closed
		}()
		for sl := range slots {
			<-sl.done
			src := sl
			if sl.prev != nil {
				<-sl.prev.done
				src = sl.prev
			}
			img := sl.img
			img.Data = src.img.Data
			err := sl.err
			if err == nil {
				err = src.err
			}
			if !yield(img, err) || err != nil {
				return
			}
		}
	}
}

// LowRes is the cheap pass adaptive sampling reads: a 64×36 greyscale view
// of the clip frame shown at t, rendered on the GPU.
type LowRes struct {
	r    *gpu.Renderer
	clip *scene.Clip
	img  rgba.Image
	dl   scene.DrawList
	grey []byte
}

// LowResSize is the adaptive pass's image size.
const LowResWidth, LowResHeight = 64, 36

// NewLowRes returns the low-resolution pixel source of a clip.
func NewLowRes(r *gpu.Renderer, clip *scene.Clip) *LowRes {
	return &LowRes{r: r, clip: clip, img: rgba.New(LowResWidth, LowResHeight)}
}

// LowRes implements sampling.PixelSource.
func (l *LowRes) LowRes(t float64) ([]byte, error) {
	p := l.clip.P
	k := ShownFrame(t, p.FPS, int(math.Round(p.Duration*float64(p.FPS))))
	l.clip.StateInto(float64(k)/float64(p.FPS), &l.dl)
	if err := l.r.Render(&l.dl, l.img); err != nil {
		return nil, err
	}
	l.grey = greyInto(l.grey[:0], l.img)
	return l.grey, nil
}

// greyInto appends the luma (BT.601 weights, integer) of img's pixels.
func greyInto(dst []byte, img rgba.Image) []byte {
	for y := range img.Height {
		row := img.Pix[y*img.Stride : y*img.Stride+4*img.Width]
		for x := 0; x < len(row); x += 4 {
			dst = append(dst, byte((299*int(row[x])+587*int(row[x+1])+114*int(row[x+2]))/1000))
		}
	}
	return dst
}
