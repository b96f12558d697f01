// Package client sends one chat request to a model under test and returns
// the reply with its token usage. Two providers sit behind the same Request
// and Response: Client speaks OpenAI-compatible chat completions (hosted
// providers, vLLM, Ollama, llama.cpp, the reference server) through
// github.com/sashabaranov/go-openai, and Gemini speaks the Gemini Developer
// API's generateContent through the official SDK, google.golang.org/genai
// (native video with videoMetadata.fps, the Files API above the inline
// limit, thinking budgets; gemini.go).
//
// Both share what an evaluation run needs (engine.go): bounded concurrency
// and per-model rate limits, retries with exponential backoff, full jitter
// and the server's requested wait (Retry-After, or Gemini's RetryInfo
// retryDelay), every wait capped by BackoffMax, counted against the
// request's Deadline, and logged when it is 5 s or more; errors classified
// by kind (a request the server rejects is recorded, not retried); a cap on
// the reply body read (MaxResponseBytes); and an API key that never
// appears in an error, a log line or a response.
//
// Use one Client (or Gemini) per model, shared by all goroutines sending to
// it: the concurrency and rate limits are its own.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/tracegrid/tracegrid/eval/chat"
)

// Defaults for zero Config fields.
const (
	DefaultTimeout     = 120 * time.Second
	DefaultMaxRetries  = 5
	DefaultConcurrency = 4
	DefaultBackoffBase = time.Second
	DefaultBackoffMax  = 60 * time.Second
	// DefaultMaxResponseBytes caps the body of one response the client
	// reads (a chat reply is at most a few hundred KB; a hostile or broken
	// server could send gigabytes).
	DefaultMaxResponseBytes = 8 << 20
	// DefaultInlineLimit is the largest Gemini request sent with its media
	// inline: Google documents 20 MB for a whole generateContent request
	// ("if your total request size ... is larger than 20 MB, use the Files
	// API"). A request whose inline media and text would pass it sends its
	// videos through the Files API instead (gemini.go).
	DefaultInlineLimit = 20_000_000
)

// waitNotice is the shortest wait (before a retry, or for a rate limit)
// that is logged at info level, with its reason; shorter ones are logged
// at debug level.
var waitNotice = 5 * time.Second

// Config configures a Client for one model on one server.
type Config struct {
	// BaseURL is the API root that "/chat/completions" is appended to,
	// usually ending in /v1: "https://api.openai.com/v1",
	// "http://localhost:8000/v1" (vLLM), "http://localhost:11434/v1"
	// (Ollama).
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" (nothing when
	// empty); at least MinAPIKeyLength characters. The caller reads it
	// from the environment; the Client never logs it or puts it in an
	// error, and scrubs it from every error text of the transport and the
	// server. A reply is returned exactly as the server sent it (it is the
	// model's evidence; the key is never sent in the messages). Config's
	// String, GoString and LogValue redact it.
	APIKey string
	// Model is the model id sent with each request.
	Model string
	// Timeout bounds one attempt, from sending to the end of the response
	// body (default 120 s).
	Timeout time.Duration
	// MaxRetries is the number of retries after the first attempt for
	// retryable failures (default 5; negative: none).
	MaxRetries int
	// Concurrency is the number of Chat calls for this model in progress
	// at once, backoff waits included (default 4).
	Concurrency int
	// RequestsPerMinute paces attempts evenly (0: unlimited).
	RequestsPerMinute int
	// TokensPerMinute limits tokens: each attempt takes Request.EstTokens
	// before it is sent, corrected by the usage the server reports
	// (0: unlimited).
	TokensPerMinute int
	// BackoffBase and BackoffMax shape retries: before retry k the client
	// waits a uniformly random time in [0, min(BackoffMax,
	// BackoffBase·2^(k-1))] ("full jitter"), or the server's Retry-After
	// when it sent one, capped by BackoffMax (a Retry-After of a day is
	// waited BackoffMax, and the log says so). Defaults 1 s and 60 s. A
	// wait of 5 s or more is logged at info level with its reason.
	BackoffBase, BackoffMax time.Duration
	// Deadline bounds one Chat call as a whole, from the moment it has a
	// concurrency slot: attempts, rate-limit waits and the waits between
	// retries all count against it. A retry whose wait would pass it is not
	// made (the last failure is returned, saying so); an attempt it cuts
	// short is a KindTimeout. 0: no bound beyond Timeout per attempt.
	Deadline time.Duration
	// MaxResponseBytes caps the response body read from the server
	// (default DefaultMaxResponseBytes, 8 MiB). A larger body is not read
	// further: the attempt fails as KindBadResponse and is not retried.
	MaxResponseBytes int64
	// ExtraBody is merged at the top level of every OpenAI-compatible
	// request body (vLLM's mm_processor_kwargs or chat_template_kwargs,
	// top_k, ...), and recursively into every Gemini request body. It may
	// not set what the client writes itself (ReservedBodyKeys); a value
	// that JSON cannot encode is an error of New.
	ExtraBody map[string]any
	// InlineLimit is the Gemini provider's limit on a request's inline
	// size (default DefaultInlineLimit); ignored by Client.
	InlineLimit int64
	// FilePoll is how often the Gemini provider asks whether an uploaded
	// video is ready (state ACTIVE); default 2 s.
	FilePoll time.Duration
	// HTTPClient, when set, supplies the transport (its RoundTripper is
	// wrapped; the client itself is not modified). Tests use it.
	HTTPClient *http.Client
	// Logger receives retry notices at debug level (default
	// slog.Default()). The API key is never logged.
	Logger *slog.Logger
}

