package perceiver

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tracegrid/tracegrid/eval/chat"
)

// ModelID is the model name the server lists and answers as by default.
const ModelID = "tracegrid-perceiver"

// Options configure Handler.
type Options struct {
	// Token, when set, is the bearer token every /v1 request must carry
	// ("Authorization: Bearer <token>").
	Token string
	// MaxBody is the largest request body in bytes (default 64 MiB);
	// larger ones get 413.
	MaxBody int64
	// Concurrency is how many requests are analysed at once (default
	// runtime.NumCPU()).
	Concurrency int
	// Queue is how many more requests may wait (reading their bodies,
	// then for a slot); beyond Concurrency+Queue requests in flight, a
	// request gets 429 at once. 0 means 4×Concurrency; negative, none.
	Queue int
	// QueueTimeout bounds a request's wait for a slot (default 2 min);
	// past it the request gets 429.
	QueueTimeout time.Duration
	// HeaderTimeout bounds the reading of a request's line and headers
	// (default 10 s; NewServer's http.Server applies it: past it the
	// connection is closed without a reply).
	HeaderTimeout time.Duration
	// BodyTimeout bounds the reading of a chat request's whole body, from
	// the end of its headers (default 60 s); past it the request gets 408
	// and its connection is closed. The body is read in full before the
	// request waits for an analysis slot, so a slow body never holds one;
	// it holds one of the Concurrency+Queue admission places for at most
	// BodyTimeout.
	BodyTimeout time.Duration
	// Model is the id /v1/models lists (default ModelID). Requests may
	// name any model; the reply echoes it.
	Model string
	// Limits bound the decoding of one request (frames, pixels, video
	// sampling rate).
	Limits Limits
	// Logger receives one line per request (Debug) and per failure; nil
	// discards.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.MaxBody <= 0 {
		o.MaxBody = 64 << 20
	}
	if o.Concurrency <= 0 {
		o.Concurrency = runtime.NumCPU()
	}
	if o.Queue < 0 {
		o.Queue = 0
	} else if o.Queue == 0 {
		o.Queue = 4 * o.Concurrency
	}
	if o.QueueTimeout <= 0 {
		o.QueueTimeout = 2 * time.Minute
	}
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = 10 * time.Second
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = time.Minute
	}
	if o.Model == "" {
		o.Model = ModelID
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Limits = o.Limits.withDefaults()
	return o
}

// server is the state behind Handler.
type server struct {
	opt      Options
	det      *Detector
	inFlight atomic.Int64  // admitted requests (running or waiting)
	slots    chan struct{} // one token per running analysis
	created  int64         // the model's creation time, fixed at start
}

// Handler serves the reference perceiver over the OpenAI chat-completions
// protocol:
//
//	POST /v1/chat/completions  a chat completion (text, image_url and video_url parts)
//	GET  /v1/models            the model list (one model)
//	GET  /v1/models/{id}       one model
//	GET  /health               {"status":"ok"}, without authentication
//
// Errors are OpenAI-style JSON, {"error":{"message","type","param","code"}},
// with 400 (malformed request or content), 401 (missing or wrong bearer
// token: checked first on every /v1 path, known or not), 404 (unknown path
// or model), 405 (wrong method), 408 (body not received within
// BodyTimeout), 413 (body over MaxBody), 429 (over capacity, with
// Retry-After) or 500. See docs/perceiver.md for token counting and the
// capacity rules. Serve it with NewServer's http.Server, which also bounds
// the header read.
func Handler(opt Options) http.Handler {
	return http.HandlerFunc(newServer(opt).serve)
}

// NewServer returns an http.Server for Handler(opt) with the documented
// connection limits: request line and headers within HeaderTimeout (at
// most MaxHeaderBytes), the whole request within HeaderTimeout +
// BodyTimeout (the handler also bounds a chat request's body by
// BodyTimeout from the end of its headers), an idle keep-alive connection
// closed after IdleTimeout.
func NewServer(opt Options) *http.Server {
	return newServer(opt).httpServer()
}

