package encode

import (
	"strconv"
	"strings"

	"github.com/asticode/go-astiav"
)

// DefaultCodec is the encoder used when Options.Codec is "".
const DefaultCodec = "libx264"

// MaxFPS is the highest frame rate Create accepts.
const MaxFPS = 240

// Rate is a frame rate of Num/Den frames a second.
type Rate struct{ Num, Den int }

// MaxRateDen bounds a Rate's denominator (a frame interval of Den/Num s:
// the MP4's time scale must hold it exactly).
const MaxRateDen = 1 << 20

// rate is the clip's frame rate as a fraction: Rate, or FPS/1.
func (o Options) rate() Rate {
	if o.Rate.Num > 0 {
		return o.Rate
	}
	return Rate{o.FPS, 1}
}

// Options of one encoded clip.
type Options struct {
	Width, Height int // even (yuv420p halves both for chroma)
	FPS           int // constant frame rate, 1..MaxFPS
	// Rate, when set (Num > 0), is the constant frame rate as a fraction
	// in place of FPS: a video of sampled frames at M/duration frames a
	// second (uniform:M over 24 s is 5/12). Frame j is at j·Den/Num s.
	Rate Rate
	// Codec is a libavcodec encoder name: "libx264" (DefaultCodec when ""),
	// "h264_nvenc", "libx265", ... It must accept yuv420p.
	Codec string
	// Preset is passed as the encoder's "preset" option when non-empty
	// (libx264: "ultrafast" … "veryslow"; nvenc: "p1" … "p7").
	Preset string
	// CRF is the constant-quality level: "crf" for libx264/libx265 (and any
	// encoder with a "crf" option), "cq" for *_nvenc encoders. 0 keeps the
	// encoder's default (libx264: 23); for lossless use Lossless, not CRF 0.
	// An encoder without such an option makes Create fail.
	CRF int
	// Lossless encodes losslessly with respect to the yuv420p frames (the
	// RGB→YUV conversion itself still rounds): libx264 qp=0, libx265
	// lossless=1, nvenc tune=lossless, libvpx-vp9/libaom-av1 lossless=1.
	// Other encoders fail with ErrNoLossless. CRF is ignored when set.
	Lossless bool
	// Threads is the encoder's thread count; 0 lets libav choose (auto).
	Threads int
	// GOP is the largest keyframe interval in frames (AVCodecContext
	// gop_size; libx264 keyint); 0 keeps the encoder's default (libx264:
	// 250). Shorter GOPs make seeking (Video.FrameAt) cheaper.
	GOP int
}

// Available reports whether this libavcodec has a video encoder with that
// name ("" means DefaultCodec). A hardware encoder may be available yet
// fail in Create when its driver is missing.
func Available(codec string) bool {
	if codec == "" {
		codec = DefaultCodec
	}
	c := astiav.FindEncoderByName(codec)
	return c != nil && c.ID().MediaType() == astiav.MediaTypeVideo
}

func (o Options) codecName() string {
	if o.Codec == "" {
		return DefaultCodec
	}
	return o.Codec
}

// validate checks what does not need libav.
func (o Options) validate() error {
	switch {
	case o.Width <= 0 || o.Height <= 0:
		return errorf(ErrOptions, "encode: size %dx%d must be positive", o.Width, o.Height)
	case o.Width%2 != 0 || o.Height%2 != 0:
		return errorf(ErrOptions, "encode: size %dx%d must be even for yuv420p", o.Width, o.Height)
	case o.Rate.Num != 0 && (o.Rate.Num < 0 || o.Rate.Den <= 0 || o.Rate.Num > MaxFPS*o.Rate.Den || o.Rate.Den > MaxRateDen):
		return errorf(ErrOptions, "encode: frame rate %d/%d: want a positive fraction of at most %d with a denominator of at most %d", o.Rate.Num, o.Rate.Den, MaxFPS, MaxRateDen)
	case o.Rate.Num == 0 && (o.FPS < 1 || o.FPS > MaxFPS):
		return errorf(ErrOptions, "encode: fps %d out of range 1..%d", o.FPS, MaxFPS)
	case o.CRF < 0:
		return errorf(ErrOptions, "encode: crf %d is negative", o.CRF)
	case o.Threads < 0:
		return errorf(ErrOptions, "encode: threads %d is negative", o.Threads)
	case o.GOP < 0:
		return errorf(ErrOptions, "encode: gop %d is negative", o.GOP)
	}
	return nil
}

// DefaultPreset is the preset a codec gets when a spec names none:
// veryfast for the x264/x265 family (a frame still shows every event of the
// fastest cell at crf 18, docs/spec.md), p4 (the middle of p1 … p7) for
// NVIDIA's encoders, which refuse x264's names, and none — the encoder's
// own default — for the rest.
func DefaultPreset(codec string) string {
	switch {
	case codec == "libx264" || codec == "libx264rgb" || codec == "libx265":
		return "veryfast"
	case strings.HasSuffix(codec, "_nvenc"):
		return "p4"
	}
	return ""
}

// option is one encoder option for avcodec_open2, in the order given.
type option struct{ key, value string }

// encoderOptions maps Options onto the encoder's own option names. Options
// an encoder does not know stay in the dictionary after avcodec_open2 and
// make Create fail (see Create), so a typo'd preset or a CRF for an encoder
// without one is not silently ignored.
func encoderOptions(codec string, o Options) ([]option, error) {
	nvenc := strings.HasSuffix(codec, "_nvenc")
	var opts []option
	if o.Preset != "" {
		opts = append(opts, option{"preset", o.Preset})
	}
	switch {
	case o.Lossless:
		switch {
		case codec == "libx264" || codec == "libx264rgb":
			// qp 0 is x264's lossless mode (High 4:4:4 Predictive profile).
			opts = append(opts, option{"qp", "0"})
		case codec == "libx265":
			opts = append(opts, option{"x265-params", "lossless=1"})
		case nvenc:
			opts = append(opts, option{"tune", "lossless"})
		case codec == "libvpx-vp9" || codec == "libaom-av1":
			opts = append(opts, option{"lossless", "1"})
		default:
			return nil, errorf(ErrNoLossless, "encode: encoder %q has no lossless mode (this package knows it for libx264, libx265, *_nvenc, libvpx-vp9, libaom-av1)", codec)
		}
	case o.CRF > 0 && nvenc:
		opts = append(opts, option{"cq", strconv.Itoa(o.CRF)})
	case o.CRF > 0:
		opts = append(opts, option{"crf", strconv.Itoa(o.CRF)})
	}
	// Generic AVCodecContext options: the colour description of what
	// swscale produces (BT.601 matrix, limited range), written into the
	// bitstream (H.264 VUI) and the MP4 'colr' box. Primaries and transfer
	// say smpte170m too, the SD convention, so every field agrees.
	opts = append(opts,
		option{"colorspace", "smpte170m"},
		option{"color_primaries", "smpte170m"},
		option{"color_trc", "smpte170m"},
		option{"color_range", "tv"},
	)
	return opts, nil
}
