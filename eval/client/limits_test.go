package client

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tracegrid/tracegrid/internal/fakemodel"
)

// TestRetryAfterCutAndLogged: a Retry-After of 100000 s is waited only up
// to the cap (BackoffMax, the study's max_retry_wait_seconds), and a wait
// at or above waitNotice is logged at info level with its reason.
func TestRetryAfterCutAndLogged(t *testing.T) {
	defer func(d time.Duration) { waitNotice = d }(waitNotice)
	waitNotice = 20 * time.Millisecond
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			w.Header().Set("Retry-After", "100000")
			reply(w, 429, apiError("slow down"))
			return
		}
		ok(w)
	})
	c, logs := newTestClient(t, srv.URL+"/v1", func(cfg *Config) { cfg.BackoffMax = 30 * time.Millisecond })
	resp, err := c.Chat(context.Background(), userText("hi"))
	if err != nil || resp.Attempts != 2 {
		t.Fatalf("%+v %v", resp, err)
	}
	log := logs.String()
	for _, want := range []string{"level=INFO", "waiting before retrying", "the server asked for 24h0m0s (Retry-After), cut to the 30ms cap after rate_limited (HTTP 429)", "delay=30ms"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

// TestDeadlineCountsTheWait: a retry whose wait would pass the request's
// deadline is not made; the failure says why.
func TestDeadlineCountsTheWait(t *testing.T) {
	srv := newFakeServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "30")
		reply(w, 503, "overloaded")
	})
	c, logs := newTestClient(t, srv.URL+"/v1", func(cfg *Config) {
		cfg.BackoffMax = time.Minute
		cfg.Deadline = 2 * time.Second
	})
	_, err := c.Chat(context.Background(), userText("hi"))
	e := asError(t, err)
	if e.Kind != KindServer || e.Attempts != 1 || srv.calls() != 1 ||
		!strings.Contains(e.Message, "not retried: waiting 30s (the server asked for it (Retry-After) after server (HTTP 503)) would pass the request's deadline") {
		t.Errorf("error %+v, %d calls", e, srv.calls())
	}
	if !strings.Contains(logs.String(), "not retrying: the wait would pass the request's deadline") {
		t.Errorf("not logged:\n%s", logs.String())
	}
}

// TestDeadlineCutsAnAttempt: an attempt still waiting for its reply when
// the request's deadline passes ends as a timeout, not retried.
func TestDeadlineCutsAnAttempt(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	fm := fakemodel.New(t, fakemodel.Always(fakemodel.Reply{Hold: hold}))
	c, _ := newTestClient(t, fm.URL(), func(cfg *Config) {
		cfg.Timeout = time.Minute
		cfg.Deadline = 300 * time.Millisecond
	})
	_, err := c.Chat(context.Background(), userText("hi"))
	e := asError(t, err)
	if e.Kind != KindTimeout || e.Attempts != 1 || fm.Requests() != 1 || !strings.Contains(e.Message, "before the request's deadline (300ms)") {
		t.Errorf("error %+v, %d requests", e, fm.Requests())
	}
}

// TestHugeReplyCut: a reply body above MaxResponseBytes is not read whole;
// the attempt fails as a bad response and is not retried — for a success
// body and for an error body alike.
func TestHugeReplyCut(t *testing.T) {
	for _, rep := range []fakemodel.Reply{
		{Pad: 64 << 20, PromptTokens: 1, CompletionTokens: 1},
		{Status: 500, Body: strings.Repeat("x", 4<<20)},
	} {
		fm := fakemodel.New(t, fakemodel.Always(rep))
		c, _ := newTestClient(t, fm.URL(), func(cfg *Config) { cfg.MaxResponseBytes = 1 << 20 })
		_, err := c.Chat(context.Background(), userText("hi"))
		e := asError(t, err)
		if e.Kind != KindBadResponse || e.Attempts != 1 || fm.Requests() != 1 || !strings.Contains(e.Message, "larger than 1048576 bytes") {
			t.Errorf("status %d: error %+v, %d requests", rep.Status, e, fm.Requests())
		}
	}
	// A body of exactly the limit is read.
	fm := fakemodel.New(t, fakemodel.Always(fakemodel.Reply{Text: "ok", PromptTokens: 1, CompletionTokens: 1}))
	probe, _ := newTestClient(t, fm.URL(), nil)
	if _, err := probe.Chat(context.Background(), userText("hi")); err != nil {
		t.Fatal(err)
	}
	size := int64(len(`{"id":"fake","object":"chat.completion","model":"fake","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`))
	c, _ := newTestClient(t, fm.URL(), func(cfg *Config) { cfg.MaxResponseBytes = size })
	if resp, err := c.Chat(context.Background(), userText("hi")); err != nil || resp.Text != "ok" {
		t.Errorf("body of exactly the limit: %+v %v", resp, err)
	}
	c, _ = newTestClient(t, fm.URL(), func(cfg *Config) { cfg.MaxResponseBytes = size - 1 })
	if _, err := c.Chat(context.Background(), userText("hi")); asError(t, err).Kind != KindBadResponse {
		t.Errorf("body one byte over the limit: %v", err)
	}
}
