package runner

import (
	"context"
	"iter"
	"sync"
	"testing"

	"github.com/tracegrid/tracegrid/eval/frames"
	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/eval/study"
)

// fakeFrames is a FrameSource without GL or libav: each image is the bytes
// "img-<clip id>", and the low-resolution view of frame k (t = k/FPS) is
// eight pixels of grey level k mod 256.
type fakeFrames struct {
	mu                              sync.Mutex
	images, opened, released, reads int
	sizes                           map[[2]int]int // requested image size → images
}

func (f *fakeFrames) Frames(_ context.Context, c *Clip, plan sampling.Plan, opt frames.Options) iter.Seq2[frames.Image, error] {
	return func(yield func(frames.Image, error) bool) {
		for _, fr := range plan.Frames {
			f.mu.Lock()
			f.images++
			f.sizes[[2]int{opt.Width, opt.Height}]++
			f.mu.Unlock()
			if !yield(frames.Image{Frame: fr, ClipFrame: -1, Data: []byte("img-" + c.ID), MIME: "image/jpeg"}, nil) {
				return
			}
		}
	}
}

type greyRamp struct {
	f   *fakeFrames
	fps float64
}

func (g greyRamp) LowRes(t float64) ([]byte, error) {
	g.f.mu.Lock()
	g.f.reads++
	g.f.mu.Unlock()
	v := byte(int(t*g.fps+0.5) % 256)
	return []byte{v, v, v, v, v, v, v, v}, nil
}

func (f *fakeFrames) Pixels(c *Clip) (sampling.PixelSource, func(), error) {
	f.mu.Lock()
	f.opened++
	f.mu.Unlock()
	return greyRamp{f, c.FPS}, func() { f.mu.Lock(); f.released++; f.mu.Unlock() }, nil
}

// TestFrameSourceSeam: with Options.Frames the runner takes every image
// from the source it is handed — no renderer — at the model's image size;
// only adaptive asks for pixels, once per plan, and releases them.
func TestFrameSourceSeam(t *testing.T) {
	srv := newFake(t, 0)
	st := newStudy(t, srv.URL, study.Condition{Policy: "fps:1", Prompt: "direct"}, study.Condition{Policy: "adaptive:3", Prompt: "direct"})
	st.Repetitions = 1
	st.Models[0].ImageWidth, st.Models[0].ImageHeight = 320, 192
	fake := &fakeFrames{sizes: map[[2]int]int{}}
	db := openDB(t)
	sum, err := Run(context.Background(), Options{Study: st, Prompts: prompts.Default(), DB: db, Frames: fake})
	if err != nil || sum.Done != 4 {
		t.Fatalf("%+v %v", sum, err)
	}
	// Two 4 s clips at 30 fps: fps:1 takes 4 frames, adaptive:3 three
	// after reading all 120 low-resolution frames.
	if fake.images != 2*4+2*3 || fake.opened != 2 || fake.released != 2 || fake.reads != 2*120 || fake.sizes[[2]int{320, 192}] != 14 {
		t.Errorf("images %d, pixels opened %d released %d, %d low-resolution reads, sizes %v", fake.images, fake.opened, fake.released, fake.reads, fake.sizes)
	}
	trials, err := db.Trials(context.Background(), results.Filter{Study: st.Name})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trials {
		per := int64(len("img-" + tr.Clip))
		want := map[string]int{"fps:1": 4, "adaptive:3": 3}[tr.Policy]
		if tr.Images != want || tr.ImageBytes != per*int64(want) {
			t.Errorf("%v: %d images, %d bytes; want %d of %d bytes", tr.Key, tr.Images, tr.ImageBytes, want, per)
		}
	}
}

// TestRenderedFramesNeedsAScene: the rendered source refuses a clip
// without a scene (an imported video) instead of drawing nothing.
func TestRenderedFramesNeedsAScene(t *testing.T) {
	c := &Clip{ID: "squat_01", Domain: "natural", Duration: 2, FPS: 25, Width: 320, Height: 240, Video: "squat_01.mp4"}
	src := RenderedFrames{Renderer: testRenderer}
	for _, err := range src.Frames(context.Background(), c, sampling.Plan{Frames: []sampling.Frame{{T: 0}}}, frames.Options{}) {
		if err == nil {
			t.Error("a clip without a scene rendered")
		}
	}
	if _, _, err := src.Pixels(c); err == nil {
		t.Error("pixels of a clip without a scene")
	}
	r := &run{}
	if _, ok := r.source(c).(DecodedFrames); !ok {
		t.Error("an imported clip is not decoded")
	}
}
