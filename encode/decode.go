package encode

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/asticode/go-astiav"
)

// Info describes the first video stream of a file.
type Info struct {
	Width, Height int
	FPS           float64 // average frame rate (real base rate when unset)
	Frames        int     // video packets, i.e. coded frames
	Duration      float64 // seconds from the first frame's start to the last frame's end
	Codec         string  // codec name, e.g. "h264"
	PixFmt        string  // e.g. "yuv420p"
}

// Frame is one decoded frame.
type Frame struct {
	Index int
	PTS   float64 // presentation time in seconds, relative to the stream's start
	Image Image   // RGBA8; valid only during the callback
}

// input is an opened file with its first video stream.
type input struct {
	fc   *astiav.FormatContext
	io   *astiav.IOContext // custom I/O (openSource); nil when libav opened a path
	st   *astiav.Stream
	pkt  *astiav.Packet
	keys int // keyframe packets that count found
}

// openInput opens path with libav's own file protocol and format probing:
// for this program's own files (any container). Videos from outside go
// through openSource (demux.go).
func openInput(path string) (*input, error) {
	initLibav()
	in := &input{fc: astiav.AllocFormatContext()}
	if in.fc == nil {
		return nil, errors.New("encode: allocating demuxer failed")
	}
	if err := libavCall("opening "+path, func() error { return in.fc.OpenInput(path, nil, nil) }); err != nil {
		// avformat_open_input frees the context on failure.
		in.fc.Free()
		return nil, err
	}
	if err := in.setup(path); err != nil {
		in.close()
		return nil, err
	}
	return in, nil
}

// setup reads the stream info of an opened input and picks its first video
// stream; name is the input in messages.
func (in *input) setup(name string) error {
	if err := libavCall("reading stream info of "+name, func() error { return in.fc.FindStreamInfo(nil) }); err != nil {
		return err
	}
	for _, s := range in.fc.Streams() {
		if s.CodecParameters().MediaType() == astiav.MediaTypeVideo {
			in.st = s
			break
		}
	}
	if in.st == nil {
		return fmt.Errorf("encode: %s has no video stream", name)
	}
	if in.pkt = astiav.AllocPacket(); in.pkt == nil {
		return errors.New("encode: allocating packet failed")
	}
	return nil
}

func (in *input) close() {
	if in.pkt != nil {
		in.pkt.Free()
		in.pkt = nil
	}
	if in.fc != nil {
		in.fc.CloseInput() // also frees the context; leaves a custom I/O context alone
		in.fc = nil
	}
	if in.io != nil {
		in.io.Free()
		in.io = nil
	}
}

// next reads the next packet of the video stream into in.pkt; it returns
// astiav.ErrEof at the end.
func (in *input) next() error {
	for {
		in.pkt.Unref()
		if err := in.fc.ReadFrame(in.pkt); err != nil {
			return err
		}
		if in.pkt.StreamIndex() == in.st.Index() {
			return nil
		}
	}
}

// Probe describes the first video stream of path. Frames and Duration come
// from demuxing every packet (no decoding; only avformat_find_stream_info
// decodes the first frame or so, for the pixel format): Duration spans the
// smallest pts to the largest pts+duration, which for a constant-rate clip
// is Frames/FPS; without timestamps it is the container's duration.
func Probe(path string) (Info, error) {
	in, err := openInput(path)
	if err != nil {
		return Info{}, err
	}
	defer in.close()
	info := in.info()
	if err := in.count(&info); err != nil {
		return Info{}, fmt.Errorf("encode: reading %s: %w", path, err)
	}
	return info, nil
}

// info describes the stream from its parameters: all but Frames and
// Duration.
func (in *input) info() Info {
	par := in.st.CodecParameters()
	info := Info{
		Width:  par.Width(),
		Height: par.Height(),
		Codec:  par.CodecID().Name(),
		PixFmt: par.PixelFormat().Name(),
	}
	rate := in.st.AvgFrameRate()
	if rate.Num() <= 0 || rate.Den() <= 0 {
		rate = in.st.RFrameRate()
	}
	if rate.Num() > 0 && rate.Den() > 0 {
		info.FPS = rate.Float64()
	}
	return info
}

