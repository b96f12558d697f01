package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/genai"

	"github.com/tracegrid/tracegrid/eval/chat"
)

// DefaultGeminiBaseURL is the Gemini Developer API's root (without
// version), the SDK's own default; the client always names it, so that the
// SDK's GOOGLE_GEMINI_BASE_URL variable never redirects a study.
const DefaultGeminiBaseURL = "https://generativelanguage.googleapis.com/"

// MaxGeminiVideoFPS is the largest videoMetadata.fps the Gemini API
// accepts (the SDK documents the range (0, 24]).
const MaxGeminiVideoFPS = 24

// geminiNoKey stands in for the key when a study names none (a local
// server): the SDK refuses to start without one and would otherwise take
// GOOGLE_API_KEY or GEMINI_API_KEY from the environment. The transport
// removes the header it goes in, so nothing is sent.
const geminiNoKey = "tracegrid-no-key"

// Gemini sends chat requests to one Gemini model through the Gemini
// Developer API (google.golang.org/genai). It is safe for concurrent use.
//
// A request is translated as follows:
//
//   - system messages become the system instruction; user messages the
//     "user" turns and assistant messages the "model" turns of contents, in
//     order (the second turn of a two-turn template is a real second turn);
//   - text parts are text parts; an image (a data: URL) is an inline part
//     of its media type, after its label text as in the request;
//   - a video (a data: URL) is an inline video/mp4 part with
//     videoMetadata.fps = Request.VideoFPS, or — when the request's inline
//     size (base64 media plus text) would pass Config.InlineLimit (Google's
//     documented 20 MB) — a fileData part naming the clip uploaded once
//     through the Files API and reused by every later request with the same
//     bytes while the file lives (uploads are kept for the life of the
//     client; a file within an hour of its expiry is uploaded again);
//   - decoding: temperature, topP, maxOutputTokens, seed and thinkingConfig
//     (thinkingBudget, thinkingLevel) in generationConfig; ExtraBody is
//     merged into the body; the SDK's automatic continuation is off, so one
//     attempt is one generateContent call.
//
// The reply's text is its first candidate's non-thought text parts; its
// thought parts are the reasoning. Usage comes from usageMetadata:
// promptTokenCount is the input, candidatesTokenCount plus
// thoughtsTokenCount the billed output. A prompt the API blocks
// (promptFeedback.blockReason) or a candidate that finishes for safety is
// a reply with Blocked set and FinishReason saying why: answered, with no
// count, never retried. Failures are classified by HTTP status like the
// OpenAI-compatible client's; a 429 RESOURCE_EXHAUSTED is retried after
// the retryDelay of its RetryInfo detail (capped by BackoffMax).
type Gemini struct {
	*engine
	api          *genai.Client
	ownTransport *http.Transport
	files        fileCache
}

// NewGemini validates cfg, fills defaults and builds a Gemini client. An
// empty BaseURL is DefaultGeminiBaseURL; a BaseURL is the API root without
// the version (the SDK appends v1beta/…).
func NewGemini(cfg Config) (*Gemini, error) {
	cfg, err := normalize(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultGeminiBaseURL
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("client: BaseURL must be an absolute http(s) URL")
	}
	if cfg.APIKey != "" && strings.Contains(cfg.BaseURL, cfg.APIKey) {
		return nil, errors.New("client: BaseURL must not contain the API key")
	}
	if err := CheckExtraBody(ProviderGemini, cfg.ExtraBody); err != nil {
		return nil, err
	}
	if cfg.FilePoll <= 0 {
		cfg.FilePoll = 2 * time.Second
	}
	e := newEngine(cfg)
	key, drop := cfg.APIKey, ""
	if key == "" {
		key, drop = geminiNoKey, "X-Goog-Api-Key"
	}
	hc, own := e.httpClient(drop)
	api, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      key,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  hc,
		HTTPOptions: genai.HTTPOptions{BaseURL: cfg.BaseURL},
	})
	if err != nil {
		return nil, fmt.Errorf("client: %s", e.scrub.scrub(err.Error()))
	}
	return &Gemini{engine: e, api: api, ownTransport: own, files: fileCache{m: map[[32]byte]*fileEntry{}}}, nil
}

// Close closes the idle connections of the transport NewGemini created.
// It is nil-safe and idempotent.
func (g *Gemini) Close() {
	if g != nil && g.ownTransport != nil {
		g.ownTransport.CloseIdleConnections()
	}
}

