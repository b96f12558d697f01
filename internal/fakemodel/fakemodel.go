// Package fakemodel is a local stand-in for a model behind an
// OpenAI-compatible chat completions API, for tests. It answers
// POST …/chat/completions with a reply the test chooses per request —
// known token usage (so the cost of every request is known), a status, a
// Retry-After, a malformed or oversized body, or a reply held back until
// the test releases it — and it counts and records every request it
// receives, so a test can assert exactly how many requests (and which
// clips) a run sent.
//
// It also answers an OpenAI Batch input file offline (AnswerBatch), as a
// provider's batch endpoint or vLLM's run-batch would, counting every line
// as a request; and gemini.go holds a stand-in for the Gemini API
// (generateContent and the Files API upload).
//
// It lives under internal/ at the module root so that tests of eval/...
// and of cmd/tracegrid can both use it.
package fakemodel

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// DefaultText is the reply content when Reply.Text is empty: a two-event
// ledger counting 2.
const DefaultText = "00:01.0 — on — running count 1\n00:02.0 — on — running count 2\n\\boxed{2}"

// Request is what the stand-in saw of one chat request.
type Request struct {
	N         int    // 1-based order of arrival
	Model     string // the request's model id
	Messages  int    // messages in the request
	Images    int    // image_url parts over all messages
	Videos    int    // video_url parts over all messages
	MaxTokens int    // max_tokens or max_completion_tokens; 0 when absent
	// FirstImage is the SHA-256 (hex) of the first image or video part's
	// URL: requests about different clips differ here. "" when none.
	FirstImage string
	Text       string // the text parts, joined by "\n"
	Auth       string // the Authorization header
	// Body is the whole request body, decoded (top-level fields such as
	// temperature, top_p, seed, reasoning_effort and what extra_body
	// merged, e.g. mm_processor_kwargs).
	Body map[string]any
	// CustomID is the batch line's custom_id (AnswerBatch); "" online.
	CustomID string
}

// Has reports whether the request body has the top-level field key.
func (r Request) Has(key string) bool {
	_, ok := r.Body[key]
	return ok
}

// Reply is the answer to one request.
type Reply struct {
	// Status is the HTTP status; 0 means 200.
	Status int
	// Text is the assistant's content of a 200 reply (DefaultText when
	// empty).
	Text string
	// PromptTokens and CompletionTokens are the usage reported with a 200
	// reply; total_tokens is their sum.
	PromptTokens, CompletionTokens int
	// Header holds extra response headers (e.g. "Retry-After").
	Header map[string]string
	// Body, when set, is sent verbatim instead of a completion (an error
	// object, malformed JSON).
	Body string
	// Pad, when positive, makes a 200 reply whose content is Pad bytes
	// long, streamed without being built in memory (a hostile server).
	Pad int64
	// Hold, when set, delays the reply until Hold is closed (or the client
	// goes away, or the server closes). The request is recorded, and sent
	// on Arrivals, before the wait.
	Hold <-chan struct{}
	// FinishReason of a 200 reply ("stop" when empty).
	FinishReason string
	// Reasoning, when set, is sent as the message's reasoning_content.
	Reasoning string
	// ReasoningTokens, when positive, is sent as
	// usage.completion_tokens_details.reasoning_tokens.
	ReasoningTokens int
	// Model is the model the reply says answered ("fake" when empty).
	Model string
	// RequestID, when set, is sent as the x-request-id header.
	RequestID string
}

// Server is a running stand-in. Close it (New registers Close with
// t.Cleanup).
type Server struct {
	srv     *httptest.Server
	respond func(Request) Reply
	closed  chan struct{}
	once    sync.Once
	arrived chan Request

	mu       sync.Mutex
	received []Request
	answered int
}

// Always answers every request with r.
func Always(r Reply) func(Request) Reply { return func(Request) Reply { return r } }

// New starts a stand-in that answers each request with respond(request).
// respond is called from the server's goroutines, one per request.
func New(t testing.TB, respond func(Request) Reply) *Server {
	s := &Server{respond: respond, closed: make(chan struct{}), arrived: make(chan Request, 4096)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	if t != nil {
		t.Cleanup(s.Close)
	}
	return s
}

// URL is the API root to give a client: the server's address + "/v1".
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Requests is the number of chat requests received so far.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.received)
}

// Answered is the number of replies written to the end.
func (s *Server) Answered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.answered
}

// Received returns a copy of the requests received so far, in order of
// arrival.
func (s *Server) Received() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.received...)
}

// Arrivals delivers every request as it arrives (buffered: 4096 requests
// are kept when nobody reads them).
func (s *Server) Arrivals() <-chan Request { return s.arrived }

