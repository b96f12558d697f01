package encode

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asticode/go-astiav"
)

// indexScene draws frames whose index can be read back from the pixels,
// even after scaling: indexBits vertical stripes, stripe b white when bit b
// of the index is set, black otherwise, on a mid-grey top band (so that
// frames are not pure black and white).
type indexScene struct{ w, h int }

const indexBits = 8

func (s indexScene) draw(k int, img *Image) {
	if img.Pix == nil {
		*img = Image{Width: s.w, Height: s.h, Stride: 4 * s.w, Pix: make([]byte, 4*s.w*s.h)}
	}
	for y := 0; y < s.h; y++ {
		for x := 0; x < s.w; x++ {
			v := byte(0)
			if y < s.h/4 {
				v = 128
			} else if k>>(x*indexBits/s.w)&1 != 0 {
				v = 255
			}
			copy(img.Pix[y*img.Stride+4*x:], []byte{v, v, v, 255})
		}
	}
}

// readIndex reads the frame index back from an image of any size, or -1
// when a stripe is neither black nor white.
func readIndex(img Image) int {
	k := 0
	y := img.Height * 5 / 8
	for b := 0; b < indexBits; b++ {
		x := (2*b + 1) * img.Width / (2 * indexBits)
		p := img.Pix[y*img.Stride+4*x:]
		switch {
		case p[0] > 200 && p[1] > 200 && p[2] > 200:
			k |= 1 << b
		case p[0] < 55 && p[1] < 55 && p[2] < 55:
		default:
			return -1
		}
	}
	return k
}

