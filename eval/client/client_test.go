package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tracegrid/tracegrid/eval/chat"
)

const testKey = "sk-test-SECRET-123"

// fakeServer is an OpenAI-compatible endpoint on 127.0.0.1 whose reply to
// call n (0-based) is chosen by handle; it records what it received.
type fakeServer struct {
	*httptest.Server
	handle func(n int, w http.ResponseWriter, r *http.Request)

	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
	lengths []int64
	times   []time.Time
}

func newFakeServer(t *testing.T, handle func(n int, w http.ResponseWriter, r *http.Request)) *fakeServer {
	t.Helper()
	f := &fakeServer{handle: handle}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		n := len(f.bodies)
		f.bodies = append(f.bodies, body)
		f.headers = append(f.headers, r.Header.Clone())
		f.lengths = append(f.lengths, r.ContentLength)
		f.times = append(f.times, time.Now())
		f.mu.Unlock()
		f.handle(n, w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

func (f *fakeServer) body(n int) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[n]
}

func (f *fakeServer) length(n int) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lengths[n]
}

func (f *fakeServer) header(n int) http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.headers[n]
}

func (f *fakeServer) gap(a, b int) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.times[b].Sub(f.times[a])
}

// completion is a minimal chat completion body.
func completion(text string, prompt, completionTokens int) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "served-model",
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": text},
		}},
		"usage": map[string]any{
			"prompt_tokens": prompt, "completion_tokens": completionTokens, "total_tokens": prompt + completionTokens,
		},
	})
	return string(b)
}

