package fakemodel

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Gemini is a local stand-in for the Gemini Developer API, for tests: it
// answers POST /v1beta/models/{model}:generateContent with a reply the
// test chooses per request (known usageMetadata, a finish reason, a
// blocked prompt, an error status with a RetryInfo delay, a reply held
// back), takes resumable Files API uploads (POST /upload/v1beta/files, then
// the upload URL it hands out) and answers GET /v1beta/files/{id}; it
// records every generateContent request it receives — the contents' roles
// and parts (inline data decoded, videoMetadata.fps, fileData URIs), the
// system instruction and the generation config — and every upload.
type Gemini struct {
	srv     *httptest.Server
	respond func(GeminiRequest) GeminiReply
	closed  chan struct{}
	once    sync.Once

	// FilesProcessing, when positive, is how many GET /files/{id} calls
	// report a fresh upload as PROCESSING before it becomes ACTIVE.
	FilesProcessing int

	mu       sync.Mutex
	received []GeminiRequest
	uploads  [][]byte
	gets     map[string]int
}

// GeminiPart is one part of a content, as received.
type GeminiPart struct {
	Text     string
	Thought  bool
	MIMEType string   // of inline or file data
	Data     []byte   // inline data, decoded
	FileURI  string   // fileData
	FPS      *float64 // videoMetadata.fps
}

// GeminiContent is one turn of contents.
type GeminiContent struct {
	Role  string
	Parts []GeminiPart
}

// GeminiRequest is what the stand-in saw of one generateContent call.
type GeminiRequest struct {
	N        int    // 1-based order of arrival
	Model    string // from the path
	APIKey   string // the x-goog-api-key header
	Contents []GeminiContent
	System   []GeminiPart // systemInstruction's parts
	// GenerationConfig is the body's generationConfig, decoded.
	GenerationConfig map[string]any
	// Body is the whole body, decoded.
	Body map[string]any
}

// GeminiReply is the answer to one generateContent call.
type GeminiReply struct {
	// Status is the HTTP status; 0 means 200. An error status sends
	// {"error": {"code", "message", "status"}} with a RetryInfo detail
	// when RetryDelay is set.
	Status int
	// ErrorStatus is the error's status word (RESOURCE_EXHAUSTED, ...).
	ErrorStatus string
	// RetryDelay is the RetryInfo retryDelay of an error ("2s").
	RetryDelay string
	// Text is the candidate's text (DefaultText when empty and the reply
	// is neither blocked nor has FinishReason other than STOP).
	Text string
	// Thought, when set, is sent as a thought part before the text.
	Thought string
	// FinishReason of the candidate (STOP when empty).
	FinishReason string
	// BlockReason, when set, blocks the prompt: promptFeedback.blockReason
	// and no candidates.
	BlockReason string
	// Usage reported.
	PromptTokens, CandidatesTokens, ThoughtsTokens int
	// ModelVersion and ResponseID of the reply.
	ModelVersion, ResponseID string
	// Body, when set, is sent verbatim.
	Body string
	// Hold delays the reply until closed (or the client goes away).
	Hold <-chan struct{}
}

// AlwaysGemini answers every request with r.
func AlwaysGemini(r GeminiReply) func(GeminiRequest) GeminiReply {
	return func(GeminiRequest) GeminiReply { return r }
}

// NewGemini starts a Gemini stand-in answering with respond.
func NewGemini(t testing.TB, respond func(GeminiRequest) GeminiReply) *Gemini {
	g := &Gemini{respond: respond, closed: make(chan struct{}), gets: map[string]int{}}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	if t != nil {
		t.Cleanup(g.Close)
	}
	return g
}

// URL is the API root to give a client (no version).
func (g *Gemini) URL() string { return g.srv.URL + "/" }

// Close releases held replies and stops the server; idempotent.
func (g *Gemini) Close() {
	g.once.Do(func() {
		close(g.closed)
		g.srv.CloseClientConnections()
		g.srv.Close()
	})
}

