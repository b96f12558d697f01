package frames

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/internal/rgba"
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
// turns them upright by the video's own display rotation (Upright), scales
// them to the source's size (or keeps the video's displayed size; another
// aspect ratio is letterboxed with black bars) and encodes them like
// Stream. Decoding seeks to the nearest preceding keyframe and decodes
// forward (package encode); a time equal to the previous one reuses its
// image. It is StreamVideoRotated with the rotation `tracegrid import`
// records for the file, so `tracegrid frames --video` shows the pictures
// eval sends for the imported clip.
func (s *Source) StreamVideo(ctx context.Context, v *encode.Video, plan sampling.Plan) iter.Seq2[Image, error] {
	rot, _, _, err := Upright(v)
	if err != nil {
		return func(yield func(Image, error) bool) { yield(Image{}, err) }
	}
	return s.StreamVideoRotated(ctx, v, rot, plan)
}

// ErrRotation is matched by Upright's error for a display matrix that
// mirrors the picture or turns it by an angle other than a multiple of
// 90°, which this program does not apply (tracegrid import refuses such
// videos).
var ErrRotation = errors.New("frames: display matrix not applied")

// rotationSlack is how far, in degrees, a display rotation may be from a
// multiple of 90° and count as it (tracegrid import's rule).
const rotationSlack = 0.5

// Upright is how a player shows v: the clockwise display rotation (0, 90,
// 180 or 270; its display matrix within 0.5° of a multiple of 90°) and
// the displayed size (the coded size, turned). A matrix that mirrors or
// turns by another angle is an error matching ErrRotation.
func Upright(v *encode.Video) (rotation, width, height int, err error) {
	deg, mirrored := v.Rotation()
	info := v.Info()
	q := math.Round(deg/90) * 90
	switch {
	case math.IsNaN(deg):
		return 0, 0, 0, fmt.Errorf("%w: its display matrix is not a rotation", ErrRotation)
	case mirrored:
		return 0, 0, 0, fmt.Errorf("%w: its display matrix mirrors the picture", ErrRotation)
	case math.Abs(deg-q) > rotationSlack:
		return 0, 0, 0, fmt.Errorf("%w: display rotation %.4g° is not a multiple of 90°", ErrRotation, deg)
	}
	rotation = int(q) % 360
	width, height = info.Width, info.Height
	if rotation == 90 || rotation == 270 {
		width, height = height, width
	}
	return rotation, width, height, nil
}

// StreamVideoRotated is StreamVideo for a video whose picture a player
// turns rotation degrees clockwise for display (0, 90, 180 or 270: its
// display matrix, encode.VideoProbe.Rotation): every frame is decoded and
// turned upright, as the video plays, and the images have the displayed
// size. At the source's size, when set, another aspect ratio is
// letterboxed: the picture keeps its proportions, centred, with black
// bars. Another rotation is an error.
func (s *Source) StreamVideoRotated(ctx context.Context, v *encode.Video, rotation int, plan sampling.Plan) iter.Seq2[Image, error] {
	if rotation != 0 && rotation != 90 && rotation != 180 && rotation != 270 {
		return func(yield func(Image, error) bool) {
			yield(Image{}, fmt.Errorf("frames: display rotation %d° is not 0, 90, 180 or 270", rotation))
		}
	}
	info := v.Info()
	dw, dh := info.Width, info.Height // displayed
	if rotation == 90 || rotation == 270 {
		dw, dh = dh, dw
	}
	w, h := dw, dh
	if s.opt.Width > 0 {
		w, h = s.opt.Width, s.opt.Height
	}
	// The picture's place in the image: all of it, or centred at its own
	// aspect ratio.
	fw, fh := fit(dw, dh, w, h)
	x0, y0 := (w-fw)/2, (h-fh)/2
	// The decoded (unturned) picture at the size that turns into fw×fh.
	var coded rgba.Image
	if rotation != 0 {
		cw, ch := fw, fh
		if rotation != 180 {
			cw, ch = fh, fw
		}
		coded = rgba.New(cw, ch)
	}
	first, prevT := true, 0.0
	produce := func(f sampling.Frame, dst rgba.Image) (bool, int, error) {
		if !first && f.T == prevT {
			return true, -1, nil
		}
		first, prevT = false, f.T
		pic := dst
		if fw != w || fh != h {
			blackBars(dst, x0, y0, fw, fh)
			pic = rgba.Image{Width: fw, Height: fh, Stride: dst.Stride, Pix: dst.Pix[y0*dst.Stride+4*x0:]}
		}
		into := pic
		if rotation != 0 {
			into = coded
		}
		if err := v.FrameAt(f.T, into); err != nil {
			return false, -1, fmt.Errorf("frames: video frame at t=%v: %w", f.T, err)
		}
		if rotation != 0 {
			rotateInto(pic, coded, rotation)
		}
		return false, -1, nil
	}
	return s.stream(ctx, plan, w, h, produce)
}

