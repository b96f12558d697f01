package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/internal/fakemodel"
)

// TestRequestBody: a request's own fields (what a video request tells
// vLLM) are merged over extra_body at every depth — extra_body's
// mm_processor_kwargs.max_pixels and the request's fps and
// do_sample_frames both arrive — in the online body and the batch body
// alike; a request without them is the body extra_body alone makes; a
// reserved field is refused unsent; extra_body itself is not modified.
func TestRequestBody(t *testing.T) {
	srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { ok(w) })
	extra := map[string]any{"mm_processor_kwargs": map[string]any{"max_pixels": 1000}, "top_k": 20}
	c, _ := newTestClient(t, srv.URL+"/v1", func(cfg *Config) { cfg.ExtraBody = extra })
	msgs := []chat.Message{{Role: chat.RoleUser, Parts: []chat.Part{chat.Text("Count."), {Type: chat.TypeVideo, URL: "data:video/mp4;base64,AAAA"}}}}
	req := Request{Messages: msgs, Body: map[string]any{
		"media_io_kwargs":     map[string]any{"video": map[string]any{"num_frames": -1}},
		"mm_processor_kwargs": map[string]any{"fps": 2.0, "do_sample_frames": false},
	}}
	if _, err := c.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := decode(t, srv.body(0))
	if !reflect.DeepEqual(got["media_io_kwargs"], map[string]any{"video": map[string]any{"num_frames": -1.0}}) ||
		!reflect.DeepEqual(got["mm_processor_kwargs"], map[string]any{"max_pixels": 1000.0, "fps": 2.0, "do_sample_frames": false}) ||
		got["top_k"] != 20.0 {
		t.Errorf("body %v", got)
	}
	b, err := c.BatchBody(req)
	var batch map[string]any
	if err != nil || json.Unmarshal(b, &batch) != nil || !reflect.DeepEqual(batch, got) {
		t.Errorf("batch body %s (%v)", b, err)
	}
	if !reflect.DeepEqual(extra["mm_processor_kwargs"], map[string]any{"max_pixels": 1000}) {
		t.Errorf("extra_body modified: %v", extra)
	}
	// Without Body: extra_body alone.
	if _, err := c.Chat(context.Background(), Request{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	plain := decode(t, srv.body(1))
	if _, ok := plain["media_io_kwargs"]; ok || !reflect.DeepEqual(plain["mm_processor_kwargs"], map[string]any{"max_pixels": 1000.0}) {
		t.Errorf("plain body %v", plain)
	}
	_, err = c.Chat(context.Background(), Request{Messages: msgs, Body: map[string]any{"temperature": 1}})
	var ce *Error
	if !errors.As(err, &ce) || ce.Kind != KindInvalidRequest || !strings.Contains(err.Error(), "temperature") || srv.calls() != 2 {
		t.Errorf("reserved field: %v, %d requests", err, srv.calls())
	}
}

// TestGeminiRefusesRequestBody: request-level body fields are an
// OpenAI-compatible server's; a Gemini request with one is refused unsent.
func TestGeminiRefusesRequestBody(t *testing.T) {
	g := fakemodel.NewGemini(t, fakemodel.AlwaysGemini(fakemodel.GeminiReply{Text: "\\boxed{2}", PromptTokens: 10, CandidatesTokens: 3}))
	c, _ := newTestGemini(t, g, nil)
	req := framesRequest()
	req.Body = map[string]any{"media_io_kwargs": map[string]any{}}
	_, err := c.Chat(context.Background(), req)
	var ce *Error
	if !errors.As(err, &ce) || ce.Kind != KindInvalidRequest || !strings.Contains(err.Error(), "videoMetadata.fps") || g.Requests() != 0 {
		t.Errorf("%v, %d requests", err, g.Requests())
	}
}