// Connection limits of NewServer.
const (
	MaxHeaderBytes = 64 << 10
	IdleTimeout    = 2 * time.Minute
)

func newServer(opt Options) *server {
	opt = opt.withDefaults()
	return &server{
		opt:     opt,
		det:     &Detector{Limits: opt.Limits},
		slots:   make(chan struct{}, opt.Concurrency),
		created: time.Now().Unix(),
	}
}

func (s *server) httpServer() *http.Server {
	return &http.Server{
		Handler:           http.HandlerFunc(s.serve),
		ReadHeaderTimeout: s.opt.HeaderTimeout,
		ReadTimeout:       s.opt.HeaderTimeout + s.opt.BodyTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}

// apiError is an error answered as OpenAI error JSON.
type apiError struct {
	status int
	typ    string // invalid_request_error, authentication_error, rate_limit_error, server_error
	code   string // "" → null
	param  string // "" → null
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(param, code, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", code: code, param: param, msg: fmt.Sprintf(format, args...)}
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	status := http.StatusOK
	defer func() {
		if v := recover(); v != nil {
			s.opt.Logger.Error("perceiver: panic", "path", r.URL.Path, "panic", v)
			status = http.StatusInternalServerError
			s.writeError(w, &apiError{status: status, typ: "server_error", msg: "internal error while answering the request"})
		}
		s.opt.Logger.Debug("perceiver: request", "method", r.Method, "path", r.URL.Path, "status", status, "duration", time.Since(start))
	}()
	fail := func(e *apiError) {
		status = e.status
		s.writeError(w, e)
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	allow := func(methods ...string) bool {
		for _, m := range methods {
			if r.Method == m {
				return true
			}
		}
		w.Header().Set("Allow", strings.Join(methods, ", "))
		fail(&apiError{status: http.StatusMethodNotAllowed, typ: "invalid_request_error", code: "method_not_allowed",
			msg: fmt.Sprintf("%s is not allowed on %s (allowed: %s)", r.Method, path, strings.Join(methods, ", "))})
		return false
	}
	unknown := func() {
		fail(&apiError{status: http.StatusNotFound, typ: "invalid_request_error", code: "unknown_url",
			msg: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path)})
	}
	switch {
	case path == "/health":
		if allow(http.MethodGet, http.MethodHead) {
			s.writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		}
		return
	case path != "/v1" && !strings.HasPrefix(path, "/v1/"):
		unknown()
		return
	}
	// Every /v1 path, known or not, is authenticated first: without the
	// token, nothing about the API (not even which paths exist) is told.
	if e := s.authorize(r); e != nil {
		fail(e)
		return
	}
	switch {
	case path != "/v1/chat/completions" && path != "/v1/models" && !strings.HasPrefix(path, "/v1/models/"):
		unknown()
	case path == "/v1/models":
		if allow(http.MethodGet) {
			s.writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{s.model()}})
		}
	case strings.HasPrefix(path, "/v1/models/"):
		if !allow(http.MethodGet) {
			return
		}
		if id := strings.TrimPrefix(path, "/v1/models/"); id != s.opt.Model {
			fail(&apiError{status: http.StatusNotFound, typ: "invalid_request_error", code: "model_not_found", param: "model",
				msg: fmt.Sprintf("The model %q does not exist; this server has %q", id, s.opt.Model)})
			return
		}
		s.writeJSON(w, http.StatusOK, s.model())
	default:
		if !allow(http.MethodPost) {
			return
		}
		resp, e := s.complete(w, r)
		if e != nil {
			switch e.status {
			case http.StatusTooManyRequests:
				w.Header().Set("Retry-After", "1")
			case http.StatusRequestTimeout:
				w.Header().Set("Connection", "close")
				s.opt.Logger.Warn("perceiver: request body not received in time", "limit", s.opt.BodyTimeout, "remote", r.RemoteAddr)
			}
			if e.status >= 500 {
				s.opt.Logger.Error("perceiver: request failed", "error", e.msg)
			}
			fail(e)
			return
		}
		s.writeJSON(w, http.StatusOK, resp)
	}
}

