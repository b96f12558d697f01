package encode

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/asticode/go-astiav"
)

// ImageFormat is a still-image file format: ImageJPEG or ImagePNG.
type ImageFormat string

// The image formats ImageEncoder writes.
const (
	ImageJPEG ImageFormat = "jpg"
	ImagePNG  ImageFormat = "png"
)

// DefaultJPEGQuality is the JPEG quality NewImageEncoder uses for 0.
const DefaultJPEGQuality = 90

// ParseImageFormat returns the format named s: "jpg" or "jpeg" (ImageJPEG),
// "png" (ImagePNG), in any case. Other names are an error wrapping
// ErrOptions.
func ParseImageFormat(s string) (ImageFormat, error) {
	switch strings.ToLower(s) {
	case "jpg", "jpeg":
		return ImageJPEG, nil
	case "png":
		return ImagePNG, nil
	}
	return "", errorf(ErrOptions, "encode: unknown image format %q (want jpg, jpeg or png)", s)
}

// ImageEncoder encodes RGBA images of one size into JPEG or PNG files with
// libavcodec, single-threaded (run one encoder per goroutine to use more
// cores). An ImageEncoder is not safe for concurrent use.
//
// JPEG: the mjpeg encoder, 4:2:0 chroma, BT.601 full range (JFIF), optimal
// Huffman tables, fixed quantiser. Alpha is ignored.
//
// PNG: the png encoder, "up" row prediction and zlib level 1, 8-bit RGB
// when every pixel of the image is opaque, RGBA otherwise; lossless either
// way (alpha is stored as given, i.e. as straight alpha).
//
// Measured at 854x480 on this machine kind (2 cores, BenchmarkImage*):
// RGBA→yuv420p + mjpeg ~1.8 ms/frame on the flat test scene and ~2.4 ms
// with noise, against 6.6–7.8 ms for Go's image/jpeg (quality 90). PNG of a
// gradient scene with lines: libav up/zlib 1 3.3 ms, 81 KB; none/zlib 1
// 4.6 ms, 148 KB; paeth/zlib 1 5.4 ms, 85 KB; up/zlib 6 (the default level)
// 8.7 ms, 64 KB; Go's image/png BestSpeed 12.0 ms, 82 KB (its default
// level 10–21 ms). On the flat test scene: libav up/zlib 1 2.7 ms, Go
// BestSpeed 3.2 ms.
type ImageEncoder struct {
	format ImageFormat
	w, h   int
	qscale int       // JPEG quantiser scale, 1..31
	main   *imgCodec // JPEG, or PNG RGB
	alpha  *imgCodec // PNG RGBA, opened on the first translucent image
	closed bool
}

// imgCodec is one opened image encoder with its input frame.
type imgCodec struct {
	cc    *astiav.CodecContext
	frame *astiav.Frame
	pkt   *astiav.Packet
	conv  *converter
	pf    astiav.PixelFormat
}

// NewImageEncoder makes an encoder of width×height RGBA images into format.
// quality (JPEG only, 1..100, 0 for DefaultJPEGQuality) follows libjpeg's
// scale and is mapped onto mjpeg's quantiser scale (qscale): libjpeg
// quality Q scales its base tables by S = 5000/Q % (Q < 50) or 200−2Q %
// (Q ≥ 50); mjpeg scales the MPEG-1 intra matrix by qscale/8. Matching the
// mean AC quantiser (58.3·S/100 for libjpeg's luma table, 33.4·qscale/8
// for mjpeg's) gives qscale = 0.1395·S, rounded and clamped to 1..31: Q 100
// and 95 → 1, 90 → 3, 85 → 4, 75 → 7, 50 → 14, 25 → 28, ≤ 22 → 31.
// Errors wrap ErrOptions (bad format, size or quality) or ErrUnavailable.
func NewImageEncoder(format ImageFormat, width, height, quality int) (*ImageEncoder, error) {
	f, err := ParseImageFormat(string(format))
	if err != nil {
		return nil, err
	}
	if width <= 0 || height <= 0 {
		return nil, errorf(ErrOptions, "encode: image size %dx%d must be positive", width, height)
	}
	e := &ImageEncoder{format: f, w: width, h: height}
	if f == ImageJPEG {
		if quality == 0 {
			quality = DefaultJPEGQuality
		}
		if quality < 1 || quality > 100 {
			return nil, errorf(ErrOptions, "encode: JPEG quality %d out of range 1..100", quality)
		}
		e.qscale = jpegQScale(quality)
	}
	initLibav()
	pf := astiav.PixelFormatYuv420P
	if f == ImagePNG {
		pf = astiav.PixelFormatRgb24
	}
	if e.main, err = e.open(pf); err != nil {
		return nil, err
	}
	return e, nil
}

