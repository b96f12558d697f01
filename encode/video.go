package encode

import (
	"errors"
	"fmt"
	"math"

	"github.com/asticode/go-astiav"
)

// Video gives random access to the frames of the first video stream of a
// file: any container and codec libavformat/libavcodec read (natural
// videos as well as Writer's MP4s) with OpenVideo, for this program's own
// files; only MP4/MOV and WebM/Matroska, read through a custom I/O context
// that can open nothing else, with OpenVideoData and OpenVideoFile, for
// videos from outside (demux.go). A Video is not safe for concurrent use.
//
// FrameAt decodes forward from where the decoder is when t is at or after
// the frame it returned last and not far ahead (in the same keyframe
// interval, as far as the keyframes read so far tell, or a few frames
// ahead; < 2 s before two keyframes were seen); otherwise it seeks to the
// keyframe at or before t (av_seek_frame with AVSEEK_FLAG_BACKWARD in the
// stream's time base) and decodes forward from there. The frame shown at
// the last t, and the one after it once decoded, are kept, so repeated
// times cost a copy. After a seek the decoder is
// reopened (go-astiav v0.16.0 has no avcodec_flush_buffers): 0.26 ms on
// this machine kind, against 1.4 ms for the seek and the first 854x480
// frame in all, 2.4 ms for a frame 5 frames past the keyframe. The
// decoder uses libavcodec's automatic thread count: frame threads decode
// up to threads−1 packets beyond the frame shown.
type Video struct {
	path  string  // the file, or what messages call the input (OpenVideoData)
	src   *source // custom-I/O source of OpenVideoData and OpenVideoFile; nil for OpenVideo
	in    *input
	codec *astiav.Codec
	cc    *astiav.CodecContext
	info  Info

	num, den int64   // stream time base
	start    int64   // stream start time (time base units), 0 if unknown
	step     float64 // seconds per frame, for frames without timestamps

	// cur is the frame shown at the last t (curSec its time); ahead, when
	// aheadOK, the next frame in presentation order. curFirst: cur is the
	// first frame decoded from the start of the stream, so it is also shown
	// at any earlier t.
	cur, ahead       *astiav.Frame
	curOK, aheadOK   bool
	curFirst         bool
	curSec, aheadSec float64
	curSerial        int // changes whenever cur does

	positioned bool // a seek (or rewind) started the current decoder
	fromStart  bool // decoding began at the stream start and no frame came out yet
	flushed    bool // the demuxer hit the end and the decoder was sent the flush packet
	eof        bool // the decoder returned its last frame
	lastOK     bool // a frame was received since the seek; lastSec is its time
	lastSec    float64
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
	inexact bool // a seek skipped packets: the demuxer seeks to any packet
	skipped int
	landOK  bool
	landSec float64

	outs  [2]videoOut // RGBA conversions, for the last two output sizes
	clock int         // videoOut.used stamps

	packets, seeks int // for tests: packets sent to the decoder, seeks
	closed         bool
}

// videoOut is the conversion of cur to one output size.
type videoOut struct {
	key    [7]int // source w, h, pixfmt, colorspace, full range; output w, h
	sws    *swsContext
	rgba   rgbaBuffer
	serial int // curSerial held in rgba, -1 none
	used   int // for least-recently-used replacement
}

// frameTimeEps: a frame counts as shown from 1 ns before its presentation
// time, so that t computed as k/fps in floating point gives frame k even
// when the time base does not represent k/fps exactly.
const frameTimeEps = 1e-9

// maxSeekTries bounds the backward steps FrameAt takes when a seek lands
// after t (e.g. a demuxer that seeks by decoding timestamps).
const maxSeekTries = 16

// OpenVideo opens path for FrameAt. Errors name the file and say whether
// it is missing or unreadable, not a media file, or has no video stream or
// no decoder for it. Info's Frames and Duration come from the container
// when it records them (MP4/MOV), else from demuxing every packet (as
// Probe).
func OpenVideo(path string) (*Video, error) {
	in, err := openInput(path)
	if err != nil {
		return nil, err
	}
	return newVideo(path, nil, in)
}

