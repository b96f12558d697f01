package runner

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/client"
	"github.com/tracegrid/tracegrid/eval/perceiver"
	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/internal/fakemodel"
	"github.com/tracegrid/tracegrid/pipeline"
)

// perceiverModel is the reference perceiver behind the runner's Model
// seam, in process: it reads the request's text and pixels and answers,
// reporting 100 prompt tokens per picture-bearing part plus 10, and 20
// completion tokens (a rule of this test, so that costs are known).
type perceiverModel struct{ d perceiver.Detector }

func (p *perceiverModel) Chat(_ context.Context, req client.Request) (client.Response, error) {
	text, err := p.d.Answer(req.Messages)
	if err != nil {
		return client.Response{}, &client.Error{Kind: client.KindInvalidRequest, Message: err.Error()}
	}
	media := 0
	for _, m := range req.Messages {
		for _, part := range m.Parts {
			if part.Type != chat.TypeText {
				media++
			}
		}
	}
	return client.Response{Text: text, Model: "reference-in-process", FinishReason: "stop", Attempts: 1,
		Usage: client.Usage{PromptTokens: 10 + 100*media, CompletionTokens: 20, TotalTokens: 30 + 100*media}}, nil
}

// TestPerceiverInProcess: a study runs against the reference perceiver
// with no HTTP server at all; every trial is answered with the clips'
// true count (2 light-ups) and costed from the reported usage.
func TestPerceiverInProcess(t *testing.T) {
	st := &study.Study{Name: "inproc", Manifest: manifest, Repetitions: 1,
		Conditions: []study.Condition{{Policy: "fps:4", Prompt: "structured_trace"}},
		Models:     []study.Model{{Name: "ref", BaseURL: "http://127.0.0.1:9/v1", Prices: study.Prices{InputPerMTok: 1000, OutputPerMTok: 2000}}}}
	st.SetDefaults()
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
	db := openDB(t)
	sum, err := Run(context.Background(), Options{Study: st, Prompts: prompts.Default(), DB: db, Renderer: testRenderer,
		Client: func(study.Model) (Model, error) { return &perceiverModel{}, nil }})
	if err != nil || sum.Done != 2 || !sum.Answered() {
		t.Fatalf("%+v %v", sum, err)
	}
	trials, _ := db.Trials(context.Background(), results.Filter{Study: "inproc"})
	for _, tr := range trials {
		// fps:4 on 4 s: 16 images → 1610 prompt tokens, 20 completion.
		if tr.Count == nil || *tr.Count != 2 || tr.ServedModel != "reference-in-process" || len(tr.FinishReasons) != 1 ||
			math.Abs(tr.CostUSD-(1610*1000+20*2000)/1e6) > 1e-9 || tr.TemplateHash == "" {
			t.Errorf("%v: count %v, %+v", tr.Key, tr.Count, tr)
		}
	}
}

// clipVideo is the MP4 of the manifest's first clip, as on disk.
func clipVideo(t *testing.T) (string, []byte) {
	t.Helper()
	entries, err := pipeline.LoadManifest(manifest)
	if err != nil {
		t.Fatal(err)
	}
	p, err := entries[0].VideoPath(manifest)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return entries[0].ID, b
}

func geminiStudy(t *testing.T, g *fakemodel.Gemini, conds ...study.Condition) *study.Study {
	t.Helper()
	st := &study.Study{Name: "gem", Manifest: manifest, Repetitions: 1, Conditions: conds,
		Decoding: study.Decoding{Temperature: ptrTo(0.0), MaxTokens: 256},
		Models: []study.Model{{Name: "gemini", Provider: study.ProviderGemini, BaseURL: g.URL(), ModelID: "gemini-test",
			Concurrency: 1, MaxRetries: 0, Decoding: &study.Decoding{ThinkingBudget: ptrTo(64)},
			Prices: study.Prices{InputPerMTok: 1000, OutputPerMTok: 2000}}}}
	st.SetDefaults()
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
	return st
}

func ptrTo[T any](v T) *T { return &v }

