package encode

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/asticode/go-astiav"

	"github.com/tracegrid/tracegrid/internal/rgba"
)

// Image is an RGBA8 image, top row first: pixel (x, y) is
// Pix[y*Stride+4*x : y*Stride+4*x+4]. It is rgba.Image, the type gpu.Image
// names too: a rendered frame is encoded as it is.
type Image = rgba.Image

// checkImage reports whether img has size w×h and Pix covers every row.
func checkImage(img Image, w, h int) error {
	if img.Width != w || img.Height != h {
		return errorf(ErrOptions, "encode: image is %dx%d, want %dx%d", img.Width, img.Height, w, h)
	}
	if img.Stride < 4*w {
		return errorf(ErrOptions, "encode: stride %d < 4*width %d", img.Stride, 4*w)
	}
	if need := img.Stride*(h-1) + 4*w; len(img.Pix) < need {
		return errorf(ErrOptions, "encode: %d bytes of pixels, need %d", len(img.Pix), need)
	}
	return nil
}

// convertFlags are the swscale flags of ImageEncoder's RGBA→yuv420p
// converter (Writer's uses libyuv, see newConverter). For a same-size
// conversion only chroma subsampling depends on them: the RGB input stage
// averages horizontal pixel pairs in every case; vertically SWS_POINT takes
// the lower row of each pair (and computes chroma for half the rows only),
// SWS_FAST_BILINEAR and SWS_AREA average the pair (a 2×2 box), SWS_BILINEAR
// applies a wider tent that bleeds chroma one sample across edges. All give
// exact colours on flat areas. Measured at 854x480 on this machine kind
// (BenchmarkConvertFlags): point 0.65–0.67 ms, the others 1.05–1.10 ms;
// point is used. Its cost: where a colour edge falls between the two rows
// of a pair, both take the lower row's chroma (a thin horizontal coloured
// line on an even row loses its tint, keeping its luma).
const convertFlags = swsPoint

// converter converts RGBA images of one size into an AVFrame of the same
// size: libyuv for Writer's yuv420p, libswscale for ImageEncoder's
// full-range yuv420p and RGB formats.
type converter struct {
	libyuv bool        // libyuv's RGBA→yuv420p; sws and tail unused
	sws    *swsContext // otherwise
	w, h   int
	dst    string // the frame's pixel format, for messages
	// tailN is how many last rows are converted from tail: tailRows, or
	// one more when the height is odd and the format halves it, so that
	// the first slice ends on a chroma row pair.
	tailN int
	// tail holds a copy of the image's last tailN rows followed by
	// slack: libswscale's SIMD input stages read pixels in blocks and, for
	// narrow rows, past the end of the last one (measured: up to 32 bytes
	// for widths below 8 on AVX2; other CPUs may differ). Only the
	// caller's last rows can run off its slice, so they are converted from
	// this copy; the rest is read in place.
	tail []byte
}

const tailRows, tailSlack = 2, 256

// newConverter makes Writer's RGBA→yuv420p converter (BT.601, limited
// range; chroma the mean of each 2×2 block) on libyuv: a twelfth of
// libswscale's time at 1920×1080 (libyuv_cgo.go), and its chroma is the
// 2×2 box SWS_POINT's is not.
func newConverter(w, h int) (*converter, error) {
	if w <= 0 || h <= 0 {
		return nil, fmt.Errorf("encode: no RGBA→yuv420p converter for %dx%d", w, h)
	}
	return &converter{libyuv: true, w: w, h: h, dst: astiav.PixelFormatYuv420P.Name()}, nil
}

// newConverterTo makes a libswscale RGBA→dst converter for w×h images; full
// selects full-range YUV (BT.601 matrix either way; ignored for RGB
// formats).
func newConverterTo(w, h int, dst astiav.PixelFormat, full bool, flags int) (*converter, error) {
	if w%2 != 0 && dst == astiav.PixelFormatYuv420P {
		// libswscale's RGB input stage averages pixel pairs for
		// horizontally subsampled chroma and, for an odd width, pairs the
		// last pixel with the one past the row (measured: the last
		// column's colour off by ~45). Full-width chroma input, then
		// scaled down, avoids it.
		flags |= swsFullChrHInp
	}
	sws := swsNew(w, h, int(astiav.PixelFormatRgba), int(dst), flags, colorSpaceBT601, full)
	if sws == nil {
		return nil, fmt.Errorf("encode: creating RGBA→%s converter for %dx%d failed", dst.Name(), w, h)
	}
	n := tailRows
	if h%2 != 0 && h > tailRows {
		n++ // no harm for formats without vertical subsampling
	}
	n = min(n, h)
	return &converter{sws: sws, w: w, h: h, dst: dst.Name(), tailN: n, tail: make([]byte, n*4*w+tailSlack)}, nil
}

