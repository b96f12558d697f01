package encode

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/asticode/go-astiav"
)

// VideoProbe is what ProbeVideoFile reads of a video from outside: the
// stream's parameters, its display rotation and the presentation time of
// every frame, from demuxing every packet (no decoding but the first and
// the last frame, which it decodes to prove they can be).
type VideoProbe struct {
	// Info: Width and Height are the coded size (before Rotation), FPS the
	// stream's average frame rate, Frames the frames read (packets the
	// container does not mark for discarding), Duration from the stream
	// start to the end of the last frame.
	Info
	// Container is the container family the file is in.
	Container Container
	// Rotation is the angle in degrees, clockwise, by which a player turns
	// the decoded picture (the stream's display matrix; 0 without one),
	// in [0, 360). NaN when the matrix is not a rotation.
	Rotation float64
	// Mirrored says the display matrix also flips the picture.
	Mirrored bool
	// Listed is the frame count the container's index states (MP4's
	// sample table); 0 when it states none.
	Listed int
	// Times are the frames' presentation times in presentation order, in
	// seconds from the stream start: the times Video.FrameAt compares t
	// with, so FrameAt(Times[k]) shows frame k.
	Times []float64
	// Tick is the stream's timestamp unit in seconds.
	Tick float64
}

// Frame-rate regularity: a gap between consecutive frames may differ from
// the mean gap by one timestamp tick (Matroska's millisecond timestamps
// turn 29.97 fps into 33 and 34 ms gaps) plus MaxGapDeviation of the mean.
const MaxGapDeviation = 0.02

// ConstantRate reports whether the frames are evenly spaced: every gap
// between consecutive presentation times within one tick plus
// MaxGapDeviation of the mean gap, and the mean gap within
// MaxGapDeviation of 1/FPS. It returns the mean frame rate and, when the
// rate varies, a sentence saying how (for messages). A single frame is
// constant.
func (p VideoProbe) ConstantRate() (rate float64, ok bool, why string) {
	n := len(p.Times)
	if n < 2 {
		return p.FPS, true, ""
	}
	mean := (p.Times[n-1] - p.Times[0]) / float64(n-1)
	if !(mean > 0) {
		return 0, false, "its frames share one timestamp"
	}
	rate = 1 / mean
	lo, hi := math.Inf(1), 0.0
	for k := 1; k < n; k++ {
		g := p.Times[k] - p.Times[k-1]
		lo, hi = min(lo, g), max(hi, g)
	}
	slack := p.Tick + MaxGapDeviation*mean
	if hi-mean > slack || mean-lo > slack {
		return rate, false, fmt.Sprintf("its frames are %.4g to %.4g s apart (mean %.4g s)", lo, hi, mean)
	}
	if p.FPS > 0 && math.Abs(rate-p.FPS) > MaxGapDeviation*p.FPS {
		return rate, false, fmt.Sprintf("the stream says %.4g fps but its frames come at %.4g fps", p.FPS, rate)
	}
	return rate, true, ""
}

// ErrDamaged is matched by ProbeVideoFile's errors for a file that opens
// but cannot be read to its end: truncated, or a frame that cannot be
// decoded; and by the errors of Video.FrameAt and DecodeAll for data the
// decoder or the demuxer rejects as invalid.
var ErrDamaged = errors.New("encode: damaged video")

// ProbeVideoFile reads a video from outside the way OpenVideoFile opens it
// (an accepted container only, its demuxer forced, through a custom I/O
// context: nothing the file names is opened) and describes it: the
// stream's parameters, its display rotation, the presentation time of
// every frame. A file whose packets cannot all be read (a read error, a
// packet libav marks corrupt, fewer packets than the container's index
// lists), that has a packet without any timestamp, or whose first or last
// frame cannot be decoded is an error matching ErrDamaged; the
// container's errors match ErrContainer as OpenVideoFile's do.
func ProbeVideoFile(path string) (VideoProbe, error) {
	src, err := openFileSource(path)
	if err != nil {
		return VideoProbe{}, err
	}
	in, err := openSource(src)
	if err != nil {
		src.close()
		// The container was recognised, so what libav cannot open is a
		// damaged file (an MP4 cut before its index: "moov atom not
		// found").
		return VideoProbe{}, errorf(ErrDamaged, "encode: %s: libav cannot open it as %s: %s", path, src.c, trimEncode(err, "opening "+path+" as "+string(src.c)+": "))
	}
	p, err := probeInput(path, in)
	in.close()
	src.close()
	if err != nil {
		return VideoProbe{}, err
	}
	p.Container = src.c
	if err := checkEnds(path, p); err != nil {
		return VideoProbe{}, err
	}
	return p, nil
}

// trimEncode is err's message without this package's prefix and then
// without lead, for a message that names the file itself.
func trimEncode(err error, lead string) string {
	return strings.TrimPrefix(strings.TrimPrefix(err.Error(), "encode: "), lead)
}

