package encode

import (
	"syscall"
	"testing"

	"github.com/asticode/go-astiav"
)

// TestConvertToReadsNoFurther is TestConvertReadsNoFurther for
// ImageEncoder's converters (full-range yuv420p, RGB24, RGBA), odd sizes
// included: the image sits right after, then right before, an inaccessible
// page.
func TestConvertToReadsNoFurther(t *testing.T) {
	page := syscall.Getpagesize()
	for _, pf := range []astiav.PixelFormat{astiav.PixelFormatYuv420P, astiav.PixelFormatRgb24, astiav.PixelFormatRgba} {
		for _, sz := range [][2]int{{854, 480}, {37, 21}, {3, 3}, {1, 1}, {6, 2}} {
			w, h := sz[0], sz[1]
			n := 4 * w * h
			span := (n + page - 1) / page * page
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
			c, err := newConverterTo(w, h, pf, pf == astiav.PixelFormatYuv420P, convertFlags)
			if err != nil {
				t.Fatal(err)
			}
			f := astiav.AllocFrame()
			f.SetWidth(w)
			f.SetHeight(h)
			f.SetPixelFormat(pf)
			if err := f.AllocBuffer(0); err != nil {
				t.Fatal(err)
			}
			for _, off := range []int{page, page + span - n} {
				img := Image{Width: w, Height: h, Stride: 4 * w, Pix: mem[off : off+n : off+n]}
				for i := range img.Pix {
					img.Pix[i] = byte(i)
				}
				if err := c.convert(img, f); err != nil {
					t.Errorf("%s %dx%d: %v", pf.Name(), w, h, err)
				}
			}
			f.Free()
			c.free()
			if err := syscall.Munmap(mem); err != nil {
				t.Fatal(err)
			}
		}
	}
}
