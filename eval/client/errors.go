package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// ErrorKind says why a request failed; a runner records it with the
// trial.
type ErrorKind string

// Error kinds. Only KindRateLimited, KindServer, KindBadResponse,
// KindTimeout and KindNetwork are retried; the others are returned after
// the attempt that produced them.
const (
	// KindInvalidRequest: the server rejected the request as invalid
	// (HTTP 400, 404, 413, 422 and any other 4xx not listed below: too
	// many images, unknown model, context too long), or the request could
	// not be built (Attempts 0: nothing was sent). Not retried.
	KindInvalidRequest ErrorKind = "invalid_request"
	// KindAuth: HTTP 401 or 403. Not retried.
	KindAuth ErrorKind = "auth"
	// KindRateLimited: HTTP 429 on every attempt. A 429 whose error code
	// is "insufficient_quota" (an exhausted billing quota, which waiting
	// does not fix) is returned at once.
	KindRateLimited ErrorKind = "rate_limited"
	// KindServer: HTTP 5xx (or another failure status) on every attempt.
	KindServer ErrorKind = "server"
	// KindBadResponse: a success status whose body is not a chat
	// completion (malformed or truncated JSON, no choices) on every
	// attempt.
	KindBadResponse ErrorKind = "bad_response"
	// KindTimeout: no complete response within Config.Timeout (or HTTP
	// 408) on every attempt.
	KindTimeout ErrorKind = "timeout"
	// KindNetwork: the connection failed (refused, reset, DNS) on every
	// attempt.
	KindNetwork ErrorKind = "network"
	// KindCanceled: the caller's context ended (cancelled or past its
	// deadline) while waiting for a slot, a rate limiter, a backoff or a
	// response. errors.Is(err, context.Canceled) or
	// errors.Is(err, context.DeadlineExceeded) tells which.
	KindCanceled ErrorKind = "canceled"
)

// Error is the error Chat returns. Message never contains the API key:
// every error text that came from the server or the network is scrubbed
// (an error body is no reply: nothing is scored from it, and servers echo
// the key in auth errors).
type Error struct {
	Kind     ErrorKind
	Status   int    // HTTP status of the last attempt; 0 when none came back
	Message  string // the server's error message (or the local cause), API key scrubbed
	Attempts int    // HTTP attempts made; 0 when nothing was sent

	cause      error      // the context error for KindCanceled; nil otherwise
	retryAfter retryAfter // the server's Retry-After, when it sent one
	noRetry    bool       // final whatever the kind
	unsent     bool       // raised before anything was sent
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("chat request: ")
	b.WriteString(string(e.Kind))
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	switch e.Attempts {
	case 0:
		b.WriteString(" (not sent)")
	case 1:
		b.WriteString(" (1 attempt)")
	default:
		fmt.Fprintf(&b, " (%d attempts)", e.Attempts)
	}
	return b.String()
}

// Unwrap returns context.Canceled or context.DeadlineExceeded for
// KindCanceled, nil otherwise (the raw transport error is not kept: it
// could carry what Message scrubs).
func (e *Error) Unwrap() error { return e.cause }

func (e *Error) retryable() bool {
	if e.noRetry {
		return false
	}
	switch e.Kind {
	case KindRateLimited, KindServer, KindBadResponse, KindTimeout, KindNetwork:
		return true
	}
	return false
}

// redacted replaces the API key in server and network texts.
const redacted = "[REDACTED]"

// MinAPIKeyLength is the shortest API key New and NewGemini accept. Error
// texts are scrubbed of the key by plain replacement, which is safe only
// for a key that ordinary text does not contain: a key "a" would turn
// every "wall" into "w[REDACTED]ll", a key "6" every 6. Local servers
// take any string (vLLM --api-key), so a longer one costs nothing; a
// server that checks no key needs none sent.
const MinAPIKeyLength = 8

// scrubber removes one secret from error texts: those of the transport
// and the server's error bodies, never a reply (a reply is the model's
// evidence and is kept as received). An empty secret scrubs nothing.
type scrubber struct{ secret string }

func (s scrubber) scrub(text string) string {
	if s.secret == "" {
		return text
	}
	return strings.ReplaceAll(text, s.secret, redacted)
}

// maxMessage bounds the server text kept in an Error (an HTML error page
// from a proxy can be large).
const maxMessage = 600

