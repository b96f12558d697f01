package perceiver

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/frames"
	"github.com/tracegrid/tracegrid/eval/parse"
	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/scene"
)

// The objects tests render CountVideoBench clips (5 s at 30 fps) at
// 960x540, the size the brief's frames typically have.
const objW, objH = 960, 540

func newObjectsClip(t testing.TB, class string, n, seed, w, h int) *scene.Clip {
	t.Helper()
	c, err := scene.New(scene.Params{Domain: "objects", N: n, Class: class, Seed: seed,
		Duration: scene.CountVideoBenchDuration, FPS: 30, Width: w, Height: h})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// objectsQuestionFor is CountVideoBench's question for a class
// "<shape>-<colour>" (§5.1).
func objectsQuestionFor(t testing.TB, class string) string {
	t.Helper()
	shape, colour, err := scene.SplitClass(class)
	if err != nil {
		t.Fatal(err)
	}
	return "How many " + colour + " " + shape + "s are in this video?"
}

// objectsMessages is what CountVideoBench sends: the question, then every
// frame of the plan as a JPEG data URL after its frame label.
func objectsMessages(t testing.TB, src *frames.Source, c *scene.Clip, plan sampling.Plan, question string) []chat.Message {
	t.Helper()
	parts := []chat.Part{chat.Text(question)}
	for img, err := range src.Stream(context.Background(), c, plan) {
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, chat.Text(chat.FrameLabel(img.Frame.Position, len(plan.Frames), img.Frame.T)),
			chat.Part{Type: chat.TypeImage, URL: "data:" + img.MIME + ";base64," + base64.StdEncoding.EncodeToString(img.Data)})
	}
	return []chat.Message{{Role: chat.RoleUser, Parts: parts}}
}

