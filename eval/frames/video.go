package frames

import (
	"context"
	"fmt"
	"iter"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/gpu"
)

// StreamVideo decodes the plan's frames from an external video (the frame
// shown at t: the last frame whose presentation time is at or before t),
// scales them to the source's size (or the video's) and encodes them like
// Stream. Decoding seeks to the nearest preceding keyframe and decodes
// forward (package encode); a time equal to the previous one reuses its
// image.
func (s *Source) StreamVideo(ctx context.Context, v *encode.Video, plan sampling.Plan) iter.Seq2[Image, error] {
	info := v.Info()
	w, h := info.Width, info.Height
	if s.opt.Width > 0 {
		w, h = s.opt.Width, s.opt.Height
	}
	first, prevT := true, 0.0
	produce := func(f sampling.Frame, dst gpu.Image) (bool, int, error) {
		if !first && f.T == prevT {
			return true, -1, nil
		}
		first, prevT = false, f.T
		if err := v.FrameAt(f.T, encode.Image(dst)); err != nil {
			return false, -1, fmt.Errorf("frames: video frame at t=%v: %w", f.T, err)
		}
		return false, -1, nil
	}
	return s.stream(ctx, plan, w, h, produce)
}

// VideoLowRes is the adaptive pass over an external video: each frame
// decoded at 64×36 and turned to grey.
type VideoLowRes struct {
	v    *encode.Video
	img  encode.Image
	grey []byte
}

// NewVideoLowRes returns the low-resolution pixel source of a video.
func NewVideoLowRes(v *encode.Video) *VideoLowRes {
	return &VideoLowRes{v: v, img: encode.Image{Width: LowResWidth, Height: LowResHeight, Stride: 4 * LowResWidth, Pix: make([]byte, 4*LowResWidth*LowResHeight)}}
}

// LowRes implements sampling.PixelSource.
func (l *VideoLowRes) LowRes(t float64) ([]byte, error) {
	if err := l.v.FrameAt(t, l.img); err != nil {
		return nil, err
	}
	l.grey = greyInto(l.grey[:0], gpu.Image(l.img))
	return l.grey, nil
}