// newVideo finishes opening a Video over in; name is the input in
// messages, src its custom-I/O source (nil for a path libav opened). On
// failure everything is released.
func newVideo(name string, src *source, in *input) (*Video, error) {
	v := &Video{path: name, src: src, in: in}
	if err := v.open(); err != nil {
		v.Close()
		return nil, err
	}
	return v, nil
}

func (v *Video) open() error {
	st := v.in.st
	par := st.CodecParameters()
	if v.codec = astiav.FindDecoder(par.CodecID()); v.codec == nil {
		return fmt.Errorf("encode: no decoder for %s in %s", par.CodecID().Name(), v.path)
	}
	tb := st.TimeBase()
	if tb.Num() <= 0 || tb.Den() <= 0 {
		return fmt.Errorf("encode: %s: invalid stream time base %d/%d", v.path, tb.Num(), tb.Den())
	}
	v.num, v.den = int64(tb.Num()), int64(tb.Den())
	if s := st.StartTime(); s != astiav.NoPtsValue {
		v.start = s
	}
	v.info = v.in.info()
	v.step = 1.0 / 25
	if v.info.FPS > 0 {
		v.step = 1 / v.info.FPS
	}
	if n, d := st.NbFrames(), st.Duration(); n > 0 && d > 0 {
		v.info.Frames = int(n)
		v.info.Duration = float64(d*v.num) / float64(v.den)
	} else if err := v.in.count(&v.info); err != nil {
		return fmt.Errorf("encode: reading %s: %w", v.path, err)
	} else {
		v.keySeen = v.in.keys > 0
	}
	if v.cur = astiav.AllocFrame(); v.cur == nil {
		return errors.New("encode: allocating frame failed")
	}
	if v.ahead = astiav.AllocFrame(); v.ahead == nil {
		return errors.New("encode: allocating frame failed")
	}
	for i := range v.outs {
		v.outs[i].serial = -1
	}
	return v.openDecoder()
}

// openDecoder (re)opens the decoder; a fresh one is in the state
// avcodec_flush_buffers would leave.
func (v *Video) openDecoder() error {
	if v.cc != nil {
		v.cc.Free()
	}
	if v.cc = astiav.AllocCodecContext(v.codec); v.cc == nil {
		return errors.New("encode: allocating decoder failed")
	}
	if err := v.in.st.CodecParameters().ToCodecContext(v.cc); err != nil {
		return fmt.Errorf("encode: copying stream parameters to decoder: %w", err)
	}
	v.cc.SetTimeBase(v.in.st.TimeBase())
	v.cc.SetThreadCount(0) // auto
	return libavCall("opening decoder "+v.codec.Name(), func() error { return v.cc.Open(v.codec, nil) })
}

// Info describes the video stream (see OpenVideo for Frames and Duration).
func (v *Video) Info() Info {
	if v == nil {
		return Info{}
	}
	return v.info
}

// FrameAt converts the frame shown at t into dst: the last frame whose
// presentation time, in seconds from the stream start (the container's
// timestamps: Matroska's are whole milliseconds), is at or before t; the
// first frame for an earlier t, the last one for a t past the end. dst may
// have any size: the frame is scaled to dst.Width×dst.Height (SWS_AREA;
// see frameAtFlags); only the first 4·Width bytes of each row are written.
// Colours are converted with the matrix and range the stream is tagged
// with, as DecodeAll does, within ±2 of it. Errors: NaN t or a bad dst
// (ErrOptions), a closed Video (ErrClosed), libav's errors with the file
// name.
func (v *Video) FrameAt(t float64, dst Image) error {
	if v == nil || v.closed {
		return errorf(ErrClosed, "encode: video is closed")
	}
	if math.IsNaN(t) {
		return errorf(ErrOptions, "encode: frame time is NaN")
	}
	if dst.Width <= 0 || dst.Height <= 0 {
		return errorf(ErrOptions, "encode: image size %dx%d must be positive", dst.Width, dst.Height)
	}
	if err := dst.check(dst.Width, dst.Height); err != nil {
		return err
	}
	var err error
	switch {
	case !v.positioned || !v.curOK,
		t+frameTimeEps < v.curSec && !v.curFirst, // behind
		v.farAhead(t):
		err = v.seekAndAdvance(t)
	default:
		err = v.advance(t)
	}
	if err != nil {
		return err
	}
	return v.output(dst)
}

