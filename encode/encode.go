// Package encode turns RGBA frames into H.264 MP4 clips and reads videos
// back; it is the only package of the project that touches libav (through
// go-astiav v0.16.0, FFmpeg 5.1) or libyuv.
//
// Images: Image is rgba.Image, the frame type gpu.Image names too, so a
// rendered frame is encoded as it is.
//
// Colour: RGBA is converted to yuv420p with the BT.601 matrix in limited
// ("tv") range (libyuv for Writer, libyuv_cgo.go: chroma the mean of each
// 2×2 block; libswscale for ImageEncoder), and the stream is tagged smpte170m for matrix, primaries and
// transfer with range tv, so that players decode it with the same matrix;
// decoding converts back with the matrix and range the stream is tagged
// with (BT.601 limited when untagged).
//
// Decoding: one decoder (decode.go) reads the first video stream in
// presentation order and one conversion path (rgbaOut: libswscale, its
// context kept until the frame format, output size or flags change)
// turns its frames into RGBA. Video seeks the decoder for random access
// (FrameAt, video.go); DecodeAll reads the stream once from the start.
// Videos from outside are read only in MP4/MOV or WebM/Matroska through a
// custom I/O context (demux.go).
//
// Logging: on first use the package installs a libav log callback that
// forwards to libav's default one (stderr) and keeps error-level lines of
// the failing call for its Go error, and it lowers libav's level to errors
// (libx264 otherwise prints ~10 info lines per clip).
package encode

import (
	"errors"
	"fmt"
	"sync"

	"github.com/asticode/go-astiav"
)

// Sentinel errors; returned errors wrap them (test with errors.Is).
var (
	// ErrOptions: Options or an Image are invalid (odd size, fps out of range, ...).
	ErrOptions = errors.New("encode: invalid options")
	// ErrUnavailable: the encoder is not in this libavcodec, or it failed to
	// open (a hardware encoder without its driver).
	ErrUnavailable = errors.New("encode: encoder unavailable")
	// ErrNoLossless: Lossless was asked of an encoder without a lossless mode.
	ErrNoLossless = errors.New("encode: encoder has no lossless mode")
	// ErrClosed: the Writer was closed or aborted.
	ErrClosed = errors.New("encode: writer is closed")
)

var libavOnce sync.Once

// initLibav installs the log hook once per process (see the package doc).
func initLibav() {
	libavOnce.Do(func() { logInstall(logLevelError) })
}

// libavCall runs fn (a libav call) and, if it fails, wraps its error with
// what, the libav error string and libav's error log lines of that call.
func libavCall(what string, fn func() error) error {
	msg, err := captureLibavLog(fn)
	return libavError(what, err, msg)
}

func libavError(what string, err error, msg string) error {
	if err == nil {
		return nil
	}
	if msg != "" {
		return fmt.Errorf("encode: %s: %w (libav log: %s)", what, err, msg)
	}
	return fmt.Errorf("encode: %s: %w", what, err)
}

// tagged is an error whose message is err's and which also matches a
// sentinel, so that messages read naturally ("encode: fps 0 out of range
// 1..240") while errors.Is(err, ErrOptions) holds.
type tagged struct{ sentinel, err error }

func (e tagged) Error() string   { return e.err.Error() }
func (e tagged) Unwrap() []error { return []error{e.sentinel, e.err} }

// errorf formats an error that matches sentinel (and any %w operand).
func errorf(sentinel error, format string, args ...any) error {
	return tagged{sentinel, fmt.Errorf(format, args...)}
}

// errCode turns a C status code (negative AVERROR) into an astiav.Error,
// whose text is av_strerror's.
func errCode(ret int) error {
	if ret >= 0 {
		return nil
	}
	return astiav.Error(ret)
}