// String describes the configuration with the API key redacted.
func (c Config) String() string {
	return fmt.Sprintf("client.Config{BaseURL: %q, Model: %q, APIKey: %s, Timeout: %s, MaxRetries: %d, Concurrency: %d, RequestsPerMinute: %d, TokensPerMinute: %d, BackoffBase: %s, BackoffMax: %s}",
		c.BaseURL, c.Model, redactedKey(c.APIKey), c.Timeout, c.MaxRetries, c.Concurrency,
		c.RequestsPerMinute, c.TokensPerMinute, c.BackoffBase, c.BackoffMax)
}

// GoString is String, so that %#v redacts the key too.
func (c Config) GoString() string { return c.String() }

// LogValue logs the configuration with the API key redacted.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("base_url", c.BaseURL),
		slog.String("model", c.Model),
		slog.String("api_key", redactedKey(c.APIKey)),
		slog.Duration("timeout", c.Timeout),
		slog.Int("max_retries", c.MaxRetries),
		slog.Int("concurrency", c.Concurrency),
		slog.Int("requests_per_minute", c.RequestsPerMinute),
		slog.Int("tokens_per_minute", c.TokensPerMinute),
	)
}

func redactedKey(key string) string {
	if key == "" {
		return "(none)"
	}
	return redacted
}

// Request is one chat request. Decoding fields that are nil or empty are
// not sent (the server's default applies).
type Request struct {
	Messages    []chat.Message
	Temperature *float64 // nil: the server's default; 0 is sent as 0
	TopP        *float64 // nil: not sent
	MaxTokens   int      // 0: not sent; OpenAI: max_tokens, or max_completion_tokens for models that require it (o-series, gpt-5); Gemini: maxOutputTokens
	Seed        *int     // nil: not sent
	// ReasoningEffort is sent as reasoning_effort (OpenAI-compatible
	// only; a Gemini request with one is refused unsent).
	ReasoningEffort string
	// ThinkingBudget and ThinkingLevel are Gemini's thinkingConfig
	// (thinkingBudget tokens, or the thinkingLevel MINIMAL, LOW, MEDIUM,
	// HIGH); an OpenAI-compatible request with either is refused unsent.
	ThinkingBudget *int
	ThinkingLevel  string
	// VideoFPS is the sampling rate asked for native video parts: Gemini's
	// videoMetadata.fps (0: the server's default, 1). The OpenAI-compatible
	// protocol has no such field (vLLM takes it in extra_body's
	// mm_processor_kwargs), so Client ignores it.
	VideoFPS float64
	// Body holds request-level fields of an OpenAI-compatible body, merged
	// over Config.ExtraBody key by key at every depth (mergeBody): what a
	// video request tells vLLM so that every frame is kept
	// (media_io_kwargs, mm_processor_kwargs). It may not set a field the
	// client writes itself (ReservedBodyKeys). A Gemini request with one is
	// refused unsent.
	Body      map[string]any
	EstTokens int // estimated prompt+completion tokens, for TokensPerMinute
}