// count sets info's Frames and Duration by demuxing every packet (see
// Probe), and in.keys; it leaves the demuxer at the end of the file.
func (in *input) count(info *Info) error {
	start, end := int64(0), int64(0)
	info.Frames = 0
	for {
		if err := in.next(); err != nil {
			if errors.Is(err, astiav.ErrEof) {
				break
			}
			return err
		}
		if in.pkt.Flags().Has(astiav.PacketFlagKey) {
			in.keys++
		}
		if pts := in.pkt.Pts(); pts != astiav.NoPtsValue {
			if info.Frames == 0 || pts < start {
				start = pts
			}
			if e := pts + in.pkt.Duration(); info.Frames == 0 || e > end {
				end = e
			}
		}
		info.Frames++
	}
	in.pkt.Unref()
	switch {
	case end > start:
		info.Duration = float64(end-start) * in.st.TimeBase().Float64()
	case in.st.Duration() > 0: // packets without timestamps (raw streams)
		info.Duration = float64(in.st.Duration()) * in.st.TimeBase().Float64()
	case in.fc.Duration() > 0:
		info.Duration = float64(in.fc.Duration()) / float64(astiav.TimeBase)
	}
	return nil
}

// DecodeAll decodes every frame of the first video stream of path in
// presentation order, converts it to RGBA with the matrix and range the
// stream is tagged with (BT.601 limited when untagged, which is what Writer
// writes) and calls fn. fn's Image is only valid during the call. An error
// from fn stops decoding and is returned as is. It is a loop over the
// decoder Video seeks (from the start, no damaged packet tolerated) and
// the RGBA conversion FrameAt uses, at the frame's own size with
// decodeFlags; PTS is the time FrameAt shows the frame at.
func DecodeAll(path string, fn func(Frame) error) error {
	in, err := openInput(path)
	if err != nil {
		return err
	}
	d := &decoder{name: path, in: in, fromStart: true}
	defer d.close()
	if err := d.open(); err != nil {
		return err
	}
	f := astiav.AllocFrame()
	if f == nil {
		return errors.New("encode: allocating frame failed")
	}
	defer f.Free()
	var out rgbaOut
	defer out.free()
	for index := 0; ; index++ {
		ok, err := d.receive(f)
		if !ok || err != nil {
			return err
		}
		img, err := out.convert(f, rgbaKeyOf(f, f.Width(), f.Height(), decodeFlags))
		if err != nil {
			err = fmt.Errorf("encode: frame %d of %s: %w", index, path, err)
		} else {
			err = fn(Frame{Index: index, PTS: d.lastSec, Image: img})
		}
		f.Unref()
		if err != nil {
			return err
		}
	}
}

// decoder decodes the first video stream of an input in presentation
// order from wherever its demuxer is: the one decoding loop of Video
// (which seeks the demuxer and resets it) and DecodeAll (which reads the
// stream once). It also notes the keyframes it reads, which Video's seeks
// go by. close releases everything.
type decoder struct {
	name  string  // the file, or what messages call the input (OpenVideoData)
	src   *source // custom-I/O source of OpenVideoData and OpenVideoFile; nil when libav opened a path
	in    *input
	codec *astiav.Codec
	cc    *astiav.CodecContext

	num, den int64   // stream time base
	start    int64   // stream start time (time base units), 0 if unknown
	step     float64 // seconds per frame, for frames without timestamps
	maxBad   int     // decode errors (AVERROR_INVALIDDATA) tolerated in a row

	fromStart bool // decoding began at the stream start and no frame came out yet
	flushed   bool // the demuxer hit the end and the decoder was sent the flush packet
	eof       bool // the decoder returned its last frame
	lastOK    bool // a frame was received since the seek; lastSec is its time
	lastSec   float64
	// rewindOnly: seeking into the middle cannot work (a frame without
	// timestamps came after such a seek, or the file has no keyframe
	// flags): every seek rewinds to the start.
	rewindOnly bool

	// Keyframe packets seen in a contiguous read: the last one's time and
	// the longest interval between two.
	keyOK         bool
	keySec, gapKF float64
	// After a seek into the middle, packets up to the first keyframe are
	// skipped (needKey; skipped counts them); landSec is that keyframe's
	// decoding time.
	needKey bool
	keySeen bool // a keyframe flag was seen in this file
	skipped int
	landOK  bool
	landSec float64

	packets int // for tests: packets sent to the decoder
}