func reply(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func ok(w http.ResponseWriter) { reply(w, 200, completion("The ball bounced 3 times.", 100, 7)) }

func apiError(message string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": "invalid_request_error"}})
	return string(b)
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newTestClient makes a client with the test key and short backoffs; logs
// go to the returned buffer at debug level.
func newTestClient(t *testing.T, baseURL string, edit func(*Config)) (*Client, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	cfg := Config{
		BaseURL:     baseURL,
		APIKey:      testKey,
		Model:       "test-model",
		Timeout:     3 * time.Second,
		MaxRetries:  3,
		BackoffBase: time.Millisecond,
		BackoffMax:  20 * time.Millisecond,
		Logger:      slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if edit != nil {
		edit(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c, logs
}

func userText(s string) Request {
	return Request{Messages: []chat.Message{{Role: chat.RoleUser, Parts: []chat.Part{chat.Text(s)}}}}
}

func asError(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *client.Error", err, err)
	}
	return e
}

func ptr[T any](v T) *T { return &v }

// decode parses a received body.
func decode(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("server received invalid JSON: %v\n%s", err, body)
	}
	return m
}

func TestChatCompletion(t *testing.T) {
	srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { ok(w) })
	c, _ := newTestClient(t, srv.URL+"/v1", nil)

	const img1 = "data:image/jpeg;base64,AAAA"
	const img2 = "data:image/png;base64,BBBB"
	req := Request{
		Messages: []chat.Message{
			{Role: chat.RoleSystem, Parts: []chat.Part{chat.Text("You count events.")}},
			{Role: chat.RoleUser, Parts: []chat.Part{
				chat.Text(chat.FrameLabel(0, 2, 0)),
				{Type: chat.TypeImage, URL: img1, Detail: "low"},
				chat.Text(chat.FrameLabel(1, 2, 0.5)),
				{Type: chat.TypeImage, URL: img2, Detail: "high"},
				chat.Text("How many bounces?"),
			}},
		},
		Temperature: ptr(0.2),
		MaxTokens:   256,
		Seed:        ptr(7),
		EstTokens:   500,
	}
	resp, err := c.Chat(context.Background(), req)
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	if resp.Text != "The ball bounced 3 times." || resp.Attempts != 1 || resp.Model != "served-model" || resp.FinishReason != "stop" {
		t.Errorf("response = %+v", resp)
	}
	if resp.Usage != (Usage{PromptTokens: 100, CompletionTokens: 7, TotalTokens: 107}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	if resp.Latency <= 0 {
		t.Errorf("latency = %v", resp.Latency)
	}

	got := decode(t, srv.body(0))
	if got["model"] != "test-model" || got["temperature"] != 0.2 || got["max_tokens"] != 256.0 || got["seed"] != 7.0 {
		t.Errorf("model/temperature/max_tokens/seed = %v %v %v %v", got["model"], got["temperature"], got["max_tokens"], got["seed"])
	}
	if _, has := got["max_completion_tokens"]; has {
		t.Errorf("max_completion_tokens sent for a non-reasoning model")
	}
	msgs := got["messages"].([]any)
	sys := msgs[0].(map[string]any)
	if sys["role"] != "system" || sys["content"] != "You count events." {
		t.Errorf("system message = %v", sys)
	}
	user := msgs[1].(map[string]any)
	want := []map[string]any{
		{"type": "text", "text": "Frame 1 of 2 at t = 0.000 s"},
		{"type": "image_url", "image_url": map[string]any{"url": img1, "detail": "low"}},
		{"type": "text", "text": "Frame 2 of 2 at t = 0.500 s"},
		{"type": "image_url", "image_url": map[string]any{"url": img2, "detail": "high"}},
		{"type": "text", "text": "How many bounces?"},
	}
	wantJSON, _ := json.Marshal(want)
	gotJSON, _ := json.Marshal(user["content"])
	if user["role"] != "user" || string(gotJSON) != string(wantJSON) {
		t.Errorf("user content =\n%s\nwant\n%s", gotJSON, wantJSON)
	}
}

func TestChatOptionalFieldsAndZeroTemperature(t *testing.T) {
	srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { ok(w) })
	c, _ := newTestClient(t, srv.URL+"/v1", nil)

	// Unset options are not sent.
	if _, err := c.Chat(context.Background(), userText("hi")); err != nil {
		t.Fatal(err)
	}
	got := decode(t, srv.body(0))
	for _, k := range []string{"temperature", "max_tokens", "seed"} {
		if _, has := got[k]; has {
			t.Errorf("%s sent although unset: %s", k, srv.body(0))
		}
	}
	// Temperature 0 (greedy) and seed 0 are sent, not dropped.
	req := userText("hi")
	req.Temperature, req.Seed = ptr(0.0), ptr(0)
	if _, err := c.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got = decode(t, srv.body(1))
	if v, has := got["temperature"]; !has || v != 0.0 {
		t.Errorf("temperature 0 not sent: %s", srv.body(1))
	}
	if v, has := got["seed"]; !has || v != 0.0 {
		t.Errorf("seed 0 not sent: %s", srv.body(1))
	}
	if srv.length(1) != int64(len(srv.body(1))) {
		t.Errorf("Content-Length %d, body %d bytes", srv.length(1), len(srv.body(1)))
	}
}

func TestChatReasoningModelUsesMaxCompletionTokens(t *testing.T) {
	srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { ok(w) })
	c, _ := newTestClient(t, srv.URL+"/v1", func(cfg *Config) { cfg.Model = "o3-mini" })
	req := userText("hi")
	req.MaxTokens = 64
	if _, err := c.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := decode(t, srv.body(0))
	if got["max_completion_tokens"] != 64.0 || got["max_tokens"] != nil {
		t.Errorf("body = %s", srv.body(0))
	}
}

func TestChatMultiTurn(t *testing.T) {
	srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { ok(w) })
	c, _ := newTestClient(t, srv.URL+"/v1", nil)
	req := Request{Messages: []chat.Message{
		{Role: chat.RoleUser, Parts: []chat.Part{chat.Text("Count."), {Type: chat.TypeImage, URL: "data:image/png;base64,AA"}}},
		{Role: chat.RoleAssistant, Parts: []chat.Part{chat.Text("3 bounces at 1.0 s, 2.0 s, 3.0 s.")}},
		{Role: chat.RoleUser, Parts: []chat.Part{chat.Text("Verify each event.")}},
	}}
	if _, err := c.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	msgs := decode(t, srv.body(0))["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("%d messages", len(msgs))
	}
	a := msgs[1].(map[string]any)
	if a["role"] != "assistant" || a["content"] != "3 bounces at 1.0 s, 2.0 s, 3.0 s." {
		t.Errorf("assistant message = %v", a)
	}
	u := msgs[2].(map[string]any)
	if u["role"] != "user" || u["content"] != "Verify each event." {
		t.Errorf("last message = %v", u)
	}
}

