package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"time"
	"unicode/utf8"

	"golang.org/x/time/rate"
)

// engine is what every provider shares: the concurrency slots, the
// request and token limiters, the retry loop with its backoff, Retry-After
// cap and request deadline, and the API key scrubber. A provider supplies
// one attempt (an HTTP exchange and its classification); run repeats it.
type engine struct {
	cfg      Config
	scrub    scrubber
	log      *slog.Logger
	slots    chan struct{}
	requests *rate.Limiter // nil: unlimited
	tokens   *tokenBudget  // nil: unlimited
}

// attemptFunc makes one attempt. ctx is the caller's context, dctx the
// request's (with its deadline); the attempt applies Config.Timeout itself.
type attemptFunc func(ctx, dctx context.Context) (Response, *Error)

// normalize checks cfg's numbers and fills the defaults every provider
// shares (not BaseURL, whose rules are the provider's).
func normalize(cfg Config) (Config, error) {
	if cfg.Model == "" {
		return cfg, errors.New("client: Model is required")
	}
	if cfg.APIKey != "" && utf8.RuneCountInString(cfg.APIKey) < MinAPIKeyLength {
		// Not quoted back, nor its length: it is a secret however short.
		return cfg, fmt.Errorf("client: APIKey is shorter than %d characters: too short to redact from error texts safely", MinAPIKeyLength)
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"Timeout", int64(cfg.Timeout)}, {"Concurrency", int64(cfg.Concurrency)},
		{"RequestsPerMinute", int64(cfg.RequestsPerMinute)}, {"TokensPerMinute", int64(cfg.TokensPerMinute)},
		{"BackoffBase", int64(cfg.BackoffBase)}, {"BackoffMax", int64(cfg.BackoffMax)},
		{"Deadline", int64(cfg.Deadline)}, {"MaxResponseBytes", cfg.MaxResponseBytes},
		{"InlineLimit", cfg.InlineLimit},
	} {
		if f.v < 0 {
			return cfg, fmt.Errorf("client: %s must not be negative", f.name)
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
	if cfg.InlineLimit == 0 {
		cfg.InlineLimit = DefaultInlineLimit
	}
	if cfg.BackoffMax < cfg.BackoffBase {
		return cfg, fmt.Errorf("client: BackoffMax %s is below BackoffBase %s", cfg.BackoffMax, cfg.BackoffBase)
	}
	return cfg, nil
}

func newEngine(cfg Config) *engine {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return &engine{
		cfg:      cfg,
		scrub:    scrubber{secret: cfg.APIKey},
		log:      logger,
		slots:    make(chan struct{}, cfg.Concurrency),
		requests: newRequestLimiter(cfg.RequestsPerMinute),
		tokens:   newTokenBudget(cfg.TokensPerMinute),
	}
}

// httpClient is the http.Client a provider sends with: Config.HTTPClient's
// (or our own pooled) transport wrapped in transport, which scrubs the key
// from transport errors, records statuses and Retry-After, and caps the
// body read. own is the transport made here (nil when Config.HTTPClient
// supplied one), for Close.
func (e *engine) httpClient(dropHeader string) (hc *http.Client, own *http.Transport) {
	var c http.Client
	var base http.RoundTripper
	if e.cfg.HTTPClient != nil {
		c = *e.cfg.HTTPClient
		base = e.cfg.HTTPClient.Transport
	}
	if base == nil {
		if dt, ok := http.DefaultTransport.(*http.Transport); ok {
			// Our own pool, sized so that Concurrency connections stay
			// open between requests.
			own = dt.Clone()
			own.MaxIdleConnsPerHost = max(e.cfg.Concurrency, own.MaxIdleConnsPerHost)
			base = own
		} else {
			base = http.DefaultTransport
		}
	}
	c.Transport = &transport{base: base, scrub: e.scrub, maxBody: e.cfg.MaxResponseBytes, dropHeader: dropHeader}
	return &c, own
}

// run makes one request: it waits for a concurrency slot, then, before
// each attempt, for the request and token limiters, and repeats a failed
// attempt that may succeed later (rate limit, server error, malformed
// response, timeout, network) up to MaxRetries times with backoff, within
// the request's Deadline. The error is always an *Error; it is
// KindCanceled as soon as ctx ends.
func (e *engine) run(ctx context.Context, estTokens int, attempt attemptFunc) (Response, error) {
	select {
	case e.slots <- struct{}{}:
	case <-ctx.Done():
		return Response{}, canceled(ctx, 0)
	}
	defer func() { <-e.slots }()

	// dctx carries the request's deadline; ctx stays the caller's, so
	// that its end (KindCanceled) is told apart from the deadline's
	// (KindTimeout).
	dctx := ctx
	if e.cfg.Deadline > 0 {
		var cancel context.CancelFunc
		dctx, cancel = context.WithTimeoutCause(ctx, e.cfg.Deadline, errDeadline)
		defer cancel()
	}

	for n := 1; ; n++ {
		if err := e.waitRequests(ctx, dctx); err != nil {
			return Response{}, e.stopped(ctx, dctx, n-1, "waiting for requests_per_minute")
		}
		start := time.Now()
		charged, err := e.tokens.take(dctx, estTokens)
		if err != nil {
			return Response{}, e.stopped(ctx, dctx, n-1, "waiting for tokens_per_minute")
		}
		if waited := time.Since(start); waited >= waitNotice {
			e.log.LogAttrs(ctx, slog.LevelInfo, "waited for the tokens-per-minute limit",
				slog.String("model", e.cfg.Model), slog.Duration("wait", waited.Round(time.Millisecond)))
		}
		resp, ferr := attempt(ctx, dctx)
		if ferr == nil {
			e.tokens.settle(charged, resp.Usage.TotalTokens)
			resp.Attempts = n
			return resp, nil
		}
		if ferr.unsent {
			return Response{}, ferr
		}
		ferr.Attempts = n
		if ferr.Kind == KindCanceled || !ferr.retryable() || n > e.cfg.MaxRetries || dctx.Err() != nil {
			return Response{}, ferr
		}
		delay, reason := e.backoff(n, ferr.retryAfter), e.waitReason(n, ferr.retryAfter)
		reason += fmt.Sprintf(" after %s", ferr.Kind)
		if ferr.Status != 0 {
			reason += fmt.Sprintf(" (HTTP %d)", ferr.Status)
		}
		if dl, ok := dctx.Deadline(); ok && time.Until(dl) < delay {
			left := max(time.Until(dl), 0).Round(time.Millisecond)
			e.log.LogAttrs(ctx, slog.LevelInfo, "chat request failed; not retrying: the wait would pass the request's deadline",
				slog.String("model", e.cfg.Model), slog.Int("attempt", n), slog.String("reason", reason),
				slog.Duration("wait", delay.Round(time.Millisecond)), slog.Duration("deadline_left", left))
			ferr.Message += fmt.Sprintf("; not retried: waiting %s (%s) would pass the request's deadline (%s left)", delay.Round(time.Millisecond), reason, left)
			return Response{}, ferr
		}
		level := slog.LevelDebug
		if delay >= waitNotice {
			level = slog.LevelInfo
		}
		e.log.LogAttrs(ctx, level, "chat request failed; waiting before retrying",
			slog.String("model", e.cfg.Model),
			slog.Int("attempt", n),
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
			return Response{}, e.stopped(ctx, dctx, n, "waiting to retry")
		}
	}
}

// errDeadline is the cause of a request's context when Config.Deadline
// ends it.
var errDeadline = errors.New("request deadline passed")

// waitRequests waits for the requests-per-minute limiter, logging a wait
// of waitNotice or more before it starts. A wait that would pass dctx's
// deadline is refused at once.
func (e *engine) waitRequests(ctx, dctx context.Context) error {
	if e.requests == nil {
		return nil
	}
	r := e.requests.Reserve()
	d := r.Delay()
	if d == 0 {
		return nil
	}
	if dl, ok := dctx.Deadline(); ok && time.Until(dl) < d {
		r.Cancel()
		return context.DeadlineExceeded
	}
	if d >= waitNotice {
		e.log.LogAttrs(ctx, slog.LevelInfo, "waiting for the requests-per-minute limit",
			slog.String("model", e.cfg.Model), slog.Duration("wait", d.Round(time.Millisecond)))
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

// stopped is the error of a request that ended while waiting or sending:
// KindCanceled when the caller's ctx ended (or a limiter wait would pass
// its deadline), KindTimeout when the request's own deadline did (or a
// wait would pass it).
func (e *engine) stopped(ctx, dctx context.Context, attempts int, while string) *Error {
	if ctx.Err() != nil || dctx == ctx {
		return canceled(ctx, attempts)
	}
	own, _ := dctx.Deadline()
	if theirs, ok := ctx.Deadline(); dctx.Err() != nil || !ok || own.Before(theirs) {
		return &Error{Kind: KindTimeout, Attempts: attempts,
			Message: fmt.Sprintf("the request's deadline (%s) passed while %s", e.cfg.Deadline, while)}
	}
	return canceled(ctx, attempts)
}

// deadlineMessage rewrites a timeout that the request's deadline (not
// the attempt's timeout) caused.
func (e *engine) deadlineMessage(ctx, dctx context.Context, err *Error) *Error {
	if err != nil && err.Kind == KindTimeout && dctx.Err() != nil && ctx.Err() == nil {
		err.Message = fmt.Sprintf("no complete response before the request's deadline (%s)", e.cfg.Deadline)
	}
	return err
}

// backoff is the wait before retry number attempt (1-based): the server's
// Retry-After when given, else full jitter over an exponential ceiling;
// BackoffMax caps both.
func (e *engine) backoff(attempt int, ra retryAfter) time.Duration {
	if ra.set {
		return min(ra.delay, e.cfg.BackoffMax)
	}
	ceiling := e.cfg.BackoffBase
	for i := 1; i < attempt && ceiling < e.cfg.BackoffMax; i++ {
		ceiling *= 2
	}
	ceiling = min(ceiling, e.cfg.BackoffMax)
	return time.Duration(rand.Int64N(int64(ceiling) + 1))
}

// waitReason says why backoff chose its wait, for the log and errors.
func (e *engine) waitReason(attempt int, ra retryAfter) string {
	switch {
	case ra.set && ra.delay > e.cfg.BackoffMax:
		return fmt.Sprintf("the server asked for %s (%s), cut to the %s cap", ra.delay.Round(time.Millisecond), ra.source(), e.cfg.BackoffMax)
	case ra.set:
		return fmt.Sprintf("the server asked for it (%s)", ra.source())
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