// Usage is the token usage the server reported (zero when it reported
// none). CompletionTokens is what is billed as output: for Gemini the
// candidates' tokens plus the thoughts' (thoughtsTokenCount), which
// ReasoningTokens repeats; for OpenAI-compatible servers
// completion_tokens, of which completion_tokens_details.reasoning_tokens
// is ReasoningTokens.
type Usage struct {
	PromptTokens, CompletionTokens, TotalTokens int
	ReasoningTokens                             int
}

// Response is a reply.
type Response struct {
	Text    string        // the first choice's content (text parts joined when the server sent a list); thoughts excluded
	Usage   Usage         // usage of the successful attempt
	Latency time.Duration // duration of the successful attempt (not queueing, rate limits or backoff)
	// Attempts are the HTTP attempts, the successful one included.
	Attempts int
	// Model is the model the server says answered (Config.Model when it
	// does not say): the completion's model, Gemini's modelVersion.
	Model string
	// FinishReason is the server's own word: "stop", "length", ... or
	// Gemini's STOP, MAX_TOKENS, SAFETY, ...; a Gemini prompt blocked
	// before any candidate reads "prompt_blocked:" + its blockReason. Empty
	// when the server sent none.
	FinishReason string
	// Blocked says the provider withheld the answer for safety (a blocked
	// prompt, or a candidate that finished with SAFETY, PROHIBITED_CONTENT,
	// BLOCKLIST, SPII, RECITATION or IMAGE_SAFETY): a reply with no
	// count, not an error to retry.
	Blocked bool
	// Reasoning is the reasoning text the provider returned beside the
	// answer (reasoning_content or reasoning of OpenAI-compatible servers,
	// Gemini's thought parts); "" when none. It is stored, never parsed.
	Reasoning string
	// RequestID is the provider's id of the exchange: the x-request-id
	// header when sent, else the completion's id (Gemini: responseId).
	RequestID string
}

// Client sends chat requests for one model. It is safe for concurrent use.
type Client struct {
	*engine
	api                 *openai.Client
	maxCompletionTokens bool            // send MaxTokens as max_completion_tokens
	ownTransport        *http.Transport // the transport New made (nil when Config.HTTPClient supplied one)
}

// Close closes the idle connections of the transport New created (none
// when Config.HTTPClient supplied it). It is nil-safe and idempotent, and
// the Client remains usable: a later Chat opens new connections.
func (c *Client) Close() {
	if c != nil && c.ownTransport != nil {
		c.ownTransport.CloseIdleConnections()
	}
}

// String names the client without its key.
func (c *Client) String() string {
	return fmt.Sprintf("client.Client{Model: %q, BaseURL: %q}", c.cfg.Model, c.cfg.BaseURL)
}

// New validates cfg, fills defaults and builds a Client.
func New(cfg Config) (*Client, error) {
	cfg, err := normalize(cfg)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The URL is not quoted back: a key pasted into it would leak.
		return nil, errors.New("client: BaseURL must be an absolute http(s) URL")
	}
	if cfg.APIKey != "" && strings.Contains(cfg.BaseURL, cfg.APIKey) {
		return nil, errors.New("client: BaseURL must not contain the API key")
	}
	if err := CheckExtraBody(ProviderOpenAI, cfg.ExtraBody); err != nil {
		return nil, err
	}
	e := newEngine(cfg)
	hc, own := e.httpClient("")

	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	oc.HTTPClient = hc

	return &Client{
		engine:              e,
		api:                 openai.NewClientWithConfig(oc),
		maxCompletionTokens: usesMaxCompletionTokens(cfg.Model),
		ownTransport:        own,
	}, nil
}