func TestChatRefusesBadMessagesWithoutSending(t *testing.T) {
	srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { ok(w) })
	c, _ := newTestClient(t, srv.URL+"/v1", nil)
	img := chat.Part{Type: chat.TypeImage, URL: "data:image/png;base64,AA"}
	cases := map[string][]chat.Message{
		"no messages":       nil,
		"assistant image":   {{Role: chat.RoleAssistant, Parts: []chat.Part{chat.Text("x"), img}}},
		"system image":      {{Role: chat.RoleSystem, Parts: []chat.Part{img}}},
		"unknown role":      {{Role: "tool", Parts: []chat.Part{chat.Text("x")}}},
		"unknown part":      {{Role: chat.RoleUser, Parts: []chat.Part{{Type: "audio_url", URL: "x"}}}},
		"no parts":          {{Role: chat.RoleUser}},
		"image without URL": {{Role: chat.RoleUser, Parts: []chat.Part{{Type: chat.TypeImage}}}},
		"reserved scheme":   {{Role: chat.RoleUser, Parts: []chat.Part{{Type: chat.TypeImage, URL: videoScheme + "0"}}}},
	}
	for name, msgs := range cases {
		_, err := c.Chat(context.Background(), Request{Messages: msgs})
		e := asError(t, err)
		if e.Kind != KindInvalidRequest || e.Attempts != 0 || e.Status != 0 {
			t.Errorf("%s: %+v", name, e)
		}
		if !strings.Contains(e.Error(), "not sent") {
			t.Errorf("%s: %q", name, e.Error())
		}
	}
	if n := srv.calls(); n != 0 {
		t.Errorf("server called %d times", n)
	}
}

func TestChatVideoPart(t *testing.T) {
	srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { ok(w) })
	c, _ := newTestClient(t, srv.URL+"/v1", nil)
	const video = "data:video/mp4;base64,AAAAIGZ0eXBpc29t+/=="
	const video2 = "data:video/mp4;base64,BBBB"
	req := Request{Messages: []chat.Message{{Role: chat.RoleUser, Parts: []chat.Part{
		chat.Text(chat.VideoLabel(24)),
		{Type: chat.TypeVideo, URL: video},
		chat.Text("and <this> & that"),
		{Type: chat.TypeImage, URL: "data:image/jpeg;base64,CC", Detail: "auto"},
		{Type: chat.TypeVideo, URL: video2},
	}}}, Temperature: ptr(0.0)}
	if _, err := c.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	body := srv.body(0)
	if bytes.Contains(body, []byte("tracegrid-video")) {
		t.Errorf("placeholder reached the server: %s", body)
	}
	if srv.length(0) != int64(len(body)) {
		t.Errorf("Content-Length %d, body %d bytes", srv.length(0), len(body))
	}
	got := decode(t, body)
	content, _ := json.Marshal(got["messages"].([]any)[0].(map[string]any)["content"])
	want, _ := json.Marshal([]map[string]any{
		{"type": "text", "text": "Video, 24.000 s long, starting at t = 0.000 s"},
		{"type": "video_url", "video_url": map[string]any{"url": video}},
		{"type": "text", "text": "and <this> & that"},
		{"type": "image_url", "image_url": map[string]any{"url": "data:image/jpeg;base64,CC", "detail": "auto"}},
		{"type": "video_url", "video_url": map[string]any{"url": video2}},
	})
	if string(content) != string(want) {
		t.Errorf("content =\n%s\nwant\n%s", content, want)
	}
	if got["model"] != "test-model" || got["temperature"] != 0.0 {
		t.Errorf("other fields lost in the rewrite: %s", body)
	}
}

// roundTripFunc adapts a function to http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestTransportLeavesOtherBodiesUntouched(t *testing.T) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AA"}}]}],"stream":false}`)
	var seen *http.Request
	var seenBody []byte
	tr := &transport{base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = r
		seenBody, _ = io.ReadAll(r.Body)
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}"))}, nil
	})}
	for _, ex := range []*exchange{nil, {}} {
		ctx := context.Background()
		if ex != nil {
			ctx = context.WithValue(ctx, exchangeKey{}, ex)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/v1/chat/completions", bytes.NewReader(body))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if seen != req || !bytes.Equal(seenBody, body) {
			t.Errorf("exchange %v: request replaced or body changed: %s", ex, seenBody)
		}
		if ex != nil && (!ex.sent || ex.status != 200) {
			t.Errorf("exchange not updated: %+v", ex)
		}
	}
}