// farAhead reports whether t is far enough past the decoded frames that a
// seek should skip frames decoding forward would go through: once two
// keyframes were seen in a row, when a keyframe is expected at or before t
// (the last keyframe read plus the longest keyframe interval seen) and t is
// more than 4 frames ahead; before that, when t is more than 2 s ahead.
func (v *Video) farAhead(t float64) bool {
	if v.eof {
		return false
	}
	last := v.curSec
	if v.aheadOK {
		last = v.aheadSec
	}
	if v.keyOK && v.gapKF > 0 {
		return t+frameTimeEps >= v.keySec+v.gapKF && t-last > 4*v.step
	}
	return t-last > 2
}

// seekAndAdvance seeks to the keyframe at or before t and decodes up to the
// frame shown at t. When the first frame after the seek is later than t
// (MPEG-TS seeks by decoding timestamps, which precede presentation
// times with B-frames) it seeks again to just before the packet it landed
// on, then further back, doubling the step, and at last to the start.
func (v *Video) seekAndAdvance(t float64) error {
	target, back := t, 0.0
	if v.inexact && v.gapKF > 0 {
		// Land before the keyframe at or before t, then skip to it.
		target = t - v.gapKF
	}
	tick := float64(v.num) / float64(v.den)
	for try := 0; ; try++ {
		if v.info.Duration > 0 {
			target = min(target, v.info.Duration)
		}
		toStart := target <= 0 || v.rewindOnly || try == maxSeekTries
		if err := v.seek(target, toStart); err != nil {
			return err
		}
		err := v.advance(t)
		v.inexact = v.inexact || v.skipped > 0
		if errors.Is(err, errNoTimestamps) {
			continue // v.rewindOnly is set: the next try rewinds
		}
		if err != nil {
			return err
		}
		if v.curOK {
			return nil
		}
		if toStart {
			return fmt.Errorf("encode: %s: no frame could be decoded", v.path)
		}
		// No frame at or before t after the seek point: seek to before the
		// keyframe decoding started from. A demuxer that landed before
		// it (non-keyframe packets skipped: MPEG-TS seeks to any packet)
		// would land there again, so step back a keyframe interval more,
		// doubling; so too from the target when no keyframe followed.
		next := target
		switch {
		case v.landOK && v.skipped == 0:
			next = v.landSec - tick
		case v.landOK:
			back = max(2*back, v.gapKF, 0.5)
			next = v.landSec - tick - back
		default:
			back = max(2*back, v.gapKF, 0.5)
			next = target - back
		}
		target = min(next, target-tick)
	}
}

// seek positions the demuxer at the keyframe at or before target seconds
// (at the stream start if toStart) and resets the decoder. A demuxer that
// cannot seek is reopened at the start; FrameAt then decodes from there.
func (v *Video) seek(target float64, toStart bool) error {
	v.seeks++
	v.cur.Unref()
	v.ahead.Unref()
	v.curOK, v.aheadOK, v.curFirst = false, false, false
	v.flushed, v.eof, v.lastOK, v.keyOK, v.landOK = false, false, false, false, false
	v.skipped = 0
	v.positioned = false
	ts := v.start
	if !toStart {
		// Clamped to ~30 years, far from int64 overflow.
		ts += int64(math.Floor(min(target, 1e9) * float64(v.den) / float64(v.num)))
	}
	if err := v.in.fc.SeekFrame(v.in.st.Index(), ts, astiav.NewSeekFlags(astiav.SeekFlagBackward)); err != nil {
		if err := v.rewind(); err != nil {
			return err
		}
		toStart = true
	}
	v.fromStart, v.needKey = toStart, !toStart
	if err := v.openDecoder(); err != nil {
		return err
	}
	v.positioned = true
	return nil
}

// rewind reopens the file, for demuxers that cannot seek.
func (v *Video) rewind() error {
	var in *input
	var err error
	if v.src != nil {
		in, err = openSource(v.src)
	} else {
		in, err = openInput(v.path)
	}
	if err != nil {
		return err
	}
	if in.st.Index() != v.in.st.Index() {
		in.close()
		return fmt.Errorf("encode: %s changed while open", v.path)
	}
	v.in.close()
	v.in = in
	return nil
}

// errNoTimestamps: a frame without timestamps came out after a seek to
// the middle of the stream, so its time is unknown.
var errNoTimestamps = errors.New("encode: frame without timestamps")

