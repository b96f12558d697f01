package frames

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/sampling"
)

// markerClip writes a 64×48, 10 fps, 1 s clip: black with a white 16×16
// square in the top-left corner.
func markerClip(t *testing.T, path string) {
	t.Helper()
	w, err := encode.Create(path, encode.Options{Width: 64, Height: 48, FPS: 10, Preset: "ultrafast", Lossless: true})
	if err != nil {
		t.Fatal(err)
	}
	img := encode.Image{Width: 64, Height: 48, Stride: 256, Pix: make([]byte, 256*48)}
	for y := range 48 {
		for x := range 64 {
			v := byte(0)
			if x < 16 && y < 16 {
				v = 255
			}
			copy(img.Pix[y*256+4*x:], []byte{v, v, v, 255})
		}
	}
	for range 10 {
		if err := w.WriteRGBA(img); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// brightCorner says which corner of a decoded PNG is white: "tl", "tr",
// "bl" or "br" ("" for none or several).
func brightCorner(t *testing.T, data []byte) (corner string, w, h int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	lit := func(x, y int) bool { r, _, _, _ := img.At(x, y).RGBA(); return r > 0xc000 }
	w, h = b.Dx(), b.Dy()
	for name, p := range map[string][2]int{"tl": {4, 4}, "tr": {w - 5, 4}, "bl": {4, h - 5}, "br": {w - 5, h - 5}} {
		if lit(p[0], p[1]) {
			if corner != "" {
				return "", w, h
			}
			corner = name
		}
	}
	return corner, w, h
}

// TestStreamVideoRotated: a video whose display matrix turns it 90°, 180°
// or 270° clockwise streams upright at its displayed size: the top-left
// marker lands top-right, bottom-right or bottom-left; at an explicit
// image size the size is the displayed one. Where the ffmpeg CLI is
// installed, its own automatic rotation agrees.
func TestStreamVideoRotated(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "marker.mp4")
	markerClip(t, src)
	one := sampling.Plan{Policy: "uniform:1", Frames: []sampling.Frame{{T: 0.5}}}
	for _, c := range []struct {
		rot          int
		corner       string
		w, h         int
		optW, optH   int
		ffmpegCorner string
	}{
		{0, "tl", 64, 48, 0, 0, "tl"},
		{90, "tr", 48, 64, 0, 0, "tr"},
		{180, "br", 64, 48, 0, 0, "br"},
		{270, "bl", 48, 64, 0, 0, "bl"},
		{90, "tr", 24, 32, 24, 32, ""},
	} {
		path := filepath.Join(dir, "rot.mp4")
		if err := encode.Remux(path, src, encode.RemuxOptions{Rotation: float64(c.rot)}); err != nil {
			t.Fatal(err)
		}
		v, err := OpenVideo(path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewSource(nil, Options{Format: encode.ImagePNG, Width: c.optW, Height: c.optH, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for img, err := range s.StreamVideoRotated(context.Background(), v, c.rot, one) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			corner, w, h := brightCorner(t, img.Data)
			if corner != c.corner || w != c.w || h != c.h {
				t.Errorf("rotation %d: marker %q in a %dx%d image, want %q in %dx%d", c.rot, corner, w, h, c.corner, c.w, c.h)
			}
		}
		v.Close()
		if n != 1 {
			t.Errorf("rotation %d: %d images", c.rot, n)
		}
		if _, err := exec.LookPath("ffmpeg"); err != nil || c.ffmpegCorner == "" {
			continue
		}
		out := filepath.Join(dir, "ffmpeg.png")
		cmd := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-y", "-ss", "0.5", "-i", path, "-frames:v", "1", out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg: %v\n%s", err, b)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if corner, _, _ := brightCorner(t, data); corner != c.ffmpegCorner {
			t.Errorf("rotation %d: the ffmpeg CLI shows the marker %q, want %q", c.rot, corner, c.ffmpegCorner)
		}
	}
	v, err := OpenVideo(src)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	// Letterboxed: the 64×48 picture in a 64×64 image keeps its
	// proportions, centred (rows 8–55), with black bars; the marker is at
	// rows 8–23.
	box, _ := NewSource(nil, Options{Format: encode.ImagePNG, Width: 64, Height: 64, Workers: 1})
	for img, err := range box.StreamVideoRotated(context.Background(), v, 0, one) {
		if err != nil {
			t.Fatal(err)
		}
		pic, err := png.Decode(bytes.NewReader(img.Data))
		if err != nil {
			t.Fatal(err)
		}
		lum := func(x, y int) uint32 { r, _, _, _ := pic.At(x, y).RGBA(); return r >> 8 }
		if b := pic.Bounds(); b.Dx() != 64 || b.Dy() != 64 || lum(4, 3) > 16 || lum(4, 60) > 16 || lum(4, 12) < 200 || lum(40, 40) > 40 {
			t.Errorf("letterbox: %dx%d, bar %d and %d, marker %d, picture %d", b.Dx(), b.Dy(), lum(4, 3), lum(4, 60), lum(4, 12), lum(40, 40))
		}
	}
	s, _ := NewSource(nil, Options{Format: encode.ImagePNG, Workers: 1})
	for _, err := range s.StreamVideoRotated(context.Background(), v, 45, one) {
		if err == nil {
			t.Error("a 45° rotation streamed")
		}
	}
}

// TestFit: the picture's place in a letterboxed image.
func TestFit(t *testing.T) {
	for _, c := range []struct{ pw, ph, w, h, fw, fh int }{
		{64, 48, 64, 64, 64, 48},        // wider: full width
		{48, 64, 64, 64, 48, 64},        // taller: full height
		{1280, 720, 854, 480, 854, 480}, // 853.3 wide: within a pixel
		{320, 240, 854, 480, 640, 480},
		{1920, 1080, 640, 640, 640, 360},
	} {
		if fw, fh := fit(c.pw, c.ph, c.w, c.h); fw != c.fw || fh != c.fh {
			t.Errorf("fit(%d×%d in %d×%d) = %d×%d, want %d×%d", c.pw, c.ph, c.w, c.h, fw, fh, c.fw, c.fh)
		}
	}
}

// TestStreamVideoUpright: StreamVideo turns a video by its own display
// matrix, so `tracegrid frames --video` gives the bytes eval sends for
// the file imported (StreamVideoRotated with the rotation import reads,
// encode.ProbeVideoFile); Upright names the displayed size (issue 31,
// item 13).
func TestStreamVideoUpright(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "marker.mp4")
	markerClip(t, src)
	plan := sampling.Plan{Policy: "uniform:2", Frames: []sampling.Frame{{T: 0.25}, {T: 0.75}}}
	for _, rot := range []int{0, 90, 180, 270} {
		path := filepath.Join(dir, "rot.mp4")
		if err := encode.Remux(path, src, encode.RemuxOptions{Rotation: float64(rot)}); err != nil {
			t.Fatal(err)
		}
		p, err := encode.ProbeVideoFile(path)
		if err != nil {
			t.Fatal(err)
		}
		v, err := OpenVideo(path)
		if err != nil {
			t.Fatal(err)
		}
		r, w, h, err := Upright(v)
		wantW, wantH := 64, 48
		if rot%180 != 0 {
			wantW, wantH = 48, 64
		}
		if err != nil || r != rot || w != wantW || h != wantH || int(p.Rotation) != rot {
			t.Errorf("rotation %d: Upright %d, %dx%d, %v; probe %v", rot, r, w, h, err, p.Rotation)
		}
		s, _ := NewSource(nil, Options{Format: encode.ImagePNG, Workers: 1})
		var own, imported [][]byte
		for img, err := range s.StreamVideo(context.Background(), v, plan) {
			if err != nil {
				t.Fatal(err)
			}
			own = append(own, img.Data)
		}
		for img, err := range s.StreamVideoRotated(context.Background(), v, int(p.Rotation), plan) {
			if err != nil {
				t.Fatal(err)
			}
			imported = append(imported, img.Data)
		}
		v.Close()
		if len(own) != 2 || len(imported) != 2 || !bytes.Equal(own[0], imported[0]) || !bytes.Equal(own[1], imported[1]) {
			t.Errorf("rotation %d: StreamVideo and the imported clip's stream differ", rot)
		}
		if corner, _, _ := brightCorner(t, own[0]); corner != map[int]string{0: "tl", 90: "tr", 180: "br", 270: "bl"}[rot] {
			t.Errorf("rotation %d: marker %q", rot, corner)
		}
	}
}