// convert writes img into frame (allocated, of the converter's size and
// format). It makes the frame writable first: an encoder may still hold a
// reference to the buffer it was sent, and writing into a shared buffer
// would change a frame the encoder has not read yet (av_frame_make_writable
// then gives the frame a new buffer; with libx264 it does not happen, x264
// copies input; nor with mjpeg and png, checked: the plane stays put).
func (c *converter) convert(img Image, frame *astiav.Frame) error {
	if err := checkImage(img, c.w, c.h); err != nil {
		return err
	}
	if err := errCode(frameMakeWritable(frame.UnsafePointer())); err != nil {
		return fmt.Errorf("making frame writable: %w", err)
	}
	if c.libyuv {
		if ret := rgbaToI420(img, frame.UnsafePointer()); ret != 0 {
			return fmt.Errorf("converting RGBA to %s: failed (%d): the frame must be %dx%d %s", c.dst, ret, c.w, c.h, c.dst)
		}
		return nil
	}
	// Two slices, top to bottom (libswscale keeps the rows it still needs
	// between calls; the output equals a one-call conversion, see
	// TestConvertSlicesMatch). The first slice has an even height.
	head := c.h - c.tailN
	rows := 0
	if head > 0 {
		ret := swsPixToFrame(c.sws, img.Pix, img.Stride, 0, head, frame.UnsafePointer())
		if ret < 0 {
			return fmt.Errorf("converting RGBA to %s: %w", c.dst, errCode(ret))
		}
		rows += ret
	}
	row := 4 * c.w
	for i := 0; i < c.tailN; i++ {
		copy(c.tail[i*row:(i+1)*row], img.Pix[(head+i)*img.Stride:])
	}
	ret := swsPixToFrame(c.sws, c.tail, row, head, c.tailN, frame.UnsafePointer())
	if ret < 0 {
		return fmt.Errorf("converting RGBA to %s: %w", c.dst, errCode(ret))
	}
	if rows += ret; rows != c.h {
		return fmt.Errorf("converting RGBA to %s: %d of %d rows written", c.dst, rows, c.h)
	}
	return nil
}

func (c *converter) free() {
	if c != nil {
		swsFree(c.sws)
		c.sws = nil
	}
}

// Writer encodes RGBA frames into an MP4 file at a constant frame rate.
// A Writer is not safe for concurrent use.
type Writer struct {
	opts   Options
	path   string
	fc     *astiav.FormatContext // output format context (MP4 muxer)
	io     *astiav.IOContext     // the file; closed before fc is freed
	cc     *astiav.CodecContext  // encoder
	st     *astiav.Stream        // owned by fc
	frame  *astiav.Frame         // the one yuv420p frame, reused
	pkt    *astiav.Packet        // the one packet, reused
	conv   *converter
	encTB  astiav.Rational // one frame interval: 1/FPS or Rate.Den/Rate.Num
	stTB   astiav.Rational // chosen by the muxer in WriteHeader
	frames int             // frames sent to the encoder = next pts
	ready  bool            // frame holds a converted image (for Repeat)
	err    error           // first libav error of WriteRGBA/Repeat; sticky
	done   bool            // Close or Abort ran
	result error           // what Close returned
}

// Create opens the encoder and an MP4 muxer writing to path, which is
// created or truncated (the caller writes to a temporary name and renames;
// the container is MP4 whatever the extension). Errors wrap ErrOptions,
// ErrUnavailable or ErrNoLossless where they apply, with libav's text. On
// error nothing stays allocated and a file Create made is removed.
func Create(path string, o Options) (*Writer, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	name := o.codecName()
	codec := astiav.FindEncoderByName(name)
	if codec == nil {
		return nil, errorf(ErrUnavailable, "encode: encoder %q is not available in this libavcodec", name)
	}
	if codec.ID().MediaType() != astiav.MediaTypeVideo {
		return nil, errorf(ErrOptions, "encode: %q is not a video encoder", name)
	}
	if pfs := codec.PixelFormats(); len(pfs) > 0 && !hasPixFmt(pfs, astiav.PixelFormatYuv420P) {
		return nil, errorf(ErrOptions, "encode: encoder %q does not accept yuv420p", name)
	}
	opts, err := encoderOptions(name, o)
	if err != nil {
		return nil, err
	}
	initLibav()

	r := o.rate()
	w := &Writer{opts: o, path: path, encTB: astiav.NewRational(r.Den, r.Num)}
	if err := w.open(codec, opts); err != nil {
		w.free()
		return nil, err
	}
	return w, nil
}

func hasPixFmt(pfs []astiav.PixelFormat, pf astiav.PixelFormat) bool {
	for _, p := range pfs {
		if p == pf {
			return true
		}
	}
	return false
}

