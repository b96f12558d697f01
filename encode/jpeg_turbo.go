//go:build turbojpeg

// This file is a measurement, not a code path: libjpeg-turbo (Debian's
// libjpeg62-turbo-dev, which `make deps` does not install) against the
// libav mjpeg encoder ImageEncoder uses. Build and run it with
//
//	go test -tags 'egl turbojpeg' -run '^$' -bench JPEGCompare ./encode
//
// Measured on this machine kind (busy, 854x480 test scene, quality 90):
// mjpeg with its RGBA→yuv420p conversion 3.0–3.3 ms/image, libjpeg-turbo
// (RGBA input, optimised Huffman tables) 1.1–1.5 ms, without optimised
// tables 1.0–1.7 ms and twice the bytes. tracegrid variants is already far
// below its goal with mjpeg (BENCHMARKS.md), so the encoder is unchanged:
// switching would change the bytes eval sends to models and add a build
// dependency.

package encode

/*
#cgo pkg-config: libjpeg
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>

struct tg_jerr {
	struct jpeg_error_mgr pub;
	jmp_buf jb;
	char msg[JMSG_LENGTH_MAX];
};

static void tg_jerr_exit(j_common_ptr c) {
	struct tg_jerr *e = (struct tg_jerr *)c->err;
	(*c->err->format_message)(c, e->msg);
	longjmp(e->jb, 1);
}

static void tg_jerr_emit(j_common_ptr c, int level) { (void)c; (void)level; }

// tg_jpeg_rgba compresses an RGBA image (rows of stride bytes) to a JPEG in
// memory (*out, *outlen; free with free()). Returns 0 or -1 with msg set.
static int tg_jpeg_rgba(const unsigned char *pix, int w, int h, int stride, int quality, int optimize,
		unsigned char **out, unsigned long *outlen, char *msg, int msglen) {
	struct jpeg_compress_struct c;
	struct tg_jerr e;
	*out = NULL;
	*outlen = 0;
	c.err = jpeg_std_error(&e.pub);
	e.pub.error_exit = tg_jerr_exit;
	e.pub.emit_message = tg_jerr_emit;
	e.msg[0] = 0;
	if (setjmp(e.jb)) {
		snprintf(msg, msglen, "%s", e.msg);
		jpeg_destroy_compress(&c);
		if (*out) { free(*out); *out = NULL; }
		return -1;
	}
	jpeg_create_compress(&c);
	jpeg_mem_dest(&c, out, outlen);
	c.image_width = w;
	c.image_height = h;
	c.input_components = 4;
	c.in_color_space = JCS_EXT_RGBA;
	jpeg_set_defaults(&c);
	jpeg_set_quality(&c, quality, TRUE);
	c.optimize_coding = optimize ? TRUE : FALSE;
	c.dct_method = JDCT_ISLOW;
	jpeg_start_compress(&c, TRUE);
	while (c.next_scanline < c.image_height) {
		JSAMPROW row = (JSAMPROW)(pix + (size_t)c.next_scanline * stride);
		jpeg_write_scanlines(&c, &row, 1);
	}
	jpeg_finish_compress(&c);
	jpeg_destroy_compress(&c);
	return 0;
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// turboJPEG encodes img with libjpeg-turbo at a libjpeg quality.
func turboJPEG(img Image, quality int, optimize bool) ([]byte, error) {
	var out *C.uchar
	var n C.ulong
	var msg [256]C.char
	opt := 0
	if optimize {
		opt = 1
	}
	if C.tg_jpeg_rgba((*C.uchar)(unsafe.Pointer(&img.Pix[0])), C.int(img.Width), C.int(img.Height), C.int(img.Stride), C.int(quality), C.int(opt), &out, &n, &msg[0], C.int(len(msg))) != 0 {
		return nil, fmt.Errorf("encode: libjpeg: %s", C.GoString(&msg[0]))
	}
	defer C.free(unsafe.Pointer(out))
	return C.GoBytes(unsafe.Pointer(out), C.int(n)), nil
}