// String names the client without its key.
func (g *Gemini) String() string {
	return fmt.Sprintf("client.Gemini{Model: %q, BaseURL: %q}", g.cfg.Model, g.cfg.BaseURL)
}

// geminiRequest is a translated request; videos whose route depends on
// the inline limit are resolved per attempt.
type geminiRequest struct {
	contents []*genai.Content
	config   *genai.GenerateContentConfig
	videos   []*videoPart
}

type videoPart struct {
	part *genai.Part
	data []byte
	mime string
	file bool // send through the Files API
}

// Chat sends req and returns the first candidate (see Gemini).
func (g *Gemini) Chat(ctx context.Context, req Request) (Response, error) {
	gr, err := g.prepare(req)
	if err != nil {
		return Response{}, (&Error{Kind: KindInvalidRequest, Message: g.scrub.scrub(err.Error())}).notSent()
	}
	return g.run(ctx, req.EstTokens, func(ctx, dctx context.Context) (Response, *Error) {
		return g.attempt(ctx, dctx, gr)
	})
}

// prepare translates req (see Gemini).
func (g *Gemini) prepare(req Request) (*geminiRequest, error) {
	if req.ReasoningEffort != "" {
		return nil, errors.New("reasoning_effort is an OpenAI setting; a Gemini model takes thinking_budget or thinking_level")
	}
	if len(req.Messages) == 0 {
		return nil, errors.New("no messages")
	}
	if len(req.Body) > 0 {
		return nil, errors.New("request-level body fields are for OpenAI-compatible servers; a Gemini model takes videoMetadata.fps")
	}
	if req.VideoFPS < 0 || req.VideoFPS > MaxGeminiVideoFPS || math.IsNaN(req.VideoFPS) {
		return nil, fmt.Errorf("video fps %v outside (0, %d]", req.VideoFPS, MaxGeminiVideoFPS)
	}
	gr := &geminiRequest{config: &genai.GenerateContentConfig{AutomaticContinuation: genai.Ptr(false)}}
	var size int64
	var system []*genai.Part
	for i, m := range req.Messages {
		var role string
		switch m.Role {
		case chat.RoleSystem:
		case chat.RoleUser:
			role = genai.RoleUser
		case chat.RoleAssistant:
			role = genai.RoleModel
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
		if len(m.Parts) == 0 {
			return nil, fmt.Errorf("message %d (%s): no parts", i, m.Role)
		}
		var parts []*genai.Part
		for j, p := range m.Parts {
			if p.Type != chat.TypeText && m.Role != chat.RoleUser {
				return nil, fmt.Errorf("message %d (%s) part %d: %s parts are only allowed in user messages", i, m.Role, j, p.Type)
			}
			switch p.Type {
			case chat.TypeText:
				parts = append(parts, &genai.Part{Text: p.Text})
				size += int64(len(p.Text))
			case chat.TypeImage, chat.TypeVideo:
				mime, data, err := decodeDataURL(p.URL)
				if err != nil {
					return nil, fmt.Errorf("message %d part %d: %w", i, j, err)
				}
				size += int64(base64.StdEncoding.EncodedLen(len(data)))
				part := &genai.Part{InlineData: &genai.Blob{MIMEType: mime, Data: data}}
				if p.Type == chat.TypeVideo {
					if req.VideoFPS > 0 {
						part.VideoMetadata = &genai.VideoMetadata{FPS: genai.Ptr(req.VideoFPS)}
					}
					gr.videos = append(gr.videos, &videoPart{part: part, data: data, mime: mime})
				}
				parts = append(parts, part)
			default:
				return nil, fmt.Errorf("message %d part %d: unknown part type %q", i, j, p.Type)
			}
		}
		if m.Role == chat.RoleSystem {
			system = append(system, parts...)
			continue
		}
		gr.contents = append(gr.contents, &genai.Content{Role: role, Parts: parts})
	}
	if len(gr.contents) == 0 {
		return nil, errors.New("no user message")
	}
	if size > g.cfg.InlineLimit {
		for _, v := range gr.videos {
			v.file = true
		}
	}
	c := gr.config
	if len(system) > 0 {
		c.SystemInstruction = &genai.Content{Role: genai.RoleUser, Parts: system}
	}
	if req.Temperature != nil {
		c.Temperature = genai.Ptr(float32(*req.Temperature))
	}
	if req.TopP != nil {
		c.TopP = genai.Ptr(float32(*req.TopP))
	}
	if req.MaxTokens > 0 {
		c.MaxOutputTokens = int32(min(req.MaxTokens, math.MaxInt32))
	}
	if req.Seed != nil {
		if *req.Seed < math.MinInt32 || *req.Seed > math.MaxInt32 {
			return nil, fmt.Errorf("seed %d does not fit Gemini's 32-bit seed", *req.Seed)
		}
		c.Seed = genai.Ptr(int32(*req.Seed))
	}
	if req.ThinkingBudget != nil || req.ThinkingLevel != "" {
		tc := &genai.ThinkingConfig{}
		if req.ThinkingBudget != nil {
			if *req.ThinkingBudget < -1 || *req.ThinkingBudget > math.MaxInt32 {
				return nil, fmt.Errorf("thinking budget %d: want -1 (dynamic), 0 (off) or a positive number of tokens", *req.ThinkingBudget)
			}
			tc.ThinkingBudget = genai.Ptr(int32(*req.ThinkingBudget))
		}
		if req.ThinkingLevel != "" {
			tc.ThinkingLevel = genai.ThinkingLevel(strings.ToUpper(req.ThinkingLevel))
		}
		c.ThinkingConfig = tc
	}
	if len(g.cfg.ExtraBody) > 0 {
		// A deep copy: the SDK merges it into the body it builds.
		var extra map[string]any
		b, _ := json.Marshal(g.cfg.ExtraBody)
		_ = json.Unmarshal(b, &extra)
		c.HTTPOptions = &genai.HTTPOptions{ExtraBody: extra}
	}
	return gr, nil
}

// decodeDataURL reads a base64 data: URL.
func decodeDataURL(u string) (mime string, data []byte, err error) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return "", nil, errors.New("media must be a data: URL (the Gemini client sends media inline or uploads it)")
	}
	head, payload, ok := strings.Cut(rest, ",")
	mime, isB64 := strings.CutSuffix(head, ";base64")
	if !ok || !isB64 || mime == "" {
		return "", nil, errors.New("media must be a base64 data: URL with a media type")
	}
	data, err = base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return "", nil, fmt.Errorf("media data is not base64: %v", err)
	}
	return mime, data, nil
}

