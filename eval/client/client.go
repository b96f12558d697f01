// Package client sends one chat request to an OpenAI-compatible server
// (hosted providers, vLLM, Ollama, llama.cpp, the reference server) and
// returns the reply with its token usage. It wraps
// github.com/sashabaranov/go-openai with what an evaluation run needs:
// bounded concurrency and per-model rate limits, retries with exponential
// backoff, full jitter and Retry-After, errors classified by kind (a
// request the server rejects is recorded, not retried), native video parts
// (see transport.go), and an API key that never appears in an error, a
// log line or a response.
//
// Use one Client per model, shared by all goroutines sending to it: the
// concurrency and rate limits are the Client's.
package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"golang.org/x/time/rate"

	"github.com/tracegrid/tracegrid/eval/chat"
)

// Defaults for zero Config fields.
const (
	DefaultTimeout     = 120 * time.Second
	DefaultMaxRetries  = 5
	DefaultConcurrency = 4
	DefaultBackoffBase = time.Second
	DefaultBackoffMax  = 60 * time.Second
)

// Config configures a Client for one model on one server.
type Config struct {
	// BaseURL is the API root that "/chat/completions" is appended to,
	// usually ending in /v1: "https://api.openai.com/v1",
	// "http://localhost:8000/v1" (vLLM), "http://localhost:11434/v1"
	// (Ollama).
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" (nothing when
	// empty). The caller reads it from the environment; the Client never
	// logs it, puts it in an error or returns it, and scrubs it from every
	// text the server sends back. Config's String, GoString and LogValue
	// redact it.
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
	// when it sent one, capped by BackoffMax. Defaults 1 s and 60 s.
	BackoffBase, BackoffMax time.Duration
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

// Request is one chat request.
type Request struct {
	Messages    []chat.Message
	Temperature *float64 // nil: the server's default; 0 is sent as 0
	MaxTokens   int      // 0: not sent; sent as max_tokens, or max_completion_tokens for models that require it (o-series, gpt-5)
	Seed        *int     // nil: not sent
	EstTokens   int      // estimated prompt+completion tokens, for TokensPerMinute
}

// Usage is the token usage the server reported (zero when it reported
// none).
type Usage struct {
	PromptTokens, CompletionTokens, TotalTokens int
}

// Response is a successful completion.
type Response struct {
	Text         string        // the first choice's content (text parts joined when the server sent a list)
	Usage        Usage         // usage of the successful attempt
	Latency      time.Duration // duration of the successful attempt (not queueing, rate limits or backoff)
	Attempts     int           // HTTP attempts, the successful one included
	Model        string        // the model the server says answered (Config.Model when it does not say)
	FinishReason string        // "stop", "length", ...; empty when the server sent none
}

// Client sends chat requests for one model. It is safe for concurrent use.
type Client struct {
	cfg                 Config
	api                 *openai.Client
	scrub               scrubber
	log                 *slog.Logger
	slots               chan struct{}
	requests            *rate.Limiter   // nil: unlimited
	tokens              *tokenBudget    // nil: unlimited
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
	if cfg.Model == "" {
		return nil, errors.New("client: Model is required")
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The URL is not quoted back: a key pasted into it would leak.
		return nil, errors.New("client: BaseURL must be an absolute http(s) URL")
	}
	if cfg.APIKey != "" && strings.Contains(cfg.BaseURL, cfg.APIKey) {
		return nil, errors.New("client: BaseURL must not contain the API key")
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"Timeout", int64(cfg.Timeout)}, {"Concurrency", int64(cfg.Concurrency)},
		{"RequestsPerMinute", int64(cfg.RequestsPerMinute)}, {"TokensPerMinute", int64(cfg.TokensPerMinute)},
		{"BackoffBase", int64(cfg.BackoffBase)}, {"BackoffMax", int64(cfg.BackoffMax)},
	} {
		if f.v < 0 {
			return nil, fmt.Errorf("client: %s must not be negative", f.name)
		}
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = DefaultMaxRetries
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.BackoffBase == 0 {
		cfg.BackoffBase = DefaultBackoffBase
	}
	if cfg.BackoffMax == 0 {
		cfg.BackoffMax = max(DefaultBackoffMax, cfg.BackoffBase)
	}
	if cfg.BackoffMax < cfg.BackoffBase {
		return nil, fmt.Errorf("client: BackoffMax %s is below BackoffBase %s", cfg.BackoffMax, cfg.BackoffBase)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}

	sc := scrubber{secret: cfg.APIKey}
	var hc http.Client
	var base http.RoundTripper
	var own *http.Transport
	if cfg.HTTPClient != nil {
		hc = *cfg.HTTPClient
		base = cfg.HTTPClient.Transport
	}
	if base == nil {
		if dt, ok := http.DefaultTransport.(*http.Transport); ok {
			// Our own pool, sized so that Concurrency connections stay
			// open between requests.
			own = dt.Clone()
			own.MaxIdleConnsPerHost = max(cfg.Concurrency, own.MaxIdleConnsPerHost)
			base = own
		} else {
			base = http.DefaultTransport
		}
	}
	hc.Transport = &transport{base: base, scrub: sc}

	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	oc.HTTPClient = &hc

	// go-openai refuses max_tokens for models that take
	// max_completion_tokens; ask its own validator which kind this is.
	probe := openai.ChatCompletionRequest{Model: cfg.Model, MaxTokens: 1}
	mct := errors.Is(openai.NewReasoningValidator().Validate(probe), openai.ErrReasoningModelMaxTokensDeprecated)

	return &Client{
		cfg:                 cfg,
		api:                 openai.NewClientWithConfig(oc),
		scrub:               sc,
		log:                 logger,
		slots:               make(chan struct{}, cfg.Concurrency),
		requests:            newRequestLimiter(cfg.RequestsPerMinute),
		tokens:              newTokenBudget(cfg.TokensPerMinute),
		maxCompletionTokens: mct,
		ownTransport:        own,
	}, nil
}

// Chat sends req and returns the first choice. It waits for a concurrency
// slot, then, before each attempt, for the request and token limiters.
// Rate-limited (429), server (5xx), malformed-response, timed-out and
// network failures are retried up to MaxRetries times with backoff;
// invalid requests and auth failures are returned after one attempt. The
// error is always an *Error; it is KindCanceled as soon as ctx ends.
func (c *Client) Chat(ctx context.Context, req Request) (Response, error) {
	msgs, videos, err := translate(req.Messages)
	if err != nil {
		return Response{}, (&Error{Kind: KindInvalidRequest, Message: c.scrub.scrub(err.Error())}).notSent()
	}
	oreq := openai.ChatCompletionRequest{Model: c.cfg.Model, Messages: msgs, Seed: req.Seed}
	if c.maxCompletionTokens {
		oreq.MaxCompletionTokens = req.MaxTokens
	} else {
		oreq.MaxTokens = req.MaxTokens
	}
	temperatureZero := false
	if req.Temperature != nil {
		oreq.Temperature = float32(*req.Temperature)
		temperatureZero = oreq.Temperature == 0
	}

	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return Response{}, canceled(ctx, 0)
	}
	defer func() { <-c.slots }()

	for attempt := 1; ; attempt++ {
		if c.requests != nil {
			if err := c.requests.Wait(ctx); err != nil {
				return Response{}, canceled(ctx, attempt-1)
			}
		}
		charged, err := c.tokens.take(ctx, req.EstTokens)
		if err != nil {
			return Response{}, canceled(ctx, attempt-1)
		}
		resp, ferr := c.attempt(ctx, oreq, &exchange{videos: videos, temperatureZero: temperatureZero})
		if ferr == nil {
			c.tokens.settle(charged, resp.Usage.TotalTokens)
			resp.Attempts = attempt
			return resp, nil
		}
		if ferr.unsent {
			return Response{}, ferr
		}
		ferr.Attempts = attempt
		if ferr.Kind == KindCanceled || !ferr.retryable() || attempt > c.cfg.MaxRetries {
			return Response{}, ferr
		}
		delay := c.backoff(attempt, ferr.retryAfter)
		c.log.LogAttrs(ctx, slog.LevelDebug, "chat request failed; retrying",
			slog.String("model", c.cfg.Model),
			slog.Int("attempt", attempt),
			slog.String("kind", string(ferr.Kind)),
			slog.Int("status", ferr.Status),
			slog.String("message", ferr.Message),
			slog.Duration("delay", delay))
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return Response{}, canceled(ctx, attempt)
		}
	}
}

