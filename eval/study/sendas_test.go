package study

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/sampling"
)

const videoStudy = `name: v
manifest: m.jsonl
models:
  - name: qwen
    base_url: http://127.0.0.1:8000/v1
    server: vllm
    video:
      supported: true
conditions:
  - policy: fps:2
    prompt: structured_trace
  - policy: fps:2
    prompt: structured_trace
    as: video
  - policy: uniform:48
    prompt: direct
    as: images
  - policy: native:2
    prompt: direct
    as: video
    labels: time
`

// TestSendAsLoads: as: video is a condition of its own beside the same
// policy as images, stored under label mode "video"; as: images is the
// default (normalised to ""); the server kind is read.
func TestSendAsLoads(t *testing.T) {
	s, err := Load(write(t, t.TempDir(), "v.yaml", videoStudy))
	if err != nil {
		t.Fatal(err)
	}
	want := []Condition{
		{Policy: "fps:2", Labels: "time", Prompt: "structured_trace"},
		{Policy: "fps:2", Labels: "video", Prompt: "structured_trace", SendAs: "video"},
		{Policy: "uniform:48", Labels: "time", Prompt: "direct"},
		{Policy: "native:2", Labels: "video", Prompt: "direct", SendAs: "video"},
	}
	if !reflect.DeepEqual(s.Conditions, want) {
		t.Fatalf("conditions %+v", s.Conditions)
	}
	if s.Models[0].ServerName() != ServerVLLM || (Model{}).ServerName() != ServerOther {
		t.Errorf("server %q", s.Models[0].Server)
	}
	// --labels time after SetDefaults (cmd/tracegrid) still keys as video.
	c := Condition{Policy: "fps:2", Labels: "time", Prompt: "direct", SendAs: "video"}
	if c.WithDefaults().Labels != LabelsVideo {
		t.Errorf("labels %q", c.WithDefaults().Labels)
	}
}

// TestSendAsJSONName: the new field's JSON name is send_as; "as" stays the
// stored prompt alias (As) that snapshots already hold.
func TestSendAsJSONName(t *testing.T) {
	b, err := json.Marshal(Condition{Policy: "fps:2", Labels: "video", Prompt: "direct", As: "direct+0123abcd", SendAs: "video"})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != `{"policy":"fps:2","labels":"video","prompt":"direct","as":"direct+0123abcd","send_as":"video"}` {
		t.Errorf("%s", got)
	}
	b, _ = json.Marshal(Condition{Policy: "fps:2", Labels: "time", Prompt: "direct"})
	if strings.Contains(string(b), "send_as") {
		t.Errorf("images condition %s", b)
	}
}