func TestRewriteBodyRejectsMismatchedPlaceholders(t *testing.T) {
	part := func(u string) string {
		return `{"type":"image_url","image_url":{"url":"` + u + `"}}`
	}
	body := func(parts ...string) []byte {
		return []byte(`{"model":"m","messages":[{"role":"user","content":[` + strings.Join(parts, ",") + `]}]}`)
	}
	cases := map[string][]byte{
		"unknown index": body(part(videoScheme + "1")),
		"not a number":  body(part(videoScheme + "x")),
		"used twice":    body(part(videoScheme+"0"), part(videoScheme+"0")),
		"missing":       body(part("data:image/png;base64,AA")),
		"not JSON":      []byte("{"),
	}
	for name, b := range cases {
		if _, err := rewriteBody(b, []string{"data:video/mp4;base64,AA"}, nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A placeholder inside text is text, not a video.
	out, err := rewriteBody([]byte(`{"messages":[{"role":"user","content":[{"type":"text","text":"`+videoScheme+`0"},`+part(videoScheme+"0")+`]}],"n":1.50}`), []string{"V"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"messages":[{"content":[{"text":"` + videoScheme + `0","type":"text"},{"type":"video_url","video_url":{"url":"V"}}],"role":"user"}],"n":1.50}`
	if string(out) != want {
		t.Errorf("rewrite =\n%s\nwant\n%s", out, want)
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			w.Header().Set("Retry-After", "1")
			reply(w, 429, apiError("rate limit reached"))
			return
		}
		ok(w)
	})
	c, _ := newTestClient(t, srv.URL+"/v1", func(cfg *Config) { cfg.BackoffMax = 5 * time.Second })
	resp, err := c.Chat(context.Background(), userText("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Attempts != 2 {
		t.Errorf("attempts = %d", resp.Attempts)
	}
	if g := srv.gap(0, 1); g < 950*time.Millisecond || g > 4*time.Second {
		t.Errorf("waited %v, want about 1 s", g)
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			// Second resolution: asks for a wait of 1 to 2 s.
			w.Header().Set("Retry-After", time.Now().Add(2*time.Second).UTC().Format(http.TimeFormat))
			reply(w, 429, apiError("slow down"))
			return
		}
		ok(w)
	})
	c, _ := newTestClient(t, srv.URL+"/v1", func(cfg *Config) { cfg.BackoffMax = 5 * time.Second })
	resp, err := c.Chat(context.Background(), userText("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Attempts != 2 {
		t.Errorf("attempts = %d", resp.Attempts)
	}
	if g := srv.gap(0, 1); g < 900*time.Millisecond || g > 4*time.Second {
		t.Errorf("waited %v, want 1-2 s", g)
	}
}

func TestRetryAfterCappedByBackoffMax(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			w.Header().Set("Retry-After", "3600")
			reply(w, 503, "busy")
			return
		}
		ok(w)
	})
	c, _ := newTestClient(t, srv.URL+"/v1", func(cfg *Config) { cfg.BackoffMax = 50 * time.Millisecond })
	start := time.Now()
	if _, err := c.Chat(context.Background(), userText("hi")); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v; Retry-After not capped", d)
	}
}

func TestRetryServerErrorsThenSuccess(t *testing.T) {
	statuses := []int{500, 502, 503}
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n < len(statuses) {
			reply(w, statuses[n], `<html>bad gateway</html>`)
			return
		}
		ok(w)
	})
	c, logs := newTestClient(t, srv.URL+"/v1", nil)
	resp, err := c.Chat(context.Background(), userText("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Attempts != 4 || srv.calls() != 4 {
		t.Errorf("attempts = %d, calls = %d", resp.Attempts, srv.calls())
	}
	if n := strings.Count(logs.String(), "retrying"); n != 3 {
		t.Errorf("%d retry log lines:\n%s", n, logs)
	}
}

func TestPersistentServerError(t *testing.T) {
	srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		reply(w, 500, apiError("internal error"))
	})
	c, _ := newTestClient(t, srv.URL+"/v1", func(cfg *Config) { cfg.MaxRetries = 4 })
	_, err := c.Chat(context.Background(), userText("hi"))
	e := asError(t, err)
	if e.Kind != KindServer || e.Status != 500 || e.Attempts != 5 || e.Message != "internal error" {
		t.Errorf("error = %+v", e)
	}
	if srv.calls() != 5 {
		t.Errorf("calls = %d", srv.calls())
	}
}

func TestTimeoutRetriedThenReported(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
			ok(w)
		}
	})
	c, _ := newTestClient(t, srv.URL+"/v1", func(cfg *Config) {
		cfg.Timeout = 100 * time.Millisecond
		cfg.MaxRetries = 2
	})
	start := time.Now()
	_, err := c.Chat(context.Background(), userText("hi"))
	e := asError(t, err)
	if e.Kind != KindTimeout || e.Attempts != 3 {
		t.Errorf("error = %+v", e)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("an attempt timeout must not look like the caller's deadline")
	}
}

func TestMalformedResponse(t *testing.T) {
	srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		reply(w, 200, `{"id": "x", "choices": [`)
	})
	c, _ := newTestClient(t, srv.URL+"/v1", func(cfg *Config) { cfg.MaxRetries = 1 })
	_, err := c.Chat(context.Background(), userText("hi"))
	e := asError(t, err)
	if e.Kind != KindBadResponse || e.Status != 200 || e.Attempts != 2 || !strings.Contains(e.Message, "malformed response body") {
		t.Errorf("error = %+v", e)
	}

	srv2 := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		reply(w, 200, `{"id":"x","choices":[]}`)
	})
	c2, _ := newTestClient(t, srv2.URL+"/v1", func(cfg *Config) { cfg.MaxRetries = -1 })
	_, err = c2.Chat(context.Background(), userText("hi"))
	e = asError(t, err)
	if e.Kind != KindBadResponse || e.Attempts != 1 || !strings.Contains(e.Message, "no choices") {
		t.Errorf("error = %+v", e)
	}
}

func TestInvalidRequestNotRetried(t *testing.T) {
	bodies := map[string]string{
		"openai": apiError("too many images: 300 > 256 allowed"),
		"vllm":   `{"object":"error","message":"too many images: 300 > 256 allowed","type":"BadRequestError","param":null,"code":400}`,
		"ollama": `{"error":"too many images: 300 > 256 allowed"}`,
		"plain":  `too many images: 300 > 256 allowed`,
	}
	for name, body := range bodies {
		srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { reply(w, 400, body) })
		c, _ := newTestClient(t, srv.URL+"/v1", nil)
		_, err := c.Chat(context.Background(), userText("hi"))
		e := asError(t, err)
		if e.Kind != KindInvalidRequest || e.Status != 400 || e.Attempts != 1 || e.Message != "too many images: 300 > 256 allowed" {
			t.Errorf("%s: error = %+v", name, e)
		}
		if srv.calls() != 1 {
			t.Errorf("%s: calls = %d", name, srv.calls())
		}
	}
	for _, status := range []int{404, 413, 422} {
		srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { reply(w, status, apiError("no")) })
		c, _ := newTestClient(t, srv.URL+"/v1", nil)
		_, err := c.Chat(context.Background(), userText("hi"))
		if e := asError(t, err); e.Kind != KindInvalidRequest || e.Attempts != 1 || srv.calls() != 1 {
			t.Errorf("%d: error = %+v, calls %d", status, e, srv.calls())
		}
	}
}

func TestAuthNotRetried(t *testing.T) {
	for _, status := range []int{401, 403} {
		srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
			reply(w, status, apiError("Incorrect API key provided"))
		})
		c, _ := newTestClient(t, srv.URL+"/v1", nil)
		_, err := c.Chat(context.Background(), userText("hi"))
		e := asError(t, err)
		if e.Kind != KindAuth || e.Status != status || e.Attempts != 1 || srv.calls() != 1 {
			t.Errorf("%d: error = %+v, calls %d", status, e, srv.calls())
		}
	}
}

func TestInsufficientQuotaNotRetried(t *testing.T) {
	srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		reply(w, 429, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`)
	})
	c, _ := newTestClient(t, srv.URL+"/v1", nil)
	_, err := c.Chat(context.Background(), userText("hi"))
	if e := asError(t, err); e.Kind != KindRateLimited || e.Attempts != 1 || srv.calls() != 1 {
		t.Errorf("error = %+v, calls %d", e, srv.calls())
	}
}

func TestPersistentRateLimit(t *testing.T) {
	srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "0")
		reply(w, 429, apiError("Rate limit reached"))
	})
	c, _ := newTestClient(t, srv.URL+"/v1", func(cfg *Config) { cfg.MaxRetries = 2 })
	_, err := c.Chat(context.Background(), userText("hi"))
	if e := asError(t, err); e.Kind != KindRateLimited || e.Status != 429 || e.Attempts != 3 || srv.calls() != 3 {
		t.Errorf("error = %+v, calls %d", e, srv.calls())
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	c, _ := newTestClient(t, "http://"+addr+"/v1", func(cfg *Config) { cfg.MaxRetries = 2 })
	_, err = c.Chat(context.Background(), userText("hi"))
	e := asError(t, err)
	if e.Kind != KindNetwork || e.Attempts != 3 || e.Status != 0 {
		t.Errorf("error = %+v", e)
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "30")
		reply(w, 503, "overloaded")
	})
	c, _ := newTestClient(t, srv.URL+"/v1", func(cfg *Config) { cfg.BackoffMax = time.Minute })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.Chat(ctx, userText("hi"))
	e := asError(t, err)
	if e.Kind != KindCanceled || e.Attempts != 1 || !errors.Is(err, context.Canceled) {
		t.Errorf("error = %+v", e)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("returned after %v", d)
	}
}