// jpegQScale maps a libjpeg quality 1..100 to an mjpeg qscale (see
// NewImageEncoder).
func jpegQScale(q int) int {
	s := 200 - 2*float64(q)
	if q < 50 {
		s = 5000 / float64(q)
	}
	return min(max(int(0.1395*s+0.5), 1), 31)
}

// open opens the encoder taking frames of format pf.
func (e *ImageEncoder) open(pf astiav.PixelFormat) (*imgCodec, error) {
	name := "png"
	if e.format == ImageJPEG {
		name = "mjpeg"
	}
	codec := astiav.FindEncoderByName(name)
	if codec == nil {
		return nil, errorf(ErrUnavailable, "encode: encoder %q is not available in this libavcodec", name)
	}
	c := &imgCodec{pf: pf}
	if err := c.open(codec, e); err != nil {
		c.free()
		return nil, err
	}
	return c, nil
}

func (c *imgCodec) open(codec *astiav.Codec, e *ImageEncoder) error {
	name := codec.Name()
	if c.cc = astiav.AllocCodecContext(codec); c.cc == nil {
		return fmt.Errorf("encode: allocating encoder %q failed", name)
	}
	c.cc.SetWidth(e.w)
	c.cc.SetHeight(e.h)
	c.cc.SetPixelFormat(c.pf)
	c.cc.SetSampleAspectRatio(astiav.NewRational(1, 1))
	c.cc.SetTimeBase(astiav.NewRational(1, 25)) // required, unused
	c.cc.SetThreadCount(1)
	var opts []option
	full := false
	if e.format == ImageJPEG {
		// Fixed quantiser: AV_CODEC_FLAG_QSCALE and each frame's quality
		// (set in Encode). qmin 1 admits qscale 1; qmax stays 31.
		c.cc.SetFlags(c.cc.Flags().Add(astiav.CodecContextFlagQscale))
		c.cc.SetQmin(1)
		// yuv420p tagged full range is mjpeg's JFIF input (the yuvj420p
		// alias is deprecated and makes libswscale warn).
		full = true
		opts = append(opts,
			option{"color_range", "pc"},
			option{"colorspace", "smpte170m"},
			option{"huffman", "optimal"}, // the default; smaller and faster than "default"
		)
	} else {
		opts = append(opts, option{"pred", "up"}, option{"compression_level", "1"})
	}
	dict := astiav.NewDictionary()
	defer dict.Free()
	for _, op := range opts {
		if err := dict.Set(op.key, op.value, 0); err != nil {
			return fmt.Errorf("encode: setting encoder option %s=%s: %w", op.key, op.value, err)
		}
	}
	if err := libavCall(fmt.Sprintf("opening encoder %q", name), func() error { return c.cc.Open(codec, dict) }); err != nil {
		return tagged{ErrUnavailable, err}
	}
	if left := dictEntries(dict); len(left) > 0 {
		return errorf(ErrOptions, "encode: encoder %q does not know option(s) %s", name, strings.Join(left, ", "))
	}
	if c.frame = astiav.AllocFrame(); c.frame == nil {
		return errors.New("encode: allocating frame failed")
	}
	c.frame.SetWidth(e.w)
	c.frame.SetHeight(e.h)
	c.frame.SetPixelFormat(c.pf)
	if full {
		c.frame.SetColorRange(astiav.ColorRangeJpeg)
	}
	if err := c.frame.AllocBuffer(0); err != nil {
		return fmt.Errorf("encode: allocating %dx%d %s frame: %w", e.w, e.h, c.pf.Name(), err)
	}
	if c.pkt = astiav.AllocPacket(); c.pkt == nil {
		return errors.New("encode: allocating packet failed")
	}
	var err error
	c.conv, err = newConverterTo(e.w, e.h, c.pf, full, convertFlags)
	return err
}