// usesMaxCompletionTokens asks go-openai's own validator whether the model
// refuses max_tokens (o-series, gpt-5: max_completion_tokens instead).
func usesMaxCompletionTokens(model string) bool {
	probe := openai.ChatCompletionRequest{Model: model, MaxTokens: 1}
	return errors.Is(openai.NewReasoningValidator().Validate(probe), openai.ErrReasoningModelMaxTokensDeprecated)
}

// Chat sends req and returns the first choice. It waits for a concurrency
// slot, then, before each attempt, for the request and token limiters.
// Rate-limited (429), server (5xx), malformed-response, timed-out and
// network failures are retried up to MaxRetries times with backoff;
// invalid requests and auth failures are returned after one attempt. The
// error is always an *Error; it is KindCanceled as soon as ctx ends.
func (c *Client) Chat(ctx context.Context, req Request) (Response, error) {
	oreq, ex, err := c.prepare(req)
	if err != nil {
		return Response{}, (&Error{Kind: KindInvalidRequest, Message: c.scrub.scrub(err.Error())}).notSent()
	}
	return c.run(ctx, req.EstTokens, func(ctx, dctx context.Context) (Response, *Error) {
		x := *ex // a fresh exchange per attempt, sharing the request's rewrites
		return c.attempt(ctx, dctx, oreq, &x)
	})
}

// prepare builds the go-openai request and the body rewrites of req (see
// transport.go): video parts, and the fields go-openai cannot write as we
// need them — temperature (0 is a value, and go-openai's own validator
// would refuse what a study explicitly sends), top_p, and ExtraBody.
func (c *Client) prepare(req Request) (openai.ChatCompletionRequest, *exchange, error) {
	if req.ThinkingBudget != nil || req.ThinkingLevel != "" {
		return openai.ChatCompletionRequest{}, nil, errors.New("thinking_budget and thinking_level are Gemini settings; an OpenAI-compatible model takes reasoning_effort (or extra_body)")
	}
	msgs, videos, err := translate(req.Messages)
	if err != nil {
		return openai.ChatCompletionRequest{}, nil, err
	}
	oreq := openai.ChatCompletionRequest{Model: c.cfg.Model, Messages: msgs, Seed: req.Seed, ReasoningEffort: req.ReasoningEffort}
	if c.maxCompletionTokens {
		oreq.MaxCompletionTokens = req.MaxTokens
	} else {
		oreq.MaxTokens = req.MaxTokens
	}
	sets := map[string]any{}
	for k, v := range c.cfg.ExtraBody {
		sets[k] = v
	}
	if req.Temperature != nil {
		sets["temperature"] = *req.Temperature
	}
	if req.TopP != nil {
		sets["top_p"] = *req.TopP
	}
	if len(req.Body) > 0 {
		if err := CheckExtraBody(ProviderOpenAI, req.Body); err != nil {
			return openai.ChatCompletionRequest{}, nil, err
		}
		for k, v := range req.Body {
			sets[k] = mergeBody(sets[k], v)
		}
	}
	return oreq, &exchange{videos: videos, sets: sets}, nil
}

// BatchBody is the body of req as Chat would send it (the same JSON, video
// parts, temperature and ExtraBody), for a line of an OpenAI Batch input
// file. It sends nothing.
func (c *Client) BatchBody(req Request) (json.RawMessage, error) {
	oreq, ex, err := c.prepare(req)
	if err != nil {
		return nil, fmt.Errorf("client: %s", c.scrub.scrub(err.Error()))
	}
	b, err := json.Marshal(oreq)
	if err != nil {
		return nil, fmt.Errorf("client: encode request: %w", err)
	}
	if ex.rewrites() {
		if b, err = rewriteBody(b, ex.videos, ex.sets); err != nil {
			return nil, fmt.Errorf("client: %w", err)
		}
	}
	return b, nil
}

