package encode

// The libyuv boundary: Writer's RGBA→yuv420p conversion. libyuv (Google's
// colour conversion library, Chromium's and WebRTC's) converts a 1920×1080
// frame in 0.25 ms on this machine kind where libswscale takes 3.0 ms
// (SWS_POINT, its fastest same-size path; BenchmarkConvert1920x1080), which
// at 1080p is a tenth of the encoder's time per frame. Debian 12's
// libyuv-dev ships no pkg-config file, hence the plain -lyuv.

/*
#cgo pkg-config: libavutil
#cgo LDFLAGS: -lyuv
#include <stdint.h>
#include <libavutil/frame.h>
#include <libavutil/pixfmt.h>
#include <libyuv/convert.h>

// tg_rgba_to_i420 converts a packed w×h RGBA image (bytes R, G, B, A:
// libyuv's "ABGR", named by its little-endian word) into f's yuv420p
// planes: BT.601, limited range, chroma the mean of each 2×2 block (an odd
// last column or row averages with itself). libyuv reads only the image's
// rows (its SIMD rows hand remainders to copies). Returns 0 or -1.
static int tg_rgba_to_i420(const uint8_t *pix, int stride, int w, int h, AVFrame *f) {
	if (f->format != AV_PIX_FMT_YUV420P || f->width != w || f->height != h) return -1;
	return ABGRToI420(pix, stride, f->data[0], f->linesize[0], f->data[1], f->linesize[1],
		f->data[2], f->linesize[2], w, h);
}
*/
import "C"

import "unsafe"

// rgbaToI420 converts img (checked by checkImage) into frame, which must be
// yuv420p of img's size; it returns 0, or -1 for a frame of another size
// or format, or libyuv's error.
func rgbaToI420(img Image, frame unsafe.Pointer) int {
	return int(C.tg_rgba_to_i420((*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(img.Pix))), C.int(img.Stride),
		C.int(img.Width), C.int(img.Height), (*C.AVFrame)(frame)))
}
