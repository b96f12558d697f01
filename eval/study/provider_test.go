package study

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/prompts"
)

const providerStudy = `name: p
manifest: m.jsonl
decoding: {temperature: 0, top_p: 0.9, max_tokens: 800, seed: 1}
models:
  - name: gem
    provider: gemini
    api_key_env: GEMINI_API_KEY
    model_id: gemini-2.5-flash
    decoding: {thinking_budget: 1024, max_tokens: 2048}
  - name: qwen
    base_url: http://127.0.0.1:8000/v1
    model_id: Qwen/Qwen3-VL-8B-Instruct
    video: {supported: true}
    extra_body:
      mm_processor_kwargs: {fps: 2}
      top_k: 20
  - name: o3
    base_url: https://api.openai.com/v1
    api_key_env: OPENAI_API_KEY
    decoding: {reasoning_effort: low}
    prices: {input_per_mtok: 2, output_per_mtok: 8, batch_discount: 0.5}
conditions:
  - {policy: "native:2", prompt: direct}
`

// TestProviders: a gemini model takes its API root, native video and
// Google's 258 tokens per frame by default; per-model decoding overrides
// the study's field by field; an o-series model is sent no temperature
// or top_p; extra_body survives loading.
func TestProviders(t *testing.T) {
	s, err := parse([]byte(providerStudy))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	gem, qwen, o3 := s.Models[0], s.Models[1], s.Models[2]
	if gem.BaseURL != "https://generativelanguage.googleapis.com/" || !gem.Video.Supported || gem.Video.TokensPerFrame != 258 || gem.Video.Part != "" {
		t.Errorf("gemini defaults %+v", gem)
	}
	d := s.DecodingFor(gem)
	if *d.Temperature != 0 || *d.TopP != 0.9 || d.MaxTokens != 2048 || *d.Seed != 1 || *d.ThinkingBudget != 1024 {
		t.Errorf("gemini decoding %+v", d)
	}
	if fps, ok := qwen.VideoFPSParam(); !ok || fps != 2 || qwen.ExtraBody["top_k"] != 20 {
		t.Errorf("qwen extra_body %v", qwen.ExtraBody)
	}
	if d := s.DecodingFor(o3); d.Temperature != nil || d.TopP != nil || d.ReasoningEffort != "low" || d.MaxTokens != 800 {
		t.Errorf("o3 decoding %+v", d)
	}
	if o3.Prices.Batch() != 0.5 || qwen.Prices.Batch() != DefaultBatchDiscount {
		t.Errorf("batch discount %v %v", o3.Prices.Batch(), qwen.Prices.Batch())
	}
	if got := o3.Prices.Cost(1_000_000, 500_000, o3.Prices.Batch()); got != (2+4)*0.5 {
		t.Errorf("batch cost %v, want $3", got)
	}
}

// TestSendsTemperature: the documented rule and the explicit switch.
func TestSendsTemperature(t *testing.T) {
	no, yes := false, true
	for _, c := range []struct {
		m    Model
		want bool
	}{
		{Model{ModelID: "gpt-4o"}, true},
		{Model{ModelID: "o1"}, false},
		{Model{ModelID: "o3-mini"}, false},
		{Model{ModelID: "o4-mini-2025-04-16"}, false},
		{Model{ModelID: "gpt-5"}, false},
		{Model{ModelID: "gpt-5.1"}, false},
		{Model{ModelID: "openai/o3"}, false},
		{Model{ModelID: "olmo-7b"}, true},
		{Model{ModelID: "o3", SendTemperature: &yes}, true},
		{Model{ModelID: "Qwen/Qwen3-VL-8B-Instruct", SendTemperature: &no}, false},
		{Model{ModelID: "o3", Provider: ProviderGemini}, true},
	} {
		if got := c.m.SendsTemperature(); got != c.want {
			t.Errorf("%+v: %v, want %v", c.m, got, c.want)
		}
	}
}

// TestProviderValidation: each provider's settings are refused where they
// do not belong, naming the field.
func TestProviderValidation(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{"    provider: gemini\n", "    provider: anthropic\n", `provider "anthropic"`},
		{"decoding: {thinking_budget: 1024, max_tokens: 2048}", "decoding: {reasoning_effort: high}", "reasoning_effort is an OpenAI setting"},
		{"    decoding: {reasoning_effort: low}\n", "    decoding: {thinking_level: high}\n", "thinking_budget and thinking_level are Gemini settings"},
		{"    decoding: {reasoning_effort: low}\n", "    decoding: {reasoning_effort: extreme}\n", `reasoning_effort "extreme"`},
		{"top_p: 0.9", "top_p: 0", "top_p 0"},
		{"      top_k: 20\n", "      messages: []\n", "extra_body sets messages"},
		{"mm_processor_kwargs: {fps: 2}", "mm_processor_kwargs: {fps: 1}", "mm_processor_kwargs.fps 1"},
		{`policy: "native:2"`, `policy: "native:30"`, "(0, 24]"},
		{"    model_id: gemini-2.5-flash\n", "    model_id: gemini-2.5-flash\n    base_url: https://generativelanguage.googleapis.com/v1beta\n", "without its version"},
		{"batch_discount: 0.5", "batch_discount: 2", "prices.batch_discount 2"},
	} {
		doc := strings.Replace(providerStudy, c.from, c.to, 1)
		if doc == providerStudy {
			t.Fatalf("%q not in the study", c.from)
		}
		s, err := parse([]byte(doc))
		if err == nil {
			err = s.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.to, err, c.want)
		}
	}
}