// Received returns the generateContent requests so far, in order.
func (g *Gemini) Received() []GeminiRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]GeminiRequest(nil), g.received...)
}

// Requests is the number of generateContent requests received.
func (g *Gemini) Requests() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.received)
}

// Uploads returns the bytes of every finished Files API upload.
func (g *Gemini) Uploads() [][]byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([][]byte(nil), g.uploads...)
}

func (g *Gemini) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case r.Method == http.MethodPost && p == "/upload/v1beta/files":
		g.startUpload(w, r)
	case r.Method == http.MethodPost && p == "/upload/v1beta/files/session":
		g.finishUpload(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/v1beta/files/"):
		g.getFile(w, strings.TrimPrefix(p, "/v1beta/"))
	case r.Method == http.MethodPost && strings.HasPrefix(p, "/v1beta/models/") && strings.HasSuffix(p, ":generateContent"):
		g.generate(w, r, strings.TrimSuffix(strings.TrimPrefix(p, "/v1beta/models/"), ":generateContent"))
	default:
		http.Error(w, `{"error":{"code":404,"message":"not found","status":"NOT_FOUND"}}`, http.StatusNotFound)
	}
}

func (g *Gemini) startUpload(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	if r.Header.Get("X-Goog-Upload-Protocol") != "resumable" || r.Header.Get("X-Goog-Upload-Command") != "start" {
		http.Error(w, `{"error":{"code":400,"message":"want a resumable upload start","status":"INVALID_ARGUMENT"}}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("X-Goog-Upload-Url", g.srv.URL+"/upload/v1beta/files/session?mime="+r.Header.Get("X-Goog-Upload-Header-Content-Type"))
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{}`)
}

func (g *Gemini) finishUpload(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if !strings.Contains(r.Header.Get("X-Goog-Upload-Command"), "finalize") || r.Header.Get("X-Goog-Upload-Offset") != "0" {
		http.Error(w, `{"error":{"code":400,"message":"want the whole file in one finalized chunk","status":"INVALID_ARGUMENT"}}`, http.StatusBadRequest)
		return
	}
	g.mu.Lock()
	g.uploads = append(g.uploads, data)
	id := "f" + strconv.Itoa(len(g.uploads))
	state := "ACTIVE"
	if g.FilesProcessing > 0 {
		state = "PROCESSING"
	}
	g.mu.Unlock()
	w.Header().Set("X-Goog-Upload-Status", "final")
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"file":%s}`, g.fileJSON("files/"+id, r.URL.Query().Get("mime"), state))
}

func (g *Gemini) fileJSON(name, mime, state string) string {
	b, _ := json.Marshal(map[string]any{"name": name, "uri": g.srv.URL + "/v1beta/" + name, "mimeType": mime, "state": state,
		"expirationTime": time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)})
	return string(b)
}

func (g *Gemini) getFile(w http.ResponseWriter, name string) {
	g.mu.Lock()
	g.gets[name]++
	state := "ACTIVE"
	if g.gets[name] <= g.FilesProcessing {
		state = "PROCESSING"
	}
	g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, g.fileJSON(name, "video/mp4", state))
}

// wire shapes of the request.
type wirePart struct {
	Text       string `json:"text"`
	Thought    bool   `json:"thought"`
	InlineData *struct {
		MIMEType string `json:"mimeType"`
		Data     string `json:"data"`
	} `json:"inlineData"`
	FileData *struct {
		MIMEType string `json:"mimeType"`
		FileURI  string `json:"fileUri"`
	} `json:"fileData"`
	VideoMetadata *struct {
		FPS *float64 `json:"fps"`
	} `json:"videoMetadata"`
}

type wireContent struct {
	Role  string     `json:"role"`
	Parts []wirePart `json:"parts"`
}

func (p wirePart) part() (GeminiPart, error) {
	out := GeminiPart{Text: p.Text, Thought: p.Thought}
	if p.InlineData != nil {
		out.MIMEType = p.InlineData.MIMEType
		d, err := base64.StdEncoding.DecodeString(p.InlineData.Data)
		if err != nil {
			return out, err
		}
		out.Data = d
	}
	if p.FileData != nil {
		out.MIMEType, out.FileURI = p.FileData.MIMEType, p.FileData.FileURI
	}
	if p.VideoMetadata != nil {
		out.FPS = p.VideoMetadata.FPS
	}
	return out, nil
}

func (g *Gemini) generate(w http.ResponseWriter, r *http.Request, model string) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var wire struct {
		Contents          []wireContent  `json:"contents"`
		SystemInstruction *wireContent   `json:"systemInstruction"`
		GenerationConfig  map[string]any `json:"generationConfig"`
	}
	req := GeminiRequest{Model: model, APIKey: r.Header.Get("X-Goog-Api-Key")}
	if err := json.Unmarshal(body, &wire); err != nil {
		http.Error(w, `{"error":{"code":400,"message":"body is not JSON","status":"INVALID_ARGUMENT"}}`, http.StatusBadRequest)
		return
	}
	_ = json.Unmarshal(body, &req.Body)
	req.GenerationConfig = wire.GenerationConfig
	for _, c := range wire.Contents {
		gc := GeminiContent{Role: c.Role}
		for _, p := range c.Parts {
			gp, err := p.part()
			if err != nil {
				http.Error(w, `{"error":{"code":400,"message":"inline data is not base64","status":"INVALID_ARGUMENT"}}`, http.StatusBadRequest)
				return
			}
			gc.Parts = append(gc.Parts, gp)
		}
		req.Contents = append(req.Contents, gc)
	}
	if wire.SystemInstruction != nil {
		for _, p := range wire.SystemInstruction.Parts {
			gp, _ := p.part()
			req.System = append(req.System, gp)
		}
	}
	g.mu.Lock()
	req.N = len(g.received) + 1
	g.received = append(g.received, req)
	g.mu.Unlock()

	rep := g.respond(req)
	if rep.Hold != nil {
		select {
		case <-rep.Hold:
		case <-r.Context().Done():
			return
		case <-g.closed:
			return
		}
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if rep.Body != "" {
		fmt.Fprint(w, rep.Body)
		return
	}
	if status != http.StatusOK {
		e := map[string]any{"code": status, "message": fmt.Sprintf("stand-in error %d", status), "status": rep.ErrorStatus}
		if rep.RetryDelay != "" {
			e["details"] = []any{map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": rep.RetryDelay}}
		}
		b, _ := json.Marshal(map[string]any{"error": e})
		w.Write(b)
		return
	}
	out := map[string]any{
		"usageMetadata": map[string]any{"promptTokenCount": rep.PromptTokens, "candidatesTokenCount": rep.CandidatesTokens,
			"thoughtsTokenCount": rep.ThoughtsTokens, "totalTokenCount": rep.PromptTokens + rep.CandidatesTokens + rep.ThoughtsTokens},
		"modelVersion": rep.ModelVersion, "responseId": rep.ResponseID,
	}
	if rep.BlockReason != "" {
		out["promptFeedback"] = map[string]any{"blockReason": rep.BlockReason}
	} else {
		finish := rep.FinishReason
		if finish == "" {
			finish = "STOP"
		}
		text := rep.Text
		if text == "" && finish == "STOP" {
			text = DefaultText
		}
		var parts []any
		if rep.Thought != "" {
			parts = append(parts, map[string]any{"text": rep.Thought, "thought": true})
		}
		if text != "" {
			parts = append(parts, map[string]any{"text": text})
		}
		cand := map[string]any{"finishReason": finish, "index": 0}
		if len(parts) > 0 {
			cand["content"] = map[string]any{"role": "model", "parts": parts}
		}
		out["candidates"] = []any{cand}
	}
	b, _ := json.Marshal(out)
	w.Write(b)
}
