// Package client sends one chat request to an OpenAI-compatible server
// (hosted providers, vLLM, Ollama, llama.cpp, the reference server) and
// returns the reply with its token usage. It wraps
// github.com/sashabaranov/go-openai with what an evaluation run needs:
// bounded concurrency and per-model rate limits, retries with exponential
// backoff, full jitter and Retry-After (every wait capped by BackoffMax,
// counted against the request's Deadline, and logged when it is 5 s or
// more), errors classified by kind (a request the server rejects is
// recorded, not retried), a cap on the reply body read
// (MaxResponseBytes), native video parts (see transport.go), and an API
// key that never appears in an error, a log line or a response.
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
	// DefaultMaxResponseBytes caps the body of one response the client
	// reads (a chat reply is at most a few hundred KB; a hostile or broken
	// server could send gigabytes).
	DefaultMaxResponseBytes = 8 << 20
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
		{"Deadline", int64(cfg.Deadline)}, {"MaxResponseBytes", cfg.MaxResponseBytes},
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
	if cfg.MaxResponseBytes == 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
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
	hc.Transport = &transport{base: base, scrub: sc, maxBody: cfg.MaxResponseBytes}

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

	// dctx carries the request's deadline; ctx stays the caller's, so
	// that its end (KindCanceled) is told apart from the deadline's
	// (KindTimeout).
	dctx := ctx
	if c.cfg.Deadline > 0 {
		var cancel context.CancelFunc
		dctx, cancel = context.WithTimeoutCause(ctx, c.cfg.Deadline, errDeadline)
		defer cancel()
	}

	for attempt := 1; ; attempt++ {
		if err := c.waitRequests(ctx, dctx); err != nil {
			return Response{}, c.stopped(ctx, dctx, attempt-1, "waiting for requests_per_minute")
		}
		start := time.Now()
		charged, err := c.tokens.take(dctx, req.EstTokens)
		if err != nil {
			return Response{}, c.stopped(ctx, dctx, attempt-1, "waiting for tokens_per_minute")
		}
		if waited := time.Since(start); waited >= waitNotice {
			c.log.LogAttrs(ctx, slog.LevelInfo, "waited for the tokens-per-minute limit",
				slog.String("model", c.cfg.Model), slog.Duration("wait", waited.Round(time.Millisecond)))
		}
		resp, ferr := c.attempt(ctx, dctx, oreq, &exchange{videos: videos, temperatureZero: temperatureZero})
		if ferr == nil {
			c.tokens.settle(charged, resp.Usage.TotalTokens)
			resp.Attempts = attempt
			return resp, nil
		}
		if ferr.unsent {
			return Response{}, ferr
		}
		ferr.Attempts = attempt
		if ferr.Kind == KindCanceled || !ferr.retryable() || attempt > c.cfg.MaxRetries || dctx.Err() != nil {
			return Response{}, ferr
		}
		delay, reason := c.backoff(attempt, ferr.retryAfter), c.waitReason(attempt, ferr.retryAfter)
		reason += fmt.Sprintf(" after %s", ferr.Kind)
		if ferr.Status != 0 {
			reason += fmt.Sprintf(" (HTTP %d)", ferr.Status)
		}
		if dl, ok := dctx.Deadline(); ok && time.Until(dl) < delay {
			left := max(time.Until(dl), 0).Round(time.Millisecond)
			c.log.LogAttrs(ctx, slog.LevelInfo, "chat request failed; not retrying: the wait would pass the request's deadline",
				slog.String("model", c.cfg.Model), slog.Int("attempt", attempt), slog.String("reason", reason),
				slog.Duration("wait", delay.Round(time.Millisecond)), slog.Duration("deadline_left", left))
			ferr.Message += fmt.Sprintf("; not retried: waiting %s (%s) would pass the request's deadline (%s left)", delay.Round(time.Millisecond), reason, left)
			return Response{}, ferr
		}
		level := slog.LevelDebug
		if delay >= waitNotice {
			level = slog.LevelInfo
		}
		c.log.LogAttrs(ctx, level, "chat request failed; waiting before retrying",
			slog.String("model", c.cfg.Model),
			slog.Int("attempt", attempt),
			slog.String("kind", string(ferr.Kind)),
			slog.Int("status", ferr.Status),
			slog.String("message", ferr.Message),
			slog.String("reason", reason),
			slog.Duration("delay", delay))
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-dctx.Done():
			t.Stop()
			return Response{}, c.stopped(ctx, dctx, attempt, "waiting to retry")
		}
	}
}

// errDeadline is the cause of a request's context when Config.Deadline
// ends it.
var errDeadline = errors.New("request deadline passed")

// waitRequests waits for the requests-per-minute limiter, logging a wait
// of waitNotice or more before it starts. A wait that would pass dctx's
// deadline is refused at once.
func (c *Client) waitRequests(ctx, dctx context.Context) error {
	if c.requests == nil {
		return nil
	}
	r := c.requests.Reserve()
	d := r.Delay()
	if d == 0 {
		return nil
	}
	if dl, ok := dctx.Deadline(); ok && time.Until(dl) < d {
		r.Cancel()
		return context.DeadlineExceeded
	}
	if d >= waitNotice {
		c.log.LogAttrs(ctx, slog.LevelInfo, "waiting for the requests-per-minute limit",
			slog.String("model", c.cfg.Model), slog.Duration("wait", d.Round(time.Millisecond)))
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-dctx.Done():
		r.Cancel()
		return dctx.Err()
	}
}

// stopped is the error of a Chat call that ended while waiting or
// sending: KindCanceled when the caller's ctx ended (or a limiter wait
// would pass its deadline), KindTimeout when the request's own deadline
// did (or a wait would pass it).
func (c *Client) stopped(ctx, dctx context.Context, attempts int, while string) *Error {
	if ctx.Err() != nil || dctx == ctx {
		return canceled(ctx, attempts)
	}
	own, _ := dctx.Deadline()
	if theirs, ok := ctx.Deadline(); dctx.Err() != nil || !ok || own.Before(theirs) {
		return &Error{Kind: KindTimeout, Attempts: attempts,
			Message: fmt.Sprintf("the request's deadline (%s) passed while %s", c.cfg.Deadline, while)}
	}
	return canceled(ctx, attempts)
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
		e := c.classify(err, ctx, actx, ex)
		if e.Kind == KindTimeout && dctx.Err() != nil && ctx.Err() == nil {
			e.Message = fmt.Sprintf("no complete response before the request's deadline (%s)", c.cfg.Deadline)
		}
		return Response{}, e
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

// waitReason says why backoff chose its wait, for the log and errors.
func (c *Client) waitReason(attempt int, ra retryAfter) string {
	switch {
	case ra.set && ra.delay > c.cfg.BackoffMax:
		return fmt.Sprintf("the server asked for %s (Retry-After), cut to the %s cap", ra.delay.Round(time.Millisecond), c.cfg.BackoffMax)
	case ra.set:
		return "the server asked for it (Retry-After)"
	}
	return fmt.Sprintf("backoff before retry %d", attempt)
}

func canceled(ctx context.Context, attempts int) *Error {
	if cause := ctx.Err(); cause != nil {
		return &Error{Kind: KindCanceled, Message: cause.Error(), Attempts: attempts, cause: cause}
	}
	// A limiter refused at once: its wait would pass ctx's deadline.
	return &Error{Kind: KindCanceled, Message: "rate-limit wait would pass the context deadline",
		Attempts: attempts, cause: context.DeadlineExceeded}
}
