package frames

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/gpu"
)

// OpenVideo opens an external video for StreamVideo and NewVideoLowRes
// (`tracegrid frames --video`). Only MP4/MOV and WebM/Matroska files are
// accepted (encode.OpenVideoFile): their demuxer is forced by name and
// reads the file through a custom I/O context, so nothing the file names
// is ever opened. Anything else — an HLS playlist or concat script (which
// name other files or URLs), MPEG-TS, AVI, a raw stream — is refused with
// an error that matches encode.ErrContainer, names the file and lists the
// accepted containers; remux such a video first (ffmpeg -i in.ts -c copy
// out.mp4). Our own clips, always MP4, open either way.
func OpenVideo(path string) (*encode.Video, error) {
	v, err := encode.OpenVideoFile(path)
	if errors.Is(err, encode.ErrContainer) {
		return nil, fmt.Errorf("frames: %w; remux a video in another container first (ffmpeg -i IN -c copy OUT.mp4)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("frames: %w", err)
	}
	return v, nil
}

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