func objectsPlan(t testing.TB, c *scene.Clip, policy string) sampling.Plan {
	t.Helper()
	pol, err := sampling.Parse(policy)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pol.Plan(sampling.Clip{ID: c.P.ID(), Duration: c.P.Duration, FPS: float64(c.P.FPS), Seed: c.P.Seed})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// objectsCount asks the detector and reads the count back the way a study
// does (package parse); -1 when the reply holds no count.
func objectsCount(t testing.TB, msgs []chat.Message) (int, string) {
	t.Helper()
	var det Detector
	reply, err := det.Answer(msgs)
	if err != nil {
		t.Fatal(err)
	}
	pr := parse.Parse(reply, Objects)
	if pr.Count == nil {
		return -1, reply
	}
	return *pr.Count, reply
}

// TestObjectsQuestion: CountVideoBench's question names the colour and
// the shape (plural, any case); the other domains' questions keep their
// domains.
func TestObjectsQuestion(t *testing.T) {
	for _, c := range []struct{ q, colour, shape string }{
		{"How many red cubes are in this video?", "red", "cube"},
		{"How many blue spheres are in this video?", "blue", "sphere"},
		{"HOW MANY Purple Spheres are in this video?", "purple", "sphere"},
		{"How many yellow  cube are there?", "yellow", "cube"},
		{"Count the green cubes.", "green", "cube"},
		{"How many violet spheres?", "purple", "sphere"},
	} {
		colour, shape, ok := ObjectsQuestion(c.q)
		if !ok || colour != c.colour || shape != c.shape {
			t.Errorf("%q: got %q %q %v, want %q %q", c.q, colour, shape, ok, c.colour, c.shape)
		}
		if d := InferDomain(c.q); d != Objects {
			t.Errorf("%q: domain %q, want %q", c.q, d, Objects)
		}
	}
	for _, q := range []string{"How many cubes are in this video?", "How many red balls bounce?", "What colour is the cube?"} {
		if _, _, ok := ObjectsQuestion(q); ok {
			t.Errorf("%q read as an objects question", q)
		}
		if d := InferDomain(q); d == Objects {
			t.Errorf("%q: domain objects", q)
		}
	}
	for _, d := range scene.Domains() {
		if got := InferDomain(prompts.Questions()[d].Text); got != d {
			t.Errorf("%s question read as %q", d, got)
		}
	}
	if d := InferDomain(prompts.Questions()[prompts.DomainNatural].Text); d != "" {
		t.Errorf("natural question read as %q", d)
	}
	for _, class := range scene.ObjectClasses() {
		if d := InferDomain(objectsQuestionFor(t, class)); d != Objects {
			t.Errorf("%s: domain %q", class, d)
		}
	}
}

// TestObjectsReply: a sentence ending in the boxed count, which package
// parse reads back; zero objects say so.
func TestObjectsReply(t *testing.T) {
	r := Result{Domain: Objects, Colour: "red", Shape: "cube", Events: make([]Event, 17)}
	if pr := parse.Parse(r.Text(), Objects); pr.Count == nil || *pr.Count != 17 || !strings.Contains(r.Text(), "red cubes") {
		t.Errorf("reply %q parsed to %v", r.Text(), pr.Count)
	}
	r.Events = nil
	if pr := parse.Parse(r.Text(), Objects); pr.Count == nil || *pr.Count != 0 || !strings.Contains(r.Text(), "No red cubes") {
		t.Errorf("reply %q parsed to %v", r.Text(), pr.Count)
	}
}

// TestFitRotation: Horn's method recovers a rotation from directions and
// their rotated copies.
func TestFitRotation(t *testing.T) {
	want := axisAngle(vec3{0.2, -0.9, 0.3}.unit(), 0.4).mul(axisAngle(vec3{1, 0, 0}, -0.1))
	var a, b []vec3
	var w []float64
	for _, d := range []vec3{{0.1, 0.2, 1}, {-0.3, 0.1, 1}, {0.4, -0.2, 1}, {0, 0.35, 1}} {
		a = append(a, d.unit())
		b = append(b, want.apply(d.unit()))
		w = append(w, 1)
	}
	got := fitRotation(a, b, w)
	for i := range got {
		if d := got[i] - want[i]; d > 1e-9 || d < -1e-9 {
			t.Fatalf("fitted %v, want %v", got, want)
		}
	}
}

// allInViewFrame returns a clip frame in which every object's centre is
// in view (the middle one of such frames), or -1.
func allInViewFrame(c *scene.Clip) int {
	o := c.Trace().Objects
	var ks []int
	for k, ids := range o.InView {
		if len(ids) == c.P.N {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		return -1
	}
	return ks[len(ks)/2]
}

// TestObjectsSingleFrame: one frame in which every object's centre is in
// view is counted from itself alone (no rotation to estimate; the world's
// vertical comes from the renderer's usual tilt of 40°). The set: the ten
// classes × N ∈ {5, 8, 12, 20, 30} × seeds 0–1, the clips that have such a
// frame (the middle one). Measured here: 99 of 100 exact (a yellow N=30
// cube clip counted 31); the floor is 95 %.
func TestObjectsSingleFrame(t *testing.T) {
	src := newSource(t, "jpg")
	exact, clips := 0, 0
	for _, class := range scene.ObjectClasses() {
		for _, n := range []int{5, 8, 12, 20, 30} {
			for seed := range 2 {
				c := newObjectsClip(t, class, n, seed, objW, objH)
				k := allInViewFrame(c)
				if k < 0 {
					continue
				}
				plan := sampling.Plan{Policy: "single", Frames: []sampling.Frame{{T: float64(k) / float64(c.P.FPS)}}}
				got, reply := objectsCount(t, objectsMessages(t, src, c, plan, objectsQuestionFor(t, class)))
				clips++
				if got == n {
					exact++
				} else {
					t.Logf("%s, frame %d: counted %d, want %d: %s", c.P.ID(), k, got, n, reply)
				}
			}
		}
	}
	t.Logf("single frame with every object in view: %d of %d exact", exact, clips)
	if clips < 50 || float64(exact) < 0.95*float64(clips) {
		t.Errorf("%d of %d exact (floor 95 %% of at least 50 clips)", exact, clips)
	}
}

// TestObjectsUniformFrames: CountVideoBench's ten uniform frames of
// clips of both shapes, several colours and N from 5 to 50. Measured here
// 11 of 12 exact (50 yellow cubes counted 49: a group of overlapping cubes
// judged one object smaller than it is); the floor allows two misses, by
// at most two objects.
func TestObjectsUniformFrames(t *testing.T) {
	src := newSource(t, "jpg")
	exact, off := 0, 0
	cases := []struct {
		class string
		n     int
	}{
		{"cube-red", 5}, {"sphere-blue", 5}, {"cube-green", 12}, {"sphere-yellow", 12},
		{"cube-purple", 12}, {"sphere-red", 30}, {"cube-blue", 30}, {"sphere-purple", 30},
		{"cube-yellow", 50}, {"sphere-green", 50}, {"cube-red", 50}, {"sphere-blue", 50},
	}
	for _, cs := range cases {
		c := newObjectsClip(t, cs.class, cs.n, 1, objW, objH)
		got, reply := objectsCount(t, objectsMessages(t, src, c, objectsPlan(t, c, "uniform:10"), objectsQuestionFor(t, cs.class)))
		if got == cs.n {
			exact++
			continue
		}
		off = max(off, absInt(got-cs.n))
		t.Logf("%s: counted %d, want %d: %s", c.P.ID(), got, cs.n, reply)
	}
	t.Logf("uniform:10: %d of %d exact", exact, len(cases))
	if exact < len(cases)-2 || off > 2 {
		t.Errorf("%d of %d exact, largest error %d (floor: all but two exact, errors ≤ 2)", exact, len(cases), off)
	}
}

// TestObjectsShuffledFrames: the same frames shown in another order give
// the same reply (frames are aligned in label-time order).
func TestObjectsShuffledFrames(t *testing.T) {
	src := newSource(t, "jpg")
	c := newObjectsClip(t, "cube-green", 20, 2, objW, objH)
	q := objectsQuestionFor(t, "cube-green")
	_, inOrder := objectsCount(t, objectsMessages(t, src, c, objectsPlan(t, c, "uniform:10"), q))
	_, shuffled := objectsCount(t, objectsMessages(t, src, c, objectsPlan(t, c, "shuffled:10"), q))
	if inOrder != shuffled {
		t.Errorf("shuffled frames changed the reply:\n%s\nvs\n%s", inOrder, shuffled)
	}
	if pr := parse.Parse(inOrder, Objects); pr.Count == nil || *pr.Count != 20 {
		t.Errorf("count %v, want 20: %s", pr.Count, inOrder)
	}
}

// TestObjectsOtherColour: frames without any object of the asked colour
// (or a colour the perceiver does not know) give 0 and say so.
func TestObjectsOtherColour(t *testing.T) {
	src := newSource(t, "jpg")
	c := newObjectsClip(t, "cube-red", 12, 0, objW, objH)
	msgs := objectsMessages(t, src, c, objectsPlan(t, c, "uniform:10"), "How many blue cubes are in this video?")
	if got, reply := objectsCount(t, msgs); got != 0 || !strings.Contains(reply, "No blue cubes") {
		t.Errorf("blue cubes among red ones: %d: %s", got, reply)
	}
	msgs[0].Parts[0] = chat.Text("How many cyan spheres are in this video?")
	if got, reply := objectsCount(t, msgs); got != 0 {
		t.Errorf("cyan spheres among red cubes: %d: %s", got, reply)
	}
}

// TestObjectsOddPictures: pictures that show no scene never crash the
// perceiver: a single pixel, white, a picture filled with the asked
// colour, noise, and pictures of different sizes in one request.
func TestObjectsOddPictures(t *testing.T) {
	solid := func(w, h int, c color.NRGBA) image.Image {
		img := image.NewNRGBA(image.Rect(0, 0, w, h))
		for i := 0; i < len(img.Pix); i += 4 {
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, 255
		}
		return img
	}
	noise := image.NewNRGBA(image.Rect(0, 0, 320, 180))
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range noise.Pix {
		noise.Pix[i] = uint8(rng.IntN(256))
	}
	square := solid(640, 360, color.NRGBA{255, 255, 255, 255})
	for y := 100; y < 280; y++ {
		for x := 200; x < 480; x++ {
			square.(*image.NRGBA).SetNRGBA(x, y, color.NRGBA{214, 40, 40, 255})
		}
	}
	sets := map[string][]image.Image{
		"1x1":          {solid(1, 1, color.NRGBA{214, 40, 40, 255})},
		"white":        {solid(320, 180, color.NRGBA{255, 255, 255, 255}), solid(320, 180, color.NRGBA{255, 255, 255, 255})},
		"all red":      {solid(320, 180, color.NRGBA{214, 40, 40, 255}), solid(320, 180, color.NRGBA{200, 30, 30, 255})},
		"noise":        {noise, noise},
		"huge blob":    {square},
		"mixed sizes":  {square, solid(1, 1, color.NRGBA{214, 40, 40, 255}), noise},
		"white, black": {solid(64, 64, color.NRGBA{255, 255, 255, 255}), solid(64, 64, color.NRGBA{0, 0, 0, 255})},
	}
	for name, pics := range sets {
		parts := []chat.Part{chat.Text("How many red cubes are in this video?")}
		for k, img := range pics {
			var buf bytes.Buffer
			if err := png.Encode(&buf, img); err != nil {
				t.Fatal(err)
			}
			parts = append(parts, chat.Text(chat.FrameLabel(k, len(pics), float64(k))),
				chat.Part{Type: chat.TypeImage, URL: "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())})
		}
		var det Detector
		reply, err := det.Answer([]chat.Message{{Role: chat.RoleUser, Parts: parts}})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		pr := parse.Parse(reply, Objects)
		t.Logf("%s: %s", name, reply)
		switch name {
		case "white", "white, black":
			if pr.Count == nil || *pr.Count != 0 {
				t.Errorf("%s: want 0: %s", name, reply)
			}
		case "1x1", "all red", "noise":
			if pr.Count != nil {
				t.Errorf("%s: a picture without a light ground got a count: %s", name, reply)
			}
		}
	}
}

// TestObjectsAccuracy measures CountVideoBench's protocol (ten uniform
// JPEG frames at 960x540, the benchmark's question): exact match, Acc@10%
// (|count − N| ≤ 0.1·N), mean absolute error and time per request. By
// default N ∈ {5, 12, 30, 50} × the ten classes, seed 0 (40 clips);
// TRACEGRID_PERCEIVER_OBJECTS=cvb runs the 26 cardinalities of
// scene.CountVideoBenchCounts × 10 classes (260 clips, ~2 min);
// TRACEGRID_PERCEIVER_OBJECTS_SEED picks another seed and
// TRACEGRID_PERCEIVER_OBJECTS_SPLIT=none|area the splitting of merged
// blobs to compare, and TRACEGRID_PERCEIVER_SIZE=WxH the frame size
// (docs/perceiver.md has the numbers). Measured by default: exact match
// 0.925 (three N=50 cube clips counted 47–49), Acc@10% 1.000. The floors,
// for the default splitting only: exact match ≥ 0.85, Acc@10% ≥ 0.98.
func TestObjectsAccuracy(t *testing.T) {
	if testing.Short() {
		t.Skip("renders 40 clips")
	}
	counts := []int{5, 12, 30, 50}
	if os.Getenv("TRACEGRID_PERCEIVER_OBJECTS") == "cvb" {
		counts = scene.CountVideoBenchCounts
	}
	seed := 0
	if s := os.Getenv("TRACEGRID_PERCEIVER_OBJECTS_SEED"); s != "" {
		var err error
		if seed, err = strconv.Atoi(s); err != nil {
			t.Fatalf("TRACEGRID_PERCEIVER_OBJECTS_SEED=%q: %v", s, err)
		}
	}
	switch s := os.Getenv("TRACEGRID_PERCEIVER_OBJECTS_SPLIT"); s {
	case "none":
		objectsSplit = splitNone
	case "area":
		objectsSplit = splitArea
	case "", "peaks":
	default:
		t.Fatalf("TRACEGRID_PERCEIVER_OBJECTS_SPLIT=%q: want none, area or peaks", s)
	}
	defer func() { objectsSplit = splitAreaPeaks }()
	w, h := objW, objH
	if sz := os.Getenv("TRACEGRID_PERCEIVER_SIZE"); sz != "" {
		if _, err := fmt.Sscanf(sz, "%dx%d", &w, &h); err != nil {
			t.Fatalf("TRACEGRID_PERCEIVER_SIZE=%q: want WxH", sz)
		}
	}
	src := newSource(t, "jpg")
	var (
		clips, exact, within int
		absErr               float64
		elapsed              time.Duration
	)
	for _, class := range scene.ObjectClasses() {
		for _, n := range counts {
			c := newObjectsClip(t, class, n, seed, w, h)
			msgs := objectsMessages(t, src, c, objectsPlan(t, c, "uniform:10"), objectsQuestionFor(t, class))
			start := time.Now()
			got, reply := objectsCount(t, msgs)
			elapsed += time.Since(start)
			clips++
			d := absInt(got - n)
			if got < 0 {
				d = n
			}
			absErr += float64(d)
			if d == 0 {
				exact++
			} else {
				t.Logf("%s: counted %d, want %d: %s", c.P.ID(), got, n, reply)
			}
			if 10*d <= n {
				within++
			}
		}
	}
	em, acc := float64(exact)/float64(clips), float64(within)/float64(clips)
	t.Logf("objects, uniform:10 at %dx%d, seed %d, split %d: %d clips, exact match %.3f (%d), Acc@10%% %.3f, MAE %.3f, %v per request",
		w, h, seed, objectsSplit, clips, em, exact, acc, absErr/float64(clips), (elapsed / time.Duration(clips)).Round(time.Millisecond))
	if objectsSplit == splitAreaPeaks && (em < 0.85 || acc < 0.98) {
		t.Errorf("below the floors (exact match ≥ 0.85, Acc@10%% ≥ 0.98)")
	}
}

// BenchmarkObjects: one CountVideoBench request (ten 960x540 JPEG frames
// of 50 cubes): decoding, alignment, mosaic and reply.
func BenchmarkObjects(b *testing.B) {
	src := newSource(b, "jpg")
	c := newObjectsClip(b, "cube-red", 50, 0, objW, objH)
	msgs := objectsMessages(b, src, c, objectsPlan(b, c, "uniform:10"), objectsQuestionFor(b, "cube-red"))
	b.ReportAllocs()
	var det Detector
	for b.Loop() {
		if _, err := det.Answer(msgs); err != nil {
			b.Fatal(err)
		}
	}
}
