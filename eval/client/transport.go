package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// How video reaches the server
//
// go-openai's ChatMessagePart knows only "text" and "image_url", but vLLM
// (Qwen-VL, LLaVA-OneVision), SGLang and the reference server accept a
// native video as {"type":"video_url","video_url":{"url":...}}. Rather
// than fork the library, the client extends the request on the wire:
//
//  1. translate turns each chat.Part of TypeVideo into an image_url part
//     whose URL is a placeholder, videoScheme followed by the video's index
//     in the request ("tracegrid-video://0", "tracegrid-video://1", ...),
//     and keeps the real URLs, in order, in an exchange.
//  2. Chat passes the exchange to go-openai through the request context
//     (CreateChatCompletion(ctx, ...) builds its http.Request with that
//     context).
//  3. transport, the RoundTripper of the http.Client handed to go-openai,
//     finds the exchange in req.Context(), decodes the JSON body, replaces
//     each content part {"type":"image_url","image_url":{"url":
//     "tracegrid-video://i",...}} of messages[].content with
//     {"type":"video_url","video_url":{"url":"<real URL i>"}}, checks that
//     every placeholder was used exactly once, re-encodes the body and sets
//     ContentLength (and GetBody) to match.
//
// The same mechanism sets top-level fields go-openai cannot write as we
// need them: "temperature" (go-openai's float32 `omitempty` field would
// drop an explicit 0 — evaluations run greedy, and a server's default
// temperature is not 0 — and its own validator would refuse a temperature
// that a study sends on purpose to a model it thinks takes none), "top_p",
// and every key of Config.ExtraBody (vLLM's mm_processor_kwargs, ...),
// merged at the top level. A request with nothing to rewrite is passed
// through byte for byte.
//
// The transport also keeps, per attempt, the response's status,
// Retry-After, x-request-id header and body (up to MaxResponseBytes, for
// the fields go-openai does not decode, such as vLLM's "reasoning").
//
// Image parts whose URL starts with videoScheme are refused, so a
// placeholder cannot be confused with a real image; text parts are never
// looked at.
const videoScheme = "tracegrid-video://"

func videoPlaceholder(i int) string { return videoScheme + strconv.Itoa(i) }

// exchange is the per-attempt state shared, through the request context,
// between Chat and transport. transport runs synchronously inside
// CreateChatCompletion, so no lock is needed.
type exchange struct {
	// Set by Chat.
	videos []string       // real URLs of the video parts, by placeholder index
	sets   map[string]any // top-level body fields to set (temperature, top_p, ExtraBody)

	// Set by transport.
	sent       bool       // the request went to the network
	status     int        // status of the response, 0 if none
	retryAfter retryAfter // the response's Retry-After / retry-after-ms
	requestID  string     // the response's x-request-id header
	raw        *bytes.Buffer
}

func (x *exchange) rewrites() bool { return len(x.videos) > 0 || len(x.sets) > 0 }

type exchangeKey struct{}

// transport rewrites request bodies (see above), records the status and
// Retry-After of responses, and scrubs the API key from transport errors.
type transport struct {
	base    http.RoundTripper
	scrub   scrubber
	maxBody int64 // response bodies are cut here (limitedBody); 0: no cap
	// dropHeader, when set, is removed from every request (the Gemini
	// SDK's x-goog-api-key when the study names no key: the SDK would
	// otherwise send one it found in the environment).
	dropHeader string
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ex, _ := req.Context().Value(exchangeKey{}).(*exchange)
	if ex != nil && ex.rewrites() && req.Body != nil && req.Body != http.NoBody {
		body, err := io.ReadAll(req.Body)
		if cerr := req.Body.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("read request body: %w", err)
		}
		body, err = rewriteBody(body, ex.videos, ex.sets)
		if err != nil {
			return nil, &rewriteError{err: err}
		}
		req = req.Clone(req.Context()) // a RoundTripper must not modify the request it was given
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		req.ContentLength = int64(len(body))
		req.Header.Del("Content-Length") // the client writes ContentLength; keep no stale copy
	}
	if t.dropHeader != "" && req.Header.Get(t.dropHeader) != "" {
		req = req.Clone(req.Context())
		req.Header.Del(t.dropHeader)
	}
	if ex != nil {
		ex.sent = true
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, t.scrubError(err)
	}
	if ex != nil {
		ex.status = resp.StatusCode
		ex.retryAfter = parseRetryAfter(resp.Header, time.Now())
		ex.requestID = resp.Header.Get("X-Request-Id")
	}
	if t.maxBody > 0 && resp.Body != nil {
		resp.Body = &limitedBody{rc: resp.Body, left: t.maxBody, limit: t.maxBody}
	}
	if ex != nil && resp.Body != nil && resp.StatusCode/100 == 2 {
		ex.raw = &bytes.Buffer{}
		resp.Body = &capturedBody{rc: resp.Body, copy: ex.raw}
	}
	return resp, nil
}