// attempt makes one generateContent call (after uploading the request's
// videos when they go through the Files API) under the per-attempt
// timeout.
func (g *Gemini) attempt(ctx, dctx context.Context, gr *geminiRequest) (Response, *Error) {
	actx, cancel := context.WithTimeout(dctx, g.cfg.Timeout)
	defer cancel()
	ex := &exchange{}
	actx = context.WithValue(actx, exchangeKey{}, ex)
	start := time.Now()
	contents, err := g.routeVideos(actx, gr)
	if err != nil {
		return Response{}, g.deadlineMessage(ctx, dctx, g.classifyGemini(err, ctx, actx, ex))
	}
	out, err := g.api.Models.GenerateContent(actx, g.cfg.Model, contents, gr.config)
	latency := time.Since(start)
	if err != nil {
		return Response{}, g.deadlineMessage(ctx, dctx, g.classifyGemini(err, ctx, actx, ex))
	}
	resp, ferr := g.fromGemini(out)
	if ferr != nil {
		ferr.Status = ex.status
		return Response{}, ferr
	}
	resp.Latency = latency
	return resp, nil
}

// routeVideos returns the contents to send: gr's, with the videos that go
// through the Files API replaced by fileData parts (uploading each clip
// once).
func (g *Gemini) routeVideos(ctx context.Context, gr *geminiRequest) ([]*genai.Content, error) {
	swap := map[*genai.Part]*genai.Part{}
	for _, v := range gr.videos {
		if !v.file {
			continue
		}
		uri, err := g.files.get(ctx, v.data, func(ctx context.Context) (fileEntry, error) { return g.upload(ctx, v.data, v.mime) })
		if err != nil {
			return nil, err
		}
		swap[v.part] = &genai.Part{FileData: &genai.FileData{FileURI: uri, MIMEType: v.mime}, VideoMetadata: v.part.VideoMetadata}
	}
	if len(swap) == 0 {
		return gr.contents, nil
	}
	out := make([]*genai.Content, len(gr.contents))
	for i, c := range gr.contents {
		nc := &genai.Content{Role: c.Role, Parts: make([]*genai.Part, len(c.Parts))}
		for j, p := range c.Parts {
			if q, ok := swap[p]; ok {
				p = q
			}
			nc.Parts[j] = p
		}
		out[i] = nc
	}
	return out, nil
}