// open does Create's libav work; on error the caller frees what is set.
// The encoder is opened before the file so that an unusable encoder leaves
// no file behind.
func (w *Writer) open(codec *astiav.Codec, opts []option) error {
	r := w.opts.rate()
	o, name := w.opts, codec.Name()
	fc, err := astiav.AllocOutputFormatContext(nil, "mp4", w.path)
	if err != nil {
		return fmt.Errorf("encode: allocating MP4 muxer: %w", err)
	}
	if fc == nil {
		return errors.New("encode: allocating MP4 muxer failed")
	}
	w.fc = fc

	if w.cc = astiav.AllocCodecContext(codec); w.cc == nil {
		return fmt.Errorf("encode: allocating encoder %q failed", name)
	}
	w.cc.SetWidth(o.Width)
	w.cc.SetHeight(o.Height)
	w.cc.SetPixelFormat(astiav.PixelFormatYuv420P)
	w.cc.SetSampleAspectRatio(astiav.NewRational(1, 1))
	w.cc.SetTimeBase(w.encTB)
	w.cc.SetFramerate(astiav.NewRational(r.Num, r.Den))
	w.cc.SetThreadCount(o.Threads) // 0 = auto, as the ffmpeg CLI sets it
	if o.GOP > 0 {
		w.cc.SetGopSize(o.GOP)
	}
	if fc.OutputFormat().Flags().Has(astiav.IOFormatFlagGlobalheader) {
		// MP4 keeps SPS/PPS in the avcC box, not in-band.
		w.cc.SetFlags(w.cc.Flags().Add(astiav.CodecContextFlagGlobalHeader))
	}
	dict := astiav.NewDictionary()
	defer dict.Free()
	for _, op := range opts {
		if err := dict.Set(op.key, op.value, 0); err != nil {
			return fmt.Errorf("encode: setting encoder option %s=%s: %w", op.key, op.value, err)
		}
	}
	if err := libavCall(fmt.Sprintf("opening encoder %q", name), func() error { return w.cc.Open(codec, dict) }); err != nil {
		return tagged{ErrUnavailable, err}
	}
	// avcodec_open2 leaves the options it did not use in dict.
	if left := dictEntries(dict); len(left) > 0 {
		return errorf(ErrOptions, "encode: encoder %q does not know option(s) %s", name, strings.Join(left, ", "))
	}

	if w.st = fc.NewStream(nil); w.st == nil {
		return errors.New("encode: adding MP4 stream failed")
	}
	if err := w.st.CodecParameters().FromCodecContext(w.cc); err != nil {
		return fmt.Errorf("encode: copying encoder parameters to stream: %w", err)
	}
	// A hint only: the MP4 muxer picks its own time base in WriteHeader.
	w.st.SetTimeBase(w.encTB)
	// Without these ffprobe derives the rate from timestamps; set, it
	// reports exactly FPS.
	w.st.SetAvgFrameRate(astiav.NewRational(r.Num, r.Den))
	w.st.SetRFrameRate(astiav.NewRational(r.Num, r.Den))

	if w.frame = astiav.AllocFrame(); w.frame == nil {
		return errors.New("encode: allocating frame failed")
	}
	w.frame.SetWidth(o.Width)
	w.frame.SetHeight(o.Height)
	w.frame.SetPixelFormat(astiav.PixelFormatYuv420P)
	w.frame.SetColorRange(astiav.ColorRangeMpeg)
	if err := w.frame.AllocBuffer(0); err != nil {
		return fmt.Errorf("encode: allocating %dx%d yuv420p frame: %w", o.Width, o.Height, err)
	}
	if w.pkt = astiav.AllocPacket(); w.pkt == nil {
		return errors.New("encode: allocating packet failed")
	}
	if w.conv, err = newConverter(o.Width, o.Height); err != nil {
		return err
	}

	if err := libavCall(fmt.Sprintf("opening %s", w.path), func() error {
		var err error
		w.io, err = astiav.OpenIOContext(w.path, astiav.NewIOContextFlags(astiav.IOContextFlagWrite))
		return err
	}); err != nil {
		return err
	}
	fc.SetPb(w.io)
	if err := libavCall("writing MP4 header", func() error { return fc.WriteHeader(nil) }); err != nil {
		w.free()
		_ = os.Remove(w.path) // only a truncated header: ours, and useless
		return err
	}
	w.stTB = w.st.TimeBase()
	return nil
}

// dictEntries lists a dictionary's entries as key=value.
func dictEntries(d *astiav.Dictionary) []string {
	var out []string
	var e *astiav.DictionaryEntry
	for {
		if e = d.Get("", e, astiav.DictionaryFlags(astiav.DictionaryFlagIgnoreSuffix)); e == nil {
			return out
		}
		out = append(out, e.Key()+"="+e.Value())
	}
}

// Frames returns how many frames were encoded so far.
func (w *Writer) Frames() int {
	if w == nil {
		return 0
	}
	return w.frames
}

