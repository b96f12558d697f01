package encode

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"
)

func TestParseImageFormat(t *testing.T) {
	for in, want := range map[string]ImageFormat{"jpg": ImageJPEG, "JPEG": ImageJPEG, "Jpg": ImageJPEG, "jpeg": ImageJPEG, "png": ImagePNG, "PNG": ImagePNG} {
		if got, err := ParseImageFormat(in); err != nil || got != want {
			t.Errorf("ParseImageFormat(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "gif", "jpg ", ".png", "webp"} {
		_, err := ParseImageFormat(in)
		if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "want jpg, jpeg or png") {
			t.Errorf("ParseImageFormat(%q) = %v, want an ErrOptions naming the formats", in, err)
		}
	}
}

func TestJPEGQScale(t *testing.T) {
	for q, want := range map[int]int{100: 1, 95: 1, 90: 3, 85: 4, 75: 7, 50: 14, 25: 28, 22: 31, 1: 31} {
		if got := jpegQScale(q); got != want {
			t.Errorf("jpegQScale(%d) = %d, want %d", q, got, want)
		}
	}
	for q := 2; q <= 100; q++ {
		if jpegQScale(q) > jpegQScale(q-1) {
			t.Errorf("qscale rises from quality %d to %d", q-1, q)
		}
	}
}

// decodeImage decodes a complete JPEG or PNG file.
func decodeImage(t *testing.T, data []byte, format ImageFormat) image.Image {
	t.Helper()
	var m image.Image
	var err error
	if format == ImageJPEG {
		if !bytes.HasPrefix(data, []byte{0xff, 0xd8}) || !bytes.HasSuffix(data, []byte{0xff, 0xd9}) {
			t.Fatalf("not a complete JPEG file: % x … % x", data[:min(4, len(data))], data[max(len(data)-2, 0):])
		}
		m, err = jpeg.Decode(bytes.NewReader(data))
	} else {
		m, err = png.Decode(bytes.NewReader(data))
	}
	if err != nil {
		t.Fatalf("decoding %s: %v", format, err)
	}
	return m
}

// TestImageJPEG: the file decodes with image/jpeg at the encoder's size and
// flat areas keep their colour; lower quality gives smaller files.
func TestImageJPEG(t *testing.T) {
	for _, c := range []struct {
		w, h, quality, tol int
	}{
		{854, 480, 0, 3}, {64, 48, 90, 3}, {66, 38, 100, 2}, {37, 21, 75, 4}, {64, 48, 1, 12},
	} {
		t.Run(fmt.Sprintf("%dx%d-q%d", c.w, c.h, c.quality), func(t *testing.T) {
			s := scene{c.w, c.h}
			e, err := NewImageEncoder(ImageJPEG, c.w, c.h, c.quality)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if e.MIME() != "image/jpeg" {
				t.Errorf("MIME = %q", e.MIME())
			}
			var img Image
			for _, i := range []int{0, 20, 40} { // three background colours
				s.draw(i, &img)
				data, err := e.Encode(img)
				if err != nil {
					t.Fatal(err)
				}
				m := decodeImage(t, data, ImageJPEG)
				if b := m.Bounds(); b.Dx() != c.w || b.Dy() != c.h {
					t.Fatalf("decoded %v, want %dx%d", b, c.w, c.h)
				}
				// Flat: 16 pixels or more from the square (a 16×16
				// chroma MCU away from its edge).
				x0, y0, x1, y1 := s.square(i)
				worst, at := 0, ""
				for y := 0; y < c.h; y++ {
					for x := 0; x < c.w; x++ {
						if x >= x0-16 && x < x1+16 && y >= y0-16 && y < y1+16 {
							continue
						}
						r, g, b, _ := m.At(x, y).RGBA()
						want := s.want(i, x, y)
						for k, v := range []uint32{r >> 8, g >> 8, b >> 8} {
							if d := abs(int(v) - int(want[k])); d > worst {
								worst, at = d, fmt.Sprintf("(%d,%d) got %d,%d,%d want %v", x, y, r>>8, g>>8, b>>8, want)
							}
						}
					}
				}
				if worst > c.tol {
					t.Errorf("frame %d: flat colour off by %d at %s", i, worst, at)
				}
			}
		})
	}

	// Tiny and one-row images, one colour.
	for _, sz := range [][2]int{{1, 1}, {3, 5}, {17, 1}, {1, 9}} {
		w, h := sz[0], sz[1]
		img := Image{Width: w, Height: h, Stride: 4 * w, Pix: bytes.Repeat([]byte{200, 70, 40, 255}, w*h)}
		e, err := NewImageEncoder(ImageJPEG, w, h, 90)
		if err != nil {
			t.Fatal(err)
		}
		data, err := e.Encode(img)
		e.Close()
		if err != nil {
			t.Fatal(err)
		}
		m := decodeImage(t, data, ImageJPEG)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				r, g, b, _ := m.At(x, y).RGBA()
				if abs(int(r>>8)-200) > 3 || abs(int(g>>8)-70) > 3 || abs(int(b>>8)-40) > 3 {
					t.Errorf("%dx%d: pixel (%d,%d) is %d,%d,%d, want 200,70,40", w, h, x, y, r>>8, g>>8, b>>8)
				}
			}
		}
	}

	// Quality orders file sizes on a busy image.
	s := scene{160, 96}
	var img Image
	s.draw(0, &img)
	for i := range img.Pix {
		if i%4 != 3 {
			img.Pix[i] ^= byte(i * 7919 >> 3)
		}
	}
	prev := 0
	for _, q := range []int{10, 50, 90, 100} {
		e, err := NewImageEncoder(ImageJPEG, s.w, s.h, q)
		if err != nil {
			t.Fatal(err)
		}
		data, err := e.Encode(img)
		e.Close()
		if err != nil {
			t.Fatal(err)
		}
		decodeImage(t, data, ImageJPEG)
		if len(data) <= prev {
			t.Errorf("quality %d: %d bytes, not more than the previous quality's %d", q, len(data), prev)
		}
		prev = len(data)
	}
}