// errFileFailed is a video the Files API could not process: the same
// bytes will fail again, so it is not retried.
var errFileFailed = errors.New("the Files API could not process the video")

// upload sends one video through the Files API and waits until it is
// ACTIVE (checked every FilePoll).
func (g *Gemini) upload(ctx context.Context, data []byte, mime string) (fileEntry, error) {
	f, err := g.api.Files.Upload(ctx, bytes.NewReader(data), &genai.UploadFileConfig{MIMEType: mime})
	if err != nil {
		return fileEntry{}, err
	}
	for f.State != genai.FileStateActive {
		switch {
		case f.State == genai.FileStateFailed:
			msg := ""
			if f.Error != nil {
				msg = ": " + f.Error.Message
			}
			return fileEntry{}, fmt.Errorf("%w (file %s%s)", errFileFailed, f.Name, msg)
		case f.State != genai.FileStateProcessing && f.State != "" && f.State != genai.FileStateUnspecified:
			return fileEntry{}, fmt.Errorf("%w (file %s in state %s)", errFileFailed, f.Name, f.State)
		}
		t := time.NewTimer(g.cfg.FilePoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return fileEntry{}, ctx.Err()
		case <-t.C:
		}
		if f, err = g.api.Files.Get(ctx, f.Name, nil); err != nil {
			return fileEntry{}, err
		}
	}
	if f.URI == "" {
		return fileEntry{}, fmt.Errorf("%w (file %s has no URI)", errFileFailed, f.Name)
	}
	return fileEntry{uri: f.URI, expires: f.ExpirationTime}, nil
}

// fileCache remembers the clips uploaded through the Files API, by the
// SHA-256 of their bytes, so that each is uploaded once: concurrent
// requests for the same clip wait for one upload.
type fileCache struct {
	mu sync.Mutex
	m  map[[32]byte]*fileEntry
}

type fileEntry struct {
	done    chan struct{} // closed when the upload ended
	uri     string
	expires time.Time // zero: unknown
	err     error
}

// fileRenewal is how long before its expiry an uploaded file is uploaded
// again rather than reused (files live 48 h).
const fileRenewal = time.Hour

