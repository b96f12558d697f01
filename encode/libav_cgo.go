package encode

// This is the package's libav cgo file (libyuv_cgo.go is the only other):
// thin wrappers over what go-astiav v0.16.0 does not expose (sws_scale on caller memory, colour details,
// av_frame_make_writable, three AVFrame fields, a log hook). Functions return
// C status codes or NULL; Go errors are built one layer up.

/*
#cgo pkg-config: libswscale libavutil
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <libavutil/frame.h>
#include <libavutil/log.h>
#include <libswscale/swscale.h>

// Error-level libav log lines of the current thread, collected while
// tg_capture is set, so that a failing call (avcodec_open2 of h264_nvenc
// without libcuda, ...) can say why in its Go error.
#define TG_ERRLEN 512
static _Thread_local char tg_err[TG_ERRLEN];
static _Thread_local int tg_capture;

static void tg_log(void *avcl, int level, const char *fmt, va_list vl) {
	if (tg_capture && level <= AV_LOG_ERROR) {
		size_t n = strlen(tg_err);
		if (n > 0 && n + 2 < TG_ERRLEN) {
			memcpy(tg_err + n, "; ", 3);
			n += 2;
		}
		if (n + 1 < TG_ERRLEN) {
			va_list c;
			va_copy(c, vl);
			vsnprintf(tg_err + n, TG_ERRLEN - n, fmt, c);
			va_end(c);
			n = strlen(tg_err);
			while (n > 0 && (tg_err[n - 1] == '\n' || tg_err[n - 1] == ' ')) tg_err[--n] = 0;
		}
	}
	av_log_default_callback(avcl, level, fmt, vl);
}

static void tg_log_install(int level) {
	av_log_set_level(level);
	av_log_set_callback(tg_log);
}
static void tg_capture_begin(void) { tg_err[0] = 0; tg_capture = 1; }
static const char *tg_capture_end(void) { tg_capture = 0; return tg_err; }

// tg_sws_new makes a sw×sh → dw×dh converter and sets its YUV matrix and
// range: cs is an AVColorSpace (sws_getCoefficients' table is indexed the
// same way: 1 BT.709, 5/6 BT.601, 9 BT.2020; unspecified and unknown give
// BT.601), yuvFull 1 for full (JPEG) range. Returns NULL on failure.
static struct SwsContext *tg_sws_new(int sw, int sh, int src, int dw, int dh, int dst, int flags, int cs, int yuvFull) {
	struct SwsContext *c = sws_getContext(sw, sh, src, dw, dh, dst, flags, NULL, NULL, NULL);
	if (!c) return NULL;
	const int *coef = sws_getCoefficients(cs);
	if (sws_setColorspaceDetails(c, coef, yuvFull, coef, yuvFull, 0, 1 << 16, 1 << 16) < 0) {
		sws_freeContext(c);
		return NULL;
	}
	return c;
}

// tg_sws_pix_to_frame converts rows [y, y+n) of a packed image, pix
// pointing at row y; slices go top to bottom and end with the last row.
static int tg_sws_pix_to_frame(struct SwsContext *c, const uint8_t *pix, int stride, int y, int n, AVFrame *f) {
	const uint8_t *src[4] = {pix, NULL, NULL, NULL};
	const int ss[4] = {stride, 0, 0, 0};
	return sws_scale(c, src, ss, y, n, f->data, f->linesize);
}

static int tg_sws_frame_to_pix(struct SwsContext *c, const AVFrame *f, uint8_t *pix, int stride) {
	uint8_t *dst[4] = {pix, NULL, NULL, NULL};
	const int ds[4] = {stride, 0, 0, 0};
	return sws_scale(c, (const uint8_t *const *)f->data, f->linesize, 0, f->height, dst, ds);
}

static int tg_frame_colorspace(const AVFrame *f) { return f->colorspace; }
static int64_t tg_frame_best_effort_ts(const AVFrame *f) { return f->best_effort_timestamp; }
static void tg_frame_set_quality(AVFrame *f, int q) { f->quality = q; }
*/
import "C"

import (
	"runtime"
	"unsafe"
)

type swsContext = C.struct_SwsContext

