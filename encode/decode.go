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
// from fn stops decoding and is returned as is.
func DecodeAll(path string, fn func(Frame) error) error {
	in, err := openInput(path)
	if err != nil {
		return err
	}
	defer in.close()
	d := &decoder{path: path, in: in, fn: fn}
	defer d.free()
	if err := d.open(); err != nil {
		return err
	}
	return d.run()
}

// decoder holds DecodeAll's state; free releases all of it.
type decoder struct {
	path  string
	in    *input
	fn    func(Frame) error
	cc    *astiav.CodecContext
	frame *astiav.Frame
	tb    float64
	start int64 // stream start time in stream time base, 0 if unknown
	index int
	// RGBA conversion, rebuilt when the decoded format changes.
	sws    *swsContext
	swsKey [5]int // width, height, pixfmt, colorspace, full range
	rgba   rgbaBuffer
}

func (d *decoder) open() error {
	par := d.in.st.CodecParameters()
	codec := astiav.FindDecoder(par.CodecID())
	if codec == nil {
		return fmt.Errorf("encode: no decoder for %s in %s", par.CodecID().Name(), d.path)
	}
	if d.cc = astiav.AllocCodecContext(codec); d.cc == nil {
		return errors.New("encode: allocating decoder failed")
	}
	if err := par.ToCodecContext(d.cc); err != nil {
		return fmt.Errorf("encode: copying stream parameters to decoder: %w", err)
	}
	d.cc.SetTimeBase(d.in.st.TimeBase())
	d.cc.SetThreadCount(0) // auto
	if err := libavCall("opening decoder "+codec.Name(), func() error { return d.cc.Open(codec, nil) }); err != nil {
		return err
	}
	if d.frame = astiav.AllocFrame(); d.frame == nil {
		return errors.New("encode: allocating frame failed")
	}
	d.tb = d.in.st.TimeBase().Float64()
	if s := d.in.st.StartTime(); s != astiav.NoPtsValue {
		d.start = s
	}
	return nil
}

func (d *decoder) run() error {
	for {
		err := d.in.next()
		if errors.Is(err, astiav.ErrEof) {
			break
		}
		if err != nil {
			return fmt.Errorf("encode: reading %s: %w", d.path, err)
		}
		err = d.cc.SendPacket(d.in.pkt)
		d.in.pkt.Unref()
		if err != nil {
			return fmt.Errorf("encode: decoding %s, packet after frame %d: %w", d.path, d.index, err)
		}
		if err := d.receive(); err != nil {
			return err
		}
	}
	if err := d.cc.SendPacket(nil); err != nil {
		return fmt.Errorf("encode: flushing decoder: %w", err)
	}
	return d.receive()
}

// receive hands every frame the decoder has ready to fn.
func (d *decoder) receive() error {
	for {
		if err := d.cc.ReceiveFrame(d.frame); err != nil {
			if errors.Is(err, astiav.ErrEagain) || errors.Is(err, astiav.ErrEof) {
				return nil
			}
			return fmt.Errorf("encode: decoding %s, frame %d: %w", d.path, d.index, err)
		}
		err := d.deliver()
		d.frame.Unref()
		if err != nil {
			return err
		}
		d.index++
	}
}

func (d *decoder) deliver() error {
	f := d.frame.UnsafePointer()
	w, h := d.frame.Width(), d.frame.Height()
	pf := int(d.frame.PixelFormat())
	full := d.frame.ColorRange() == astiav.ColorRangeJpeg || isJPEGPixFmt(d.frame.PixelFormat())
	key := [5]int{w, h, pf, frameColorspace(f), boolInt(full)}
	if d.sws == nil || key != d.swsKey {
		swsFree(d.sws)
		if d.sws = swsNew(w, h, pf, int(astiav.PixelFormatRgba), decodeFlags, key[3], full); d.sws == nil {
			return fmt.Errorf("encode: creating %s→RGBA converter for %dx%d failed", d.frame.PixelFormat().Name(), w, h)
		}
		d.swsKey = key
	}
	img := d.rgba.image(w, h)
	if ret := swsFrameToPix(d.sws, f, img.Pix, img.Stride); ret < 0 {
		return fmt.Errorf("encode: converting frame %d to RGBA: %w", d.index, errCode(ret))
	}
	ts := frameBestEffortTS(f)
	if ts == astiav.NoPtsValue {
		ts = d.frame.Pts()
	}
	var pts float64
	if ts != astiav.NoPtsValue {
		pts = float64(ts-d.start) * d.tb
	} else if r := d.in.st.AvgFrameRate(); r.Num() > 0 && r.Den() > 0 {
		pts = float64(d.index) / r.Float64()
	}
	return d.fn(Frame{Index: d.index, PTS: pts, Image: img})
}

// decodeFlags: nearest chroma (what libswscale's fast yuv2rgb path does
// too) with exact arithmetic. Without SWS_ACCURATE_RND libswscale takes the
// table-based yuv2rgb path, whose RGB→yuv420p→RGB round trip is off by up
// to 3 (measured over a colour grid); with it and full chroma interpolation
// the round trip is within 2, mostly 0–1, which tests rely on.
const decodeFlags = swsPoint | swsAccurateRnd | swsFullChrHInt

func (d *decoder) free() {
	swsFree(d.sws)
	d.sws = nil
	if d.frame != nil {
		d.frame.Free()
		d.frame = nil
	}
	if d.cc != nil {
		d.cc.Free()
		d.cc = nil
	}
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

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rgbaBuffer is DecodeAll's reusable RGBA buffer. Rows are padded to 64
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
