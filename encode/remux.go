package encode

import (
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/asticode/go-astiav"
)

// RemuxOptions say what Remux changes.
type RemuxOptions struct {
	// Rotation, when not 0, is stored as the stream's display matrix: the
	// angle in degrees, clockwise, by which a player turns the picture
	// (what a phone records in portrait; ProbeVideoFile reads it back).
	Rotation float64
	// Retime, when set, maps each packet's time in seconds from the stream
	// start to a new time; it must be strictly increasing (a variable
	// frame rate, say). Packet durations follow the mapping.
	Retime func(t float64) float64
}

// remuxTimeBase is the time base Remux writes timestamps in before the
// muxer's own (the MP4 muxer keeps 1/90000 for video).
var remuxTimeBase = astiav.NewRational(1, 90000)

// Remux copies the first video stream of src (one of this program's files:
// any container libav reads) into a new MP4 file at dst without decoding,
// with the display rotation and the timing RemuxOptions give. It makes, from
// a clip of ours, a video that carries what videos from outside carry — a
// rotation flag, an irregular frame rate — for the tests of importers and
// decoders. dst is created or truncated; on error it is removed.
func Remux(dst, src string, o RemuxOptions) (err error) {
	in, err := openInput(src)
	if err != nil {
		return err
	}
	defer in.close()
	fc, err := astiav.AllocOutputFormatContext(nil, "mp4", dst)
	if err != nil {
		return fmt.Errorf("encode: allocating MP4 muxer: %w", err)
	}
	if fc == nil {
		return errors.New("encode: allocating MP4 muxer failed")
	}
	defer fc.Free()
	st := fc.NewStream(nil)
	if st == nil {
		return errors.New("encode: adding MP4 stream failed")
	}
	if err := in.st.CodecParameters().Copy(st.CodecParameters()); err != nil {
		return fmt.Errorf("encode: copying stream parameters: %w", err)
	}
	st.CodecParameters().SetCodecTag(0)
	st.SetTimeBase(remuxTimeBase)
	if r := in.st.AvgFrameRate(); r.Num() > 0 && o.Retime == nil {
		st.SetAvgFrameRate(r)
	}
	if o.Rotation != 0 {
		// av_display_rotation_set describes a clockwise rotation (which
		// av_display_rotation_get reads back as the negative,
		// counterclockwise angle, as ffprobe prints it).
		if err := st.AddSideData(astiav.PacketSideDataTypeDisplaymatrix, astiav.NewDisplayMatrixFromRotation(o.Rotation).Bytes()); err != nil {
			return fmt.Errorf("encode: display matrix: %w", err)
		}
	}
	ioc, err := astiav.OpenIOContext(dst, astiav.NewIOContextFlags(astiav.IOContextFlagWrite))
	if err != nil {
		return fmt.Errorf("encode: opening %s: %w", dst, err)
	}
	defer func() {
		if cerr := ioc.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("encode: closing %s: %w", dst, cerr)
		}
		if err != nil {
			_ = os.Remove(dst)
		}
	}()
	fc.SetPb(ioc)
	if err := libavCall("writing MP4 header", func() error { return fc.WriteHeader(nil) }); err != nil {
		return err
	}
	itb := in.st.TimeBase()
	start := int64(0)
	if s := in.st.StartTime(); s != astiav.NoPtsValue {
		start = s
	}
	sec := func(ts int64) float64 { return float64(ts-start) * itb.Float64() }
	ticks := func(t float64) int64 { return int64(math.Round(t * 90000)) }
	retime := func(ts int64) int64 {
		if ts == astiav.NoPtsValue {
			return ts
		}
		t := sec(ts)
		if o.Retime != nil {
			t = o.Retime(t)
		}
		return ticks(t)
	}
	for {
		err := in.next()
		if errors.Is(err, astiav.ErrEof) {
			break
		}
		if err != nil {
			return fmt.Errorf("encode: reading %s: %w", src, err)
		}
		p := in.pkt
		pts, dts := p.Pts(), p.Dts()
		dur := ticks(float64(p.Duration()) * itb.Float64())
		if o.Retime != nil && pts != astiav.NoPtsValue {
			dur = retime(pts+p.Duration()) - retime(pts)
		}
		p.SetPts(retime(pts))
		p.SetDts(retime(dts))
		p.SetDuration(dur)
		p.SetPos(-1)
		p.SetStreamIndex(st.Index())
		p.RescaleTs(remuxTimeBase, st.TimeBase())
		if err := fc.WriteInterleavedFrame(p); err != nil {
			p.Unref()
			return fmt.Errorf("encode: writing packet: %w", err)
		}
	}
	return libavCall("writing MP4 trailer", func() error { return fc.WriteTrailer() })
}