// open finds the stream's decoder and time base and opens the decoder.
func (d *decoder) open() error {
	st := d.in.st
	par := st.CodecParameters()
	if d.codec = astiav.FindDecoder(par.CodecID()); d.codec == nil {
		return fmt.Errorf("encode: no decoder for %s in %s", par.CodecID().Name(), d.name)
	}
	tb := st.TimeBase()
	if tb.Num() <= 0 || tb.Den() <= 0 {
		return fmt.Errorf("encode: %s: invalid stream time base %d/%d", d.name, tb.Num(), tb.Den())
	}
	d.num, d.den = int64(tb.Num()), int64(tb.Den())
	if s := st.StartTime(); s != astiav.NoPtsValue {
		d.start = s
	}
	d.step = 1.0 / 25
	if fps := d.in.info().FPS; fps > 0 {
		d.step = 1 / fps
	}
	return d.openDecoder()
}

// openDecoder (re)opens the decoder; a fresh one is in the state
// avcodec_flush_buffers would leave.
func (d *decoder) openDecoder() error {
	if d.cc != nil {
		d.cc.Free()
	}
	if d.cc = astiav.AllocCodecContext(d.codec); d.cc == nil {
		return errors.New("encode: allocating decoder failed")
	}
	if err := d.in.st.CodecParameters().ToCodecContext(d.cc); err != nil {
		return fmt.Errorf("encode: copying stream parameters to decoder: %w", err)
	}
	d.cc.SetTimeBase(d.in.st.TimeBase())
	d.cc.SetThreadCount(0) // auto
	return libavCall("opening decoder "+d.codec.Name(), func() error { return d.cc.Open(d.codec, nil) })
}

// maxBadPackets: decode errors (AVERROR_INVALIDDATA) tolerated in a row
// before FrameAt gives up; a damaged packet in a natural video only costs
// its frame, as with the ffmpeg CLI. DecodeAll tolerates none.
const maxBadPackets = 32

// receive decodes the next frame in presentation order into f, feeding
// packets as the decoder asks, and sets lastSec to its time; ok is false
// at the end of the stream (eof is then set).
func (d *decoder) receive(f *astiav.Frame) (ok bool, err error) {
	bad := 0
	for {
		err := d.cc.ReceiveFrame(f)
		switch {
		case err == nil:
			if err := d.stamp(f); err != nil {
				return false, err
			}
			return true, nil
		case errors.Is(err, astiav.ErrEof):
			d.eof = true
			return false, nil
		case errors.Is(err, astiav.ErrInvaliddata) && bad < d.maxBad:
			bad++
			continue
		case !errors.Is(err, astiav.ErrEagain):
			return false, errorf(ErrDamaged, "encode: decoding %s: %w", d.name, err)
		case d.flushed:
			return false, errorf(ErrDamaged, "encode: decoding %s: decoder wants input after the end", d.name)
		}
		if err := d.in.next(); err != nil {
			if errors.Is(err, astiav.ErrInvaliddata) {
				return false, errorf(ErrDamaged, "encode: reading %s: %w", d.name, err)
			}
			if !errors.Is(err, astiav.ErrEof) {
				return false, fmt.Errorf("encode: reading %s: %w", d.name, err)
			}
			if d.needKey {
				// No keyframe from the seek point on: FrameAt seeks
				// further back, or, if the file has no keyframe flags
				// at all, rewinds (now and for every later seek).
				d.rewindOnly = d.rewindOnly || !d.keySeen
				d.eof = true
				return false, nil
			}
			if err := d.cc.SendPacket(nil); err != nil {
				return false, errorf(ErrDamaged, "encode: flushing decoder of %s: %w", d.name, err)
			}
			d.flushed = true
			continue
		}
		if !d.notePacket() {
			d.in.pkt.Unref()
			continue
		}
		d.packets++
		err = d.cc.SendPacket(d.in.pkt)
		d.in.pkt.Unref()
		if err != nil {
			if errors.Is(err, astiav.ErrInvaliddata) && bad < d.maxBad {
				bad++
				continue
			}
			return false, errorf(ErrDamaged, "encode: decoding %s: %w", d.name, err)
		}
	}
}