// swscale flags (libswscale/swscale.h).
const (
	swsFastBilinear = int(C.SWS_FAST_BILINEAR)
	swsBilinear     = int(C.SWS_BILINEAR)
	swsPoint        = int(C.SWS_POINT)
	swsArea         = int(C.SWS_AREA)
	swsAccurateRnd  = int(C.SWS_ACCURATE_RND)
	swsFullChrHInt  = int(C.SWS_FULL_CHR_H_INT)
	swsFullChrHInp  = int(C.SWS_FULL_CHR_H_INP)
)

const (
	colorSpaceBT601 = int(C.AVCOL_SPC_SMPTE170M) // the matrix Writer converts with
	logLevelError   = int(C.AV_LOG_ERROR)
	qp2Lambda       = int(C.FF_QP2LAMBDA) // AVFrame.quality per quantiser step
)

func logInstall(level int) { C.tg_log_install(C.int(level)) }

// captureLibavLog runs fn and returns libav's error-level log lines logged
// meanwhile on this thread ("" if none). The goroutine is locked to its OS
// thread so that fn's cgo calls and the capture share one thread-local buffer.
func captureLibavLog(fn func() error) (string, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	C.tg_capture_begin()
	err := fn()
	return C.GoString(C.tg_capture_end()), err
}

// swsNew makes a same-size converter (see swsNewScaled).
func swsNew(w, h, src, dst, flags, colorspace int, yuvFull bool) *swsContext {
	return swsNewScaled(w, h, src, w, h, dst, flags, colorspace, yuvFull)
}

// swsNewScaled makes a converter from sw×sh pixels of format src to dw×dh
// of format dst with the YUV matrix colorspace (an AVColorSpace) in full
// range if yuvFull, limited otherwise. It returns nil on failure.
func swsNewScaled(sw, sh, src, dw, dh, dst, flags, colorspace int, yuvFull bool) *swsContext {
	full := 0
	if yuvFull {
		full = 1
	}
	return C.tg_sws_new(C.int(sw), C.int(sh), C.int(src), C.int(dw), C.int(dh), C.int(dst), C.int(flags), C.int(colorspace), C.int(full))
}

func swsFree(c *swsContext) {
	if c != nil {
		C.sws_freeContext(c)
	}
}

// swsPixToFrame converts rows [y, y+n) of a packed image held in Go
// memory (no Go pointers in it, so cgo allows passing it for the duration
// of the call) into the planes of the AVFrame at frame; pix starts at row
// y. It returns the number of output rows written, or a negative AVERROR.
func swsPixToFrame(c *swsContext, pix []byte, stride, y, n int, frame unsafe.Pointer) int {
	return int(C.tg_sws_pix_to_frame(c, (*C.uint8_t)(unsafe.Pointer(&pix[0])), C.int(stride), C.int(y), C.int(n), (*C.AVFrame)(frame)))
}

// swsFrameToPix converts the AVFrame at frame into a packed image in Go
// memory; pix must have slack after the last row (see rgbaBuffer).
func swsFrameToPix(c *swsContext, frame unsafe.Pointer, pix []byte, stride int) int {
	return int(C.tg_sws_frame_to_pix(c, (*C.AVFrame)(frame), (*C.uint8_t)(unsafe.Pointer(&pix[0])), C.int(stride)))
}

func frameMakeWritable(frame unsafe.Pointer) int {
	return int(C.av_frame_make_writable((*C.AVFrame)(frame)))
}

func frameColorspace(frame unsafe.Pointer) int {
	return int(C.tg_frame_colorspace((*C.AVFrame)(frame)))
}

func frameBestEffortTS(frame unsafe.Pointer) int64 {
	return int64(C.tg_frame_best_effort_ts((*C.AVFrame)(frame)))
}

// frameSetQuality sets AVFrame.quality, the lambda (qscale × qp2Lambda) a
// fixed-quality (AV_CODEC_FLAG_QSCALE) mpegvideo encoder such as mjpeg
// codes the frame with.
func frameSetQuality(frame unsafe.Pointer, q int) {
	C.tg_frame_set_quality((*C.AVFrame)(frame), C.int(q))
}