func truncate(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// bodyMessage finds the error message in an error response body. It knows
// the OpenAI and llama.cpp shape {"error":{"message":...}}, Ollama's
// {"error":"..."}, vLLM's {"object":"error","message":...} and FastAPI's
// {"detail":...}; any other body is returned as text.
func bodyMessage(body []byte) (message, code string) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(body, &v) == nil {
		var inner struct {
			Message json.RawMessage `json:"message"`
			Code    json.RawMessage `json:"code"`
		}
		if len(v.Error) > 0 && json.Unmarshal(v.Error, &inner) == nil && len(inner.Message) > 0 {
			return rawText(inner.Message), rawText(inner.Code)
		}
		for _, raw := range []json.RawMessage{v.Error, v.Message, v.Detail} {
			if s := rawText(raw); s != "" {
				return s, rawText(v.Code)
			}
		}
	}
	return string(body), ""
}

// rawText is a JSON string's value, or the JSON text of anything else
// (a FastAPI validation detail is a list).
func rawText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// kindForStatus maps a failure status to a kind.
func kindForStatus(status int) ErrorKind {
	switch {
	case status == 401 || status == 403:
		return KindAuth
	case status == 408:
		return KindTimeout
	case status == 429:
		return KindRateLimited
	case status >= 400 && status < 500:
		return KindInvalidRequest
	default:
		return KindServer
	}
}

// classify turns what CreateChatCompletion returned into an *Error.
// parent is the caller's context, attempt the per-attempt one.
func (c *Client) classify(err error, parent, attempt context.Context, ex *exchange) *Error {
	if perr := parent.Err(); perr != nil {
		return &Error{Kind: KindCanceled, Message: perr.Error(), cause: perr}
	}
	var big *tooLargeError
	if errors.As(err, &big) {
		// Not retried: a reply that large will not shrink, and a hostile
		// server would be read again.
		e := &Error{Kind: KindBadResponse, Message: big.Error()}
		if ex != nil {
			e.Status = ex.status
		}
		return e.final()
	}
	status, message, code := 0, "", ""
	var reqErr *openai.RequestError
	var apiErr *openai.APIError
	switch {
	case errors.As(err, &reqErr):
		status = reqErr.HTTPStatusCode
		message, code = bodyMessage(reqErr.Body)
	case errors.As(err, &apiErr):
		status = apiErr.HTTPStatusCode
		message = apiErr.Message
		if s, ok := apiErr.Code.(string); ok {
			code = s
		}
	}
	if status != 0 {
		e := &Error{Kind: kindForStatus(status), Status: status, Message: truncate(c.scrub.scrub(message))}
		if e.Message == "" {
			e.Message = fmt.Sprintf("HTTP %d", status)
		}
		if code == "insufficient_quota" {
			// A billing limit: no amount of waiting helps; kept as
			// rate_limited but not retried.
			return e.final()
		}
		if ex != nil {
			e.retryAfter = ex.retryAfter
		}
		return e
	}

	var rwErr *rewriteError
	var netErr net.Error
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &rwErr):
		return (&Error{Kind: KindInvalidRequest, Message: c.scrub.scrub(rwErr.Error())}).notSent()
	case ex == nil || !ex.sent:
		// go-openai refused the request before sending it (its model
		// and parameter checks).
		return (&Error{Kind: KindInvalidRequest, Message: truncate(c.scrub.scrub(err.Error()))}).notSent()
	case errors.Is(attempt.Err(), context.DeadlineExceeded):
		return &Error{Kind: KindTimeout, Status: ex.status, Message: fmt.Sprintf("no complete response within %s", c.cfg.Timeout)}
	case errors.As(err, &netErr) && netErr.Timeout():
		return &Error{Kind: KindTimeout, Status: ex.status, Message: truncate(c.scrub.scrub(err.Error()))}
	case ex.status != 0 && (errors.As(err, &syntaxErr) || errors.As(err, &typeErr) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)):
		return &Error{Kind: KindBadResponse, Status: ex.status, Message: "malformed response body: " + truncate(c.scrub.scrub(err.Error()))}
	default:
		return &Error{Kind: KindNetwork, Status: ex.status, Message: truncate(c.scrub.scrub(err.Error()))}
	}
}

// final marks an error that must not be retried even though its kind
// usually is.
func (e *Error) final() *Error {
	e.noRetry = true
	return e
}

// notSent marks an error raised before anything reached the server.
func (e *Error) notSent() *Error {
	e.noRetry = true
	e.unsent = true
	return e
}