func (s *server) model() map[string]any {
	return map[string]any{"id": s.opt.Model, "object": "model", "created": s.created, "owned_by": "tracegrid"}
}

// authorize checks the bearer token when one is configured.
func (s *server) authorize(r *http.Request) *apiError {
	if s.opt.Token == "" {
		return nil
	}
	auth := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(s.opt.Token)) != 1 {
		msg := "Incorrect API key provided."
		if auth == "" {
			msg = "You didn't provide an API key. Send it in the Authorization header as 'Bearer <token>'."
		}
		return &apiError{status: http.StatusUnauthorized, typ: "authentication_error", code: "invalid_api_key", msg: msg}
	}
	return nil
}

// complete answers one chat completion: admission, body (read in full,
// within BodyTimeout), request, container check of video parts, analysis
// slot, detector, response.
func (s *server) complete(w http.ResponseWriter, r *http.Request) (map[string]any, *apiError) {
	busy := &apiError{status: http.StatusTooManyRequests, typ: "rate_limit_error", code: "rate_limit_exceeded",
		msg: fmt.Sprintf("The server is at capacity (%d requests analysed at once, %d waiting); retry shortly.", s.opt.Concurrency, s.opt.Queue)}
	if s.inFlight.Add(1) > int64(s.opt.Concurrency+s.opt.Queue) {
		s.inFlight.Add(-1)
		return nil, busy
	}
	defer s.inFlight.Add(-1)
	if r.ContentLength > s.opt.MaxBody {
		return nil, tooLarge(s.opt.MaxBody)
	}
	body, e := s.readBody(w, r)
	if e != nil {
		return nil, e
	}
	req, e := parseRequest(body)
	if e != nil {
		return nil, e
	}
	if e := checkVideoParts(req.msgs); e != nil {
		return nil, e
	}
	// Wait for an analysis slot.
	ctx, cancel := context.WithTimeout(r.Context(), s.opt.QueueTimeout)
	defer cancel()
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, busy
	}
	defer func() { <-s.slots }()

	in, err := ReadMessages(req.msgs, s.opt.Limits)
	if err != nil {
		return nil, inputAPIError(err)
	}
	defer in.Close()
	// The pictures are decoded into in; drop the base64 copies.
	for i := range req.msgs {
		for j := range req.msgs[i].Parts {
			req.msgs[i].Parts[j].URL = ""
		}
	}
	res, err := s.det.Perceive(in)
	if err != nil {
		if errors.Is(err, ErrInput) {
			return nil, inputAPIError(err)
		}
		return nil, &apiError{status: http.StatusInternalServerError, typ: "server_error", msg: "the perceiver failed: " + err.Error()}
	}
	text := res.Text()
	finish := "stop"
	completion := textTokens(text)
	if req.maxTokens > 0 && completion > req.maxTokens {
		text = truncateTokens(text, req.maxTokens)
		completion = req.maxTokens
		finish = "length"
	}
	prompt := promptTokens(req.msgs, in)
	model := req.model
	return map[string]any{
		"id":      "chatcmpl-" + randomID(),
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   model,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": text, "refusal": nil},
			"logprobs":      nil,
			"finish_reason": finish,
		}},
		"usage": map[string]any{
			"prompt_tokens":     prompt,
			"completion_tokens": completion,
			"total_tokens":      prompt + completion,
		},
		"system_fingerprint": "tracegrid-perceiver-1",
	}, nil
}