// TestGeminiNativeVideo: native:1 sends the clip's MP4, byte for byte, as
// an inline video part with videoMetadata.fps 1 after its label; the
// decoding (the study's temperature and max_tokens, the model's thinking
// budget) lands in generationConfig; usage bills thoughts as output; the
// trial records the finish reason, served model, request id and thoughts.
func TestGeminiNativeVideo(t *testing.T) {
	g := fakemodel.NewGemini(t, fakemodel.AlwaysGemini(fakemodel.GeminiReply{
		Text: "\\boxed{2}", Thought: "two flashes", PromptTokens: 1000, CandidatesTokens: 10, ThoughtsTokens: 300,
		ModelVersion: "gemini-test-002", ResponseID: "r-1"}))
	st := geminiStudy(t, g, study.Condition{Policy: "native", Prompt: "direct"})
	id, mp4 := clipVideo(t)
	st.Clips = []string{id}
	db := openDB(t)
	sum, err := runStudy(t, context.Background(), st, db)
	if err != nil || sum.Done != 1 {
		t.Fatalf("%+v %v", sum, err)
	}
	rs := g.Received()
	if len(rs) != 1 {
		t.Fatalf("%d requests", len(rs))
	}
	parts := rs[0].Contents[0].Parts
	if len(parts) != 3 || !strings.HasPrefix(parts[1].Text, "Video, 4.000 s long") || parts[2].MIMEType != "video/mp4" ||
		!bytes.Equal(parts[2].Data, mp4) || parts[2].FPS == nil || *parts[2].FPS != 1 {
		t.Fatalf("parts %d: %+v", len(parts), parts)
	}
	gc := rs[0].GenerationConfig
	if tc, _ := gc["thinkingConfig"].(map[string]any); gc["temperature"] != 0.0 || gc["maxOutputTokens"] != 256.0 || tc["thinkingBudget"] != 64.0 {
		t.Errorf("generationConfig %v", gc)
	}
	tr, _, _ := db.Get(context.Background(), trialKey(st, st.Models[0], id, st.Conditions[0], 0))
	// 300 thoughts + 10 answer tokens, billed as output; max_tokens 256
	// bounds the answer only.
	if tr.Count == nil || *tr.Count != 2 || tr.Usage.CompletionTokens != 310 || tr.Usage.ReasoningTokens != 300 || tr.Error != "" ||
		math.Abs(tr.CostUSD-(1000*1000+310*2000)/1e6) > 1e-9 || tr.ServedModel != "gemini-test-002" ||
		strings.Join(tr.RequestIDs, ",") != "r-1" || strings.Join(tr.FinishReasons, ",") != "STOP" || strings.Join(tr.Reasoning, ",") != "two flashes" ||
		tr.ImageBytes != int64(len(mp4)) {
		t.Errorf("trial %+v", tr)
	}
}

// TestGeminiBlockedAndTwoTurns: a blocked reply is an answered trial with
// no count — not retried, not failed — and a two-turn template is a real
// second turn (user, model, user) with the frames in the first.
func TestGeminiBlockedAndTwoTurns(t *testing.T) {
	g := fakemodel.NewGemini(t, func(r fakemodel.GeminiRequest) fakemodel.GeminiReply {
		if strings.Contains(r.Contents[0].Parts[0].Text, "Reply with only the number") {
			// uniform:2 × direct: blocked.
			return fakemodel.GeminiReply{BlockReason: "SAFETY", PromptTokens: 500}
		}
		return fakemodel.GeminiReply{Text: fakemodel.DefaultText, PromptTokens: 100, CandidatesTokens: 10}
	})
	st := geminiStudy(t, g, study.Condition{Policy: "uniform:2", Prompt: "direct"}, study.Condition{Policy: "uniform:2", Prompt: "multi_turn_verification"})
	db := openDB(t)
	sum, err := runStudy(t, context.Background(), st, db)
	if err != nil || sum.Done != 4 || sum.Failed != 0 || !sum.Answered() {
		t.Fatalf("%+v %v", sum, err)
	}
	trials, _ := db.Trials(context.Background(), results.Filter{Study: "gem"})
	turns := 0
	for _, tr := range trials {
		switch tr.Prompt {
		case "direct":
			if tr.Count != nil || tr.Error != "" || strings.Join(tr.FinishReasons, ",") != "prompt_blocked:SAFETY" || tr.Attempts != 1 ||
				math.Abs(tr.CostUSD-0.5) > 1e-9 {
				t.Errorf("blocked trial %+v", tr)
			}
		case "multi_turn_verification":
			turns += len(tr.Responses)
			if tr.Count == nil || *tr.Count != 2 || len(tr.FinishReasons) != 2 {
				t.Errorf("two-turn trial %+v", tr)
			}
		}
	}
	var seconds int
	for _, r := range g.Received() {
		if len(r.Contents) == 3 {
			seconds++
			if r.Contents[0].Role != "user" || r.Contents[1].Role != "model" || r.Contents[1].Parts[0].Text != fakemodel.DefaultText ||
				r.Contents[2].Role != "user" || len(r.Contents[0].Parts) != 5 {
				t.Errorf("second turn %+v", r.Contents)
			}
		}
	}
	// 2 blocked + 2 × 2 turns.
	if g.Requests() != 6 || seconds != 2 || turns != 4 {
		t.Errorf("%d requests, %d second turns", g.Requests(), seconds)
	}
}

