package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/internal/fakemodel"
)

// newTestGemini makes a Gemini client of the stand-in with the test key
// and short backoffs; logs go to the returned buffer at debug level.
func newTestGemini(t *testing.T, g *fakemodel.Gemini, edit func(*Config)) (*Gemini, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	cfg := Config{
		BaseURL:     g.URL(),
		APIKey:      testKey,
		Model:       "gemini-test",
		Timeout:     3 * time.Second,
		MaxRetries:  3,
		BackoffBase: time.Millisecond,
		BackoffMax:  20 * time.Millisecond,
		FilePoll:    time.Millisecond,
		Logger:      slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if edit != nil {
		edit(&cfg)
	}
	c, err := NewGemini(cfg)
	if err != nil {
		t.Fatalf("NewGemini: %v", err)
	}
	t.Cleanup(c.Close)
	return c, logs
}

// A clip's bytes and two images, as the runner sends them (data: URLs).
var (
	clipMP4 = append([]byte("\x00\x00\x00\x18ftypmp42"), bytes.Repeat([]byte{0xAB, 0x01, 0x7F}, 400)...)
	jpegA   = []byte("\xff\xd8\xff\xe0 frame A")
	pngB    = []byte("\x89PNG\r\n\x1a\n frame B")
)

func dataURL(mime string, b []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(b)
}

// framesRequest is a system message and a user turn: instructions, two
// labelled frames and a labelled video.
func framesRequest() Request {
	return Request{Messages: []chat.Message{
		{Role: chat.RoleSystem, Parts: []chat.Part{chat.Text("You are a careful video analyst.")}},
		{Role: chat.RoleUser, Parts: []chat.Part{
			chat.Text("How many times does the light turn on?"),
			chat.Text("Frame 1 of 2 at t = 0.000 s"), {Type: chat.TypeImage, URL: dataURL("image/jpeg", jpegA)},
			chat.Text("Frame 2 of 2 at t = 0.500 s"), {Type: chat.TypeImage, URL: dataURL("image/png", pngB)},
			chat.Text("Video, 24.000 s long, starting at t = 0.000 s"), {Type: chat.TypeVideo, URL: dataURL("video/mp4", clipMP4)},
		}},
	}}
}

// TestGeminiRequestShape: the system text is the system instruction; the
// user turn's parts keep their order (each image after its label, inline
// with its media type and exact bytes; the video inline with
// videoMetadata.fps); decoding lands in generationConfig; the key goes in
// x-goog-api-key. The reply's text, thoughts, usage (thoughts billed as
// output), finish reason, model version and response id are read.
func TestGeminiRequestShape(t *testing.T) {
	g := fakemodel.NewGemini(t, fakemodel.AlwaysGemini(fakemodel.GeminiReply{
		Text: "\\boxed{3}", Thought: "Counting the flashes.", PromptTokens: 1200, CandidatesTokens: 8, ThoughtsTokens: 40,
		ModelVersion: "gemini-test-001", ResponseID: "resp-7",
	}))
	c, _ := newTestGemini(t, g, nil)
	req := framesRequest()
	req.Temperature, req.TopP, req.MaxTokens, req.Seed, req.ThinkingBudget, req.VideoFPS = ptr(0.0), ptr(0.95), 512, ptr(7), ptr(128), 1
	resp, err := c.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "\\boxed{3}" || resp.Reasoning != "Counting the flashes." || resp.FinishReason != "STOP" || resp.Blocked ||
		resp.Model != "gemini-test-001" || resp.RequestID != "resp-7" || resp.Attempts != 1 {
		t.Errorf("response %+v", resp)
	}
	if u := resp.Usage; u.PromptTokens != 1200 || u.CompletionTokens != 48 || u.ReasoningTokens != 40 || u.TotalTokens != 1248 {
		t.Errorf("usage %+v, want prompt 1200, completion 8+40", u)
	}
	rs := g.Received()
	if len(rs) != 1 {
		t.Fatalf("%d requests", len(rs))
	}
	r := rs[0]
	if r.Model != "gemini-test" || r.APIKey != testKey {
		t.Errorf("model %q key %q", r.Model, r.APIKey)
	}
	if len(r.System) != 1 || r.System[0].Text != "You are a careful video analyst." {
		t.Errorf("system instruction %+v", r.System)
	}
	if len(r.Contents) != 1 || r.Contents[0].Role != "user" {
		t.Fatalf("contents %+v", r.Contents)
	}
	p := r.Contents[0].Parts
	want := []struct {
		text, mime string
		data       []byte
	}{
		{text: "How many times does the light turn on?"},
		{text: "Frame 1 of 2 at t = 0.000 s"}, {mime: "image/jpeg", data: jpegA},
		{text: "Frame 2 of 2 at t = 0.500 s"}, {mime: "image/png", data: pngB},
		{text: "Video, 24.000 s long, starting at t = 0.000 s"}, {mime: "video/mp4", data: clipMP4},
	}
	if len(p) != len(want) {
		t.Fatalf("%d parts, want %d: %+v", len(p), len(want), p)
	}
	for i, w := range want {
		if p[i].Text != w.text || p[i].MIMEType != w.mime || !bytes.Equal(p[i].Data, w.data) {
			t.Errorf("part %d = %q %q %d bytes, want %q %q %d bytes", i, p[i].Text, p[i].MIMEType, len(p[i].Data), w.text, w.mime, len(w.data))
		}
	}
	if v := p[6]; v.FPS == nil || *v.FPS != 1 || v.FileURI != "" {
		t.Errorf("video part fps %v file %q", v.FPS, v.FileURI)
	}
	if p[2].FPS != nil {
		t.Errorf("image part has videoMetadata")
	}
	gc := r.GenerationConfig
	tc, _ := gc["thinkingConfig"].(map[string]any)
	if gc["temperature"] != 0.0 || gc["topP"] != 0.95 || gc["maxOutputTokens"] != 512.0 || gc["seed"] != 7.0 || tc["thinkingBudget"] != 128.0 {
		t.Errorf("generationConfig %v", gc)
	}
}

// TestGeminiTwoTurns: a follow-up is a real second turn — user, model,
// user — and a thinking level is sent as written, upper case.
func TestGeminiTwoTurns(t *testing.T) {
	g := fakemodel.NewGemini(t, fakemodel.AlwaysGemini(fakemodel.GeminiReply{Text: "\\boxed{2}", PromptTokens: 10, CandidatesTokens: 3}))
	c, _ := newTestGemini(t, g, nil)
	req := Request{ThinkingLevel: "low", Messages: []chat.Message{
		{Role: chat.RoleUser, Parts: []chat.Part{chat.Text("Count."), {Type: chat.TypeImage, URL: dataURL("image/jpeg", jpegA)}}},
		{Role: chat.RoleAssistant, Parts: []chat.Part{chat.Text("1 — on — running count 1\n\\boxed{1}")}},
		{Role: chat.RoleUser, Parts: []chat.Part{chat.Text("Check each line and give the corrected count.")}},
	}}
	if _, err := c.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	r := g.Received()[0]
	var roles []string
	for _, c := range r.Contents {
		roles = append(roles, c.Role)
	}
	if strings.Join(roles, ",") != "user,model,user" || r.Contents[1].Parts[0].Text != "1 — on — running count 1\n\\boxed{1}" ||
		r.Contents[2].Parts[0].Text != "Check each line and give the corrected count." || len(r.System) != 0 {
		t.Errorf("contents %+v", r.Contents)
	}
	if tc, _ := r.GenerationConfig["thinkingConfig"].(map[string]any); tc["thinkingLevel"] != "LOW" {
		t.Errorf("generationConfig %v", r.GenerationConfig)
	}
}

// TestGeminiBlocked: a blocked prompt and a candidate stopped for safety
// are replies — Blocked, with the reason, usage kept — sent once, never
// retried.
func TestGeminiBlocked(t *testing.T) {
	for _, c := range []struct {
		reply  fakemodel.GeminiReply
		finish string
	}{
		{fakemodel.GeminiReply{BlockReason: "SAFETY", PromptTokens: 900}, "prompt_blocked:SAFETY"},
		{fakemodel.GeminiReply{FinishReason: "PROHIBITED_CONTENT", PromptTokens: 900}, "PROHIBITED_CONTENT"},
	} {
		g := fakemodel.NewGemini(t, fakemodel.AlwaysGemini(c.reply))
		cl, _ := newTestGemini(t, g, nil)
		resp, err := cl.Chat(context.Background(), framesRequest())
		if err != nil {
			t.Fatalf("%s: %v", c.finish, err)
		}
		if !resp.Blocked || resp.FinishReason != c.finish || resp.Text != "" || resp.Usage.PromptTokens != 900 || g.Requests() != 1 {
			t.Errorf("%s: %+v after %d requests", c.finish, resp, g.Requests())
		}
	}
}

// TestGemini429RetryDelay: a 429 RESOURCE_EXHAUSTED is retried after the
// retryDelay of its RetryInfo — cut to BackoffMax and logged as such.
func TestGemini429RetryDelay(t *testing.T) {
	g := fakemodel.NewGemini(t, func(r fakemodel.GeminiRequest) fakemodel.GeminiReply {
		if r.N == 1 {
			return fakemodel.GeminiReply{Status: 429, ErrorStatus: "RESOURCE_EXHAUSTED", RetryDelay: "37s"}
		}
		return fakemodel.GeminiReply{Text: "\\boxed{1}"}
	})
	c, logs := newTestGemini(t, g, nil)
	resp, err := c.Chat(context.Background(), framesRequest())
	if err != nil || resp.Attempts != 2 || g.Requests() != 2 {
		t.Fatalf("%+v %v, %d requests", resp, err, g.Requests())
	}
	if l := logs.String(); !strings.Contains(l, "asked for 37s (RetryInfo retryDelay), cut to the 20ms cap") || !strings.Contains(l, "rate_limited (HTTP 429)") {
		t.Errorf("log:\n%s", l)
	}
	// Without RetryInfo the wait is ours; a persistent 429 ends rate_limited.
	g2 := fakemodel.NewGemini(t, fakemodel.AlwaysGemini(fakemodel.GeminiReply{Status: 429, ErrorStatus: "RESOURCE_EXHAUSTED"}))
	c2, _ := newTestGemini(t, g2, func(cfg *Config) { cfg.MaxRetries = 2 })
	_, err = c2.Chat(context.Background(), framesRequest())
	if e := asError(t, err); e.Kind != KindRateLimited || e.Attempts != 3 || !strings.Contains(e.Message, "RESOURCE_EXHAUSTED") || g2.Requests() != 3 {
		t.Errorf("error %+v after %d requests", e, g2.Requests())
	}
}

// TestGeminiServerErrors: 500 and 503 are retried; 400 and 403 are not.
func TestGeminiServerErrors(t *testing.T) {
	g := fakemodel.NewGemini(t, func(r fakemodel.GeminiRequest) fakemodel.GeminiReply {
		switch r.N {
		case 1:
			return fakemodel.GeminiReply{Status: 500, ErrorStatus: "INTERNAL"}
		case 2:
			return fakemodel.GeminiReply{Status: 503, ErrorStatus: "UNAVAILABLE"}
		}
		return fakemodel.GeminiReply{Text: "\\boxed{4}"}
	})
	c, _ := newTestGemini(t, g, nil)
	resp, err := c.Chat(context.Background(), framesRequest())
	if err != nil || resp.Attempts != 3 || resp.Text != "\\boxed{4}" {
		t.Fatalf("%+v %v", resp, err)
	}
	for status, kind := range map[int]ErrorKind{400: KindInvalidRequest, 403: KindAuth} {
		g := fakemodel.NewGemini(t, fakemodel.AlwaysGemini(fakemodel.GeminiReply{Status: status, ErrorStatus: "X"}))
		c, _ := newTestGemini(t, g, nil)
		_, err := c.Chat(context.Background(), framesRequest())
		if e := asError(t, err); e.Kind != kind || e.Status != status || e.Attempts != 1 || g.Requests() != 1 {
			t.Errorf("HTTP %d: %+v after %d requests", status, e, g.Requests())
		}
	}
}

// TestGeminiTimeout: a reply that never comes is a timeout per attempt,
// retried, then reported.
func TestGeminiTimeout(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	g := fakemodel.NewGemini(t, fakemodel.AlwaysGemini(fakemodel.GeminiReply{Hold: hold}))
	c, _ := newTestGemini(t, g, func(cfg *Config) { cfg.Timeout = 50 * time.Millisecond; cfg.MaxRetries = 1 })
	_, err := c.Chat(context.Background(), framesRequest())
	if e := asError(t, err); e.Kind != KindTimeout || e.Attempts != 2 || g.Requests() != 2 {
		t.Errorf("error %+v after %d requests", e, g.Requests())
	}
}

// TestGeminiFilesAPI: a request whose inline size passes the limit sends
// its video as a fileData part uploaded through the Files API — waiting
// for the file to become ACTIVE — once per clip, reused by later requests;
// images stay inline. Below the limit nothing is uploaded.
func TestGeminiFilesAPI(t *testing.T) {
	g := fakemodel.NewGemini(t, fakemodel.AlwaysGemini(fakemodel.GeminiReply{Text: "\\boxed{2}"}))
	g.FilesProcessing = 2
	c, _ := newTestGemini(t, g, func(cfg *Config) { cfg.InlineLimit = 1000 }) // the clip alone is 1,624 bytes of base64
	req := framesRequest()
	req.VideoFPS = 2
	for range 3 {
		if _, err := c.Chat(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	ups := g.Uploads()
	if len(ups) != 1 || !bytes.Equal(ups[0], clipMP4) || c.files.uploads() != 1 {
		t.Fatalf("%d uploads (want 1, the clip's bytes)", len(ups))
	}
	for _, r := range g.Received() {
		p := r.Contents[0].Parts
		v := p[6]
		if v.FileURI == "" || v.Data != nil || v.MIMEType != "video/mp4" || v.FPS == nil || *v.FPS != 2 {
			t.Errorf("request %d video part %+v", r.N, v)
		}
		if !bytes.Equal(p[2].Data, jpegA) || p[2].FileURI != "" {
			t.Errorf("request %d: image not inline", r.N)
		}
	}
	// Under the default limit the clip goes inline.
	g2 := fakemodel.NewGemini(t, fakemodel.AlwaysGemini(fakemodel.GeminiReply{Text: "\\boxed{2}"}))
	c2, _ := newTestGemini(t, g2, nil)
	if _, err := c2.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if len(g2.Uploads()) != 0 || !bytes.Equal(g2.Received()[0].Contents[0].Parts[6].Data, clipMP4) {
		t.Errorf("below the limit: %d uploads", len(g2.Uploads()))
	}
}

// TestGeminiNoKeyAndRefusals: with no key the SDK sends none, even with
// GEMINI_API_KEY in the environment; an OpenAI-only setting, a
// non-data URL and an fps above 24 are refused before anything is sent;
// extra_body may not set what the client writes.
func TestGeminiNoKeyAndRefusals(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "env-key-must-not-be-sent")
	t.Setenv("GOOGLE_API_KEY", "")
	g := fakemodel.NewGemini(t, fakemodel.AlwaysGemini(fakemodel.GeminiReply{Text: "\\boxed{2}"}))
	c, _ := newTestGemini(t, g, func(cfg *Config) { cfg.APIKey = "" })
	if _, err := c.Chat(context.Background(), framesRequest()); err != nil {
		t.Fatal(err)
	}
	if k := g.Received()[0].APIKey; k != "" {
		t.Errorf("key sent: %q", k)
	}
	bad := []Request{framesRequest(), framesRequest(), framesRequest()}
	bad[0].ReasoningEffort = "high"
	bad[1].Messages[1].Parts[2].URL = "https://example.com/a.jpg"
	bad[2].VideoFPS = 30
	for i, r := range bad {
		_, err := c.Chat(context.Background(), r)
		if e := asError(t, err); e.Kind != KindInvalidRequest || e.Attempts != 0 {
			t.Errorf("%d: %+v", i, e)
		}
	}
	if g.Requests() != 1 {
		t.Errorf("%d requests; the refused ones were sent", g.Requests())
	}
	for _, extra := range []map[string]any{{"contents": []any{}}, {"generationConfig": map[string]any{"temperature": 1}}} {
		if _, err := NewGemini(Config{Model: "m", ExtraBody: extra}); err == nil {
			t.Errorf("extra_body %v accepted", extra)
		}
	}
	// An extra_body that sets something else is merged into the body.
	g2 := fakemodel.NewGemini(t, fakemodel.AlwaysGemini(fakemodel.GeminiReply{Text: "\\boxed{2}"}))
	c2, _ := newTestGemini(t, g2, func(cfg *Config) {
		cfg.ExtraBody = map[string]any{"generationConfig": map[string]any{"mediaResolution": "MEDIA_RESOLUTION_LOW"}}
	})
	req := framesRequest()
	req.MaxTokens = 64
	if _, err := c2.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if gc := g2.Received()[0].GenerationConfig; gc["mediaResolution"] != "MEDIA_RESOLUTION_LOW" || gc["maxOutputTokens"] != 64.0 {
		t.Errorf("generationConfig %v", gc)
	}
}

// TestGeminiKeyNeverLeaks: a server that echoes the key in its error
// message gets it scrubbed from the error and the log.
func TestGeminiKeyNeverLeaks(t *testing.T) {
	g := fakemodel.NewGemini(t, fakemodel.AlwaysGemini(fakemodel.GeminiReply{Status: 500,
		Body: `{"error":{"code":500,"message":"upstream refused key ` + testKey + `","status":"INTERNAL"}}`}))
	c, logs := newTestGemini(t, g, func(cfg *Config) { cfg.MaxRetries = 1 })
	_, err := c.Chat(context.Background(), framesRequest())
	e := asError(t, err)
	if e.Kind != KindServer || !strings.Contains(e.Message, "upstream refused key [REDACTED]") {
		t.Errorf("error %+v", e)
	}
	for _, s := range []string{err.Error(), logs.String(), c.String()} {
		if strings.Contains(s, "SECRET") {
			t.Errorf("key leaked: %s", s)
		}
	}
}