// openFileSource opens path and sniffs its container, as OpenVideoFile.
// The open does not block (O_NONBLOCK): a FIFO would otherwise wait for a
// writer before the check below could refuse it.
func openFileSource(path string) (*source, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("encode: %w", err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("encode: %s is not a regular file", path)
	}
	head := make([]byte, 16)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		f.Close()
		return nil, fmt.Errorf("encode: reading %s: %w", path, err)
	}
	c, what := sniff(head[:n])
	if c == "" {
		f.Close()
		return nil, errorf(ErrContainer, "encode: %s is %s, not a video in an accepted container (%s)", path, what, AcceptedContainers)
	}
	return &source{name: path, r: f, size: st.Size(), file: f, c: c}, nil
}

// probeInput demuxes every packet of in's video stream.
func probeInput(path string, in *input) (VideoProbe, error) {
	st := in.st
	p := VideoProbe{Info: in.info(), Listed: int(max(0, st.NbFrames()))}
	p.Rotation, p.Mirrored = displayRotation(st.SideData(astiav.PacketSideDataTypeDisplaymatrix))
	tb := st.TimeBase()
	if tb.Num() <= 0 || tb.Den() <= 0 {
		return p, fmt.Errorf("encode: %s: invalid stream time base %d/%d", path, tb.Num(), tb.Den())
	}
	num, den := int64(tb.Num()), int64(tb.Den())
	p.Tick = float64(num) / float64(den)
	start := int64(0)
	if s := st.StartTime(); s != astiav.NoPtsValue {
		start = s
	}
	sec := func(ts int64) float64 { return float64((ts-start)*num) / float64(den) }
	packets, end := 0, math.Inf(-1)
	for {
		err := in.next()
		if errors.Is(err, astiav.ErrEof) {
			break
		}
		if err != nil {
			return p, errorf(ErrDamaged, "encode: %s: reading packet %d: %v (truncated or damaged)", path, packets+1, err)
		}
		packets++
		flags := in.pkt.Flags()
		if flags.Has(astiav.PacketFlagCorrupt) {
			return p, errorf(ErrDamaged, "encode: %s: packet %d is corrupt (truncated or damaged)", path, packets)
		}
		if flags.Has(astiav.PacketFlagDiscard) {
			continue // before the edit list's start: never shown
		}
		ts := in.pkt.Pts()
		if ts == astiav.NoPtsValue {
			ts = in.pkt.Dts()
		}
		if ts == astiav.NoPtsValue {
			return p, errorf(ErrDamaged, "encode: %s: packet %d has no timestamp, so its frame's time is unknown", path, packets)
		}
		t := sec(ts)
		p.Times = append(p.Times, t)
		end = max(end, t+float64(in.pkt.Duration()*num)/float64(den))
	}
	in.pkt.Unref()
	if len(p.Times) == 0 {
		return p, errorf(ErrDamaged, "encode: %s: no video frame could be read", path)
	}
	if p.Listed > 0 && packets < p.Listed {
		return p, errorf(ErrDamaged, "encode: %s: the container lists %d frames but only %d could be read (truncated?)", path, p.Listed, packets)
	}
	slices.Sort(p.Times)
	p.Frames = len(p.Times)
	p.Duration = max(end, p.Times[len(p.Times)-1])
	return p, nil
}

// checkEnds decodes the first and the last frame.
func checkEnds(path string, p VideoProbe) error {
	v, err := OpenVideoFile(path)
	if err != nil {
		return err
	}
	defer v.Close()
	img := Image{Width: 16, Height: 16, Stride: 64, Pix: make([]byte, 64*16)}
	for _, k := range []int{0, len(p.Times) - 1} {
		if err := v.FrameAt(p.Times[k], img); err != nil {
			return errorf(ErrDamaged, "encode: %s: frame %d cannot be decoded: %v", path, k, err)
		}
		if got := v.curSec; math.Abs(got-p.Times[k]) > p.Tick/2 {
			return errorf(ErrDamaged, "encode: %s: frame %d (at %.3f s) cannot be decoded: the decoder shows the frame at %.3f s instead (truncated or damaged)", path, k, p.Times[k], got)
		}
	}
	return nil
}

// displayRotation reads a display matrix (AV_PKT_DATA_DISPLAYMATRIX: nine
// 32-bit values, 16.16 fixed point but the last column 2.30): the
// clockwise rotation in [0, 360) and whether it mirrors. No matrix is 0,
// false; one that is not a rotation gives NaN.
func displayRotation(b []byte) (float64, bool) {
	if len(b) < 36 {
		return 0, false
	}
	m, err := astiav.NewDisplayMatrixFromBytes(b)
	if err != nil {
		return 0, false
	}
	a, bb, c, d := float64(int32(m[0])), float64(int32(m[1])), float64(int32(m[3])), float64(int32(m[4]))
	mirrored := a*d-bb*c < 0
	r := m.Rotation()
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return math.NaN(), mirrored
	}
	r = math.Mod(r, 360)
	if r < 0 {
		r += 360
	}
	if r >= 360-1e-9 {
		r = 0
	}
	return r + 0, mirrored
}