// TestVLLMShapedRequests: an OpenAI-compatible model with native video at
// 2 FPS through extra_body, and its own decoding over the study's; an
// o-series model of the same study is sent no temperature.
func TestVLLMShapedRequests(t *testing.T) {
	fm := fakemodel.New(t, fakemodel.Always(fakemodel.Reply{PromptTokens: 10, CompletionTokens: 2}))
	st := &study.Study{Name: "vllm", Manifest: manifest, Repetitions: 1,
		Decoding:   study.Decoding{Temperature: ptrTo(0.0), MaxTokens: 512, Seed: ptrTo(7)},
		Conditions: []study.Condition{{Policy: "native:2", Prompt: "direct"}},
		Models: []study.Model{
			{Name: "qwen", BaseURL: fm.URL(), ModelID: "Qwen/Qwen3-VL-8B-Instruct", Video: study.VideoSupport{Supported: true},
				Decoding:  &study.Decoding{Temperature: ptrTo(0.7), TopP: ptrTo(0.8), MaxTokens: 1024},
				ExtraBody: map[string]any{"mm_processor_kwargs": map[string]any{"fps": 2}, "top_k": 20}},
			{Name: "o3", BaseURL: fm.URL(), ModelID: "o3", Decoding: &study.Decoding{ReasoningEffort: "low"}},
		}}
	st.Clips = []string{manifestIDs(t)[0]}
	st.SetDefaults()
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
	if sum, err := runStudy(t, context.Background(), st, openDB(t)); err != nil || sum.Done != 2 {
		t.Fatalf("%+v %v", sum, err)
	}
	for _, r := range fm.Received() {
		b := r.Body
		switch r.Model {
		case "Qwen/Qwen3-VL-8B-Instruct":
			kw, _ := b["mm_processor_kwargs"].(map[string]any)
			if r.Videos != 1 || r.Images != 0 || kw["fps"] != 2.0 || b["top_k"] != 20.0 || b["temperature"] != 0.7 || b["top_p"] != 0.8 ||
				b["max_tokens"] != 1024.0 || b["seed"] != 7.0 {
				t.Errorf("vLLM request %v", b)
			}
		case "o3":
			if r.Has("temperature") || r.Has("top_p") || b["max_completion_tokens"] != 512.0 || b["reasoning_effort"] != "low" || r.Videos != 0 {
				t.Errorf("o3 request %v", b)
			}
		default:
			t.Errorf("request for %s", r.Model)
		}
	}
}

// TestPromptChangedRefused: a template whose wording changed since the
// condition's trials were stored stops the run before anything is sent,
// naming the condition; --new-prompts records the new wording as a new
// condition (prompt "direct+<hash>") beside the old one, and is
// idempotent. The study's snapshot is recorded once per change.
func TestPromptChangedRefused(t *testing.T) {
	fm := fakemodel.New(t, fakemodel.Always(dollar))
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "t.yaml")
	writeTemplate := func(user string) {
		if err := os.WriteFile(tmpl, []byte("direct:\n  user: \""+user+"\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeTemplate(`{{.Question}} Answer as \\\\boxed{N}.`)
	st := standIn(t, fm, 1, 1, direct)
	st.Prompts = tmpl
	db := openDB(t)
	run := func(newPrompts bool) (Summary, error) {
		set, err := st.PromptSet()
		if err != nil {
			t.Fatal(err)
		}
		return Run(context.Background(), Options{Study: st, Prompts: set, DB: db, Renderer: testRenderer, NewPrompts: newPrompts})
	}
	if sum, err := run(false); err != nil || sum.Done != 2 || fm.Requests() != 2 {
		t.Fatalf("%+v %v", sum, err)
	}
	writeTemplate(`{{.Question}} Reply with the number only, as \\\\boxed{N}.`)
	_, err := run(false)
	if !errors.Is(err, ErrPromptChanged) || fm.Requests() != 2 || !strings.Contains(err.Error(), "condition uniform:2 × direct (labels time): 2 trials of model fake") ||
		!strings.Contains(err.Error(), "--new-prompts") {
		t.Fatalf("changed template: %v, %d requests", err, fm.Requests())
	}
	sum, err := run(true)
	if err != nil || sum.Done != 2 || fm.Requests() != 4 {
		t.Fatalf("--new-prompts: %+v %v, %d requests", sum, err, fm.Requests())
	}
	set, _ := st.PromptSet()
	tp, _ := set.Get("direct")
	renamed := "direct+" + study.TemplateHash(tp)[:8]
	trials, _ := db.Trials(context.Background(), results.Filter{Study: st.Name})
	byPrompt := map[string]int{}
	for _, tr := range trials {
		byPrompt[tr.Prompt]++
	}
	if len(trials) != 4 || byPrompt["direct"] != 2 || byPrompt[renamed] != 2 {
		t.Errorf("stored prompts %v", byPrompt)
	}
	if sum, err := run(true); err != nil || sum.Skipped != 2 || fm.Requests() != 4 {
		t.Errorf("rerun with --new-prompts: %+v %v, %d requests", sum, err, fm.Requests())
	}
	snaps, _ := db.Snapshots(context.Background(), st.Name)
	if len(snaps) != 2 || !strings.Contains(string(snaps[1].JSON), `"as":"`+renamed+`"`) {
		t.Errorf("%d snapshots; last %s", len(snaps), snaps[len(snaps)-1].JSON)
	}
}
