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
	decoder // the input and its decoder, which FrameAt seeks
	info    Info

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
	inexact    bool // a seek skipped packets: the demuxer seeks to any packet

	outs  [2]videoOut // RGBA conversions, for the last two output sizes
	clock int         // videoOut.used stamps

	// rotation and mirrored: the stream's display matrix (displayRotation).
	rotation float64
	mirrored bool

	seeks  int // for tests: seeks (and rewinds)
	closed bool
}

// videoOut is the conversion of cur to one output size.
type videoOut struct {
	rgbaOut
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
	v := &Video{decoder: decoder{name: name, src: src, in: in, maxBad: maxBadPackets}}
	if err := v.open(); err != nil {
		v.Close()
		return nil, err
	}
	return v, nil
}

func (v *Video) open() error {
	if err := v.decoder.open(); err != nil {
		return err
	}
	st := v.in.st
	v.info = v.in.info()
	v.rotation, v.mirrored = displayRotation(st.SideData(astiav.PacketSideDataTypeDisplaymatrix))
	if n, d := st.NbFrames(), st.Duration(); n > 0 && d > 0 {
		v.info.Frames = int(n)
		v.info.Duration = float64(d*v.num) / float64(v.den)
	} else if err := v.in.count(&v.info); err != nil {
		return fmt.Errorf("encode: reading %s: %w", v.name, err)
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
	return nil
}

// Info describes the video stream (see OpenVideo for Frames and Duration).
func (v *Video) Info() Info {
	if v == nil {
		return Info{}
	}
	return v.info
}

// Rotation is the angle in degrees, clockwise, by which a player turns
// the decoded picture (the stream's display matrix, as
// VideoProbe.Rotation: 0 without one, NaN when the matrix is not a
// rotation), and whether the matrix also mirrors it. FrameAt never
// applies it: frames come out as coded.
func (v *Video) Rotation() (degrees float64, mirrored bool) {
	if v == nil {
		return 0, false
	}
	return v.rotation, v.mirrored
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
	if err := checkImage(dst, dst.Width, dst.Height); err != nil {
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
			return errorf(ErrDamaged, "encode: %s: no frame could be decoded", v.name)
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
		in, err = openInput(v.name)
	}
	if err != nil {
		return err
	}
	if in.st.Index() != v.in.st.Index() {
		in.close()
		return fmt.Errorf("encode: %s changed while open", v.name)
	}
	v.in.close()
	v.in = in
	return nil
}

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

// decodeNext receives the next frame in presentation order into ahead
// (aheadOK); at the end it sets eof.
func (v *Video) decodeNext() error {
	ok, err := v.receive(v.ahead)
	if ok {
		v.aheadOK, v.aheadSec = true, v.lastSec
	}
	return err
}

// output converts cur to RGBA at dst's size into dst, with the
// conversion of that size when one of the last two sizes asked for, else
// the least recently used one; a conversion that holds cur already only
// copies.
func (v *Video) output(dst Image) error {
	flags := frameAtFlags
	if v.cur.Width() != dst.Width || v.cur.Height() != dst.Height {
		flags = scaleFlags
	}
	key := rgbaKeyOf(v.cur, dst.Width, dst.Height, flags)
	o := &v.outs[0] // the one for this key, else the least recently used
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
		o.serial = -1 // made for another key: it holds no frame of this one
	}
	if o.serial != v.curSerial {
		if _, err := o.convert(v.cur, key); err != nil {
			o.serial = -1
			return fmt.Errorf("encode: frame at %.3f s of %s: %w", v.curSec, v.name, err)
		}
		o.serial = v.curSerial
	}
	img := o.rgba.image(dst.Width, dst.Height)
	row := 4 * dst.Width
	for y := 0; y < dst.Height; y++ {
		copy(dst.Pix[y*dst.Stride:y*dst.Stride+row], img.Pix[y*img.Stride:])
	}
	return nil
}

// Close frees everything. Nil-safe and idempotent; FrameAt then returns
// ErrClosed.
func (v *Video) Close() {
	if v == nil || v.closed {
		return
	}
	for i := range v.outs {
		v.outs[i].free()
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
	v.decoder.close()
	v.closed = true
}
