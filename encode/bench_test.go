package encode

import (
	"path/filepath"
	"testing"

	"github.com/asticode/go-astiav"
)

// benchFrame is a rendered-like 854x480 frame: the test scene.
func benchFrame(i int) Image {
	var img Image
	s := scene{854, 480}
	s.draw(i, &img)
	// The stride of a renderer's readback: no padding.
	packed := Image{Width: s.w, Height: s.h, Stride: 4 * s.w, Pix: make([]byte, 4*s.w*s.h)}
	for y := 0; y < s.h; y++ {
		copy(packed.Pix[y*packed.Stride:(y+1)*packed.Stride], img.Pix[y*img.Stride:])
	}
	return packed
}

// benchConvert measures c converting img into a yuv420p frame.
func benchConvert(b *testing.B, img Image, c *converter, err error) {
	if err != nil {
		b.Fatal(err)
	}
	defer c.free()
	f := astiav.AllocFrame()
	defer f.Free()
	f.SetWidth(img.Width)
	f.SetHeight(img.Height)
	f.SetPixelFormat(astiav.PixelFormatYuv420P)
	if err := f.AllocBuffer(0); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(img.Pix)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := c.convert(img, f); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConvertRGBA854x480 measures the RGBA→yuv420p conversion that
// WriteRGBA does (libyuv), straight from Go memory.
func BenchmarkConvertRGBA854x480(b *testing.B) {
	img := benchFrame(0)
	c, err := newConverter(img.Width, img.Height)
	benchConvert(b, img, c, err)
}

// BenchmarkConvert1920x1080 compares Writer's converter (libyuv) with
// libswscale's fastest same-size one (SWS_POINT) on a 1920×1080 frame of
// noise: how the libyuv path was chosen (libyuv_cgo.go).
func BenchmarkConvert1920x1080(b *testing.B) {
	img := Image{Width: 1920, Height: 1080, Stride: 4 * 1920, Pix: make([]byte, 4*1920*1080)}
	for i := range img.Pix {
		img.Pix[i] = byte(i*7919>>3 + i/4096)
	}
	b.Run("libyuv", func(b *testing.B) {
		c, err := newConverter(img.Width, img.Height)
		benchConvert(b, img, c, err)
	})
	b.Run("swscale_point", func(b *testing.B) {
		c, err := newConverterTo(img.Width, img.Height, astiav.PixelFormatYuv420P, false, swsPoint)
		benchConvert(b, img, c, err)
	})
}

// BenchmarkConvertFlags compares swscale flag sets for the same conversion
// (limited range); it is how convertFlags was chosen.
func BenchmarkConvertFlags(b *testing.B) {
	for _, fl := range []struct {
		name  string
		flags int
	}{
		{"point", swsPoint},
		{"fast_bilinear", swsFastBilinear},
		{"bilinear", swsBilinear},
		{"area", swsArea},
		{"fast_bilinear+accurate_rnd", swsFastBilinear | swsAccurateRnd},
	} {
		b.Run(fl.name, func(b *testing.B) {
			img := benchFrame(0)
			c, err := newConverterTo(img.Width, img.Height, astiav.PixelFormatYuv420P, false, fl.flags)
			benchConvert(b, img, c, err)
		})
	}
}

// BenchmarkEncode854x480 measures WriteRGBA (conversion + libx264
// veryfast crf 18, auto threads, + muxing) over a moving scene; Close
// (encoder flush, trailer) is timed too, so frames/s is end to end.
func BenchmarkEncode854x480(b *testing.B) {
	frames := make([]Image, 30)
	for i := range frames {
		frames[i] = benchFrame(i)
	}
	w, err := Create(filepath.Join(b.TempDir(), "bench.mp4"), Options{Width: 854, Height: 480, FPS: 30, Preset: "veryfast", CRF: 18})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Abort()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := w.WriteRGBA(frames[i%len(frames)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}
