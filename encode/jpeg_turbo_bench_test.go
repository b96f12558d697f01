//go:build turbojpeg

package encode

import "testing"

// BenchmarkJPEGCompare: libav mjpeg (ImageEncoder) against libjpeg-turbo
// on the same image (jpeg_turbo.go).
func BenchmarkJPEGCompare(b *testing.B) {
	img := benchFrame(3)
	b.Run("mjpeg-q90", func(b *testing.B) {
		e, _ := NewImageEncoder(ImageJPEG, 854, 480, 90)
		defer e.Close()
		n := 0
		for b.Loop() {
			d, err := e.Encode(img)
			if err != nil {
				b.Fatal(err)
			}
			n = len(d)
		}
		b.ReportMetric(float64(n), "bytes")
	})
	for _, opt := range []bool{false, true} {
		name := "turbo-q90"
		if opt {
			name += "-opt"
		}
		b.Run(name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				d, err := turboJPEG(img, 90, opt)
				if err != nil {
					b.Fatal(err)
				}
				n = len(d)
			}
			b.ReportMetric(float64(n), "bytes")
		})
	}
}