// notePacket skips packets before the first keyframe after a seek into
// the middle (reporting false), records that keyframe's time and tracks
// keyframes: the last one read and the longest interval between two.
func (d *decoder) notePacket() bool {
	p := d.in.pkt
	key := p.Flags().Has(astiav.PacketFlagKey)
	if d.needKey && !key {
		d.skipped++
		return false
	}
	d.needKey = false
	d.keySeen = d.keySeen || key
	if !d.landOK {
		if ts := p.Dts(); ts != astiav.NoPtsValue {
			d.landOK, d.landSec = true, d.seconds(ts)
		} else if ts := p.Pts(); ts != astiav.NoPtsValue {
			d.landOK, d.landSec = true, d.seconds(ts)
		}
	}
	if !key {
		return true
	}
	ts := p.Pts()
	if ts == astiav.NoPtsValue {
		ts = p.Dts()
	}
	if ts == astiav.NoPtsValue {
		return true
	}
	sec := d.seconds(ts)
	if d.keyOK && sec > d.keySec {
		d.gapKF = max(d.gapKF, sec-d.keySec)
	}
	d.keySec, d.keyOK = sec, true
	return true
}

// errNoTimestamps: a frame without timestamps came out after a seek to
// the middle of the stream, so its time is unknown.
var errNoTimestamps = errors.New("encode: frame without timestamps")

// stamp sets lastSec to f's time: its best-effort timestamp (libavcodec's
// guess from pts and dts), its pts, or else the previous frame's time plus
// one frame (the stream start for the first frame). A frame whose time is
// unknown is released (errNoTimestamps).
func (d *decoder) stamp(f *astiav.Frame) error {
	ts := frameBestEffortTS(f.UnsafePointer())
	if ts == astiav.NoPtsValue {
		ts = f.Pts()
	}
	var sec float64
	switch {
	case ts != astiav.NoPtsValue:
		sec = d.seconds(ts)
	case d.lastOK:
		sec = d.lastSec + d.step
	case d.fromStart:
		sec = 0
	default:
		f.Unref()
		d.rewindOnly = true
		return errNoTimestamps
	}
	d.lastOK, d.lastSec = true, sec
	return nil
}

// seconds converts a stream timestamp to seconds from the stream start.
// The division is last so that k·(den/fps)/den rounds like k/fps.
func (d *decoder) seconds(ts int64) float64 {
	return float64((ts-d.start)*d.num) / float64(d.den)
}

// close frees the decoder, the input and the source. Nil-safe and
// idempotent.
func (d *decoder) close() {
	if d == nil {
		return
	}
	if d.cc != nil {
		d.cc.Free()
		d.cc = nil
	}
	if d.in != nil {
		d.in.close()
		d.in = nil
	}
	d.src.close()
}

// The swscale flags of the RGBA conversion.
//
// decodeFlags (DecodeAll): nearest chroma (what libswscale's fast yuv2rgb
// path does too) with exact arithmetic. Without SWS_ACCURATE_RND
// libswscale takes the table-based yuv2rgb path, whose RGB→yuv420p→RGB
// round trip is off by up to 3 (measured over a colour grid); with it and
// full chroma interpolation the round trip is within 2, mostly 0–1, which
// tests rely on.
//
// frameAtFlags and scaleFlags are FrameAt's without and with scaling.
// Without SWS_ACCURATE_RND and SWS_FULL_CHR_H_INT libswscale takes its
// SIMD yuv2rgb path (nearest chroma, table arithmetic: RGB→yuv420p→RGB
// within ±3 instead of ±2). Measured at 854x480 yuv420p→RGBA on this
// machine kind (BenchmarkFrameAtConvert): decodeFlags 1.76 ms,
// point+accurate_rnd 0.80 ms, frameAtFlags 0.10 ms; to 427x240 bilinear 0.74 ms,
// area 0.66 ms; to 64x36 bilinear 0.10 ms, area 0.065 ms. SWS_AREA
// averages the source pixels under each output pixel when shrinking and
// interpolates like bilinear when enlarging.
const (
	decodeFlags  = swsPoint | swsAccurateRnd | swsFullChrHInt
	frameAtFlags = swsBilinear
	scaleFlags   = swsArea
)