// advance decodes forward until cur is the frame shown at t, or the
// stream ends.
func (v *Video) advance(t float64) error {
	for {
		if !v.aheadOK {
			if v.eof {
				return nil
			}
			if err := v.decodeNext(); err != nil {
				return err
			}
			continue
		}
		first := !v.curOK && v.fromStart
		if !first && v.aheadSec > t+frameTimeEps {
			return nil
		}
		// ahead becomes cur; the old cur's buffers are released.
		v.cur, v.ahead = v.ahead, v.cur
		v.ahead.Unref()
		v.curOK, v.aheadOK, v.curFirst = true, false, first
		v.curSec = v.aheadSec
		v.curSerial++
		v.fromStart = false
	}
}

// maxBadPackets: decode errors (AVERROR_INVALIDDATA) tolerated in a row
// before FrameAt gives up; a damaged packet in a natural video only costs
// its frame, as with the ffmpeg CLI.
const maxBadPackets = 32

// decodeNext receives the next frame in presentation order into ahead
// (aheadOK), feeding packets as the decoder asks; at the end it sets eof.
func (v *Video) decodeNext() error {
	bad := 0
	for {
		err := v.cc.ReceiveFrame(v.ahead)
		switch {
		case err == nil:
			return v.stamp()
		case errors.Is(err, astiav.ErrEof):
			v.eof = true
			return nil
		case errors.Is(err, astiav.ErrInvaliddata) && bad < maxBadPackets:
			bad++
			continue
		case !errors.Is(err, astiav.ErrEagain):
			return fmt.Errorf("encode: decoding %s: %w", v.path, err)
		case v.flushed:
			return fmt.Errorf("encode: decoding %s: decoder wants input after the end", v.path)
		}
		if err := v.in.next(); err != nil {
			if !errors.Is(err, astiav.ErrEof) {
				return fmt.Errorf("encode: reading %s: %w", v.path, err)
			}
			if v.needKey {
				// No keyframe from the seek point on: FrameAt seeks
				// further back, or, if the file has no keyframe flags
				// at all, rewinds (now and for every later seek).
				v.rewindOnly = v.rewindOnly || !v.keySeen
				v.eof = true
				return nil
			}
			if err := v.cc.SendPacket(nil); err != nil {
				return fmt.Errorf("encode: flushing decoder of %s: %w", v.path, err)
			}
			v.flushed = true
			continue
		}
		if !v.notePacket() {
			v.in.pkt.Unref()
			continue
		}
		v.packets++
		err = v.cc.SendPacket(v.in.pkt)
		v.in.pkt.Unref()
		if err != nil {
			if errors.Is(err, astiav.ErrInvaliddata) && bad < maxBadPackets {
				bad++
				continue
			}
			return fmt.Errorf("encode: decoding %s: %w", v.path, err)
		}
	}
}