// readBody reads the whole body within BodyTimeout of now (the end of the
// headers), through a read deadline on the connection, which is lifted
// once the body is in: waiting for a slot and the analysis are not
// bounded by it.
func (s *server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	rc := http.NewResponseController(w)
	// An http.ResponseWriter without deadlines (not net/http's server)
	// returns http.ErrNotSupported; the body is then unbounded in time.
	if err := rc.SetReadDeadline(time.Now().Add(s.opt.BodyTimeout)); err == nil {
		defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opt.MaxBody))
	if err == nil {
		return body, nil
	}
	var mbe *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &mbe):
		return nil, tooLarge(s.opt.MaxBody)
	case errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return nil, &apiError{status: http.StatusRequestTimeout, typ: "invalid_request_error", code: "request_timeout",
			msg: fmt.Sprintf("The request body did not arrive within %v of the headers (%d bytes received).", s.opt.BodyTimeout, len(body))}
	}
	return nil, badRequest("", "", "reading the request body: %v", err)
}

func tooLarge(limit int64) *apiError {
	return &apiError{status: http.StatusRequestEntityTooLarge, typ: "invalid_request_error", code: "request_too_large",
		msg: fmt.Sprintf("The request body is over the limit of %d bytes.", limit)}
}

func inputAPIError(err error) *apiError {
	var ie *InputError
	if errors.As(err, &ie) {
		return badRequest(ie.Param, ie.Code, "%s", ie.Msg)
	}
	return badRequest("", "", "%v", err)
}

func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b[:])
}

// request is a parsed chat-completion request.
type request struct {
	model     string
	msgs      []chat.Message
	maxTokens int
}

// Wire shapes of the OpenAI chat-completions request.
type wireRequest struct {
	Model               *string           `json:"model"`
	Messages            []json.RawMessage `json:"messages"`
	Stream              bool              `json:"stream"`
	N                   *int              `json:"n"`
	MaxTokens           *int              `json:"max_tokens"`
	MaxCompletionTokens *int              `json:"max_completion_tokens"`
	// Accepted and unused: the detector is deterministic.
	Temperature *float64 `json:"temperature"`
	Seed        *int64   `json:"seed"`
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type wirePart struct {
	Type     string          `json:"type"`
	Text     *string         `json:"text"`
	ImageURL json.RawMessage `json:"image_url"`
	VideoURL json.RawMessage `json:"video_url"`
}

type wireURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail"`
}

// parseRequest checks the request JSON and turns it into chat messages.
func parseRequest(body []byte) (request, *apiError) {
	var wr wireRequest
	if err := json.Unmarshal(body, &wr); err != nil {
		return request{}, badRequest("", "invalid_json", "We could not parse the JSON body of your request: %v", err)
	}
	if wr.Model == nil || strings.TrimSpace(*wr.Model) == "" {
		return request{}, badRequest("model", "missing_required_parameter", "you must provide a model parameter")
	}
	if len(wr.Messages) == 0 {
		return request{}, badRequest("messages", "missing_required_parameter", "messages must be a non-empty array")
	}
	if wr.Stream {
		return request{}, badRequest("stream", "unsupported_parameter", "streaming is not supported by this server; send stream: false")
	}
	if wr.N != nil && *wr.N != 1 {
		return request{}, badRequest("n", "unsupported_parameter", "only n = 1 is supported")
	}
	req := request{model: *wr.Model}
	for _, mt := range []*int{wr.MaxTokens, wr.MaxCompletionTokens} {
		if mt != nil {
			if *mt < 1 {
				return request{}, badRequest("max_tokens", "invalid_value", "max_tokens must be at least 1")
			}
			req.maxTokens = *mt
		}
	}
	for i, raw := range wr.Messages {
		param := fmt.Sprintf("messages[%d]", i)
		var wm wireMessage
		if err := json.Unmarshal(raw, &wm); err != nil {
			return request{}, badRequest(param, "invalid_type", "a message must be an object with role and content: %v", err)
		}
		switch wm.Role {
		case "system", "developer":
			wm.Role = chat.RoleSystem
		case "user", "assistant":
		case "tool", "function":
			// No content the perceiver reads; kept empty so that
			// error params index the request's messages.
			req.msgs = append(req.msgs, chat.Message{Role: wm.Role})
			continue
		case "":
			return request{}, badRequest(param+".role", "missing_required_parameter", "the message has no role")
		default:
			return request{}, badRequest(param+".role", "invalid_value", "unknown role %q (system, developer, user, assistant, tool)", wm.Role)
		}
		parts, e := parseContent(wm.Content, param+".content")
		if e != nil {
			return request{}, e
		}
		req.msgs = append(req.msgs, chat.Message{Role: wm.Role, Parts: parts})
	}
	return req, nil
}

