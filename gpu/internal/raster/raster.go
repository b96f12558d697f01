// Package raster paints the painter path's ground on the CPU: a rectangle
// of an RGBA image filled with the ground's colour and the grid lines
// blended over it, each line an anti-aliased band between two straight
// edges. Package gpu uploads the result as the background the objects are
// drawn over.
//
// Why not OpenGL: on llvmpipe a triangle costs a whole 4×4 block of
// fragments wherever it touches one, so the ~70 thin grid lines of a
// 1080p objects frame shaded about three times the pixels they cover and
// cost ~6 ms of CPU a frame; this loop visits only the pixels near each
// band, row by row, and fills and blends a frame in under 2 ms
// (BENCHMARKS.md has the figures). The same code runs on every driver, so
// every driver gets the same bytes.
//
// The cgo is the one function in raster.c, in C because it is the inner
// loop of every objects frame: the same loop written in Go took 2.5–3
// times as long. This file checks the arguments, so the C side never
// writes outside the image.
package raster

/*
#cgo CFLAGS: -O2
#include "raster.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// Line is a grid line's band as it falls in the image: E1 and E2 are its
// two edges as signed distances in pixels, a·x + b·y + c for the point
// (x, y) (pixel (i, j) covers [i, i+1]×[j, j+1]), positive outside the
// band. Rows Y0 to Y1−1 hold all of it; rows outside are not looked at,
// so the range must be conservative.
type Line struct {
	E1, E2 [3]float64
	Y0, Y1 int32
}

// Coverage is how much of the pixel whose centre is (x, y) the band
// between the edges covers: a one-pixel ramp across each edge, combined
// as the sum of the two minus one, which is exact for a band crossing the
// pixel straight and for one thinner than a pixel. The C loop computes
// the same; this is its specification, for tests.
func Coverage(l *Line, x, y float64) float64 {
	// float64(p*q) rounds the product, so no compiler fuses it into a
	// multiply-add: the same operations, rounded the same way, as raster.c.
	d1 := float64(l.E1[0]*x) + (float64(l.E1[1]*y) + l.E1[2])
	d2 := float64(l.E2[0]*x) + (float64(l.E2[1]*y) + l.E2[2])
	u1, u2 := 0.5-d1, 0.5-d2
	if !(u1 > 0) || !(u2 > 0) { // NaN covers nothing
		return 0
	}
	return max(min(u1, 1)+min(u2, 1)-1, 0)
}

// Ground fills rect (x0, y0, x1, y1: columns x0 to x1−1, rows y0 to
// y1−1) of the image pix (rows stride bytes apart, 4 bytes a pixel, RGBA)
// with ground, then blends each line over it in order: a pixel covered by
// c becomes round(ground·(1−a) + line·a) per channel, a = round(255·c)/255.
// Both colours must be opaque (alpha 255), as the painter path's ground
// and lines are; a pixel under two lines gets the second blended over the
// first, as GL blending would.
func Ground(pix []byte, stride int, rect [4]int, ground, line [4]byte, lines []Line) error {
	x0, y0, x1, y1 := rect[0], rect[1], rect[2], rect[3]
	if x0 < 0 || y0 < 0 || x1 < x0 || y1 < y0 {
		return fmt.Errorf("raster: rectangle %v is not x0 ≤ x1, y0 ≤ y1 from 0", rect)
	}
	if x1 == x0 || y1 == y0 {
		return nil
	}
	// Sizes first, then the image's extent in 64 bits: nothing here can
	// overflow into a check that passes.
	if x1 > 1<<28 || y1 > 1<<28 || stride > 1<<40 {
		return fmt.Errorf("raster: rectangle %v or stride %d too large", rect, stride)
	}
	if stride < 4*x1 || int64(len(pix)) < int64(y1-1)*int64(stride)+4*int64(x1) {
		return fmt.Errorf("raster: rectangle %v outside an image of %d bytes with stride %d", rect, len(pix), stride)
	}
	if ground[3] != 255 || line[3] != 255 {
		return errors.New("raster: ground and line colours must be opaque")
	}
	var lp *C.tg_line
	if len(lines) > 0 {
		lp = (*C.tg_line)(unsafe.Pointer(&lines[0]))
	}
	C.tg_ground((*C.uint8_t)(unsafe.Pointer(&pix[0])), C.ptrdiff_t(stride), C.int32_t(x0), C.int32_t(y0), C.int32_t(x1), C.int32_t(y1),
		C.uint32_t(pixel(ground)), C.uint32_t(pixel(line)), lp, C.int32_t(len(lines)))
	return nil
}

// pixel is c's four bytes read as one native-endian word, as C reads a
// pixel from memory: passed by value, no Go memory escapes to C.
func pixel(c [4]byte) uint32 { return *(*uint32)(unsafe.Pointer(&c)) }

// cLineSize is C's size of tg_line, for the test that Line matches it.
const cLineSize = C.sizeof_tg_line
