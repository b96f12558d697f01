// Package fakemodel is a local stand-in for a model behind an
// OpenAI-compatible chat completions API, for tests. It answers
// POST …/chat/completions with a reply the test chooses per request —
// known token usage (so the cost of every request is known), a status, a
// Retry-After, a malformed or oversized body, or a reply held back until
// the test releases it — and it counts and records every request it
// receives, so a test can assert exactly how many requests (and which
// clips) a run sent.
//
// It lives under internal/ at the module root so that tests of eval/...
// and of cmd/tracegrid can both use it.
package fakemodel

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
	var body struct {
		Model               string `json:"model"`
		MaxTokens           int    `json:"max_tokens"`
		MaxCompletionTokens int    `json:"max_completion_tokens"`
		Messages            []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"request body is not JSON: %s"}}`, jsonEscape(err.Error()))
		return
	}
	req := Request{Model: body.Model, Messages: len(body.Messages), MaxTokens: max(body.MaxTokens, body.MaxCompletionTokens), Auth: r.Header.Get("Authorization")}
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
	s.mu.Lock()
	req.N = len(s.received) + 1
	s.received = append(s.received, req)
	s.mu.Unlock()
	select {
	case s.arrived <- req:
	default:
	}

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

func write(w http.ResponseWriter, rep Reply) error {
	if rep.Body != "" {
		_, err := fmt.Fprint(w, rep.Body)
		return err
	}
	usage := fmt.Sprintf(`"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}`,
		rep.PromptTokens, rep.CompletionTokens, rep.PromptTokens+rep.CompletionTokens)
	head := `{"id":"fake","object":"chat.completion","model":"fake","choices":[{"index":0,"message":{"role":"assistant","content":"`
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
		_, err := fmt.Fprintf(w, `"},"finish_reason":"stop"}],%s}`, usage)
		return err
	}
	text := rep.Text
	if text == "" {
		text = DefaultText
	}
	_, err := fmt.Fprintf(w, `%s%s"},"finish_reason":"stop"}],%s}`, head, jsonEscape(text), usage)
	return err
}

// jsonEscape is s as the inside of a JSON string.
func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