// attempt makes one HTTP exchange under the per-attempt timeout.
func (c *Client) attempt(ctx context.Context, oreq openai.ChatCompletionRequest, ex *exchange) (Response, *Error) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	start := time.Now()
	out, err := c.api.CreateChatCompletion(context.WithValue(actx, exchangeKey{}, ex), oreq)
	latency := time.Since(start)
	if err != nil {
		return Response{}, c.classify(err, ctx, actx, ex)
	}
	if len(out.Choices) == 0 {
		return Response{}, &Error{Kind: KindBadResponse, Status: ex.status, Message: "response has no choices"}
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
	model := out.Model
	if model == "" {
		model = c.cfg.Model
	}
	finish := ""
	if choice.FinishReason != openai.FinishReasonNull {
		finish = string(choice.FinishReason)
	}
	return Response{
		Text: c.scrub.scrub(text),
		Usage: Usage{
			PromptTokens:     out.Usage.PromptTokens,
			CompletionTokens: out.Usage.CompletionTokens,
			TotalTokens:      out.Usage.TotalTokens,
		},
		Latency:      latency,
		Model:        c.scrub.scrub(model),
		FinishReason: c.scrub.scrub(finish),
	}, nil
}

// backoff is the wait before retry number attempt (1-based): the server's
// Retry-After when given, else full jitter over an exponential ceiling;
// BackoffMax caps both.
func (c *Client) backoff(attempt int, ra retryAfter) time.Duration {
	if ra.set {
		return min(ra.delay, c.cfg.BackoffMax)
	}
	ceiling := c.cfg.BackoffBase
	for i := 1; i < attempt && ceiling < c.cfg.BackoffMax; i++ {
		ceiling *= 2
	}
	ceiling = min(ceiling, c.cfg.BackoffMax)
	return time.Duration(rand.Int64N(int64(ceiling) + 1))
}

func canceled(ctx context.Context, attempts int) *Error {
	if cause := ctx.Err(); cause != nil {
		return &Error{Kind: KindCanceled, Message: cause.Error(), Attempts: attempts, cause: cause}
	}
	// A limiter refused at once: its wait would pass ctx's deadline.
	return &Error{Kind: KindCanceled, Message: "rate-limit wait would pass the context deadline",
		Attempts: attempts, cause: context.DeadlineExceeded}
}