// ParseCompletion reads a chat completion body — a line of an OpenAI
// Batch output file — as Chat reads a reply (text, usage, model, finish
// reason, reasoning, the completion's id). Attempts and Latency are zero.
func (c *Client) ParseCompletion(body []byte) (Response, error) {
	var out openai.ChatCompletionResponse
	if err := json.Unmarshal(body, &out); err != nil {
		return Response{}, fmt.Errorf("client: not a chat completion: %s", truncate(c.scrub.scrub(err.Error())))
	}
	resp, ferr := c.fromCompletion(out, body, "")
	if ferr != nil {
		return Response{}, ferr
	}
	return resp, nil
}

// attempt makes one HTTP exchange under the per-attempt timeout.
// ctx is the caller's context, dctx the request's (with its deadline).
func (c *Client) attempt(ctx, dctx context.Context, oreq openai.ChatCompletionRequest, ex *exchange) (Response, *Error) {
	actx, cancel := context.WithTimeout(dctx, c.cfg.Timeout)
	defer cancel()
	start := time.Now()
	out, err := c.api.CreateChatCompletion(context.WithValue(actx, exchangeKey{}, ex), oreq)
	latency := time.Since(start)
	if err != nil {
		return Response{}, c.deadlineMessage(ctx, dctx, c.classify(err, ctx, actx, ex))
	}
	var raw []byte
	if ex.raw != nil {
		raw = ex.raw.Bytes()
	}
	resp, ferr := c.fromCompletion(out, raw, ex.requestID)
	if ferr != nil {
		ferr.Status = ex.status
		return Response{}, ferr
	}
	resp.Latency = latency
	return resp, nil
}

// fromCompletion reads a completion: the first choice's text (text parts
// joined when the server sent a list), usage, model, finish reason,
// reasoning text (go-openai's reasoning_content, else the "reasoning"
// field vLLM and others send, read from raw) and request id (the header's
// when given, else the completion's id).
func (c *Client) fromCompletion(out openai.ChatCompletionResponse, raw []byte, requestID string) (Response, *Error) {
	if len(out.Choices) == 0 {
		return Response{}, &Error{Kind: KindBadResponse, Message: "response has no choices"}
	}
	choice := out.Choices[0]
	text := choice.Message.Content
	if text == "" && len(choice.Message.MultiContent) > 0 {
		var parts []string
		for _, p := range choice.Message.MultiContent {
			if p.Type == openai.ChatMessagePartTypeText {
				parts = append(parts, p.Text)
			}
		}
		text = strings.Join(parts, "")
	}
	reasoning := choice.Message.ReasoningContent
	if reasoning == "" && len(raw) > 0 {
		var extra struct {
			Choices []struct {
				Message struct {
					Reasoning string `json:"reasoning"`
				} `json:"message"`
			} `json:"choices"`
		}
		if json.Unmarshal(raw, &extra) == nil && len(extra.Choices) > 0 {
			reasoning = extra.Choices[0].Message.Reasoning
		}
	}
	model := out.Model
	if model == "" {
		model = c.cfg.Model
	}
	finish := ""
	if choice.FinishReason != openai.FinishReasonNull {
		finish = string(choice.FinishReason)
	}
	if requestID == "" {
		requestID = out.ID
	}
	u := Usage{
		PromptTokens:     out.Usage.PromptTokens,
		CompletionTokens: out.Usage.CompletionTokens,
		TotalTokens:      out.Usage.TotalTokens,
	}
	if d := out.Usage.CompletionTokensDetails; d != nil {
		u.ReasoningTokens = d.ReasoningTokens
	}
	// The reply is evidence: kept exactly as received, never scrubbed.
	return Response{
		Text:         text,
		Usage:        u,
		Model:        model,
		FinishReason: finish,
		Blocked:      choice.FinishReason == openai.FinishReasonContentFilter,
		Reasoning:    reasoning,
		RequestID:    requestID,
	}, nil
}
