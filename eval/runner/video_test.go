package runner

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/frames"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/internal/fakemodel"
	"github.com/tracegrid/tracegrid/internal/rgba"
	"github.com/tracegrid/tracegrid/pipeline"
)

// asVideo24 is a render of one 24 s blinking clip (160×96), made once for the
// tests of conditions sent as video.
var asVideo24 struct {
	once     sync.Once
	manifest string
	err      error
}

func manifest24(t *testing.T) string {
	t.Helper()
	asVideo24.once.Do(func() {
		dir, err := os.MkdirTemp("", "runner24")
		if err != nil {
			asVideo24.err = err
			return
		}
		spec, err := pipeline.ParseSpec([]byte("grid: default\ndomains: [blinking]\ncounts: [2]\nfrequencies: [1.0]\nseeds: 1\nduration: 24\nwidth: 160\nheight: 96\n"))
		if err == nil {
			_, err = pipeline.Render(context.Background(), spec, pipeline.Options{Out: dir, Renderer: testRenderer})
		}
		asVideo24.manifest, asVideo24.err = filepath.Join(dir, pipeline.ManifestName), err
	})
	if asVideo24.err != nil {
		t.Fatal(asVideo24.err)
	}
	return asVideo24.manifest
}

func videoStudy(t *testing.T, manifest, url, server string, conds ...study.Condition) *study.Study {
	t.Helper()
	st := &study.Study{Name: "asvideo", Manifest: manifest, Repetitions: 1, Conditions: conds,
		Models: []study.Model{{Name: "qwen", BaseURL: url, Server: server, Video: study.VideoSupport{Supported: true},
			Concurrency: 1, MaxRetries: 0}}}
	st.SetDefaults()
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
	return st
}