func (c *imgCodec) free() {
	if c == nil {
		return
	}
	c.conv.free()
	c.conv = nil
	if c.frame != nil {
		c.frame.Free()
		c.frame = nil
	}
	if c.pkt != nil {
		c.pkt.Free()
		c.pkt = nil
	}
	if c.cc != nil {
		c.cc.Free()
		c.cc = nil
	}
}

// MIME returns the media type of the encoder's files: image/jpeg or
// image/png.
func (e *ImageEncoder) MIME() string {
	if e != nil && e.format == ImagePNG {
		return "image/png"
	}
	return "image/jpeg"
}

// Encode returns img (the encoder's width×height, RGBA, top row first) as a
// complete JPEG or PNG file in a new slice that the caller owns. A
// wrong-sized image is refused with ErrOptions; after Close it returns
// ErrClosed.
func (e *ImageEncoder) Encode(img Image) ([]byte, error) {
	if e == nil || e.closed {
		return nil, errorf(ErrClosed, "encode: image encoder is closed")
	}
	if err := checkImage(img, e.w, e.h); err != nil {
		return nil, err
	}
	c := e.main
	if e.format == ImagePNG && !opaque(img) {
		if e.alpha == nil {
			a, err := e.open(astiav.PixelFormatRgba)
			if err != nil {
				return nil, err
			}
			e.alpha = a
		}
		c = e.alpha
	}
	if err := c.conv.convert(img, c.frame); err != nil {
		return nil, fmt.Errorf("encode: %s image: %w", e.format, err)
	}
	if e.format == ImageJPEG {
		frameSetQuality(c.frame.UnsafePointer(), e.qscale*qp2Lambda)
	}
	// One frame in, one packet out: neither encoder has delay.
	if err := c.cc.SendFrame(c.frame); err != nil {
		return nil, fmt.Errorf("encode: sending image to %s encoder: %w", e.format, err)
	}
	if err := c.cc.ReceivePacket(c.pkt); err != nil {
		return nil, fmt.Errorf("encode: receiving %s image: %w", e.format, err)
	}
	out := c.pkt.Data() // a copy in Go memory
	c.pkt.Unref()
	if len(out) == 0 {
		return nil, fmt.Errorf("encode: %s encoder returned an empty image", e.format)
	}
	return out, nil
}

// opaque reports whether every pixel of img has alpha 255.
func opaque(img Image) bool {
	const mask = 0xff000000_ff000000
	row := 4 * img.Width
	for y := 0; y < img.Height; y++ {
		p := img.Pix[y*img.Stride : y*img.Stride+row]
		for len(p) >= 8 {
			if binary.LittleEndian.Uint64(p)&mask != mask {
				return false
			}
			p = p[8:]
		}
		if len(p) == 4 && p[3] != 0xff {
			return false
		}
	}
	return true
}

// Close frees the encoder. Nil-safe and idempotent.
func (e *ImageEncoder) Close() {
	if e == nil || e.closed {
		return
	}
	e.main.free()
	e.alpha.free()
	e.main, e.alpha, e.closed = nil, nil, true
}