// usable returns the error that stops further frames, if any.
func (w *Writer) usable() error {
	switch {
	case w == nil || w.done:
		return ErrClosed
	case w.err != nil:
		return w.err
	}
	return nil
}

// WriteRGBA converts img (Width×Height of the Options) to yuv420p and
// encodes it as the next frame. A wrong-sized image is refused without
// harm; a libav error is returned by every later call and by Close.
func (w *Writer) WriteRGBA(img Image) error {
	if err := w.usable(); err != nil {
		return err
	}
	if err := checkImage(img, w.opts.Width, w.opts.Height); err != nil {
		return err
	}
	w.ready = false
	if err := w.conv.convert(img, w.frame); err != nil {
		w.err = fmt.Errorf("encode: frame %d: %w", w.frames, err)
		return w.err
	}
	w.ready = true
	return w.encode()
}

// Repeat encodes the previously converted frame again as the next frame;
// static spans of a clip cost no conversion.
func (w *Writer) Repeat() error {
	if err := w.usable(); err != nil {
		return err
	}
	if !w.ready {
		return errors.New("encode: Repeat before a successful WriteRGBA")
	}
	return w.encode()
}

// encode sends w.frame with the next pts and writes the packets that come
// out; errors are sticky.
func (w *Writer) encode() error {
	w.frame.SetPts(int64(w.frames))
	if err := w.cc.SendFrame(w.frame); err != nil {
		w.err = fmt.Errorf("encode: sending frame %d to encoder: %w", w.frames, err)
		return w.err
	}
	w.frames++
	if err := w.drain(); err != nil {
		w.err = err
		return err
	}
	return nil
}

// drain writes every packet the encoder has ready (all of them after the
// flush frame).
func (w *Writer) drain() error {
	for {
		if err := w.cc.ReceivePacket(w.pkt); err != nil {
			if errors.Is(err, astiav.ErrEagain) || errors.Is(err, astiav.ErrEof) {
				return nil
			}
			return fmt.Errorf("encode: receiving packet: %w", err)
		}
		// x264 leaves duration 0; the muxer then takes the last sample's
		// duration as 0 and the MP4 is one frame short.
		if w.pkt.Duration() == 0 {
			w.pkt.SetDuration(1)
		}
		w.pkt.SetStreamIndex(w.st.Index())
		w.pkt.RescaleTs(w.encTB, w.stTB)
		// Takes the packet's reference and leaves pkt blank.
		if err := w.fc.WriteInterleavedFrame(w.pkt); err != nil {
			w.pkt.Unref()
			return fmt.Errorf("encode: writing packet: %w", err)
		}
	}
}

// Close flushes the encoder, writes the MP4 trailer, closes the file and
// frees everything. It returns the first error of the Writer's life (a
// failed WriteRGBA's too, in which case the file is not finished). It is
// nil-safe and idempotent: later calls return the same result; after Abort
// it returns ErrClosed.
func (w *Writer) Close() error {
	if w == nil {
		return ErrClosed
	}
	if w.done {
		return w.result
	}
	err := w.err
	if err == nil {
		err = w.finish()
	}
	if cerr := w.free(); err == nil && cerr != nil {
		err = fmt.Errorf("encode: closing %s: %w", w.path, cerr)
	}
	w.done, w.result = true, err
	return err
}

// finish flushes the encoder and writes the trailer.
func (w *Writer) finish() error {
	if err := w.cc.SendFrame(nil); err != nil {
		return fmt.Errorf("encode: flushing encoder: %w", err)
	}
	if err := w.drain(); err != nil {
		return err
	}
	return libavCall("writing MP4 trailer", func() error { return w.fc.WriteTrailer() })
}

// Abort frees everything without finishing the file (the caller deletes
// it). Nil-safe and idempotent; after Close it does nothing.
func (w *Writer) Abort() {
	if w == nil || w.done {
		return
	}
	_ = w.free() // the file is being discarded: its close error is moot
	w.done, w.result = true, errorf(ErrClosed, "encode: writer was aborted")
}

// free releases every C resource that is set, in dependency order, and
// clears the fields so that a second call does nothing. It returns the
// file's close error.
func (w *Writer) free() error {
	w.conv.free()
	w.conv = nil
	if w.frame != nil {
		w.frame.Free()
		w.frame = nil
	}
	if w.pkt != nil {
		w.pkt.Free()
		w.pkt = nil
	}
	if w.cc != nil {
		w.cc.Free()
		w.cc = nil
	}
	var err error
	if w.io != nil {
		err = w.io.Close()
		w.io = nil
	}
	if w.fc != nil {
		// avformat_free_context leaves pb alone (closed above) and frees
		// the streams and the muxer's state, even without a trailer.
		w.fc.Free()
		w.fc = nil
		w.st = nil
	}
	return err
}