// get returns the URI of data's uploaded file, uploading it (with upload)
// when no live upload exists; a failed upload is tried again by the next
// caller.
func (fc *fileCache) get(ctx context.Context, data []byte, upload func(context.Context) (fileEntry, error)) (string, error) {
	key := sha256.Sum256(data)
	for {
		fc.mu.Lock()
		e, ok := fc.m[key]
		if ok {
			select {
			case <-e.done:
				if e.err != nil || (!e.expires.IsZero() && time.Until(e.expires) < fileRenewal) {
					ok = false // try again
				}
			default:
			}
		}
		if !ok {
			e = &fileEntry{done: make(chan struct{})}
			fc.m[key] = e
			fc.mu.Unlock()
			got, err := upload(ctx)
			e.uri, e.expires, e.err = got.uri, got.expires, err
			close(e.done)
			return e.uri, err
		}
		fc.mu.Unlock()
		select {
		case <-e.done:
			if e.err == nil {
				return e.uri, nil
			}
			// The upload this request waited for failed: try it again.
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// uploads reports how many clips have a finished upload (tests).
func (fc *fileCache) uploads() int {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	n := 0
	for _, e := range fc.m {
		select {
		case <-e.done:
			if e.err == nil {
				n++
			}
		default:
		}
	}
	return n
}

// blockedFinish are the finish reasons of a candidate the API withheld.
var blockedFinish = map[genai.FinishReason]bool{
	genai.FinishReasonSafety: true, genai.FinishReasonProhibitedContent: true, genai.FinishReasonBlocklist: true,
	genai.FinishReasonSPII: true, genai.FinishReasonRecitation: true, genai.FinishReasonImageSafety: true,
	genai.FinishReasonImageProhibitedContent: true,
}

// fromGemini reads a generateContent reply (see Gemini).
func (g *Gemini) fromGemini(out *genai.GenerateContentResponse) (Response, *Error) {
	var resp Response
	if u := out.UsageMetadata; u != nil {
		resp.Usage = Usage{
			PromptTokens:     int(u.PromptTokenCount) + int(u.ToolUsePromptTokenCount),
			CompletionTokens: int(u.CandidatesTokenCount) + int(u.ThoughtsTokenCount),
			TotalTokens:      int(u.TotalTokenCount),
			ReasoningTokens:  int(u.ThoughtsTokenCount),
		}
		if resp.Usage.TotalTokens == 0 {
			resp.Usage.TotalTokens = resp.Usage.PromptTokens + resp.Usage.CompletionTokens
		}
	}
	resp.Model = out.ModelVersion
	if resp.Model == "" {
		resp.Model = g.cfg.Model
	}
	resp.RequestID = out.ResponseID
	if len(out.Candidates) == 0 || out.Candidates[0] == nil {
		if pf := out.PromptFeedback; pf != nil && pf.BlockReason != "" {
			resp.Blocked = true
			resp.FinishReason = "prompt_blocked:" + string(pf.BlockReason)
			return resp, nil
		}
		return Response{}, &Error{Kind: KindBadResponse, Message: "response has no candidates"}
	}
	c := out.Candidates[0]
	resp.FinishReason = string(c.FinishReason)
	resp.Blocked = blockedFinish[c.FinishReason]
	var text, thoughts []string
	if c.Content != nil {
		for _, p := range c.Content.Parts {
			switch {
			case p == nil || p.Text == "":
			case p.Thought:
				thoughts = append(thoughts, p.Text)
			default:
				text = append(text, p.Text)
			}
		}
	}
	resp.Text = strings.Join(text, "")
	resp.Reasoning = strings.Join(thoughts, "\n")
	return resp, nil
}

// classifyGemini turns what the SDK returned into an *Error, like
// Client.classify: by HTTP status for API errors (429 with its RetryInfo
// retryDelay), then timeouts, malformed bodies and network failures.
func (g *Gemini) classifyGemini(err error, parent, attempt context.Context, ex *exchange) *Error {
	if perr := parent.Err(); perr != nil {
		return &Error{Kind: KindCanceled, Message: perr.Error(), cause: perr}
	}
	var big *tooLargeError
	if errors.As(err, &big) {
		return (&Error{Kind: KindBadResponse, Status: ex.status, Message: big.Error()}).final()
	}
	if errors.Is(err, errFileFailed) {
		return (&Error{Kind: KindInvalidRequest, Status: ex.status, Message: truncate(g.scrub.scrub(err.Error()))}).final()
	}
	var apiErr genai.APIError
	if errors.As(err, &apiErr) && apiErr.Code != 0 {
		msg := apiErr.Message
		if apiErr.Status != "" && !strings.Contains(msg, apiErr.Status) {
			msg = apiErr.Status + ": " + msg
		}
		e := &Error{Kind: kindForStatus(apiErr.Code), Status: apiErr.Code, Message: truncate(g.scrub.scrub(msg))}
		if e.Message == "" {
			e.Message = fmt.Sprintf("HTTP %d", apiErr.Code)
		}
		e.retryAfter = ex.retryAfter
		if d, ok := retryDelay(apiErr.Details); ok {
			e.retryAfter = retryAfter{set: true, delay: d, from: "RetryInfo retryDelay"}
		}
		return e
	}
	var netErr net.Error
	switch {
	case !ex.sent && attempt.Err() == nil:
		return (&Error{Kind: KindInvalidRequest, Message: truncate(g.scrub.scrub(err.Error()))}).notSent()
	case errors.Is(attempt.Err(), context.DeadlineExceeded):
		return &Error{Kind: KindTimeout, Status: ex.status, Message: fmt.Sprintf("no complete response within %s", g.cfg.Timeout)}
	case errors.As(err, &netErr) && netErr.Timeout():
		return &Error{Kind: KindTimeout, Status: ex.status, Message: truncate(g.scrub.scrub(err.Error()))}
	case ex.status/100 == 2 || errors.Is(err, io.ErrUnexpectedEOF):
		// The SDK quotes the whole body in its unmarshal error: cut.
		return &Error{Kind: KindBadResponse, Status: ex.status, Message: "malformed response body: " + truncate(g.scrub.scrub(firstLine(err.Error())))}
	default:
		return &Error{Kind: KindNetwork, Status: ex.status, Message: truncate(g.scrub.scrub(err.Error()))}
	}
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// retryDelay reads the retryDelay of a google.rpc.RetryInfo error detail
// ("37s", "0.5s").
func retryDelay(details []map[string]any) (time.Duration, bool) {
	for _, d := range details {
		if t, _ := d["@type"].(string); !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		s, _ := d["retryDelay"].(string)
		v, ok := strings.CutSuffix(strings.TrimSpace(s), "s")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		return seconds(f), true
	}
	return 0, false
}