// capturedBody keeps a copy of what is read (already capped by
// limitedBody).
type capturedBody struct {
	rc   io.ReadCloser
	copy *bytes.Buffer
}

func (b *capturedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.copy.Write(p[:n])
	return n, err
}

func (b *capturedBody) Close() error { return b.rc.Close() }

// limitedBody reads a response body up to limit bytes; past it, Read
// fails with a *tooLargeError instead of reading the rest (a hostile
// server's gigabyte reply costs at most limit bytes of memory).
type limitedBody struct {
	rc          io.ReadCloser
	left, limit int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly limit bytes from a larger one.
		var one [1]byte
		if n, err := b.rc.Read(one[:]); n > 0 {
			return 0, &tooLargeError{limit: b.limit}
		} else if err != nil {
			return 0, err
		}
		return 0, nil
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// tooLargeError is a response body above Config.MaxResponseBytes.
type tooLargeError struct{ limit int64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("response body larger than %d bytes (MaxResponseBytes); not read further", e.limit)
}

// scrubError hides the API key in a transport error's text while keeping
// the error chain (timeouts, context errors) for classification.
func (t *transport) scrubError(err error) error {
	if t.scrub.secret == "" || !strings.Contains(err.Error(), t.scrub.secret) {
		return err
	}
	return &scrubbedError{msg: t.scrub.scrub(err.Error()), cause: err}
}

type scrubbedError struct {
	msg   string
	cause error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.cause }

// rewriteError is a body the transport could not rewrite: a bug in the
// request, never retried.
type rewriteError struct{ err error }

func (e *rewriteError) Error() string { return "video rewrite: " + e.err.Error() }
func (e *rewriteError) Unwrap() error { return e.err }

// rewriteBody replaces the video placeholders of a chat completion body
// and sets the top-level fields of sets (replacing what go-openai wrote).
// Numbers are kept as written (json.Number); HTML characters are not
// escaped.
func rewriteBody(body []byte, videos []string, sets map[string]any) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var root map[string]any
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("decode request body: %w", err)
	}
	used := make([]bool, len(videos))
	messages, _ := root["messages"].([]any)
	for _, m := range messages {
		msg, _ := m.(map[string]any)
		content, _ := msg["content"].([]any)
		for i, p := range content {
			part, _ := p.(map[string]any)
			if part["type"] != "image_url" {
				continue
			}
			image, _ := part["image_url"].(map[string]any)
			url, _ := image["url"].(string)
			rest, ok := strings.CutPrefix(url, videoScheme)
			if !ok {
				continue
			}
			k, err := strconv.Atoi(rest)
			if err != nil || k < 0 || k >= len(videos) {
				return nil, fmt.Errorf("unknown video placeholder %q", url)
			}
			if used[k] {
				return nil, fmt.Errorf("video placeholder %q used twice", url)
			}
			used[k] = true
			content[i] = map[string]any{
				"type":      "video_url",
				"video_url": map[string]any{"url": videos[k]},
			}
		}
	}
	for k, u := range used {
		if !u {
			return nil, fmt.Errorf("video %d missing from the request body", k)
		}
	}
	for k, v := range sets {
		root[k] = v
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("encode request body: %w", err)
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// retryAfter is a server-requested wait.
type retryAfter struct {
	set   bool
	delay time.Duration
	from  string // where the server said it; "" is the Retry-After header
}

// source names where the wait was asked for.
func (r retryAfter) source() string {
	if r.from == "" {
		return "Retry-After"
	}
	return r.from
}

// parseRetryAfter reads retry-after-ms (Azure, OpenAI: milliseconds) or
// Retry-After (delay-seconds, possibly fractional, or an HTTP date). A date
// in the past asks for no wait.
func parseRetryAfter(h http.Header, now time.Time) retryAfter {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && !math.IsInf(ms, 0) {
			return retryAfter{set: true, delay: seconds(ms / 1000)}
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return retryAfter{}
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 || math.IsInf(s, 0) || math.IsNaN(s) {
			return retryAfter{}
		}
		return retryAfter{set: true, delay: seconds(s)}
	}
	if t, err := http.ParseTime(v); err == nil {
		return retryAfter{set: true, delay: max(t.Sub(now), 0)}
	}
	return retryAfter{}
}

// seconds converts without overflow (a day is more than any cap).
func seconds(s float64) time.Duration {
	const ceiling = 24 * time.Hour
	if s >= ceiling.Seconds() {
		return ceiling
	}
	return time.Duration(s * float64(time.Second))
}