// videoOf is the MP4 of the request's one video_url part (and how many
// video and image parts it had).
func videoOf(t *testing.T, r fakemodel.Request) []byte {
	t.Helper()
	if r.Videos != 1 || r.Images != 0 {
		t.Fatalf("request %d: %d video parts, %d images", r.N, r.Videos, r.Images)
	}
	for _, m := range r.Body["messages"].([]any) {
		content, _ := m.(map[string]any)["content"].([]any)
		for _, p := range content {
			v, _ := p.(map[string]any)["video_url"].(map[string]any)
			if url, ok := v["url"].(string); ok {
				b64, ok := strings.CutPrefix(url, "data:video/mp4;base64,")
				if !ok {
					t.Fatalf("video URL %.40s", url)
				}
				b, err := base64.StdEncoding.DecodeString(b64)
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
		}
	}
	t.Fatal("no video_url part")
	return nil
}

// TestAsVideoVLLM: fps:2 as video on a 24 s clip to a server: vllm model
// is one video_url part whose MP4 decodes to exactly 48 frames at 2 fps,
// each within 40 dB PSNR of the frame rendered for the same sample time;
// the request keeps every frame (media_io_kwargs num_frames -1) with the
// processor at the video's rate and not sampling, so vLLM's defaults
// (the fake) decode all 48; the trial's frame times are the video's 48
// frames and its key's label mode is "video". The same policy as images,
// in the same study, is 48 image parts with neither field.
func TestAsVideoVLLM(t *testing.T) {
	man := manifest24(t)
	v := &fakemodel.VLLM{}
	srv := fakemodel.New(t, v.Respond)
	st := videoStudy(t, man, srv.URL(), study.ServerVLLM,
		study.Condition{Policy: "fps:2", Prompt: "direct", SendAs: study.SendVideo},
		study.Condition{Policy: "fps:2", Prompt: "direct"})
	db := openDB(t)
	sum, err := runStudy(t, context.Background(), st, db)
	if err != nil || sum.Total != 2 {
		t.Fatalf("%+v %v", sum, err)
	}
	reqs := srv.Received()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	var video, images fakemodel.Request
	for _, r := range reqs {
		if r.Videos > 0 {
			video = r
		} else {
			images = r
		}
	}
	mp4 := videoOf(t, video)
	if !reflect.DeepEqual(video.Body["media_io_kwargs"], map[string]any{"video": map[string]any{"num_frames": -1.0}}) ||
		!reflect.DeepEqual(video.Body["mm_processor_kwargs"], map[string]any{"fps": 2.0, "do_sample_frames": false}) {
		t.Errorf("video request fields: media_io_kwargs %v, mm_processor_kwargs %v", video.Body["media_io_kwargs"], video.Body["mm_processor_kwargs"])
	}
	if !strings.Contains(video.Text, "Video, 24.000 s long") || strings.Contains(video.Text, "Frame 1 of") {
		t.Errorf("video text %q", video.Text)
	}
	if images.Images != 48 || images.Has("media_io_kwargs") || images.Has("mm_processor_kwargs") {
		t.Errorf("images request: %d images, body %v", images.Images, images.Body)
	}
	var seen []fakemodel.Seen
	for _, s := range v.Seen() {
		if s.VideoFrames > 0 {
			seen = append(seen, s)
		}
	}
	if len(seen) != 1 || seen[0].VideoFrames != 48 || seen[0].Loaded != 48 || seen[0].Frames != 48 || math.Abs(seen[0].Duration-24) > 1e-6 {
		t.Errorf("server saw %+v", seen)
	}

	// The MP4: 48 frames at a constant 2 fps, each the rendered frame.
	path := filepath.Join(t.TempDir(), "v.mp4")
	if err := os.WriteFile(path, mp4, 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := encode.Probe(path)
	if err != nil || info.Frames != 48 || info.FPS != 2 || info.Codec != "h264" || info.PixFmt != "yuv420p" || info.Width != 160 || info.Height != 96 {
		t.Fatalf("probe %+v %v", info, err)
	}
	clips, err := loadClips(st)
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := sampling.Parse("fps:2")
	c := clips[0].clip
	plan, err := pol.Plan(sampling.Clip{ID: c.ID, Duration: c.Duration, FPS: c.FPS, Seed: c.Seed})
	if err != nil {
		t.Fatal(err)
	}
	var want [][]byte
	for img, err := range (RenderedFrames{Renderer: testRenderer}).Frames(context.Background(), c, plan, frames.Options{Format: encode.ImagePNG, Workers: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		px, err := decodePNG(img.Data)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, append([]byte(nil), px.Pix...))
	}
	n := 0
	err = encode.DecodeAll(path, func(f encode.Frame) error {
		if math.Abs(f.PTS-float64(f.Index)/2) > 1e-3 {
			t.Errorf("frame %d at %v s", f.Index, f.PTS)
		}
		if p := rgba.PSNR(f.Image.Pix, want[f.Index]); p < 40 {
			t.Errorf("frame %d: PSNR %.1f dB against the rendered frame", f.Index, p)
		}
		n++
		return nil
	})
	if err != nil || n != 48 || len(want) != 48 {
		t.Fatalf("decoded %d of %d frames: %v", n, len(want), err)
	}

	// The trial: the video's frames, under label mode "video".
	tr, ok, err := db.Get(context.Background(), trialKey(st, st.Models[0], clips[0].entry.ID, st.Conditions[0], 0))
	if err != nil || !ok || tr.Labels != study.LabelsVideo || len(tr.FrameTimes) != 48 || tr.FrameTimes[47] != 23.5 ||
		tr.ImageBytes != int64(len(mp4)) || tr.Error != "" {
		t.Errorf("trial %+v (%v, %v)", tr.Key, ok, err)
	}
}

// TestAsVideoOtherServer: to a server of kind other the same video goes
// without the vLLM fields, and a server with vLLM's defaults keeps 32 of
// its 48 frames — what the fields are for.
func TestAsVideoOtherServer(t *testing.T) {
	man := manifest24(t)
	v := &fakemodel.VLLM{}
	srv := fakemodel.New(t, v.Respond)
	st := videoStudy(t, man, srv.URL(), "", study.Condition{Policy: "fps:2", Prompt: "direct", SendAs: study.SendVideo})
	_, _ = runStudy(t, context.Background(), st, openDB(t))
	reqs := srv.Received()
	if len(reqs) != 1 || reqs[0].Has("media_io_kwargs") || reqs[0].Has("mm_processor_kwargs") {
		t.Fatalf("%d requests: %v", len(reqs), reqs)
	}
	videoOf(t, reqs[0])
	if s := v.Seen(); len(s) != 1 || s[0].VideoFrames != 48 || s[0].Loaded != fakemodel.DefaultVideoFrames {
		t.Errorf("server saw %+v", s)
	}
}

// TestImagesUnaffectedByServer: the server kind changes only video
// requests: an images condition's request body is the same, byte for
// byte in every field, with server: vllm as without it.
func TestImagesUnaffectedByServer(t *testing.T) {
	bodies := map[string][]map[string]any{}
	for _, server := range []string{"", study.ServerVLLM} {
		srv := fakemodel.New(t, fakemodel.Always(fakemodel.Reply{PromptTokens: 100, CompletionTokens: 10}))
		st := videoStudy(t, manifest, srv.URL(), server, study.Condition{Policy: "fps:1", Prompt: "direct"}, study.Condition{Policy: "uniform:3", Prompt: "structured_trace"})
		if _, err := runStudy(t, context.Background(), st, openDB(t)); err != nil {
			t.Fatal(err)
		}
		for _, r := range srv.Received() {
			bodies[server] = append(bodies[server], r.Body)
		}
	}
	if len(bodies[""]) != 4 || !reflect.DeepEqual(bodies[""], bodies[study.ServerVLLM]) {
		t.Errorf("images bodies changed with the server kind (%d, %d requests)", len(bodies[""]), len(bodies[study.ServerVLLM]))
	}
}

// TestAsVideoGemini: a gemini model gets the MP4 of fps:2 as an inline
// video/mp4 part with videoMetadata.fps 2, after the video's label, and no
// image parts.
func TestAsVideoGemini(t *testing.T) {
	g := fakemodel.NewGemini(t, fakemodel.AlwaysGemini(fakemodel.GeminiReply{Text: "\\boxed{2}", PromptTokens: 1000, CandidatesTokens: 10}))
	st := geminiStudy(t, g, study.Condition{Policy: "fps:2", Prompt: "direct", SendAs: study.SendVideo})
	id, _ := clipVideo(t)
	st.Clips = []string{id}
	sum, err := runStudy(t, context.Background(), st, openDB(t))
	if err != nil || sum.Done != 1 {
		t.Fatalf("%+v %v", sum, err)
	}
	rs := g.Received()
	if len(rs) != 1 {
		t.Fatalf("%d requests", len(rs))
	}
	parts := rs[0].Contents[0].Parts
	if len(parts) != 3 || !strings.HasPrefix(parts[1].Text, "Video, 4.000 s long") || parts[2].MIMEType != "video/mp4" ||
		parts[2].FPS == nil || *parts[2].FPS != 2 {
		t.Fatalf("parts %d: %+v", len(parts), parts)
	}
	path := filepath.Join(t.TempDir(), "g.mp4")
	os.WriteFile(path, parts[2].Data, 0o600)
	if info, err := encode.Probe(path); err != nil || info.Frames != 8 || info.FPS != 2 {
		t.Errorf("probe %+v %v", info, err)
	}
}

// TestAsVideoFractionalRate: uniform:10 as video on a 24 s clip is a
// video at 10/24 = 5/12 frames a second: its 10 frames, at exactly
// j·2.4 s, with the processor told that rate; the trial's frame times are
// those of the plan. A batch line carries the same body.
func TestAsVideoFractionalRate(t *testing.T) {
	man := manifest24(t)
	v := &fakemodel.VLLM{}
	srv := fakemodel.New(t, v.Respond)
	st := videoStudy(t, man, srv.URL(), study.ServerVLLM, study.Condition{Policy: "uniform:10", Prompt: "direct", SendAs: study.SendVideo})
	db := openDB(t)
	if sum, err := runStudy(t, context.Background(), st, db); err != nil || sum.Done != 1 {
		t.Fatalf("%+v %v", sum, err)
	}
	reqs := srv.Received()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	if fps := reqs[0].Body["mm_processor_kwargs"].(map[string]any)["fps"].(float64); math.Abs(fps-5.0/12) > 1e-12 {
		t.Errorf("mm_processor_kwargs.fps %v, want 5/12", fps)
	}
	path := filepath.Join(t.TempDir(), "u.mp4")
	if err := os.WriteFile(path, videoOf(t, reqs[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	var pts []float64
	if err := encode.DecodeAll(path, func(f encode.Frame) error { pts = append(pts, f.PTS); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(pts) != 10 {
		t.Fatalf("%d frames in the video, want 10", len(pts))
	}
	for j, p := range pts {
		if math.Abs(p-2.4*float64(j)) > 1e-6 {
			t.Errorf("video frame %d at %.9f s, want %.1f", j, p, 2.4*float64(j))
		}
	}
	trials, err := db.Trials(context.Background(), results.Filter{Study: st.Name})
	if err != nil || len(trials) != 1 || len(trials[0].FrameTimes) != 10 || math.Abs(trials[0].FrameTimes[9]-21.6) > 1e-9 {
		t.Fatalf("trials %+v %v", trials, err)
	}
	if out, err := WriteBatch(context.Background(), batchOpts(st, openDB(t)), t.TempDir()); err != nil || out.Lines != 1 {
		t.Errorf("batch: %+v %v", out, err)
	}
}

// TestAsVideoBatch: a batch line of a condition sent as video is the body
// an online request sends: the video_url part and, for server: vllm, the
// fields that keep every frame.
func TestAsVideoBatch(t *testing.T) {
	srv := fakemodel.New(t, fakemodel.Always(fakemodel.Reply{}))
	st := videoStudy(t, manifest, srv.URL(), study.ServerVLLM, study.Condition{Policy: "fps:2", Prompt: "direct", SendAs: study.SendVideo})
	out, err := WriteBatch(context.Background(), batchOpts(st, openDB(t)), t.TempDir())
	if err != nil || out.Lines != 2 || srv.Requests() != 0 {
		t.Fatalf("%+v %v, %d requests", out, err, srv.Requests())
	}
	b, _ := os.ReadFile(out.Files[0])
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var l struct {
			Body map[string]any `json:"body"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(l.Body["media_io_kwargs"], map[string]any{"video": map[string]any{"num_frames": -1.0}}) ||
			!reflect.DeepEqual(l.Body["mm_processor_kwargs"], map[string]any{"fps": 2.0, "do_sample_frames": false}) ||
			!strings.Contains(line, `"type":"video_url"`) || strings.Contains(line, `"type":"image_url"`) {
			t.Errorf("batch body %.300s", line)
		}
	}
}