// writeIndexClip writes n frames of s losslessly at fps with the given GOP.
func writeIndexClip(t testing.TB, path string, s indexScene, fps, n, gop int) {
	t.Helper()
	w, err := Create(path, Options{Width: s.w, Height: s.h, FPS: fps, Preset: "ultrafast", Lossless: true, GOP: gop})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	var img Image
	for k := 0; k < n; k++ {
		s.draw(k, &img)
		if err := w.WriteRGBA(img); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// ffmpeg runs the ffmpeg CLI, skipping the test when it is absent.
func ffmpeg(t *testing.T, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg not on PATH")
	}
	out, err := exec.Command("ffmpeg", append([]string{"-nostdin", "-v", "error", "-y"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

const (
	clipFPS    = 30
	clipFrames = 90 // 3 s
	clipGOP    = 12
)

// videoClips makes the test clips in dir: Writer's MP4 (no B-frames with
// preset ultrafast) and, with the ffmpeg CLI, a B-frame re-encode (-bf 2
// -g 12, lossless) in MP4, Matroska (no dts), MPEG-TS (start time 1.4 s)
// and a raw H.264 stream (no timestamps at all).
func videoClips(t *testing.T, dir string, s indexScene) map[string]string {
	src := filepath.Join(dir, "writer.mp4")
	writeIndexClip(t, src, s, clipFPS, clipFrames, clipGOP)
	clips := map[string]string{"writer": src}
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Log("ffmpeg not on PATH: only Writer's clip")
		return clips
	}
	bf := filepath.Join(dir, "bf.mp4")
	ffmpeg(t, "-i", src, "-c:v", "libx264", "-preset", "veryfast", "-qp", "0", "-bf", "2", "-g", "12", "-keyint_min", "12", "-sc_threshold", "0", "-pix_fmt", "yuv420p", bf)
	clips["bframes.mp4"] = bf
	for _, ext := range []string{"mkv", "ts", "h264"} {
		p := filepath.Join(dir, "bf."+ext)
		ffmpeg(t, "-i", bf, "-c", "copy", p)
		clips["bframes."+ext] = p
	}
	return clips
}

func TestVideoFrameAt(t *testing.T) {
	s := indexScene{64, 48}
	dir := t.TempDir()
	clips := videoClips(t, dir, s)
	for name, path := range clips {
		t.Run(name, func(t *testing.T) {
			info, err := Probe(path)
			if err != nil {
				t.Fatal(err)
			}
			v, err := OpenVideo(path)
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			vi := v.Info()
			t.Logf("Info %+v; Probe %+v", vi, info)
			if vi.Width != s.w || vi.Height != s.h || vi.Codec != "h264" || vi.PixFmt != "yuv420p" || vi.Frames != clipFrames {
				t.Errorf("Info = %+v", vi)
			}
			if vi.FPS != info.FPS || vi.Frames != info.Frames || math.Abs(vi.Duration-info.Duration) > 1e-6 {
				t.Errorf("Info %+v differs from Probe %+v", vi, info)
			}
			fps := vi.FPS
			if name != "bframes.h264" && (fps != clipFPS || math.Abs(vi.Duration-3) > 1e-6) {
				t.Errorf("fps %g, duration %g; want %d, 3", fps, vi.Duration, clipFPS)
			}

			// Reference: every frame as DecodeAll gives it, and its time.
			var ref [][]byte
			var pts []float64
			err = DecodeAll(path, func(f Frame) error {
				pts = append(pts, f.PTS)
				if k := readIndex(f.Image); k != f.Index {
					return fmt.Errorf("DecodeAll frame %d reads as %d", f.Index, k)
				}
				pix := make([]byte, 0, 4*s.w*s.h)
				for y := 0; y < s.h; y++ {
					pix = append(pix, f.Image.Pix[y*f.Image.Stride:y*f.Image.Stride+4*s.w]...)
				}
				ref = append(ref, pix)
				return nil
			})
			if err != nil || len(ref) != clipFrames {
				t.Fatalf("DecodeAll: %d frames, %v", len(ref), err)
			}

			// Frame k's time: k/fps, except in Matroska, whose timestamps
			// are whole milliseconds (frame 2 at 0.067 s is not shown at
			// 2/30 s); FrameAt goes by the container's times.
			ft := func(k int) float64 { return float64(k) / fps }
			for k, p := range pts {
				if d := math.Abs(p - ft(k)); d > 0.0005 || d > 1e-9 && name != "bframes.mkv" {
					t.Fatalf("frame %d at %v s, want %v", k, p, ft(k))
				}
			}
			if name == "bframes.mkv" {
				ft = func(k int) float64 { return pts[k] }
			}

			dst := Image{Width: s.w, Height: s.h, Stride: 4*s.w + 8, Pix: make([]byte, (4*s.w+8)*s.h)}
			for y := 0; y < s.h; y++ {
				copy(dst.Pix[y*dst.Stride+4*s.w:], []byte{1, 2, 3, 4, 5, 6, 7, 8})
			}
			at := func(tm float64, want int) {
				t.Helper()
				if err := v.FrameAt(tm, dst); err != nil {
					t.Fatalf("FrameAt(%v): %v", tm, err)
				}
				k := readIndex(dst)
				if k != want {
					t.Fatalf("FrameAt(%v) gave frame %d, want %d", tm, k, want)
				}
				for y := 0; y < s.h; y++ {
					if pad := dst.Pix[y*dst.Stride+4*s.w : (y+1)*dst.Stride]; !bytes.Equal(pad, []byte{1, 2, 3, 4, 5, 6, 7, 8}) {
						t.Fatalf("FrameAt(%v) wrote into the stride padding of row %d: %v", tm, y, pad)
					}
				}
				for y := 0; y < s.h; y++ {
					got, exp := dst.Pix[y*dst.Stride:y*dst.Stride+4*s.w], ref[want][4*s.w*y:4*s.w*(y+1)]
					for i := range got {
						if d := abs(int(got[i]) - int(exp[i])); d > 1 {
							t.Fatalf("FrameAt(%v): byte %d of row %d is %d, DecodeAll's frame %d has %d", tm, i, y, got[i], want, exp[i])
						}
					}
				}
			}

			// Forward over every frame time: one seek, each packet once.
			for k := 0; k < clipFrames; k++ {
				at(ft(k), k)
			}
			packets, seeks := v.Counters()
			t.Logf("forward scan of %d frames: %d packets, %d seeks", clipFrames, packets, seeks)
			if seeks != 1 || packets > clipFrames {
				t.Errorf("forward scan: %d packets, %d seeks; want ≤ %d, 1", packets, seeks, clipFrames)
			}
			// Repeats and times past the end cost nothing.
			at(ft(clipFrames-1), clipFrames-1)
			at(100, clipFrames-1)
			at(math.Inf(1), clipFrames-1)
			if p, sk := v.Counters(); p != packets || sk != seeks {
				t.Errorf("repeated/late times decoded %d packets, %d seeks", p-packets, sk-seeks)
			}

			// Between frame times, just before them, before the start.
			for k := 0; k < clipFrames; k += 7 {
				at((ft(k)+ft(k+1))/2, k)
				if k > 0 {
					at(ft(k)-1e-6, k-1)
				}
				at(ft(k), k)
			}
			at(-1, 0)
			at(math.Inf(-1), 0)
			at(0.5/fps, 0)
			at(-1e-6, 0)

			// Random order, with repeats.
			rng := rand.New(rand.NewSource(1))
			for i := 0; i < 200; i++ {
				k := rng.Intn(clipFrames - 1)
				tm := ft(k) + rng.Float64()*0.98*(ft(k+1)-ft(k))
				at(tm, k)
				if i%5 == 0 {
					p, sk := v.Counters()
					at(tm, k)
					if p2, sk2 := v.Counters(); p2 != p || sk2 != sk {
						t.Fatalf("repeated t=%v decoded again", tm)
					}
				}
			}
			packets, seeks = v.Counters()
			t.Logf("after random access: %d packets, %d seeks", packets, seeks)

			// Scaled output: the index stays readable.
			for _, sz := range [][2]int{{32, 24}, {100, 70}, {17, 9}} {
				small := Image{Width: sz[0], Height: sz[1], Stride: 4 * sz[0], Pix: make([]byte, 4*sz[0]*sz[1])}
				for _, k := range []int{5, 77, 42} {
					if err := v.FrameAt(ft(k), small); err != nil {
						t.Fatal(err)
					}
					if got := readIndex(small); got != k {
						t.Errorf("%dx%d: frame %d reads as %d", sz[0], sz[1], k, got)
					}
				}
			}
		})
	}
}

// TestVideoColours: FrameAt's colours on a lossless clip of the colour
// test scene, every pixel, as TestLossless checks DecodeAll's.
func TestVideoColours(t *testing.T) {
	for _, sz := range [][2]int{{64, 48}, {854, 480}} {
		s := scene{sz[0], sz[1]}
		path := filepath.Join(t.TempDir(), "lossless.mp4")
		writeClip(t, path, s, Options{Width: s.w, Height: s.h, FPS: 30, Preset: "ultrafast", Lossless: true}, 16)
		v, err := OpenVideo(path)
		if err != nil {
			t.Fatal(err)
		}
		var img Image
		s.draw(0, &img) // stride with padding
		worst, vsDecodeAll := 0, 0
		err = DecodeAll(path, func(f Frame) error {
			if err := v.FrameAt(f.PTS, img); err != nil {
				return err
			}
			d, at := s.compare(f.Index, img, false)
			if d > 3 {
				return fmt.Errorf("%dx%d frame %d: colour off by %d at %s", s.w, s.h, f.Index, d, at)
			}
			worst = max(worst, d)
			for y := 0; y < s.h; y++ {
				for x := 0; x < 4*s.w; x++ {
					vsDecodeAll = max(vsDecodeAll, abs(int(img.Pix[y*img.Stride+x])-int(f.Image.Pix[y*f.Image.Stride+x])))
				}
			}
			return nil
		})
		v.Close()
		if err != nil {
			t.Fatal(err)
		}
		// Both are within 3 of the truth; their yuv420p→RGB paths round
		// differently (a table-based one, an exact one): up to 3 apart on
		// Writer's libyuv chroma, 2 on libswscale's.
		if vsDecodeAll > 3 {
			t.Errorf("%dx%d: FrameAt differs from DecodeAll by %d", s.w, s.h, vsDecodeAll)
		}
		t.Logf("%dx%d: largest colour error %d, largest difference from DecodeAll %d", s.w, s.h, worst, vsDecodeAll)
	}
}

// TestVideoSeekCost: a late first time decodes one GOP, not the whole file;
// going back seeks; a forward scan at 16 fps decodes each packet once.
func TestVideoSeekCost(t *testing.T) {
	s := indexScene{64, 48}
	clips := videoClips(t, t.TempDir(), s)
	for name, path := range clips {
		t.Run(name, func(t *testing.T) {
			v, err := OpenVideo(path)
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			fps := v.Info().FPS
			dst := Image{Width: s.w, Height: s.h, Stride: 4 * s.w, Pix: make([]byte, 4*s.w*s.h)}
			at := func(k int) {
				t.Helper()
				if err := v.FrameAt((float64(k)+0.25)/fps, dst); err != nil {
					t.Fatal(err)
				}
				if got := readIndex(dst); got != k {
					t.Fatalf("frame %d reads as %d", k, got)
				}
			}
			at(87)
			p, sk := v.Counters()
			// At most a GOP plus the decoder's delay: B-frames and frame
			// threads (threads−1 packets). The raw stream's demuxer seeks
			// by reading from the start. MPEG-TS seeks to any packet, not
			// to keyframes: a first seek that lands after the keyframe
			// before t is followed by a second one, further back, and
			// may decode part of a GOP; later seeks allow for it.
			limit, seeks := clipGOP+v.cc.ThreadCount()+4, 1
			switch name {
			case "bframes.h264":
				limit = clipFrames
			case "bframes.ts":
				seeks = 2
				limit += clipGOP
			}
			t.Logf("first FrameAt(frame 87): %d packets, %d seeks", p, sk)
			if p > limit || sk > seeks {
				t.Errorf("first FrameAt(frame 87): %d packets, %d seeks; want ≤ %d, ≤ %d", p, sk, limit, seeks)
			}
			at(30) // behind: seeks
			p2, sk2 := v.Counters()
			t.Logf("then FrameAt(frame 30): %d packets, %d seeks", p2-p, sk2-sk)
			if p2-p > limit || sk2-sk != 1 {
				t.Errorf("FrameAt(frame 30) after 87: %d packets, %d seeks; want ≤ %d, 1", p2-p, sk2-sk, limit)
			}

			// A fresh Video scanning at 16 fps: every packet once.
			v.Close()
			if v, err = OpenVideo(path); err != nil {
				t.Fatal(err)
			}
			for i := 0; float64(i)/16 < 3; i++ {
				tm := float64(i) / 16
				if err := v.FrameAt(tm, dst); err != nil {
					t.Fatal(err)
				}
				if got, want := readIndex(dst), int(math.Floor(tm*fps+1e-9)); got != want {
					t.Fatalf("t=%v: frame %d, want %d", tm, got, want)
				}
			}
			p, sk = v.Counters()
			t.Logf("16 fps scan: %d packets, %d seeks", p, sk)
			if p > clipFrames || sk != 1 {
				t.Errorf("16 fps scan: %d packets, %d seeks; want ≤ %d, 1", p, sk, clipFrames)
			}
		})
	}
}

func TestVideoErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenVideo(filepath.Join(dir, "missing.mp4")); err == nil || !strings.Contains(err.Error(), "missing.mp4") {
		t.Errorf("OpenVideo(missing) = %v", err)
	} else {
		t.Log(err)
	}
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("this is not a video\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenVideo(text); err == nil {
		t.Error("OpenVideo(text file) succeeded")
	} else {
		t.Log(err)
	}
	if _, err := OpenVideo(dir); err == nil {
		t.Error("OpenVideo(directory) succeeded")
	} else {
		t.Log(err)
	}
	if _, err := exec.LookPath("ffmpeg"); err == nil {
		audio := filepath.Join(dir, "tone.m4a")
		ffmpeg(t, "-f", "lavfi", "-i", "sine=duration=0.2", audio)
		if _, err := OpenVideo(audio); err == nil || !strings.Contains(err.Error(), "no video stream") {
			t.Errorf("OpenVideo(audio only) = %v", err)
		} else {
			t.Log(err)
		}
	}

	s := indexScene{64, 48}
	path := filepath.Join(dir, "clip.mp4")
	writeIndexClip(t, path, s, 30, 10, 0)
	v, err := OpenVideo(path)
	if err != nil {
		t.Fatal(err)
	}
	dst := Image{Width: s.w, Height: s.h, Stride: 4 * s.w, Pix: make([]byte, 4*s.w*s.h)}
	for _, bad := range []Image{
		{},
		{Width: 64, Height: 48, Stride: 100, Pix: dst.Pix},
		{Width: 64, Height: 48, Stride: 256, Pix: dst.Pix[:len(dst.Pix)-1]},
	} {
		if err := v.FrameAt(0, bad); !errors.Is(err, ErrOptions) {
			t.Errorf("FrameAt into %dx%d stride %d, %d bytes = %v", bad.Width, bad.Height, bad.Stride, len(bad.Pix), err)
		}
	}
	if err := v.FrameAt(math.NaN(), dst); !errors.Is(err, ErrOptions) {
		t.Errorf("FrameAt(NaN) = %v", err)
	}
	if err := v.FrameAt(0.1, dst); err != nil || readIndex(dst) != 3 {
		t.Fatalf("FrameAt(0.1) after refusals: %v, frame %d", err, readIndex(dst))
	}
	v.Close()
	v.Close()
	if err := v.FrameAt(0, dst); !errors.Is(err, ErrClosed) {
		t.Errorf("FrameAt after Close = %v", err)
	}
	if v.Info().Frames != 10 {
		t.Errorf("Info after Close = %+v", v.Info())
	}
	var nilV *Video
	nilV.Close()
	if err := nilV.FrameAt(0, dst); !errors.Is(err, ErrClosed) {
		t.Errorf("nil FrameAt = %v", err)
	}
	if nilV.Info() != (Info{}) {
		t.Error("nil Info not zero")
	}
}

// BenchmarkFrameAtForward16fps: FrameAt over sorted 16 fps times of a
// 854x480 30 fps 24 s clip (Writer, veryfast crf 18, default GOP 250), one
// op being the whole pass (open, 384 FrameAt into an 854x480 image, close).
func BenchmarkFrameAtForward16fps(b *testing.B) {
	const w, h, fps, secs = 854, 480, 30, 24
	path := filepath.Join(b.TempDir(), "clip.mp4")
	cw, err := Create(path, Options{Width: w, Height: h, FPS: fps, Preset: "veryfast", CRF: 18})
	if err != nil {
		b.Fatal(err)
	}
	frames := make([]Image, 30)
	for i := range frames {
		frames[i] = benchFrame(i)
	}
	for i := 0; i < fps*secs; i++ {
		if err := cw.WriteRGBA(frames[i%len(frames)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := cw.Close(); err != nil {
		b.Fatal(err)
	}
	dst := Image{Width: w, Height: h, Stride: 4 * w, Pix: make([]byte, 4*w*h)}
	n := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		v, err := OpenVideo(path)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < 16*secs; i++ {
			if err := v.FrameAt(float64(i)/16, dst); err != nil {
				b.Fatal(err)
			}
			n++
		}
		v.Close()
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "frames/s")
}

// BenchmarkFrameAtConvert measures FrameAt's yuv420p→RGBA conversion of an
// 854x480 frame with its flags and with DecodeAll's, unscaled and scaled;
// it is how frameAtFlags and scaleFlags were chosen.
func BenchmarkFrameAtConvert(b *testing.B) {
	f := astiav.AllocFrame()
	defer f.Free()
	f.SetWidth(854)
	f.SetHeight(480)
	f.SetPixelFormat(astiav.PixelFormatYuv420P)
	if err := f.AllocBuffer(0); err != nil {
		b.Fatal(err)
	}
	c, err := newConverter(854, 480)
	if err != nil {
		b.Fatal(err)
	}
	defer c.free()
	if err := c.convert(benchFrame(3), f); err != nil {
		b.Fatal(err)
	}
	for _, fl := range []struct {
		name  string
		flags int
		w     int
	}{
		{"decodeFlags", decodeFlags, 854},
		{"point+accurate_rnd", swsPoint | swsAccurateRnd, 854},
		{"frameAtFlags", frameAtFlags, 854},
		{"427/bilinear", swsBilinear, 427},
		{"427/area", swsArea, 427},
		{"64/bilinear", swsBilinear, 64},
		{"64/area", swsArea, 64},
	} {
		b.Run(fl.name, func(b *testing.B) {
			h := 480 * fl.w / 854
			sws := swsNewScaled(854, 480, int(astiav.PixelFormatYuv420P), fl.w, h, int(astiav.PixelFormatRgba), fl.flags, colorSpaceBT601, false)
			if sws == nil {
				b.Fatal("swsNewScaled failed")
			}
			defer swsFree(sws)
			var buf rgbaBuffer
			out := buf.image(fl.w, h)
			b.ReportAllocs()
			for b.Loop() {
				if ret := swsFrameToPix(sws, f.UnsafePointer(), out.Pix, out.Stride); ret < 0 {
					b.Fatal(errCode(ret))
				}
			}
		})
	}
}