func TestCancelWhileWaitingForResponse(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
			ok(w)
		}
	})
	c, _ := newTestClient(t, srv.URL+"/v1", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Chat(ctx, userText("hi"))
	e := asError(t, err)
	if e.Kind != KindCanceled || e.Attempts != 1 || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error = %+v", e)
	}
}

func TestConcurrencyBound(t *testing.T) {
	t.Parallel()
	var inFlight, peak atomic.Int32
	srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(30 * time.Millisecond)
		inFlight.Add(-1)
		ok(w)
	})
	c, _ := newTestClient(t, srv.URL+"/v1", func(cfg *Config) { cfg.Concurrency = 2 })
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for range 10 {
		wg.Go(func() {
			_, err := c.Chat(context.Background(), userText("hi"))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if p := peak.Load(); p > 2 || p < 1 {
		t.Errorf("peak in flight = %d, want ≤ 2", p)
	}
	if srv.calls() != 10 {
		t.Errorf("calls = %d", srv.calls())
	}
}

func TestRequestsPerMinute(t *testing.T) {
	t.Parallel()
	srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { ok(w) })
	c, _ := newTestClient(t, srv.URL+"/v1", func(cfg *Config) { cfg.RequestsPerMinute = 120 })
	start := time.Now()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := c.Chat(context.Background(), userText("hi")); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// 120/min is one every 0.5 s: the 4th starts ≥ 1.5 s after the 1st.
	if d := time.Since(start); d < 1400*time.Millisecond || d > 6*time.Second {
		t.Errorf("4 requests at 120/min took %v, want about 1.5 s", d)
	}
}

func TestTokensPerMinute(t *testing.T) {
	t.Parallel()
	// newClient serves completions reporting total tokens usage[n] for
	// call n, with a limit of 600/min: 10 tokens a second, bucket of 600.
	newClient := func(usage ...int) *Client {
		srv := newFakeServer(t, func(n int, w http.ResponseWriter, _ *http.Request) {
			reply(w, 200, completion("ok", usage[min(n, len(usage)-1)], 0))
		})
		c, _ := newTestClient(t, srv.URL+"/v1", func(cfg *Config) { cfg.TokensPerMinute = 600 })
		return c
	}
	send := func(c *Client, est int) time.Duration {
		start := time.Now()
		req := userText("hi")
		req.EstTokens = est
		if _, err := c.Chat(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}

	// Estimated 10, used 605: the bucket is 5 in debt, so the next
	// 10-token request waits for 15 tokens (1.5 s).
	c := newClient(605, 10)
	if d := send(c, 10); d > time.Second {
		t.Errorf("first request waited %v", d)
	}
	if d := send(c, 10); d < time.Second || d > 5*time.Second {
		t.Errorf("request after an underestimate waited %v, want about 1.5 s", d)
	}

	// Estimated 600 (the whole bucket), used 10: the 590 unused tokens
	// are credit, so a 590-token request goes at once.
	c = newClient(10)
	if d := send(c, 600); d > time.Second {
		t.Errorf("full-bucket request waited %v", d)
	}
	if d := send(c, 590); d > time.Second {
		t.Errorf("request paid by credit waited %v", d)
	}
	// Without the credit, it would have waited about a minute.
}

func TestSecretNeverLeaks(t *testing.T) {
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		switch n {
		case 0: // a 5xx echoing the key: retried, logged
			reply(w, 500, "upstream rejected header "+auth)
		case 1:
			reply(w, 200, completion("fine", 1, 1))
		case 2:
			reply(w, 400, apiError("invalid key "+auth+" for model"))
		default:
			reply(w, 502, `{"detail":"bad key `+strings.TrimPrefix(auth, "Bearer ")+`"}`)
		}
	})
	c, logs := newTestClient(t, srv.URL+"/v1", func(cfg *Config) { cfg.MaxRetries = 1 })

	resp, err := c.Chat(context.Background(), userText("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.header(0).Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
	if s := fmt.Sprintf("%+v %#v", resp, resp); strings.Contains(s, "SECRET") {
		t.Errorf("response holds the key: %s", s)
	}

	_, err = c.Chat(context.Background(), userText("hi"))
	e := asError(t, err)
	if e.Kind != KindInvalidRequest || e.Message != "invalid key Bearer [REDACTED] for model" {
		t.Errorf("error = %+v", e)
	}
	texts := []string{err.Error(), fmt.Sprintf("%+v %#v", e, e)}

	_, err = c.Chat(context.Background(), userText("hi"))
	e = asError(t, err)
	if e.Kind != KindServer || e.Attempts != 2 {
		t.Errorf("error = %+v", e)
	}
	texts = append(texts, err.Error(), fmt.Sprintf("%+v %#v", e, e))

	// A transport error that quotes the key is scrubbed too.
	leaky := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, errors.New("proxy refused " + r.Header.Get("Authorization"))
	})}
	c2, logs2 := newTestClient(t, srv.URL+"/v1", func(cfg *Config) { cfg.HTTPClient = leaky; cfg.MaxRetries = 1 })
	_, err = c2.Chat(context.Background(), userText("hi"))
	e = asError(t, err)
	if e.Kind != KindNetwork || !strings.Contains(e.Message, "proxy refused Bearer [REDACTED]") {
		t.Errorf("error = %+v", e)
	}
	texts = append(texts, err.Error(), logs.String(), logs2.String())

	cfg := Config{BaseURL: srv.URL, APIKey: testKey, Model: "m"}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "cfg", cfg)
	texts = append(texts, fmt.Sprint(cfg), fmt.Sprintf("%v %+v %#v %s", cfg, cfg, cfg, cfg), logged.String(),
		fmt.Sprint(c), fmt.Sprintf("%v %+v %s", c, c, c))

	if !strings.Contains(logs.String(), "retrying") || !strings.Contains(logs.String(), "[REDACTED]") {
		t.Errorf("expected a scrubbed retry log line:\n%s", logs)
	}
	for _, s := range texts {
		if strings.Contains(s, "SECRET") {
			t.Errorf("key leaked: %s", s)
		}
	}
}

