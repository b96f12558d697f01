package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/client"
	"github.com/tracegrid/tracegrid/eval/parse"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/eval/study"
)

// Model is what the runner needs of a model under test: one chat request
// answered. The runner owns this seam; every provider implements it — the
// OpenAI-compatible client (client.Client), the Gemini client
// (client.Gemini) and, in tests, the reference perceiver answering in
// process — with the provider's own retries, rate limits and request
// deadline inside Chat.
//
// A failure is returned as a *client.Error, whose Kind the trial records
// (any other error is recorded with kind "error"); a reply the provider
// withheld for safety is a Response with Blocked set, not an error.
type Model interface {
	Chat(ctx context.Context, req client.Request) (client.Response, error)
}

// BatchModel is a Model whose requests can go through a batch interface:
// OpenAI's Batch API and vLLM's run-batch take a JSONL file of request
// bodies and answer with a file of completions (WriteBatch, ReadBatch).
type BatchModel interface {
	Model
	// BatchBody is the body Chat would send for req.
	BatchBody(req client.Request) (json.RawMessage, error)
	// ParseCompletion reads a reply body as Chat reads a reply.
	ParseCompletion(body []byte) (client.Response, error)
}

// NewModel makes the client of a study's model: client.New for provider
// openai, client.NewGemini for gemini, with the key read from the model's
// environment variable (study.Model.APIKey), the model's concurrency, rate
// limits, timeout, retries, retry wait cap, request deadline and
// extra_body, and log for retry notices.
func NewModel(m study.Model, log *slog.Logger) (Model, error) {
	key, err := m.APIKey()
	if err != nil {
		return nil, err
	}
	return newModel(m, key, log)
}

func newModel(m study.Model, key string, log *slog.Logger) (Model, error) {
	cfg := client.Config{
		BaseURL: m.BaseURL, APIKey: key, Model: m.ModelID,
		Timeout:     time.Duration(m.TimeoutSeconds * float64(time.Second)),
		Concurrency: m.Concurrency, RequestsPerMinute: m.RequestsPerMinute, TokensPerMinute: m.TokensPerMinute,
		MaxRetries: retries(m.MaxRetries),
		BackoffMax: m.RetryWait(), BackoffBase: min(client.DefaultBackoffBase, m.RetryWait()),
		Deadline:  m.Deadline(),
		ExtraBody: m.ExtraBody,
		Logger:    log,
	}
	switch m.ProviderName() {
	case study.ProviderGemini:
		return client.NewGemini(cfg)
	case study.ProviderOpenAI:
		return client.New(cfg)
	}
	return nil, fmt.Errorf("model %s: unknown provider %q", m.Name, m.Provider)
}

// closeModel closes a model's idle connections when it has any.
func closeModel(m Model) {
	if c, ok := m.(interface{ Close() }); ok {
		c.Close()
	}
}

// requestFor is the request of one turn to model m: the messages, the
// decoding the study sends m (study.Study.DecodingFor: temperature and
// top_p left out for models that refuse them), and, for a native[:R]
// condition sent as video, R as the video's sampling rate.
func requestFor(st *study.Study, m study.Model, cond study.Condition, msgs []chat.Message) client.Request {
	d := st.DecodingFor(m)
	req := client.Request{Messages: msgs, Temperature: d.Temperature, TopP: d.TopP, MaxTokens: d.MaxTokens, Seed: d.Seed,
		ReasoningEffort: d.ReasoningEffort, ThinkingBudget: d.ThinkingBudget, ThinkingLevel: d.ThinkingLevel}
	if m.Video.Supported {
		if pol, err := sampling.Parse(cond.Policy); err == nil {
			if r, ok := study.NativeRate(pol); ok {
				req.VideoFPS = r
			}
		}
	}
	return req
}

// record adds what the provider said of one reply to the trial: its finish
// reason, reasoning text and request id (one entry per turn), the model
// the server reported and the reasoning tokens.
func record(rec *results.Trial, resp client.Response) {
	rec.FinishReasons = append(rec.FinishReasons, resp.FinishReason)
	rec.Reasoning = append(rec.Reasoning, resp.Reasoning)
	rec.RequestIDs = append(rec.RequestIDs, resp.RequestID)
	rec.ServedModel = resp.Model
}

// score parses the final reply into the trial's count and events; a reply
// the provider withheld (blocked) has none, whatever text came with it.
func score(rec *results.Trial, domain string, blocked bool) {
	if blocked || len(rec.Responses) == 0 {
		return
	}
	// The final reply is scored: the revised ledger in multi-turn
	// verification, the only one otherwise. Frame references ("frame 5")
	// resolve to the shown frames' times (docs/scoring.md).
	p := parse.ParseWith(rec.Responses[len(rec.Responses)-1], parse.Options{Domain: domain, FrameTimes: rec.FrameTimes})
	rec.Count, rec.CountSource, rec.Events, rec.ParseFlags = p.Count, p.CountSource, p.Events, p.Flags
}

// thoughtsApart reports whether m's provider bounds its thoughts apart
// from max_tokens (Gemini: maxOutputTokens caps the answer, the thinking
// budget the thoughts), so that the reasoning tokens are not held against
// max_tokens when a reply's usage is checked.
func thoughtsApart(m study.Model) bool { return m.ProviderName() == study.ProviderGemini }
