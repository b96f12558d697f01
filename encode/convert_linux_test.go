package encode

import (
	"bytes"
	"syscall"
	"testing"

	"github.com/asticode/go-astiav"
)

// TestConvertReadsNoFurther checks that the RGBA→yuv420p conversion reads
// no byte outside the image: WriteRGBA hands the caller's slice straight to
// libyuv, whose SIMD rows work in blocks of pixels. The image
// is placed right after, then right before, an inaccessible page; a stray
// read faults.
func TestConvertReadsNoFurther(t *testing.T) {
	page := syscall.Getpagesize()
	for _, sz := range [][2]int{{854, 480}, {64, 48}, {6, 2}, {2, 2}, {1922, 1082}, {37, 21}, {1, 1}} {
		w, h := sz[0], sz[1]
		n := 4 * w * h
		span := (n + page - 1) / page * page
		// guard | span | guard
		mem, err := syscall.Mmap(-1, 0, span+2*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			t.Skipf("mmap: %v", err)
		}
		if err := syscall.Mprotect(mem[:page], syscall.PROT_NONE); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mprotect(mem[page+span:], syscall.PROT_NONE); err != nil {
			t.Fatal(err)
		}
		c, err := newConverter(w, h)
		if err != nil {
			t.Fatal(err)
		}
		f := astiav.AllocFrame()
		f.SetWidth(w)
		f.SetHeight(h)
		f.SetPixelFormat(astiav.PixelFormatYuv420P)
		if err := f.AllocBuffer(0); err != nil {
			t.Fatal(err)
		}
		for _, off := range []int{page, page + span - n} {
			img := Image{Width: w, Height: h, Stride: 4 * w, Pix: mem[off : off+n : off+n]}
			for i := range img.Pix {
				img.Pix[i] = byte(i)
			}
			if err := c.convert(img, f); err != nil {
				t.Errorf("%dx%d: %v", w, h, err)
			}
		}
		f.Free()
		c.free()
		if err := syscall.Munmap(mem); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConvertSlicesMatch: libswscale's conversion in two slices (the last
// rows from a copy) gives the same frame as one sws_scale call over the
// whole image.
func TestConvertSlicesMatch(t *testing.T) {
	for _, sz := range [][2]int{{854, 480}, {64, 48}, {6, 2}, {10, 6}} {
		s := scene{sz[0], sz[1]}
		var img Image
		s.draw(3, &img)
		// Noise, so that every chroma sample depends on its exact rows.
		for i := range img.Pix {
			if i%4 != 3 {
				img.Pix[i] ^= byte(i * 7919 >> 3)
			}
		}
		c, err := newConverterTo(s.w, s.h, astiav.PixelFormatYuv420P, false, convertFlags)
		if err != nil {
			t.Fatal(err)
		}
		frames := [2]*astiav.Frame{}
		for i := range frames {
			f := astiav.AllocFrame()
			defer f.Free()
			f.SetWidth(s.w)
			f.SetHeight(s.h)
			f.SetPixelFormat(astiav.PixelFormatYuv420P)
			if err := f.AllocBuffer(0); err != nil {
				t.Fatal(err)
			}
			frames[i] = f
		}
		if err := c.convert(img, frames[0]); err != nil {
			t.Fatal(err)
		}
		padded := append(bytes.Clone(img.Pix), make([]byte, tailSlack)...)
		if ret := swsPixToFrame(c.sws, padded, img.Stride, 0, s.h, frames[1].UnsafePointer()); ret != s.h {
			t.Fatalf("one-call conversion returned %d", ret)
		}
		c.free()
		a, err := frames[0].Data().Bytes(1)
		if err != nil {
			t.Fatal(err)
		}
		b, err := frames[1].Data().Bytes(1)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%dx%d: sliced conversion differs from one call", s.w, s.h)
		}
	}
}