// fit is the largest size of aspect ratio pw:ph inside w×h (at least one
// pixel each way): w×h itself when the ratios agree to within a pixel.
func fit(pw, ph, w, h int) (int, int) {
	if pw <= 0 || ph <= 0 || pw*h == ph*w {
		return w, h
	}
	fw, fh := w, h
	if pw*h > ph*w { // wider than the image: full width
		fh = max(1, min(h, int(math.Round(float64(w)*float64(ph)/float64(pw)))))
	} else {
		fw = max(1, min(w, int(math.Round(float64(h)*float64(pw)/float64(ph)))))
	}
	if w-fw <= 1 && h-fh <= 1 {
		return w, h // a bar under two pixels: 1280×720 at 854×480
	}
	return fw, fh
}

// blackBars paints opaque black every pixel of img outside the fw×fh
// rectangle at (x0, y0).
func blackBars(img rgba.Image, x0, y0, fw, fh int) {
	for y := range img.Height {
		row := img.Pix[y*img.Stride : y*img.Stride+4*img.Width]
		for x := range img.Width {
			if y >= y0 && y < y0+fh && x >= x0 && x < x0+fw {
				continue
			}
			copy(row[4*x:4*x+4], []byte{0, 0, 0, 255})
		}
	}
}

// rotateInto turns src clockwise by rot degrees (90, 180 or 270) into dst,
// whose size is src's turned. Pixel (x, y) of dst, y down, is src's
// (y, H−1−x) for 90°, (W−1−x, H−1−y) for 180° and (W−1−y, x) for 270°,
// W×H being src's size.
func rotateInto(dst, src rgba.Image, rot int) {
	for y := range dst.Height {
		row := dst.Pix[y*dst.Stride : y*dst.Stride+4*dst.Width]
		for x := range dst.Width {
			var sx, sy int
			switch rot {
			case 90:
				sx, sy = y, src.Height-1-x
			case 180:
				sx, sy = src.Width-1-x, src.Height-1-y
			default: // 270
				sx, sy = src.Width-1-y, x
			}
			o := sy*src.Stride + 4*sx
			copy(row[4*x:4*x+4], src.Pix[o:o+4])
		}
	}
}

// VideoLowRes is the adaptive pass over an external video: each frame
// decoded at 64×36 and turned to grey.
type VideoLowRes struct {
	v    *encode.Video
	img  rgba.Image
	grey []byte
}

// NewVideoLowRes returns the low-resolution pixel source of a video.
func NewVideoLowRes(v *encode.Video) *VideoLowRes {
	return &VideoLowRes{v: v, img: rgba.New(LowResWidth, LowResHeight)}
}

// LowRes implements sampling.PixelSource.
func (l *VideoLowRes) LowRes(t float64) ([]byte, error) {
	if err := l.v.FrameAt(t, l.img); err != nil {
		return nil, err
	}
	l.grey = greyInto(l.grey[:0], l.img)
	return l.grey, nil
}