// TestImagePNG: lossless. An opaque image becomes an RGB PNG, a translucent
// one an RGBA PNG; decoded, both give back the input bytes exactly.
func TestImagePNG(t *testing.T) {
	for _, sz := range [][2]int{{854, 480}, {64, 48}, {37, 21}, {1, 1}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			s := scene{sz[0], sz[1]}
			e, err := NewImageEncoder(ImagePNG, s.w, s.h, 999) // quality ignored
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if e.MIME() != "image/png" {
				t.Errorf("MIME = %q", e.MIME())
			}
			var img Image
			s.draw(7, &img)
			for i := range img.Pix { // noise: every byte matters
				if i%4 != 3 {
					img.Pix[i] ^= byte(i * 7919 >> 3)
				}
			}
			check := func(name string, wantAlpha bool) {
				t.Helper()
				data, err := e.Encode(img)
				if err != nil {
					t.Fatal(err)
				}
				m := decodeImage(t, data, ImagePNG)
				var pix []byte
				var stride int
				switch m := m.(type) {
				case *image.RGBA: // an RGB PNG
					if wantAlpha {
						t.Fatalf("%s: decoded as RGB, want RGBA", name)
					}
					pix, stride = m.Pix, m.Stride
				case *image.NRGBA:
					if !wantAlpha {
						t.Fatalf("%s: decoded as RGBA, want RGB", name)
					}
					pix, stride = m.Pix, m.Stride
				default:
					t.Fatalf("%s: decoded as %T", name, m)
				}
				if b := m.Bounds(); b.Dx() != s.w || b.Dy() != s.h {
					t.Fatalf("%s: decoded %v, want %dx%d", name, b, s.w, s.h)
				}
				for y := 0; y < s.h; y++ {
					if got, want := pix[y*stride:y*stride+4*s.w], img.Pix[y*img.Stride:y*img.Stride+4*s.w]; !bytes.Equal(got, want) {
						t.Fatalf("%s: row %d differs", name, y)
					}
				}
			}
			check("opaque", false)
			img.Pix[len(img.Pix)-17] = 7 // the last pixel's alpha (16 bytes of row padding follow)
			img.Pix[3] = 0
			for i := 4*s.w + 3; i < len(img.Pix)-16; i += 4 * 5 {
				img.Pix[i] = byte(i)
			}
			check("translucent", true)
			// Back to opaque: the RGB encoder again.
			for y := 0; y < s.h; y++ {
				for x := 0; x < s.w; x++ {
					img.Pix[y*img.Stride+4*x+3] = 255
				}
			}
			check("opaque again", false)
		})
	}
}

