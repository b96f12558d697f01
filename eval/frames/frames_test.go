package frames

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/internal/rgba"
	"github.com/tracegrid/tracegrid/pipeline"
	"github.com/tracegrid/tracegrid/scene"
)

var testRenderer *gpu.Renderer

func TestMain(m *testing.M) {
	r, err := gpu.NewRenderer()
	if err != nil {
		os.Stderr.WriteString("frames tests need EGL (llvmpipe is enough): " + err.Error() + "\n")
		os.Exit(1)
	}
	testRenderer = r
	code := m.Run()
	r.Close()
	os.Exit(code)
}

func newClip(t testing.TB, domain string, n int, f float64, w, h int) *scene.Clip {
	t.Helper()
	c, err := scene.New(scene.Params{Domain: domain, N: n, F: f, Seed: 1, Duration: 24, FPS: 30, Width: w, Height: h})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func plan(t testing.TB, policy string, c sampling.Clip) sampling.Plan {
	t.Helper()
	p, err := sampling.Parse(policy)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := p.Plan(c)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

func samplingClip(c *scene.Clip) sampling.Clip {
	return sampling.Clip{ID: c.P.ID(), Duration: c.P.Duration, FPS: float64(c.P.FPS), Seed: c.P.Seed, Events: c.Times()}
}

func collect(t *testing.T, src *Source, c *scene.Clip, p sampling.Plan) []Image {
	t.Helper()
	var out []Image
	for img, err := range src.Stream(context.Background(), c, p) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, img)
	}
	return out
}

func TestStreamOrderFormatAndExactPixels(t *testing.T) {
	c := newClip(t, "bounce_ball", 4, 1.0, 160, 96)
	src, err := NewSource(testRenderer, Options{Format: "png"})
	if err != nil {
		t.Fatal(err)
	}
	p := plan(t, "shuffled:12", samplingClip(c))
	imgs := collect(t, src, c, p)
	if len(imgs) != 12 {
		t.Fatalf("%d images", len(imgs))
	}
	ref := gpu.Image{Width: 160, Height: 96, Stride: 640, Pix: make([]byte, 640*96)}
	for i, im := range imgs {
		if im.Frame != p.Frames[i] || im.MIME != "image/png" {
			t.Errorf("image %d is %+v %s, want plan frame %+v", i, im.Frame, im.MIME, p.Frames[i])
		}
		// The PNG holds exactly the clip frame shown at t.
		k := ShownFrame(im.Frame.T, 30, 720)
		if im.ClipFrame != k {
			t.Errorf("image %d shows clip frame %d, want %d", i, im.ClipFrame, k)
		}
		if err := testRenderer.Render(c.State(float64(k)/30), ref); err != nil {
			t.Fatal(err)
		}
		got, err := png.Decode(bytes.NewReader(im.Data))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(toNRGBA(got).Pix, ref.Pix) {
			t.Errorf("image %d differs from a direct render of clip frame %d", i, k)
		}
	}
}

func toNRGBA(m image.Image) *image.NRGBA {
	if n, ok := m.(*image.NRGBA); ok {
		return n
	}
	b := m.Bounds()
	n := image.NewNRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			n.Set(x, y, m.At(x, y))
		}
	}
	return n
}

func TestStreamJPEGAtModelSizeAndStaticReuse(t *testing.T) {
	c := newClip(t, "blinking", 2, 1.0, 320, 180)
	src, err := NewSource(testRenderer, Options{Format: "jpg", Quality: 85, Width: 224, Height: 126})
	if err != nil {
		t.Fatal(err)
	}
	imgs := collect(t, src, c, plan(t, "fps:2", samplingClip(c)))
	if len(imgs) != 48 {
		t.Fatalf("%d images", len(imgs))
	}
	for _, im := range imgs {
		cfg, format, err := image.DecodeConfig(bytes.NewReader(im.Data))
		if err != nil || format != "jpeg" || cfg.Width != 224 || cfg.Height != 126 {
			t.Fatalf("image %d: %s %dx%d %v", im.Frame.Index, format, cfg.Width, cfg.Height, err)
		}
	}
	// Frames 0 and 1 are in the static span before the first event: the
	// same picture, the same bytes.
	if !bytes.Equal(imgs[0].Data, imgs[1].Data) {
		t.Errorf("identical static frames encoded differently")
	}
}

func TestEarlyBreakStopsStream(t *testing.T) {
	c := newClip(t, "bounce_ball", 12, 0.5, 160, 96)
	src, _ := NewSource(testRenderer, Options{Format: "jpg"})
	before := runtime.NumGoroutine()
	n := 0
	for _, err := range src.Stream(context.Background(), c, plan(t, "fps:16", samplingClip(c))) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 3 {
			break
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Errorf("%d goroutines after an early break, %d before", g, before)
	}
}

