package client

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/internal/fakemodel"
)

// TestReplyNeverAltered (issue 31 item 4): a reply is the model's
// evidence and is returned exactly as the server sent it — text,
// reasoning, model, finish reason and request id — even where it holds
// the key's characters. Redaction is for error texts only.
func TestReplyNeverAltered(t *testing.T) {
	text := "The wall is hit at 1.0 s. " + testKey + " Final answer: \\boxed{6}"
	srv := newFakeServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-request-id", "req-"+testKey)
		reply(w, 200, fmt.Sprintf(`{"id":"x","object":"chat.completion","model":"m-%s","choices":[{"index":0,"message":{"role":"assistant","content":%q,"reasoning_content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`,
			testKey, text, "thinking about "+testKey))
	})
	c, _ := newTestClient(t, srv.URL+"/v1", nil)
	resp, err := c.Chat(context.Background(), userText("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != text || resp.Reasoning != "thinking about "+testKey || resp.Model != "m-"+testKey || resp.RequestID != "req-"+testKey {
		t.Errorf("reply altered: %q / %q / %q / %q", resp.Text, resp.Reasoning, resp.Model, resp.RequestID)
	}
	body := fmt.Sprintf(`{"id":"id-%s","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, testKey, text)
	if resp, err := c.ParseCompletion([]byte(body)); err != nil || resp.Text != text || resp.RequestID != "id-"+testKey {
		t.Errorf("batch reply altered: %q %q %v", resp.Text, resp.RequestID, err)
	}

	g := fakemodel.NewGemini(t, fakemodel.AlwaysGemini(fakemodel.GeminiReply{Text: text, Thought: "thinking about " + testKey,
		ModelVersion: "g-" + testKey, ResponseID: "r-" + testKey}))
	gc, _ := newTestGemini(t, g, nil)
	resp, err = gc.Chat(context.Background(), framesRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != text || resp.Reasoning != "thinking about "+testKey || resp.Model != "g-"+testKey || resp.RequestID != "r-"+testKey {
		t.Errorf("Gemini reply altered: %q / %q / %q / %q", resp.Text, resp.Reasoning, resp.Model, resp.RequestID)
	}
}

// TestShortKeyRefused (issue 31 item 4): a key shorter than
// MinAPIKeyLength cannot be redacted from error texts without mangling
// them ("a" would turn every "wall" into "w[REDACTED]ll"), so New and
// NewGemini refuse it, without quoting it.
func TestShortKeyRefused(t *testing.T) {
	for _, key := range []string{"6", "EMPTY", "sk-1234"} {
		cfg := Config{BaseURL: "http://127.0.0.1:8000/v1", Model: "m", APIKey: key}
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "shorter than 8 characters") || strings.Contains(err.Error(), key) {
			t.Errorf("New with a %d-character key: %v", len(key), err)
		}
		if _, err := NewGemini(cfg); err == nil || !strings.Contains(err.Error(), "shorter than 8 characters") || strings.Contains(err.Error(), key) {
			t.Errorf("NewGemini with a %d-character key: %v", len(key), err)
		}
	}
	c, err := New(Config{BaseURL: "http://127.0.0.1:8000/v1", Model: "m", APIKey: "sk-12345"})
	if err != nil {
		t.Errorf("an 8-character key: %v", err)
	} else {
		c.Close()
	}
}