// TestTemplateHash: the hash follows the wording only — the same text
// under another name hashes the same, any change to the user, system or
// follow-up text changes it.
func TestTemplateHash(t *testing.T) {
	base := prompts.Template{Name: "a", User: "{{.Question}} Answer as \\boxed{N}.", Family: "synthetic"}
	same := base
	same.Name = "b"
	h := TemplateHash(base)
	if len(h) != 64 || TemplateHash(same) != h {
		t.Errorf("hash %q; renamed %q", h, TemplateHash(same))
	}
	for _, edit := range []func(*prompts.Template){
		func(t *prompts.Template) { t.User += " Be brief." },
		func(t *prompts.Template) { t.System = "You count." },
		func(t *prompts.Template) { t.FollowUp = "Check." },
	} {
		e := base
		edit(&e)
		if TemplateHash(e) == h {
			t.Errorf("%+v hashes like the original", e)
		}
	}
}

// TestSnapshot: the snapshot holds the models (the key's variable name,
// never a key), the decoding each is sent, the conditions and the
// templates' hashes.
func TestSnapshot(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-snapshot-SECRET")
	s, err := parse([]byte(providerStudy))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot(prompts.Default(), "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	b, err := snap.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Snapshot
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	direct, _ := prompts.Default().Get("direct")
	if back.ToolVersion != "v1.2.3" || back.Templates["direct"] != TemplateHash(direct) || len(back.Models) != 3 ||
		back.Models[2].SendsTemperature || back.Models[2].Sent.Temperature != nil || back.Models[2].APIKeyEnv != "OPENAI_API_KEY" ||
		back.Models[0].Sent.MaxTokens != 2048 || len(back.Conditions) != 1 {
		t.Errorf("snapshot %s", b)
	}
	if strings.Contains(string(b), "SECRET") {
		t.Errorf("the key is in the snapshot")
	}
}

// docBlock is the YAML block of docs/study.md after the marker.
func docBlock(t *testing.T, marker string) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/study.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- " + marker + " -->\\s*```yaml\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatalf("docs/study.md has no %s block", marker)
	}
	return string(m[1])
}

// TestDocProviderExamples: the Gemini and vLLM studies of docs/study.md
// load as written; the Gemini one's dry run counts native:1 on a 24 s clip
// as 24 video frames of 258 tokens, and the vLLM one asks the server for
// the condition's 2 FPS.
func TestDocProviderExamples(t *testing.T) {
	dir := t.TempDir()
	gem, err := Load(write(t, dir, "gemini-native.yaml", docBlock(t, "gemini example")))
	if err != nil {
		t.Fatal(err)
	}
	m := gem.Models[0]
	if m.ProviderName() != ProviderGemini || m.APIKeyEnv != "GEMINI_API_KEY" || *gem.DecodingFor(m).ThinkingBudget != 1024 || !m.Video.Supported {
		t.Errorf("gemini study %+v", m)
	}
	es, err := gem.DryRun([]ClipInfo{{ID: "blinking_N02_F1.0_s00", Domain: "blinking", Duration: 24, FPS: 30, N: 2, Events: []float64{3, 9}, Width: 854, Height: 480}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if es[0].Policy != "native:1" || es[0].VideoFrames != 24 || es[0].Images != 0 || es[0].InputTokens < 24*258 || es[0].InputTokens > 24*258+400 ||
		es[0].OutputTokens != 2048 || es[1].Images != 96 {
		t.Errorf("dry run %+v", es)
	}
	vl, err := Load(write(t, dir, "qwen3vl-native.yaml", docBlock(t, "vllm example")))
	if err != nil {
		t.Fatal(err)
	}
	q := vl.Models[0]
	if _, ok := q.VideoFPSParam(); ok || q.ServerName() != ServerVLLM || q.ProviderName() != ProviderOpenAI || !q.SendsTemperature() ||
		len(vl.Conditions) != 3 || vl.Conditions[0].Policy != "native:2" || !vl.Conditions[1].Video() || vl.Conditions[2].Video() {
		t.Errorf("vLLM study %+v %+v", q, vl.Conditions)
	}
	// The request fields the recipe shows for native:2 and fps:2 as video.
	if b, _ := json.Marshal(q.VideoBody(2, false)); string(b) != `{"media_io_kwargs":{"video":{"num_frames":-1}},"mm_processor_kwargs":{"do_sample_frames":true,"fps":2}}` {
		t.Errorf("native body %s", b)
	}
	if b, _ := json.Marshal(q.VideoBody(2, true)); string(b) != `{"media_io_kwargs":{"video":{"num_frames":-1}},"mm_processor_kwargs":{"do_sample_frames":false,"fps":2}}` {
		t.Errorf("as video body %s", b)
	}
	sg, err := Load(write(t, dir, "qwen3vl-sglang.yaml", docBlock(t, "sglang example")))
	if err != nil {
		t.Fatal(err)
	}
	if m := sg.Models[0]; m.ServerName() != ServerSGLang || m.VideoBody(2, true) != nil || !sg.Conditions[1].Video() {
		t.Errorf("SGLang study %+v", sg)
	}
}