// TestSendAsRefused: every refusal names what is wrong and why, and no
// condition or model problem goes unreported (exit 2 in the CLI).
func TestSendAsRefused(t *testing.T) {
	base := func() *Study {
		s := &Study{Name: "v", Manifest: "m", Repetitions: 1,
			Models: []Model{{Name: "qwen", BaseURL: "http://x/v1", Server: "vllm", Video: VideoSupport{Supported: true}}}}
		return s
	}
	cases := []struct {
		name  string
		edit  func(s *Study)
		wants []string
	}{
		{"keyframes", func(s *Study) { s.Conditions = []Condition{{Policy: "keyframes", Prompt: "direct", SendAs: "video"}} },
			[]string{"as: video needs evenly spaced samples", "keyframes:0.1 does not: it places frames around the true events"}},
		{"adaptive", func(s *Study) { s.Conditions = []Condition{{Policy: "adaptive:8", Prompt: "direct", SendAs: "video"}} },
			[]string{"adaptive:8 does not: it places frames where the pixels change"}},
		{"shuffled", func(s *Study) { s.Conditions = []Condition{{Policy: "shuffled:8", Prompt: "direct", SendAs: "video"}} },
			[]string{"shuffled:8 does not: it shows the frames out of time order"}},
		{"single", func(s *Study) {
			s.Conditions = []Condition{{Policy: "single:random", Prompt: "direct", SendAs: "video"}}
		},
			[]string{"single:random does not: it shows one frame"}},
		{"no video", func(s *Study) {
			s.Models[0].Video.Supported = false
			s.Conditions = []Condition{{Policy: "fps:2", Prompt: "direct", SendAs: "video"}}
		}, []string{"as: video for model qwen, which takes no video (video.supported is false)"}},
		{"unknown as", func(s *Study) { s.Conditions = []Condition{{Policy: "fps:2", Prompt: "direct", SendAs: "movie"}} },
			[]string{`as "movie": want images`}},
		{"labels none", func(s *Study) {
			s.Conditions = []Condition{{Policy: "fps:2", Labels: "none", Prompt: "direct", SendAs: "video"}}
		},
			[]string{"as: video with labels none: a video carries its own timestamps"}},
		{"rate above the MP4's", func(s *Study) { s.Conditions = []Condition{{Policy: "fps:300", Prompt: "direct", SendAs: "video"}} },
			[]string{"as: video at fps:300", "would be 300 per second", "at most 240 frames per second"}},
		{"server kind", func(s *Study) {
			s.Models[0].Server = "tgi"
			s.Conditions = []Condition{{Policy: "fps:2", Prompt: "direct"}}
		}, []string{`server "tgi": want vllm, sglang, other`}},
		{"server on gemini", func(s *Study) {
			s.Models[0] = Model{Name: "g", Provider: ProviderGemini, Server: "vllm"}
			s.Conditions = []Condition{{Policy: "fps:2", Prompt: "direct"}}
		}, []string{`server "vllm": only an openai model has a server kind`}},
		{"vllm extra_body", func(s *Study) {
			s.Models[0].ExtraBody = map[string]any{"media_io_kwargs": map[string]any{}, "mm_processor_kwargs": map[string]any{"fps": 2, "max_pixels": 1}}
			s.Conditions = []Condition{{Policy: "fps:2", Prompt: "direct"}}
		}, []string{"extra_body sets media_io_kwargs, mm_processor_kwargs.fps, which a server: vllm model is sent"}},
		{"resampling extra_body", func(s *Study) {
			s.Models[0].Server = ""
			s.Models[0].ExtraBody = map[string]any{"mm_processor_kwargs": map[string]any{"fps": 1}}
			s.Conditions = []Condition{{Policy: "fps:2", Prompt: "direct", SendAs: "video"}}
		}, []string{"extra_body.mm_processor_kwargs.fps 1 would make the server resample the video"}},
		{"gemini rate", func(s *Study) {
			s.Models[0] = Model{Name: "g", Provider: ProviderGemini}
			s.Conditions = []Condition{{Policy: "fps:30", Prompt: "direct", SendAs: "video"}}
		}, []string{"30 frames per second for model g: Gemini's videoMetadata.fps must be in (0, 24]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := base()
			c.edit(s)
			s.SetDefaults()
			err := s.Validate()
			if !errors.Is(err, ErrStudy) {
				t.Fatalf("err %v", err)
			}
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
	// The same conditions as images are fine.
	s := base()
	s.Conditions = []Condition{{Policy: "keyframes", Prompt: "direct"}, {Policy: "fps:2.5", Prompt: "direct"}, {Policy: "fps:2", Prompt: "direct", SendAs: "images"}}
	s.SetDefaults()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestVideoRate: evenly spaced plans in time order give their rate as a
// fraction (exact where the float is not); anything else is refused with
// the reason.
func TestVideoRate(t *testing.T) {
	plan := func(p string, d float64) sampling.Plan {
		t.Helper()
		pol, err := sampling.Parse(p)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := pol.Plan(sampling.Clip{ID: "c", Duration: d, FPS: 30, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	for _, c := range []struct {
		policy string
		d      float64
		rate   Rate
		err    string
	}{
		{"fps:2", 24, Rate{2, 1}, ""},
		{"native:2", 24, Rate{2, 1}, ""},
		{"uniform:48", 24, Rate{2, 1}, ""},
		{"fps:30", 4, Rate{30, 1}, ""},
		{"uniform:10", 5, Rate{2, 1}, ""},
		{"uniform:10", 24, Rate{5, 12}, ""},
		{"fps:2.5", 24, Rate{5, 2}, ""},
		// 719 frames at 30 fps: 10 frames over 719/30 s.
		{"uniform:10", 719.0 / 30, Rate{300, 719}, ""},
		{"fps:2,max:10", 24, Rate{5, 12}, ""},
		{"shuffled:8", 4, Rate{}, "a video shows frames in time order"},
	} {
		r, err := VideoRate(plan(c.policy, c.d), c.d)
		if r != c.rate || (c.err == "") != (err == nil) || err != nil && (!strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrStudy) || !errors.Is(err, ErrVideoPlan)) {
			t.Errorf("%s on %v s: %d, %v", c.policy, c.d, r, err)
		}
	}
}

// TestVideoBody: a vllm model's video request keeps every frame and sets
// the processor to the video's rate; other servers get nothing.
func TestVideoBody(t *testing.T) {
	m := Model{Name: "q", Server: ServerVLLM}
	want := map[string]any{
		"media_io_kwargs":     map[string]any{"video": map[string]any{"num_frames": -1}},
		"mm_processor_kwargs": map[string]any{"fps": 2.0, "do_sample_frames": false},
	}
	if got := m.VideoBody(2, true); !reflect.DeepEqual(got, want) {
		t.Errorf("presampled %v", got)
	}
	if got := m.VideoBody(2, false); got["mm_processor_kwargs"].(map[string]any)["do_sample_frames"] != true {
		t.Errorf("clip's own MP4 %v", got)
	}
	for _, o := range []Model{{Name: "o"}, {Name: "s", Server: ServerSGLang}, {Name: "g", Provider: ProviderGemini}} {
		if got := o.VideoBody(2, true); got != nil {
			t.Errorf("%s: %v", o.Name, got)
		}
	}
}

// TestDryRunAsVideo: fps:2 as video on a 24 s clip is 48 video frames at
// the model's per-frame tokens and no images; as images it is 48 images.
func TestDryRunAsVideo(t *testing.T) {
	s := &Study{Name: "v", Manifest: "m", Repetitions: 1, Decoding: Decoding{MaxTokens: 100},
		Models: []Model{{Name: "q", BaseURL: "http://x/v1", Video: VideoSupport{Supported: true, TokensPerFrame: 100}}},
		Conditions: []Condition{
			{Policy: "fps:2", Prompt: "direct", SendAs: "video"},
			{Policy: "fps:2", Prompt: "direct"},
		}}
	s.SetDefaults()
	es := dryRun(t, s, prompts.Default(), clip24("blinking_a", 3))
	if es[0].VideoFrames != 48 || es[0].Images != 0 || es[0].InputTokens < 4800 || es[0].InputTokens > 4800+200 {
		t.Errorf("as video %+v", es[0])
	}
	if es[1].VideoFrames != 0 || es[1].Images != 48 {
		t.Errorf("as images %+v", es[1])
	}
	s.Conditions = []Condition{{Policy: "uniform:10", Prompt: "direct", SendAs: "video"}}
	s.SetDefaults()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	// A fractional rate (10/24 s) is a video too: 10 frames.
	es, err := s.DryRun([]ClipInfo{clip24("blinking_a", 3)}, prompts.Default())
	if err != nil || len(es) != 1 || es[0].VideoFrames != 10 || es[0].Images != 0 {
		t.Errorf("uniform:10 on 24 s: %+v %v", es, err)
	}
}