// TestRenderedEqualsDecoded: a frame rendered at t and the frame decoded
// from the clip's MP4 at t agree within codec noise, on and between frame
// times.
func TestRenderedEqualsDecoded(t *testing.T) {
	out := t.TempDir()
	spec, err := pipeline.ParseSpec([]byte("grid: default\ndomains: [bounce_ball, state_machine]\ncounts: [4]\nfrequencies: [2.0]\nduration: 4\nwidth: 320\nheight: 180\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.Render(context.Background(), spec, pipeline.Options{Out: out, Renderer: testRenderer}); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(out, pipeline.ManifestName)
	for _, id := range []string{"bounce_ball_N04_F2.0_s00", "state_machine_N04_F2.0_s00"} {
		clip, tr, e, err := pipeline.LoadClip(manifest, id)
		if err != nil {
			t.Fatal(err)
		}
		v, err := encode.OpenVideo(filepath.Join(out, e.Video))
		if err != nil {
			t.Fatal(err)
		}
		src, _ := NewSource(testRenderer, Options{Format: "png"})
		var ts []float64
		for _, ev := range tr.Events {
			ts = append(ts, ev.T, ev.T+0.5/30, ev.T-0.01)
		}
		ts = append(ts, 0, 3.999)
		var frames []sampling.Frame
		for i, tt := range ts {
			frames = append(frames, sampling.Frame{Index: i, Position: i, T: tt})
		}
		dec := encode.Image{Width: 320, Height: 180, Stride: 1280, Pix: make([]byte, 1280*180)}
		for im, err := range src.Stream(context.Background(), clip, sampling.Plan{Policy: "test", Frames: frames}) {
			if err != nil {
				t.Fatal(err)
			}
			if err := v.FrameAt(im.Frame.T, dec); err != nil {
				t.Fatal(err)
			}
			got, _ := png.Decode(bytes.NewReader(im.Data))
			if p := rgba.PSNR(toNRGBA(got).Pix, dec.Pix); p < 35 {
				t.Errorf("%s t=%v: PSNR %.1f dB between rendered and decoded, want ≥ 35", id, im.Frame.T, p)
			}
		}
		v.Close()
	}
}

// TestAdaptiveFindsEventsFromPixels: adaptive, fed only the low-resolution
// rendered pixels, spends most of its budget where the true changes are.
func TestAdaptiveFindsEventsFromPixels(t *testing.T) {
	// Bounce ball, N=4 at 1 Hz: the ball moves only during the 4 s active
	// span, 1/6 of the clip; uniform sampling would put 1/6 of the frames
	// there. The change is spread evenly over the span, so with the 10 %
	// static baseline about 90 % should land inside: assert 75 %.
	c := newClip(t, "bounce_ball", 4, 1.0, 854, 480)
	sc := samplingClip(c)
	sc.Events = nil // the trace is not an input
	sc.Pixels = NewLowRes(testRenderer, c)
	p := plan(t, "adaptive:24", sc)
	start, end := c.ActiveSpan()
	in := 0
	for _, f := range p.Frames {
		if f.T >= start-1.0/30 && f.T <= end+1.0/30 {
			in++
		}
	}
	if in < 18 {
		t.Errorf("bounce_ball: %d of 24 adaptive frames in the active span [%v, %v]", in, start, end)
	}
	// Blinking, N=4 at 1 Hz: all change is at the 8 pulse edges. A change
	// shows in the first frame after an edge, and a budget larger than the
	// number of change frames spills to their neighbours, so "at an edge"
	// means within two frames; at least 12 of 16 must be (uniform sampling
	// would put about 1 there).
	c = newClip(t, "blinking", 4, 1.0, 854, 480)
	sc = samplingClip(c)
	sc.Events = nil
	sc.Pixels = NewLowRes(testRenderer, c)
	p = plan(t, "adaptive:16", sc)
	pulse := c.Trace().Pulse
	near := 0
	for _, f := range p.Frames {
		for _, e := range c.Times() {
			if math.Abs(f.T-e) <= 2.0/30+1e-9 || math.Abs(f.T-(e+pulse)) <= 2.0/30+1e-9 {
				near++
				break
			}
		}
	}
	if near < 12 {
		t.Errorf("blinking: %d of 16 adaptive frames at pulse edges: %v", near, p.Times())
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []Options{{Format: "gif"}, {Quality: 101}, {Width: 100}, {Width: 101, Height: 50}} {
		if _, err := NewSource(testRenderer, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

func TestSheet(t *testing.T) {
	c := newClip(t, "state_machine", 3, 1.0, 320, 180)
	src, _ := NewSource(testRenderer, Options{Format: "jpg"})
	imgs := collect(t, src, c, plan(t, "keyframes", samplingClip(c)))
	var buf bytes.Buffer
	if err := WriteSheet(&buf, imgs, SheetOptions{Title: c.P.ID(), Duration: 24, Events: c.Times(), FrameSpan: 1.0 / 30}); err != nil {
		t.Fatal(err)
	}
	m, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	// 9 thumbnails in 6 columns: two rows, and the three at t_i are marked
	// with a red outline (a red pixel just left of their thumbnails).
	if b := m.Bounds(); b.Dx() != pad+6*(thumbW+pad) {
		t.Errorf("sheet width %d", b.Dx())
	}
	marked := 0
	for i := range imgs {
		x0 := pad + (i%6)*(thumbW+pad) - 2
		y0 := titleH + pad + (i/6)*(135+labelH+pad) + 10
		r, g, _, _ := m.At(x0, y0).RGBA()
		if r>>8 == eventColor && g>>8 == 60 {
			marked++
		}
	}
	if marked != 3 {
		t.Errorf("%d thumbnails marked as events, want 3", marked)
	}
	if err := WriteSheet(&buf, nil, SheetOptions{}); err == nil {
		t.Errorf("empty sheet accepted")
	}
}
