package client

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/chat"
)

// TestExtraBodyAndDecodingVLLMShape: a vLLM-shaped request — extra_body
// merged at the top level (mm_processor_kwargs {fps: 2},
// chat_template_kwargs, top_k), the video as a video_url part, top_p,
// seed and reasoning_effort — exactly as the study gives them.
func TestExtraBodyAndDecodingVLLMShape(t *testing.T) {
	srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { ok(w) })
	extra := map[string]any{
		"mm_processor_kwargs":  map[string]any{"fps": 2},
		"chat_template_kwargs": map[string]any{"enable_thinking": false},
		"top_k":                20,
	}
	c, _ := newTestClient(t, srv.URL+"/v1", func(cfg *Config) { cfg.Model = "Qwen/Qwen3-VL-8B-Instruct"; cfg.ExtraBody = extra })
	req := Request{Messages: []chat.Message{{Role: chat.RoleUser, Parts: []chat.Part{
		chat.Text("Count."), chat.Text("Video, 4.000 s long, starting at t = 0.000 s"), {Type: chat.TypeVideo, URL: "data:video/mp4;base64,AAAA"},
	}}}, Temperature: ptr(0.0), TopP: ptr(0.8), Seed: ptr(3), MaxTokens: 256, ReasoningEffort: "low", VideoFPS: 2}
	if _, err := c.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := decode(t, srv.body(0))
	want := map[string]any{
		"model": "Qwen/Qwen3-VL-8B-Instruct", "temperature": 0.0, "top_p": 0.8, "seed": 3.0, "max_tokens": 256.0,
		"reasoning_effort": "low", "top_k": 20.0, "stream": false,
		"mm_processor_kwargs":  map[string]any{"fps": 2.0},
		"chat_template_kwargs": map[string]any{"enable_thinking": false},
		"messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "Count."},
			map[string]any{"type": "text", "text": "Video, 4.000 s long, starting at t = 0.000 s"},
			map[string]any{"type": "video_url", "video_url": map[string]any{"url": "data:video/mp4;base64,AAAA"}},
		}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("body\n got %v\nwant %v", got, want)
	}
	if srv.length(0) != int64(len(srv.body(0))) {
		t.Errorf("Content-Length %d, body %d bytes", srv.length(0), len(srv.body(0)))
	}
	// The batch body of the same request is the same JSON.
	b, err := c.BatchBody(req)
	if err != nil {
		t.Fatal(err)
	}
	var batch map[string]any
	if err := json.Unmarshal(b, &batch); err != nil || !reflect.DeepEqual(batch, want) {
		t.Errorf("batch body %s (%v)", b, err)
	}
	// Reserved fields are refused by New; so is a Gemini-only setting by Chat.
	for _, k := range []string{"messages", "temperature", "model", "max_tokens", "n"} {
		if _, err := New(Config{BaseURL: srv.URL + "/v1", Model: "m", ExtraBody: map[string]any{k: 1}}); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("extra_body %s: %v", k, err)
		}
	}
	_, err = c.Chat(context.Background(), Request{Messages: req.Messages, ThinkingBudget: ptr(10)})
	if e := asError(t, err); e.Kind != KindInvalidRequest || e.Attempts != 0 || srv.calls() != 1 {
		t.Errorf("thinking budget to an OpenAI model: %+v, %d calls", e, srv.calls())
	}
}

// TestReasoningModelTemperature: a temperature the caller sends reaches an
// o-series model (go-openai's own validator would refuse it locally); one
// it leaves out is not sent, and max_tokens goes as max_completion_tokens.
func TestReasoningModelTemperature(t *testing.T) {
	srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { ok(w) })
	c, _ := newTestClient(t, srv.URL+"/v1", func(cfg *Config) { cfg.Model = "o3" })
	req := userText("hi")
	req.MaxTokens = 100
	if _, err := c.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	req.Temperature = ptr(0.7)
	if _, err := c.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	a, b := decode(t, srv.body(0)), decode(t, srv.body(1))
	if _, has := a["temperature"]; has || a["max_completion_tokens"] != 100.0 || a["max_tokens"] != nil {
		t.Errorf("without temperature: %s", srv.body(0))
	}
	if b["temperature"] != 0.7 {
		t.Errorf("with temperature: %s", srv.body(1))
	}
}

// TestReplyMetadata: the finish reason, served model, reasoning text
// (reasoning_content, or vLLM's "reasoning"), reasoning tokens and request
// id (the x-request-id header, else the completion's id) are read; a
// content_filter finish is a blocked reply.
func TestReplyMetadata(t *testing.T) {
	bodies := []string{
		`{"id":"chatcmpl-9","object":"chat.completion","model":"served-a","choices":[{"index":0,"finish_reason":"length","message":{"role":"assistant","content":"\\boxed{2}","reasoning_content":"two flashes"}}],"usage":{"prompt_tokens":10,"completion_tokens":30,"total_tokens":40,"completion_tokens_details":{"reasoning_tokens":25}}}`,
		`{"id":"chatcmpl-10","object":"chat.completion","model":"served-b","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"\\boxed{3}","reasoning":"vllm thoughts"}}],"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13}}`,
		`{"id":"chatcmpl-11","object":"chat.completion","model":"served-c","choices":[{"index":0,"finish_reason":"content_filter","message":{"role":"assistant","content":""}}],"usage":{"prompt_tokens":10,"completion_tokens":0,"total_tokens":10}}`,
	}
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			w.Header().Set("X-Request-Id", "req-abc")
		}
		reply(w, 200, bodies[n])
	})
	c, _ := newTestClient(t, srv.URL+"/v1", nil)
	want := []Response{
		{Text: "\\boxed{2}", FinishReason: "length", Model: "served-a", Reasoning: "two flashes", RequestID: "req-abc",
			Usage: Usage{PromptTokens: 10, CompletionTokens: 30, TotalTokens: 40, ReasoningTokens: 25}},
		{Text: "\\boxed{3}", FinishReason: "stop", Model: "served-b", Reasoning: "vllm thoughts", RequestID: "chatcmpl-10",
			Usage: Usage{PromptTokens: 10, CompletionTokens: 3, TotalTokens: 13}},
		{FinishReason: "content_filter", Blocked: true, Model: "served-c", RequestID: "chatcmpl-11", Usage: Usage{PromptTokens: 10, TotalTokens: 10}},
	}
	for i, w := range want {
		resp, err := c.Chat(context.Background(), userText("hi"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Latency, resp.Attempts = 0, 0
		if !reflect.DeepEqual(resp, w) {
			t.Errorf("%d: %+v, want %+v", i, resp, w)
		}
		// A batch output body reads the same (no header there).
		parsed, err := c.ParseCompletion([]byte(bodies[i]))
		if i == 0 {
			w.RequestID = "chatcmpl-9"
		}
		if err != nil || !reflect.DeepEqual(parsed, w) {
			t.Errorf("%d: ParseCompletion %+v %v", i, parsed, err)
		}
	}
	if _, err := c.ParseCompletion([]byte(`{"choices":[]}`)); err == nil {
		t.Error("a completion without choices parsed")
	}
}