// parseContent reads a message's content: a string, an array of parts, or
// null (an assistant message that only called tools).
func parseContent(raw json.RawMessage, param string) ([]chat.Part, *apiError) {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "" || s == "null":
		return nil, nil
	case s[0] == '"':
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, badRequest(param, "invalid_type", "content: %v", err)
		}
		return []chat.Part{chat.Text(text)}, nil
	case s[0] != '[':
		return nil, badRequest(param, "invalid_type", "content must be a string or an array of content parts")
	}
	var wps []wirePart
	if err := json.Unmarshal(raw, &wps); err != nil {
		return nil, badRequest(param, "invalid_type", "content parts: %v", err)
	}
	parts := make([]chat.Part, 0, len(wps))
	for j, wp := range wps {
		pp := fmt.Sprintf("%s[%d]", param, j)
		switch wp.Type {
		case "text", "input_text":
			if wp.Text == nil {
				return nil, badRequest(pp+".text", "missing_required_parameter", "a text part needs text")
			}
			parts = append(parts, chat.Text(*wp.Text))
		case "image_url", "video_url":
			raw := wp.ImageURL
			if wp.Type == "video_url" {
				raw = wp.VideoURL
			}
			u, e := parseURL(raw, pp+"."+wp.Type)
			if e != nil {
				return nil, e
			}
			typ := chat.TypeImage
			if wp.Type == "video_url" {
				typ = chat.TypeVideo
			}
			parts = append(parts, chat.Part{Type: typ, URL: u.URL, Detail: u.Detail})
		case "":
			return nil, badRequest(pp+".type", "missing_required_parameter", "the content part has no type")
		default:
			return nil, badRequest(pp+".type", "invalid_value", "content part type %q is not supported (text, image_url, video_url)", wp.Type)
		}
	}
	return parts, nil
}

// parseURL reads {"url": …, "detail": …} or a bare URL string.
func parseURL(raw json.RawMessage, param string) (wireURL, *apiError) {
	var u wireURL
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "" || s == "null":
		return u, badRequest(param, "missing_required_parameter", "the part has no URL")
	case s[0] == '"':
		if err := json.Unmarshal(raw, &u.URL); err != nil {
			return u, badRequest(param, "invalid_type", "%v", err)
		}
	default:
		if err := json.Unmarshal(raw, &u); err != nil {
			return u, badRequest(param, "invalid_type", "expected {\"url\": …}: %v", err)
		}
	}
	if u.URL == "" {
		return u, badRequest(param+".url", "missing_required_parameter", "the part has no URL")
	}
	switch u.Detail {
	case "", "low", "high", "auto":
	default:
		return u, badRequest(param+".detail", "invalid_value", "detail must be low, high or auto, not %q", u.Detail)
	}
	return u, nil
}

func (s *server) writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"message":"encoding the response failed","type":"server_error","param":null,"code":null}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n')) // a failed write means the client left
}

func (s *server) writeError(w http.ResponseWriter, e *apiError) {
	null := func(v string) any {
		if v == "" {
			return nil
		}
		return v
	}
	s.writeJSON(w, e.status, map[string]any{"error": map[string]any{
		"message": e.msg, "type": e.typ, "param": null(e.param), "code": null(e.code),
	}})
}