// notePacket skips packets before the first keyframe after a seek into
// the middle (reporting false), records that keyframe's time and tracks
// keyframes: the last one read and the longest interval between two.
func (v *Video) notePacket() bool {
	p := v.in.pkt
	key := p.Flags().Has(astiav.PacketFlagKey)
	if v.needKey && !key {
		v.skipped++
		return false
	}
	v.needKey = false
	v.keySeen = v.keySeen || key
	if !v.landOK {
		if ts := p.Dts(); ts != astiav.NoPtsValue {
			v.landOK, v.landSec = true, v.seconds(ts)
		} else if ts := p.Pts(); ts != astiav.NoPtsValue {
			v.landOK, v.landSec = true, v.seconds(ts)
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
	sec := v.seconds(ts)
	if v.keyOK && sec > v.keySec {
		v.gapKF = max(v.gapKF, sec-v.keySec)
	}
	v.keySec, v.keyOK = sec, true
	return true
}

// stamp sets aheadSec from the frame's best-effort timestamp (libavcodec's
// guess from pts and dts), its pts, or else the previous frame's time plus
// one frame (the stream start for the first frame).
func (v *Video) stamp() error {
	ts := frameBestEffortTS(v.ahead.UnsafePointer())
	if ts == astiav.NoPtsValue {
		ts = v.ahead.Pts()
	}
	switch {
	case ts != astiav.NoPtsValue:
		v.aheadSec = v.seconds(ts)
	case v.lastOK:
		v.aheadSec = v.lastSec + v.step
	case v.fromStart:
		v.aheadSec = 0
	default:
		v.ahead.Unref()
		v.rewindOnly = true
		return errNoTimestamps
	}
	v.aheadOK, v.lastOK, v.lastSec = true, true, v.aheadSec
	return nil
}

// seconds converts a stream timestamp to seconds from the stream start.
// The division is last so that k·(den/fps)/den rounds like k/fps.
func (v *Video) seconds(ts int64) float64 {
	return float64((ts-v.start)*v.num) / float64(v.den)
}

// output converts cur to RGBA at dst's size into dst.
func (v *Video) output(dst Image) error {
	f := v.cur.UnsafePointer()
	w, h := v.cur.Width(), v.cur.Height()
	pf := v.cur.PixelFormat()
	full := v.cur.ColorRange() == astiav.ColorRangeJpeg || isJPEGPixFmt(pf)
	key := [7]int{w, h, int(pf), frameColorspace(f), boolInt(full), dst.Width, dst.Height}
	o := &v.outs[0] // the one for this size, else the least recently used
	for i := range v.outs {
		if v.outs[i].sws != nil && v.outs[i].key == key {
			o = &v.outs[i]
			break
		}
		if v.outs[i].used < o.used {
			o = &v.outs[i]
		}
	}
	v.clock++
	o.used = v.clock
	if o.sws == nil || o.key != key {
		swsFree(o.sws)
		flags := frameAtFlags
		if w != dst.Width || h != dst.Height {
			flags = scaleFlags
		}
		if o.sws = swsNewScaled(w, h, int(pf), dst.Width, dst.Height, int(astiav.PixelFormatRgba), flags, key[3], full); o.sws == nil {
			return fmt.Errorf("encode: creating %s %dx%d → RGBA %dx%d converter failed", pf.Name(), w, h, dst.Width, dst.Height)
		}
		o.key, o.serial = key, -1
	}
	img := o.rgba.image(dst.Width, dst.Height)
	if o.serial != v.curSerial {
		if ret := swsFrameToPix(o.sws, f, img.Pix, img.Stride); ret < 0 {
			o.serial = -1
			return fmt.Errorf("encode: converting frame at %.3f s of %s to RGBA: %w", v.curSec, v.path, errCode(ret))
		}
		o.serial = v.curSerial
	}
	row := 4 * dst.Width
	for y := 0; y < dst.Height; y++ {
		copy(dst.Pix[y*dst.Stride:y*dst.Stride+row], img.Pix[y*img.Stride:])
	}
	return nil
}

// frameAtFlags and scaleFlags are FrameAt's swscale flags without and with
// scaling. Without SWS_ACCURATE_RND and SWS_FULL_CHR_H_INT (DecodeAll's
// decodeFlags) libswscale takes its SIMD yuv2rgb path (nearest chroma,
// table arithmetic: RGB→yuv420p→RGB within ±3 instead of ±2). Measured at
// 854x480 yuv420p→RGBA on this machine kind (BenchmarkFrameAtConvert):
// decodeFlags 1.76 ms, point+accurate_rnd 0.80 ms, this 0.10 ms; to
// 427x240 bilinear 0.74 ms, area 0.66 ms; to 64x36 bilinear 0.10 ms, area
// 0.065 ms. SWS_AREA averages the source pixels under each output pixel
// when shrinking and interpolates like bilinear when enlarging.
const (
	frameAtFlags = swsBilinear
	scaleFlags   = swsArea
)

// Close frees everything. Nil-safe and idempotent; FrameAt then returns
// ErrClosed.
func (v *Video) Close() {
	if v == nil || v.closed {
		return
	}
	for i := range v.outs {
		swsFree(v.outs[i].sws)
		v.outs[i] = videoOut{}
	}
	if v.cur != nil {
		v.cur.Free()
		v.cur = nil
	}
	if v.ahead != nil {
		v.ahead.Free()
		v.ahead = nil
	}
	if v.cc != nil {
		v.cc.Free()
		v.cc = nil
	}
	if v.in != nil {
		v.in.close()
		v.in = nil
	}
	v.src.close()
	v.closed = true
}
