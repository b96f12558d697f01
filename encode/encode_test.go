package encode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// scene draws frame i of the test clip: a flat background whose colour
// changes every 15 frames and a white square moving right and down. Square size and
// positions are even, so 2×2 chroma blocks never straddle an edge.
type scene struct{ w, h int }

// bg changes every 15 frames: a step the encoder must code (a slow drift
// would be left to skipped blocks and lag by many levels at any crf).
func (s scene) bg(i int) [3]byte {
	colours := [][3]byte{{30, 120, 200}, {200, 70, 40}, {40, 160, 80}, {128, 128, 128}}
	return colours[(i/15)%len(colours)]
}

// square returns the square of frame i as [x0, x1) × [y0, y1).
func (s scene) square(i int) (x0, y0, x1, y1 int) {
	size := 2 * (s.h / 6)
	x0 = (2 * i) % (s.w - size) &^ 1
	y0 = i % (s.h - size) &^ 1
	return x0, y0, x0 + size, y0 + size
}

// want returns the colour of pixel (x, y) in frame i.
func (s scene) want(i, x, y int) [3]byte {
	if x0, y0, x1, y1 := s.square(i); x >= x0 && x < x1 && y >= y0 && y < y1 {
		return [3]byte{255, 255, 255}
	}
	return s.bg(i)
}