// Close releases every held reply and shuts the server down. It is
// idempotent.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closed)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req, err := parseRequest(body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"request body is not JSON: %s"}}`, jsonEscape(err.Error()))
		return
	}
	req.Auth = r.Header.Get("Authorization")
	req = s.arrive(req)

	rep := s.respond(req)
	if rep.Hold != nil {
		select {
		case <-rep.Hold:
		case <-r.Context().Done():
			return
		case <-s.closed:
			return
		}
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	if rep.RequestID != "" {
		w.Header().Set("X-Request-Id", rep.RequestID)
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := write(w, rep); err != nil {
		return
	}
	s.mu.Lock()
	s.answered++
	s.mu.Unlock()
}

// arrive numbers and records a request and announces it on Arrivals.
func (s *Server) arrive(req Request) Request {
	s.mu.Lock()
	req.N = len(s.received) + 1
	s.received = append(s.received, req)
	s.mu.Unlock()
	select {
	case s.arrived <- req:
	default:
	}
	return req
}

// parseRequest describes a chat completion request body.
func parseRequest(b []byte) (Request, error) {
	var body struct {
		Model               string `json:"model"`
		MaxTokens           int    `json:"max_tokens"`
		MaxCompletionTokens int    `json:"max_completion_tokens"`
		Messages            []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		return Request{}, err
	}
	req := Request{Model: body.Model, Messages: len(body.Messages), MaxTokens: max(body.MaxTokens, body.MaxCompletionTokens)}
	_ = json.Unmarshal(b, &req.Body)
	var texts []string
	for _, m := range body.Messages {
		var text string
		if json.Unmarshal(m.Content, &text) == nil {
			texts = append(texts, text)
			continue
		}
		var parts []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			ImageURL struct {
				URL string `json:"url"`
			} `json:"image_url"`
			VideoURL struct {
				URL string `json:"url"`
			} `json:"video_url"`
		}
		_ = json.Unmarshal(m.Content, &parts)
		for _, p := range parts {
			url := ""
			switch p.Type {
			case "text":
				texts = append(texts, p.Text)
			case "image_url":
				req.Images++
				url = p.ImageURL.URL
			case "video_url":
				req.Videos++
				url = p.VideoURL.URL
			}
			if url != "" && req.FirstImage == "" {
				h := sha256.Sum256([]byte(url))
				req.FirstImage = hex.EncodeToString(h[:])
			}
		}
	}
	req.Text = strings.Join(texts, "\n")
	return req, nil
}

// AnswerBatch answers an OpenAI Batch input file (one {"custom_id",
// "method", "url", "body"} object per line) as a provider's batch endpoint
// would: each line is a request, recorded and counted like one sent to the
// server, answered by the server's respond function, and written to out as
// {"id", "custom_id", "response": {"status_code", "request_id", "body"},
// "error": null} — or, for a reply with Status ≥ 400 and no body, a line
// with "response": null and "error": {"code", "message"}. Hold is ignored.
func (s *Server) AnswerBatch(in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 512<<20)
	bw := bufio.NewWriter(out)
	n := 0
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		n++
		var line struct {
			CustomID string          `json:"custom_id"`
			Method   string          `json:"method"`
			URL      string          `json:"url"`
			Body     json.RawMessage `json:"body"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return fmt.Errorf("fakemodel: batch line %d: %w", n, err)
		}
		if line.Method != http.MethodPost || line.URL != "/v1/chat/completions" || line.CustomID == "" {
			return fmt.Errorf("fakemodel: batch line %d: method %q url %q custom_id %q", n, line.Method, line.URL, line.CustomID)
		}
		req, err := parseRequest(line.Body)
		if err != nil {
			return fmt.Errorf("fakemodel: batch line %d body: %w", n, err)
		}
		req.CustomID = line.CustomID
		req = s.arrive(req)
		rep := s.respond(req)
		status := rep.Status
		if status == 0 {
			status = http.StatusOK
		}
		id, _ := json.Marshal(line.CustomID)
		reqID := rep.RequestID
		if reqID == "" {
			reqID = fmt.Sprintf("batch_req_%d", req.N)
		}
		if status >= 400 && rep.Body == "" {
			fmt.Fprintf(bw, `{"id":"batch_%d","custom_id":%s,"response":null,"error":{"code":"server_error","message":"status %d"}}`+"\n", req.N, id, status)
			continue
		}
		var body strings.Builder
		if err := write(&body, rep); err != nil {
			return err
		}
		fmt.Fprintf(bw, `{"id":"batch_%d","custom_id":%s,"response":{"status_code":%d,"request_id":%q,"body":%s},"error":null}`+"\n",
			req.N, id, status, reqID, body.String())
		s.mu.Lock()
		s.answered++
		s.mu.Unlock()
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("fakemodel: batch input: %w", err)
	}
	return bw.Flush()
}

func write(w io.Writer, rep Reply) error {
	if rep.Body != "" {
		_, err := fmt.Fprint(w, rep.Body)
		return err
	}
	details := ""
	if rep.ReasoningTokens > 0 {
		details = fmt.Sprintf(`,"completion_tokens_details":{"reasoning_tokens":%d}`, rep.ReasoningTokens)
	}
	usage := fmt.Sprintf(`"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d%s}`,
		rep.PromptTokens, rep.CompletionTokens, rep.PromptTokens+rep.CompletionTokens, details)
	model := rep.Model
	if model == "" {
		model = "fake"
	}
	reasoning := ""
	if rep.Reasoning != "" {
		reasoning = `,"reasoning_content":"` + jsonEscape(rep.Reasoning) + `"`
	}
	finish := rep.FinishReason
	if finish == "" {
		finish = "stop"
	}
	head := `{"id":"fake","object":"chat.completion","model":"` + jsonEscape(model) + `","choices":[{"index":0,"message":{"role":"assistant"` + reasoning + `,"content":"`
	if rep.Pad > 0 {
		if _, err := fmt.Fprint(w, head); err != nil {
			return err
		}
		chunk := []byte(strings.Repeat("a", 64<<10))
		for left := rep.Pad; left > 0; {
			n := min(left, int64(len(chunk)))
			if _, err := w.Write(chunk[:n]); err != nil {
				return err
			}
			left -= n
		}
		_, err := fmt.Fprintf(w, `"},"finish_reason":"%s"}],%s}`, jsonEscape(finish), usage)
		return err
	}
	text := rep.Text
	if text == "" {
		text = DefaultText
	}
	_, err := fmt.Fprintf(w, `%s%s"},"finish_reason":"%s"}],%s}`, head, jsonEscape(text), jsonEscape(finish), usage)
	return err
}

// jsonEscape is s as the inside of a JSON string.
func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