func TestImageEncoderErrors(t *testing.T) {
	for _, c := range []struct {
		name    string
		f       ImageFormat
		w, h, q int
		text    string
	}{
		{"format", "gif", 64, 48, 0, "unknown image format"},
		{"empty format", "", 64, 48, 0, "unknown image format"},
		{"width", ImageJPEG, 0, 48, 0, "must be positive"},
		{"height", ImagePNG, 64, -1, 0, "must be positive"},
		{"quality 101", ImageJPEG, 64, 48, 101, "out of range 1..100"},
		{"quality -1", ImageJPEG, 64, 48, -1, "out of range 1..100"},
	} {
		e, err := NewImageEncoder(c.f, c.w, c.h, c.q)
		if err == nil {
			e.Close()
			t.Errorf("%s: NewImageEncoder succeeded", c.name)
			continue
		}
		if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v, want ErrOptions with %q", c.name, err, c.text)
		}
	}
	// "JPEG" is accepted as a format value too.
	e, err := NewImageEncoder("JPEG", 64, 48, 0)
	if err != nil {
		t.Fatal(err)
	}
	var img Image
	scene{64, 48}.draw(0, &img)
	bad := []Image{
		{Width: 62, Height: 48, Stride: img.Stride, Pix: img.Pix},
		{Width: 64, Height: 48, Stride: 100, Pix: img.Pix},
		{Width: 64, Height: 48, Stride: img.Stride, Pix: img.Pix[:len(img.Pix)-17]},
	}
	for _, b := range bad {
		if _, err := e.Encode(b); !errors.Is(err, ErrOptions) {
			t.Errorf("Encode(%dx%d stride %d, %d bytes) = %v", b.Width, b.Height, b.Stride, len(b.Pix), err)
		}
	}
	if _, err := e.Encode(img); err != nil {
		t.Fatalf("Encode after refused images: %v", err)
	}
	e.Close()
	e.Close()
	if _, err := e.Encode(img); !errors.Is(err, ErrClosed) {
		t.Errorf("Encode after Close = %v", err)
	}
	var nilEnc *ImageEncoder
	nilEnc.Close()
	if _, err := nilEnc.Encode(img); !errors.Is(err, ErrClosed) {
		t.Errorf("nil Encode = %v", err)
	}
}

func benchImage(b *testing.B, f ImageFormat) {
	img := benchFrame(0)
	e, err := NewImageEncoder(f, img.Width, img.Height, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		data, err := e.Encode(img)
		if err != nil {
			b.Fatal(err)
		}
		n = len(data)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
	b.ReportMetric(float64(n), "bytes/frame")
}

// BenchmarkImageJPEG854x480 measures Encode (RGBA→yuv420p full range +
// mjpeg at the default quality) of the test scene.
func BenchmarkImageJPEG854x480(b *testing.B) { benchImage(b, ImageJPEG) }

// BenchmarkImagePNG854x480 measures Encode (RGBA→RGB24 + png) of the test
// scene.
func BenchmarkImagePNG854x480(b *testing.B) { benchImage(b, ImagePNG) }

// BenchmarkImageGo854x480 is the Go standard library on the same frame, for
// comparison (see ImageEncoder).
func BenchmarkImageGo854x480(b *testing.B) {
	img := benchFrame(0)
	r := image.Rect(0, 0, img.Width, img.Height)
	for _, c := range []struct {
		name string
		enc  func(*bytes.Buffer) error
	}{
		{"jpeg-q90", func(w *bytes.Buffer) error {
			return jpeg.Encode(w, &image.RGBA{Pix: img.Pix, Stride: img.Stride, Rect: r}, &jpeg.Options{Quality: 90})
		}},
		{"png-bestspeed", func(w *bytes.Buffer) error {
			return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(w, &image.NRGBA{Pix: img.Pix, Stride: img.Stride, Rect: r})
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var buf bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if err := c.enc(&buf); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
			b.ReportMetric(float64(buf.Len()), "bytes/frame")
		})
	}
}