func TestNewValidates(t *testing.T) {
	good := Config{BaseURL: "http://127.0.0.1:8000/v1", Model: "m"}
	bad := map[string]func(*Config){
		"no model":         func(c *Config) { c.Model = "" },
		"no base URL":      func(c *Config) { c.BaseURL = "" },
		"relative URL":     func(c *Config) { c.BaseURL = "/v1" },
		"ftp URL":          func(c *Config) { c.BaseURL = "ftp://h/v1" },
		"key in URL":       func(c *Config) { c.APIKey = testKey; c.BaseURL = "http://h/v1?key=" + testKey },
		"negative timeout": func(c *Config) { c.Timeout = -1 },
		"negative rpm":     func(c *Config) { c.RequestsPerMinute = -1 },
		"max below base":   func(c *Config) { c.BackoffBase = time.Second; c.BackoffMax = time.Millisecond },
	}
	for name, edit := range bad {
		cfg := good
		edit(&cfg)
		_, err := New(cfg)
		if err == nil {
			t.Errorf("%s: no error", name)
		} else if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: error leaks the key: %v", name, err)
		}
	}
	c, err := New(good)
	if err != nil {
		t.Fatal(err)
	}
	if c.cfg.Timeout != DefaultTimeout || c.cfg.MaxRetries != DefaultMaxRetries || c.cfg.Concurrency != DefaultConcurrency ||
		c.cfg.BackoffBase != DefaultBackoffBase || c.cfg.BackoffMax != DefaultBackoffMax || cap(c.slots) != DefaultConcurrency {
		t.Errorf("defaults not applied: %v", c.cfg)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		h    http.Header
		want retryAfter
	}{
		{http.Header{}, retryAfter{}},
		{http.Header{"Retry-After": {"7"}}, retryAfter{set: true, delay: 7 * time.Second}},
		{http.Header{"Retry-After": {"1.5"}}, retryAfter{set: true, delay: 1500 * time.Millisecond}},
		{http.Header{"Retry-After": {"0"}}, retryAfter{set: true, delay: 0}},
		{http.Header{"Retry-After": {"-3"}}, retryAfter{}},
		{http.Header{"Retry-After": {"soon"}}, retryAfter{}},
		{http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, retryAfter{set: true, delay: 90 * time.Second}},
		{http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, retryAfter{set: true, delay: 0}},
		{http.Header{"Retry-After": {"1e300"}}, retryAfter{set: true, delay: 24 * time.Hour}},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, retryAfter{set: true, delay: 250 * time.Millisecond}},
	}
	for _, tc := range cases {
		if got := parseRetryAfter(tc.h, now); got != tc.want {
			t.Errorf("%v: %+v, want %+v", tc.h, got, tc.want)
		}
	}
}