// rgbaKey is what an RGBA converter is made for: the decoded frame's size,
// pixel format, YUV matrix (an AVColorSpace) and range, the output size
// and the swscale flags.
type rgbaKey struct {
	srcW, srcH, pixFmt, colorspace int
	full                           bool
	w, h, flags                    int
}

// rgbaKeyOf is the key converting f to w×h RGBA with flags: f's matrix
// and range as the stream tags them (BT.601 limited when untagged; the
// deprecated "yuvj" formats are full range whatever the frame says).
func rgbaKeyOf(f *astiav.Frame, w, h, flags int) rgbaKey {
	pf := f.PixelFormat()
	return rgbaKey{
		srcW: f.Width(), srcH: f.Height(), pixFmt: int(pf), colorspace: frameColorspace(f.UnsafePointer()),
		full: f.ColorRange() == astiav.ColorRangeJpeg || isJPEGPixFmt(pf),
		w:    w, h: h, flags: flags,
	}
}

// rgbaOut converts decoded frames to RGBA into a buffer of its own: the
// one conversion path of DecodeAll and FrameAt. Its libswscale context is
// made for one key and made again when the key changes; free releases it.
type rgbaOut struct {
	key  rgbaKey
	sws  *swsContext
	rgba rgbaBuffer
}

// convert converts f as k says (k is rgbaKeyOf(f, …)) and returns the
// image, valid until the next call.
func (o *rgbaOut) convert(f *astiav.Frame, k rgbaKey) (Image, error) {
	if o.sws == nil || o.key != k {
		swsFree(o.sws)
		if o.sws = swsNewScaled(k.srcW, k.srcH, k.pixFmt, k.w, k.h, int(astiav.PixelFormatRgba), k.flags, k.colorspace, k.full); o.sws == nil {
			return Image{}, fmt.Errorf("creating the %s %dx%d → RGBA %dx%d converter failed", astiav.PixelFormat(k.pixFmt).Name(), k.srcW, k.srcH, k.w, k.h)
		}
		o.key = k
	}
	img := o.rgba.image(k.w, k.h)
	if ret := swsFrameToPix(o.sws, f.UnsafePointer(), img.Pix, img.Stride); ret < 0 {
		return Image{}, fmt.Errorf("converting to RGBA: %w", errCode(ret))
	}
	return img, nil
}

// free releases the converter; the rgbaOut may be used again.
func (o *rgbaOut) free() {
	swsFree(o.sws)
	o.sws = nil
}

// isJPEGPixFmt reports the deprecated full-range "yuvj" formats, which
// imply full range whatever the frame's color_range says.
func isJPEGPixFmt(pf astiav.PixelFormat) bool {
	switch pf {
	case astiav.PixelFormatYuvj420P, astiav.PixelFormatYuvj422P, astiav.PixelFormatYuvj444P, astiav.PixelFormatYuvj440P, astiav.PixelFormatYuvj411P:
		return true
	}
	return false
}

// rgbaBuffer is rgbaOut's reusable RGBA buffer. Rows are padded to 64
// bytes and the buffer starts 64-byte aligned (libswscale's SIMD paths are
// faster on aligned rows), and a tail of slack follows the last row because
// libswscale's output functions may write a few pixels past a row's end.
type rgbaBuffer struct {
	buf  []byte
	w, h int
	img  Image
}

const rgbaAlign, rgbaSlack = 64, 256

func (b *rgbaBuffer) image(w, h int) Image {
	if b.buf != nil && b.w == w && b.h == h {
		return b.img
	}
	stride := (4*w + rgbaAlign - 1) &^ (rgbaAlign - 1)
	n := stride * h
	b.buf = make([]byte, n+rgbaSlack+rgbaAlign)
	off := 0
	if r := int(uintptr(unsafe.Pointer(&b.buf[0])) % rgbaAlign); r != 0 {
		off = rgbaAlign - r
	}
	// The full capacity stays reachable for C; fn sees exactly n bytes.
	b.w, b.h = w, h
	b.img = Image{Width: w, Height: h, Stride: stride, Pix: b.buf[off : off+n : off+n]}
	return b.img
}
