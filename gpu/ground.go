package gpu

import (
	"fmt"
	"math"
	"slices"

	"github.com/tracegrid/tracegrid/gpu/internal/raster"
)

// This file is the CPU half of a painter frame whose ground is painted
// rather than shaded (worldFrame.rasterGround): on the caller's goroutine,
// the whole output image is painted (the background around the canvas,
// the ground and its grid lines inside it, package raster), and the
// rectangles the GL thread must touch are worked out. The GL thread then
// uploads only those rectangles into the framebuffer, draws the objects
// and items, which never reach outside them, and reads only them back;
// every other pixel of the image is already final. With the grid lines on
// the CPU, a 1080p objects frame costs a few milliseconds less CPU time
// on llvmpipe (BENCHMARKS.md).

// maxDirtyShare: when the rectangles to upload and read back add up to
// more than this share of the output, the whole output is used instead,
// one upload and one read.
const maxDirtyShare = 0.6

// unorm8 is a colour channel in [0, 1] as GL stores it in an RGBA8
// framebuffer: clamped, times 255, rounded to nearest. The product is
// exact in float64, so the rounding is once, the same on every machine
// (0.7 in float32 is 178.49999… levels: 178).
func unorm8(c float32) byte {
	return byte(math.Floor(float64(min(max(c, 0), 1))*255 + 0.5))
}

func unorm8x4(c [4]float32) [4]byte {
	return [4]byte{unorm8(c[0]), unorm8(c[1]), unorm8(c[2]), unorm8(c[3])}
}

// paintGround paints img (the output, img.Width×img.Height) for frame f:
// the background colour outside the canvas and the ground with its grid
// lines inside it, then sets f.dirty (the whole output if whole). The
// ground and its lines are opaque (layoutPainter takes this path only
// then).
func (f *frame) paintGround(img Image, whole bool) error {
	wf := &f.world
	sc := wf.scissor
	x0, y0, x1, y1 := int(sc[0]), int(sc[1]), int(sc[0]+sc[2]), int(sc[1]+sc[3])
	if x0 > 0 || y0 > 0 || x1 < img.Width || y1 < img.Height {
		bg := unorm8x4([4]float32{f.bg.R, f.bg.G, f.bg.B, f.bg.A})
		for y := range img.Height {
			row := img.Pix[y*img.Stride : y*img.Stride+4*img.Width]
			for x := 0; x < img.Width; x++ {
				if y < y0 || y >= y1 || x < x0 || x >= x1 {
					copy(row[4*x:4*x+4], bg[:])
				}
			}
		}
	}
	ground, line := unorm8x4(wf.groundCol), unorm8x4(wf.lineCol)
	if len(f.groundLines) == 0 {
		line = ground // unused, and possibly not opaque
	}
	if err := raster.Ground(img.Pix, img.Stride, [4]int{x0, y0, x1, y1}, ground, line, f.groundLines); err != nil {
		return fmt.Errorf("gpu: Render: ground: %w", err)
	}
	f.dirty = dirtyRects(f.dirty[:0], f.objRects, whole || len(f.runs) > 0, img.Width, img.Height)
	return nil
}

// dirtyRects appends to dst the rectangles (x0, y0, x1, y1) that cover
// every object rectangle in objs: those that overlap merged into their
// bounding box, until none overlap; or the whole w×h output if whole
// (items are drawn too, and they may be anywhere) or the rectangles would
// cover more than maxDirtyShare of it.
func dirtyRects(dst, objs [][4]int32, whole bool, w, h int) [][4]int32 {
	full := [4]int32{0, 0, int32(w), int32(h)}
	if whole {
		return append(dst, full)
	}
	start := len(dst)
	for _, r := range objs {
		r = [4]int32{max(r[0], 0), max(r[1], 0), min(r[2], int32(w)), min(r[3], int32(h))}
		if r[0] >= r[2] || r[1] >= r[3] {
			continue
		}
		// Merge r with every rectangle it overlaps, repeatedly: the merged
		// box may reach others.
		for merged := true; merged; {
			merged = false
			for i := start; i < len(dst); i++ {
				o := dst[i]
				if r[0] < o[2] && o[0] < r[2] && r[1] < o[3] && o[1] < r[3] {
					r = [4]int32{min(r[0], o[0]), min(r[1], o[1]), max(r[2], o[2]), max(r[3], o[3])}
					dst = slices.Delete(dst, i, i+1)
					merged = true
					break
				}
			}
		}
		dst = append(dst, r)
	}
	area := 0
	for _, r := range dst[start:] {
		area += int(r[2]-r[0]) * int(r[3]-r[1])
	}
	if float64(area) > maxDirtyShare*float64(w)*float64(h) {
		return append(dst[:start], full)
	}
	return dst
}