func TestBackoffFullJitter(t *testing.T) {
	c := &engine{cfg: Config{BackoffBase: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond}}
	for attempt := 1; attempt <= 40; attempt++ {
		ceiling := min(10*time.Millisecond<<min(attempt-1, 20), 100*time.Millisecond)
		var top time.Duration
		for range 200 {
			d := c.backoff(attempt, retryAfter{})
			if d < 0 || d > ceiling {
				t.Fatalf("attempt %d: %v outside [0, %v]", attempt, d, ceiling)
			}
			top = max(top, d)
		}
		if top < ceiling/2 {
			t.Errorf("attempt %d: largest of 200 draws %v, ceiling %v: not jittered over the range", attempt, top, ceiling)
		}
	}
	if d := c.backoff(1, retryAfter{set: true, delay: 30 * time.Millisecond}); d != 30*time.Millisecond {
		t.Errorf("Retry-After 30 ms gave %v", d)
	}
	if d := c.backoff(1, retryAfter{set: true, delay: time.Hour}); d != 100*time.Millisecond {
		t.Errorf("Retry-After 1 h gave %v, want the 100 ms cap", d)
	}
}

func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 0:
			ok(w)
		case 1:
			reply(w, 503, "busy")
		default:
			<-r.Context().Done()
		}
	})
	c, _ := newTestClient(t, srv.URL+"/v1", func(cfg *Config) { cfg.Timeout = 50 * time.Millisecond; cfg.MaxRetries = 1 })
	if _, err := c.Chat(context.Background(), userText("hi")); err != nil {
		t.Fatal(err)
	}
	_, _ = c.Chat(context.Background(), userText("hi")) // 503, then a timeout
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	_, _ = c.Chat(ctx, userText("hi"))
	cancel()
	c.Close()
	c.Close()
	srv.Close()
	var nilClient *Client
	nilClient.Close()

	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}