// flat reports whether pixel (x, y) lies in a 16×16 macroblock that the
// square does not touch in frame i nor in the two frames before (motion
// compensation references): there a lossy encoder's error is the colour
// error alone, not ringing or motion-compensated edges. At 64x48, crf 18,
// other pixels 4 pixels from an edge were measured off by up to 26.
func (s scene) flat(i, x, y int) bool {
	mx, my := x&^15, y&^15
	for j := max(i-2, 0); j <= i; j++ {
		if x0, y0, x1, y1 := s.square(j); mx < x1 && mx+16 > x0 && my < y1 && my+16 > y0 {
			return false
		}
	}
	return true
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// draw renders frame i into img (reused between frames); its stride has 16
// bytes of padding to check that Stride, not 4*Width, is honoured.
func (s scene) draw(i int, img *Image) {
	if img.Pix == nil {
		*img = Image{Width: s.w, Height: s.h, Stride: 4*s.w + 16}
		img.Pix = make([]byte, img.Stride*s.h)
	}
	for y := 0; y < s.h; y++ {
		row := img.Pix[y*img.Stride:]
		for x := 0; x < s.w; x++ {
			c := s.want(i, x, y)
			copy(row[4*x:], []byte{c[0], c[1], c[2], 255})
		}
	}
}

// compare returns the largest channel difference between img and frame i,
// over flat pixels only (see flat) when onlyFlat is set.
func (s scene) compare(i int, img Image, onlyFlat bool) (maxDiff int, at string) {
	for y := 0; y < s.h; y++ {
		for x := 0; x < s.w; x++ {
			if onlyFlat && !s.flat(i, x, y) {
				continue
			}
			c := s.want(i, x, y)
			p := img.Pix[y*img.Stride+4*x:]
			for k := 0; k < 3; k++ {
				if d := abs(int(p[k]) - int(c[k])); d > maxDiff {
					maxDiff, at = d, fmt.Sprintf("(%d,%d) got %v want %v", x, y, p[:4], c)
				}
			}
			if p[3] != 255 {
				return 999, fmt.Sprintf("(%d,%d) alpha %d", x, y, p[3])
			}
		}
	}
	return maxDiff, at
}

// writeClip encodes n frames of s into path.
func writeClip(t testing.TB, path string, s scene, o Options, n int) {
	t.Helper()
	w, err := Create(path, o)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	defer w.Abort()
	var img Image
	for i := 0; i < n; i++ {
		s.draw(i, &img)
		if err := w.WriteRGBA(img); err != nil {
			t.Fatalf("WriteRGBA %d: %v", i, err)
		}
	}
	if w.Frames() != n {
		t.Fatalf("Frames() = %d, want %d", w.Frames(), n)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func checkProbe(t *testing.T, path string, w, h, frames int, fps float64) {
	t.Helper()
	info, err := Probe(path)
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	want := float64(frames) / fps
	if info.Width != w || info.Height != h || info.Frames != frames || info.FPS != fps ||
		math.Abs(info.Duration-want) > 0.001 || info.Codec != "h264" || info.PixFmt != "yuv420p" {
		t.Errorf("Probe = %+v, want %dx%d, %d frames, %g fps, %.3f s, h264, yuv420p", info, w, h, frames, fps, want)
	}
}

func TestEncodeProbeDecode(t *testing.T) {
	for _, sz := range [][2]int{{64, 48}, {854, 480}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			s := scene{sz[0], sz[1]}
			// A temporary-style name: the container must not depend on it.
			path := filepath.Join(t.TempDir(), "clip.mp4.tmp")
			writeClip(t, path, s, Options{Width: s.w, Height: s.h, FPS: 30, Preset: "veryfast", CRF: 18}, 60)
			checkProbe(t, path, s.w, s.h, 60, 30)

			n, worst := 0, 0
			err := DecodeAll(path, func(f Frame) error {
				if f.Index != n {
					return fmt.Errorf("index %d, want %d", f.Index, n)
				}
				if want := float64(n) / 30; math.Abs(f.PTS-want) > 0.001 {
					return fmt.Errorf("frame %d: pts %.4f, want %.4f", n, f.PTS, want)
				}
				if f.Image.Width != s.w || f.Image.Height != s.h || f.Image.Stride < 4*s.w {
					return fmt.Errorf("frame %d: image %dx%d stride %d", n, f.Image.Width, f.Image.Height, f.Image.Stride)
				}
				// crf 18 on flat areas: ±6.
				d, at := s.compare(n, f.Image, true)
				if d > 6 {
					return fmt.Errorf("frame %d: colour off by %d at %s", n, d, at)
				}
				worst = max(worst, d)
				n++
				return nil
			})
			if err != nil {
				t.Fatalf("DecodeAll: %v", err)
			}
			if n != 60 {
				t.Fatalf("decoded %d frames, want 60", n)
			}
			t.Logf("largest colour error on flat areas: %d", worst)
		})
	}
}

func TestLossless(t *testing.T) {
	s := scene{64, 48}
	path := filepath.Join(t.TempDir(), "lossless.mp4")
	writeClip(t, path, s, Options{Width: s.w, Height: s.h, FPS: 30, Preset: "veryfast", Lossless: true}, 30)
	checkProbe(t, path, s.w, s.h, 30, 30)
	n := 0
	err := DecodeAll(path, func(f Frame) error {
		// Every pixel, edges included (the square is chroma-aligned):
		// only RGB→YUV→RGB rounding remains.
		if d, at := s.compare(n, f.Image, false); d > 2 {
			return fmt.Errorf("frame %d: colour off by %d at %s", n, d, at)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 30 {
		t.Fatalf("decoded %d frames, want 30", n)
	}
}

// TestRepeat: in a lossless clip a repeated frame decodes to exactly the
// previous one; in a lossy clip Repeat gives the very bytes that writing the
// same image again gives (the encoder sees the same YUV frame).
func TestRepeat(t *testing.T) {
	s := scene{64, 48}
	dir := t.TempDir()
	// Frames: 0 drawn, 1..4 the same, 5 drawn, 6..9 the same.
	write := func(path string, o Options, repeat bool) {
		t.Helper()
		w, err := Create(path, o)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Abort()
		if err := w.Repeat(); err == nil {
			t.Fatal("Repeat before WriteRGBA succeeded")
		}
		var img Image
		for i := 0; i < 10; i++ {
			if i%5 == 0 {
				s.draw(i, &img)
			}
			if i%5 != 0 && repeat {
				err = w.Repeat()
			} else {
				err = w.WriteRGBA(img)
			}
			if err != nil {
				t.Fatalf("frame %d: %v", i, err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}

	lossless := filepath.Join(dir, "lossless.mp4")
	write(lossless, Options{Width: s.w, Height: s.h, FPS: 30, Preset: "veryfast", Lossless: true}, true)
	checkProbe(t, lossless, s.w, s.h, 10, 30)
	var prev []byte
	n := 0
	err := DecodeAll(lossless, func(f Frame) error {
		pix := bytes.Clone(f.Image.Pix)
		if n%5 != 0 && !bytes.Equal(pix, prev) {
			return fmt.Errorf("frame %d differs from frame %d", n, n-1)
		}
		if n == 5 && bytes.Equal(pix, prev) {
			return errors.New("frame 5 equals frame 4: the new image was not encoded")
		}
		prev = pix
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 10 {
		t.Fatalf("decoded %d frames, want 10", n)
	}

	// One thread: x264's output is then deterministic.
	o := Options{Width: s.w, Height: s.h, FPS: 30, Preset: "veryfast", CRF: 18, Threads: 1}
	repeated, rewritten := filepath.Join(dir, "repeated.mp4"), filepath.Join(dir, "rewritten.mp4")
	write(repeated, o, true)
	write(rewritten, o, false)
	a, err := os.ReadFile(repeated)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(rewritten)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("Repeat gave a different file (%d bytes) than rewriting the image (%d bytes)", len(a), len(b))
	}
}

func TestFFprobeAgrees(t *testing.T) {
	if _, err := exec.LookPath("ffprobe"); err != nil {
		t.Skip("ffprobe not on PATH")
	}
	s := scene{64, 48}
	path := filepath.Join(t.TempDir(), "clip.mp4")
	writeClip(t, path, s, Options{Width: s.w, Height: s.h, FPS: 30, Preset: "veryfast", CRF: 18}, 60)
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-count_frames",
		"-show_entries", "stream=nb_read_frames,pix_fmt,avg_frame_rate,r_frame_rate,color_space,color_range,color_primaries,color_transfer,duration",
		"-of", "json", path).Output()
	if err != nil {
		t.Fatalf("ffprobe: %v", err)
	}
	var res struct {
		Streams []map[string]string `json:"streams"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Streams) != 1 {
		t.Fatalf("ffprobe output %s: %v", out, err)
	}
	got := res.Streams[0]
	want := map[string]string{
		"nb_read_frames": "60", "pix_fmt": "yuv420p", "avg_frame_rate": "30/1", "r_frame_rate": "30/1",
		"duration": "2.000000", "color_space": "smpte170m", "color_range": "tv",
		"color_primaries": "smpte170m", "color_transfer": "smpte170m",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("ffprobe %s = %q, want %q", k, got[k], v)
		}
	}
}

func TestCreateErrors(t *testing.T) {
	ok := Options{Width: 64, Height: 48, FPS: 30}
	with := func(f func(*Options)) Options { o := ok; f(&o); return o }
	cases := []struct {
		name string
		o    Options
		is   error
		text string
	}{
		{"odd width", with(func(o *Options) { o.Width = 63 }), ErrOptions, "must be even"},
		{"zero height", with(func(o *Options) { o.Height = 0 }), ErrOptions, "must be positive"},
		{"fps 0", with(func(o *Options) { o.FPS = 0 }), ErrOptions, "fps 0 out of range 1..240"},
		{"fps 241", with(func(o *Options) { o.FPS = 241 }), ErrOptions, "out of range"},
		{"negative crf", with(func(o *Options) { o.CRF = -1 }), ErrOptions, "crf"},
		{"negative gop", with(func(o *Options) { o.GOP = -1 }), ErrOptions, "gop -1 is negative"},
		{"unknown codec", with(func(o *Options) { o.Codec = "nope" }), ErrUnavailable, `encoder "nope" is not available in this libavcodec`},
		{"audio codec", with(func(o *Options) { o.Codec = "aac" }), ErrOptions, "not a video encoder"},
		{"lossless mpeg4", with(func(o *Options) { o.Codec = "mpeg4"; o.Lossless = true }), ErrNoLossless, `"mpeg4" has no lossless mode`},
		{"crf mpeg4", with(func(o *Options) { o.Codec = "mpeg4"; o.CRF = 18 }), ErrOptions, "does not know option(s) crf=18"},
		{"bad preset", with(func(o *Options) { o.Preset = "nope" }), ErrUnavailable, `opening encoder "libx264"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.mp4")
			w, err := Create(path, c.o)
			if err == nil {
				w.Abort()
				t.Fatal("Create succeeded")
			}
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.text) {
				t.Fatalf("error %q (is %v: %v), want one containing %q", err, c.is, errors.Is(err, c.is), c.text)
			}
			if _, serr := os.Stat(path); !errors.Is(serr, os.ErrNotExist) {
				t.Errorf("failed Create left %s behind", path)
			}
			t.Logf("%v", err)
		})
	}
}

// TestNVENC: on a machine without an NVIDIA driver h264_nvenc is listed but
// cannot open; Create must say so, not crash. Where it opens, it must encode.
func TestNVENC(t *testing.T) {
	if !Available("h264_nvenc") {
		t.Skip("h264_nvenc not in this libavcodec")
	}
	s := scene{256, 144}
	o := Options{Width: s.w, Height: s.h, FPS: 30, Codec: "h264_nvenc", CRF: 20}
	path := filepath.Join(t.TempDir(), "nvenc.mp4")
	w, err := Create(path, o)
	if err != nil {
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `opening encoder "h264_nvenc"`) {
			t.Fatalf("error %q, want ErrUnavailable naming h264_nvenc", err)
		}
		t.Logf("no usable NVENC here: %v", err)
		return
	}
	w.Abort()
	writeClip(t, path, s, o, 30)
	checkProbe(t, path, s.w, s.h, 30, 30)
}

func TestAvailable(t *testing.T) {
	if !Available("") || !Available("libx264") {
		t.Error("libx264 not available")
	}
	if Available("nope") || Available("aac") {
		t.Error("Available reports a non-video or unknown encoder")
	}
}

func TestWriterLifecycle(t *testing.T) {
	s := scene{64, 48}
	o := Options{Width: s.w, Height: s.h, FPS: 30, Preset: "ultrafast", Threads: 1}
	var img Image
	s.draw(0, &img)

	t.Run("nil", func(t *testing.T) {
		var w *Writer
		if err := w.Close(); !errors.Is(err, ErrClosed) {
			t.Errorf("nil Close = %v", err)
		}
		w.Abort()
		if w.Frames() != 0 {
			t.Error("nil Frames != 0")
		}
	})
	t.Run("close twice, abort after close", func(t *testing.T) {
		w, err := Create(filepath.Join(t.TempDir(), "a.mp4"), o)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteRGBA(img); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("second Close = %v", err)
		}
		w.Abort()
		if err := w.WriteRGBA(img); !errors.Is(err, ErrClosed) {
			t.Errorf("WriteRGBA after Close = %v", err)
		}
		if err := w.Repeat(); !errors.Is(err, ErrClosed) {
			t.Errorf("Repeat after Close = %v", err)
		}
	})
	t.Run("abort twice, close after abort", func(t *testing.T) {
		w, err := Create(filepath.Join(t.TempDir(), "b.mp4"), o)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteRGBA(img); err != nil {
			t.Fatal(err)
		}
		w.Abort()
		w.Abort()
		if err := w.Close(); !errors.Is(err, ErrClosed) {
			t.Errorf("Close after Abort = %v", err)
		}
	})
	t.Run("bad image is refused, writer stays usable", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "c.mp4")
		w, err := Create(path, o)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Abort()
		bad := []Image{
			{Width: 62, Height: 48, Stride: img.Stride, Pix: img.Pix},
			{Width: 64, Height: 48, Stride: 100, Pix: img.Pix},
			{Width: 64, Height: 48, Stride: img.Stride, Pix: img.Pix[:len(img.Pix)-1-16]},
		}
		for _, b := range bad {
			if err := w.WriteRGBA(b); !errors.Is(err, ErrOptions) {
				t.Errorf("WriteRGBA(%dx%d stride %d, %d bytes) = %v", b.Width, b.Height, b.Stride, len(b.Pix), err)
			}
		}
		if err := w.WriteRGBA(img); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		checkProbe(t, path, s.w, s.h, 1, 30)
	})
	t.Run("close after error", func(t *testing.T) {
		w, err := Create(filepath.Join(t.TempDir(), "d.mp4"), o)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteRGBA(img); err != nil {
			t.Fatal(err)
		}
		// A libav failure mid-clip is hard to provoke; set the sticky
		// error as encode() would.
		boom := errors.New("boom")
		w.err = boom
		if err := w.WriteRGBA(img); !errors.Is(err, boom) {
			t.Errorf("WriteRGBA after error = %v", err)
		}
		if err := w.Close(); !errors.Is(err, boom) {
			t.Errorf("Close after error = %v", err)
		}
		if err := w.Close(); !errors.Is(err, boom) {
			t.Errorf("second Close after error = %v", err)
		}
		w.Abort()
	})
	t.Run("zero frames", func(t *testing.T) {
		w, err := Create(filepath.Join(t.TempDir(), "e.mp4"), o)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Errorf("Close without frames = %v", err)
		}
	})
}

func TestDecodeErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Probe(filepath.Join(dir, "missing.mp4")); err == nil {
		t.Error("Probe of a missing file succeeded")
	}
	junk := filepath.Join(dir, "junk.mp4")
	if err := os.WriteFile(junk, []byte("not a video"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := DecodeAll(junk, func(Frame) error { return nil }); err == nil {
		t.Error("DecodeAll of junk succeeded")
	}
	// fn's error stops decoding and comes back as is.
	s := scene{64, 48}
	path := filepath.Join(dir, "clip.mp4")
	writeClip(t, path, s, Options{Width: s.w, Height: s.h, FPS: 30, Preset: "ultrafast"}, 10)
	stop := errors.New("stop")
	calls := 0
	err := DecodeAll(path, func(Frame) error { calls++; return stop })
	if err != stop || calls != 1 {
		t.Errorf("DecodeAll = %v after %d calls, want stop after 1", err, calls)
	}
}
