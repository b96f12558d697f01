package perceiver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/parse"
	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/scene"
)

// pngFrame renders the clip at t as a PNG.
func pngFrame(t testing.TB, c *scene.Clip, at float64) []byte {
	t.Helper()
	w, h := c.P.Width, c.P.Height
	img := gpu.Image{Width: w, Height: h, Stride: 4 * w, Pix: make([]byte, 4*w*h)}
	if err := testRenderer.Render(c.State(at), img); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, &image.NRGBA{Pix: img.Pix, Stride: img.Stride, Rect: image.Rect(0, 0, w, h)}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// twoFrames is a blinking clip with one blink and two frames of it: off at
// t = 0 and on at the blink.
type twoFrames struct {
	question   string
	labels     [2]string
	pngs       [2][]byte
	blinkTime  float64
	wantTokens int // prompt tokens by the documented rule
}

func newTwoFrames(t testing.TB) twoFrames {
	t.Helper()
	c := newClip(t, "blinking", 1, 1, 0, testW, testH)
	tb := c.Times()[0]
	q := prompts.Questions()[prompts.DomainBlinking].Text + " List every light-up with its timestamp (mm:ss.s) and a running count, then give the final count as \\boxed{N}."
	tf := twoFrames{question: q, blinkTime: tb,
		labels: [2]string{chat.FrameLabel(0, 2, 0), chat.FrameLabel(1, 2, tb)},
		pngs:   [2][]byte{pngFrame(t, c, 0), pngFrame(t, c, tb)}}
	// 3 (reply) + 3 (one message) + text parts + two 320x180 images at
	// detail auto (85 + 170 × one tile each).
	tf.wantTokens = 3 + 3 + textTokens(q) + textTokens(tf.labels[0]) + textTokens(tf.labels[1]) + 2*(85+170)
	return tf
}

// body is the OpenAI wire request with the two frames.
func (tf twoFrames) body(model string) []byte {
	img := func(b []byte) map[string]any {
		return map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64," + base64.StdEncoding.EncodeToString(b)}}
	}
	req := map[string]any{
		"model": model,
		"messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": tf.question},
			map[string]any{"type": "text", "text": tf.labels[0]}, img(tf.pngs[0]),
			map[string]any{"type": "text", "text": tf.labels[1]}, img(tf.pngs[1]),
		}}},
		"temperature": 0, "seed": 7,
	}
	b, _ := json.Marshal(req)
	return b
}

// call sends a request and decodes the JSON reply.
func call(t testing.TB, method, url, token string, body []byte) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s %s: status %d, body is not JSON: %q", method, url, resp.StatusCode, raw)
	}
	return resp.StatusCode, resp.Header, v
}

// checkError asserts the OpenAI error shape.
func checkError(t testing.TB, what string, v map[string]any, typ, code, param string) {
	t.Helper()
	e, ok := v["error"].(map[string]any)
	if !ok {
		t.Errorf("%s: no error object in %v", what, v)
		return
	}
	for _, k := range []string{"message", "type", "param", "code"} {
		if _, ok := e[k]; !ok {
			t.Errorf("%s: error lacks %q: %v", what, k, e)
		}
	}
	if m, _ := e["message"].(string); m == "" {
		t.Errorf("%s: empty message", what)
	}
	if e["type"] != typ {
		t.Errorf("%s: type %v, want %s", what, e["type"], typ)
	}
	if code != "" && e["code"] != code {
		t.Errorf("%s: code %v, want %s (message %v)", what, e["code"], code, e["message"])
	}
	if param != "" && e["param"] != param {
		t.Errorf("%s: param %v, want %s", what, e["param"], param)
	}
}

func TestChatCompletion(t *testing.T) {
	tf := newTwoFrames(t)
	srv := httptest.NewServer(Handler(Options{}))
	defer srv.Close()
	status, hdr, v := call(t, "POST", srv.URL+"/v1/chat/completions", "", tf.body("some-model"))
	if status != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
		t.Fatalf("status %d, content type %q: %v", status, hdr.Get("Content-Type"), v)
	}
	if id, _ := v["id"].(string); !strings.HasPrefix(id, "chatcmpl-") {
		t.Errorf("id %v", v["id"])
	}
	if v["object"] != "chat.completion" || v["model"] != "some-model" {
		t.Errorf("object %v, model %v", v["object"], v["model"])
	}
	if _, ok := v["created"].(float64); !ok {
		t.Errorf("created %v", v["created"])
	}
	choices, _ := v["choices"].([]any)
	if len(choices) != 1 {
		t.Fatalf("choices %v", v["choices"])
	}
	ch := choices[0].(map[string]any)
	msg := ch["message"].(map[string]any)
	content, _ := msg["content"].(string)
	if ch["index"] != 0.0 || ch["finish_reason"] != "stop" || msg["role"] != "assistant" {
		t.Errorf("choice %v", ch)
	}
	pr := parse.Parse(content, "blinking")
	if pr.Count == nil || *pr.Count != 1 || len(pr.Events) != 1 || pr.Events[0].T != float64(int(tf.blinkTime*100+0.5))/100 {
		t.Errorf("reply %q parsed to %+v (blink at %.3f s)", content, pr, tf.blinkTime)
	}
	u, _ := v["usage"].(map[string]any)
	pt, ct, tt := u["prompt_tokens"], u["completion_tokens"], u["total_tokens"]
	if pt != float64(tf.wantTokens) || ct != float64(textTokens(content)) || tt != float64(tf.wantTokens+textTokens(content)) {
		t.Errorf("usage %v; want prompt %d, completion %d", u, tf.wantTokens, textTokens(content))
	}

	// max_tokens cuts the reply as OpenAI does: finish_reason "length".
	var req map[string]any
	if err := json.Unmarshal(tf.body("m"), &req); err != nil {
		t.Fatal(err)
	}
	req["max_tokens"] = 5
	b, _ := json.Marshal(req)
	_, _, v = call(t, "POST", srv.URL+"/v1/chat/completions", "", b)
	ch = v["choices"].([]any)[0].(map[string]any)
	if ch["finish_reason"] != "length" || v["usage"].(map[string]any)["completion_tokens"] != 5.0 ||
		len([]rune(ch["message"].(map[string]any)["content"].(string))) != 20 {
		t.Errorf("max_tokens 5: %v", v)
	}
}

func TestModels(t *testing.T) {
	srv := httptest.NewServer(Handler(Options{Token: "tok"}))
	defer srv.Close()
	status, _, v := call(t, "GET", srv.URL+"/v1/models", "tok", nil)
	data, _ := v["data"].([]any)
	if status != 200 || v["object"] != "list" || len(data) != 1 {
		t.Fatalf("status %d: %v", status, v)
	}
	m := data[0].(map[string]any)
	if m["id"] != ModelID || m["object"] != "model" || m["owned_by"] != "tracegrid" {
		t.Errorf("model %v", m)
	}
	if _, ok := m["created"].(float64); !ok {
		t.Errorf("created %v", m["created"])
	}
	if status, _, v := call(t, "GET", srv.URL+"/v1/models/"+ModelID, "tok", nil); status != 200 || v["id"] != ModelID {
		t.Errorf("GET one model: %d %v", status, v)
	}
}

// TestFaults: every malformed or abusive request gets a clear OpenAI-style
// error with the right status, and the server keeps answering.
func TestFaults(t *testing.T) {
	tf := newTwoFrames(t)
	srv := httptest.NewServer(Handler(Options{Token: "secret", MaxBody: 256 << 10}))
	defer srv.Close()
	url := srv.URL + "/v1/chat/completions"
	withImage := func(dataURL string) []byte {
		return []byte(fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"How many times does the ball touch a wall?"},{"type":"text","text":"Frame 1 of 1 at t = 0.000 s"},{"type":"image_url","image_url":{"url":%q}}]}]}`, dataURL))
	}
	withVideo := func(dataURL string) []byte {
		return []byte(fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"How many times does the ball touch a wall?"},{"type":"video_url","video_url":{"url":%q}}]}]}`, dataURL))
	}
	big := bytes.Repeat([]byte("A"), 300<<10)
	cases := []struct {
		name, method, path, token string
		body                      []byte
		status                    int
		typ, code, param          string
	}{
		{"oversized body", "POST", "/v1/chat/completions", "secret", withImage("data:image/png;base64," + string(big)), 413, "invalid_request_error", "request_too_large", ""},
		{"non-image data URL", "POST", "/v1/chat/completions", "secret", withImage("data:text/plain;base64,aGVsbG8="), 400, "invalid_request_error", "invalid_image_url", "messages[0].content[2]"},
		{"broken base64", "POST", "/v1/chat/completions", "secret", withImage("data:image/png;base64,iVBORw0KGgo!!!notbase64"), 400, "invalid_request_error", "invalid_base64", "messages[0].content[2]"},
		{"not a PNG", "POST", "/v1/chat/completions", "secret", withImage("data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("GIF89a but not really"))), 400, "invalid_request_error", "invalid_image", ""},
		{"remote URL", "POST", "/v1/chat/completions", "secret", withImage("https://example.com/frame.png"), 400, "invalid_request_error", "invalid_image_url", ""},
		{"not a video", "POST", "/v1/chat/completions", "secret", withVideo("data:image/png;base64," + base64.StdEncoding.EncodeToString(tf.pngs[0])), 400, "invalid_request_error", "invalid_video", ""},
		{"broken video", "POST", "/v1/chat/completions", "secret", withVideo("data:video/mp4;base64," + base64.StdEncoding.EncodeToString([]byte("\x00\x00\x00\x18ftypmp42 but nothing else"))), 400, "invalid_request_error", "invalid_video", ""},
		{"param indexes the request's messages", "POST", "/v1/chat/completions", "secret", []byte(`{"model":"m","messages":[{"role":"tool","tool_call_id":"1","content":"x"},{"role":"user","content":[{"type":"text","text":"How many times does the ball touch a wall?"},{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,@@@@"}}]}]}`), 400, "invalid_request_error", "invalid_base64", "messages[1].content[1]"},
		{"missing messages", "POST", "/v1/chat/completions", "secret", []byte(`{"model":"m"}`), 400, "invalid_request_error", "missing_required_parameter", "messages"},
		{"empty messages", "POST", "/v1/chat/completions", "secret", []byte(`{"model":"m","messages":[]}`), 400, "invalid_request_error", "missing_required_parameter", "messages"},
		{"missing model", "POST", "/v1/chat/completions", "secret", []byte(`{"messages":[{"role":"user","content":"hi"}]}`), 400, "invalid_request_error", "missing_required_parameter", "model"},
		{"invalid JSON", "POST", "/v1/chat/completions", "secret", []byte(`{"model":`), 400, "invalid_request_error", "invalid_json", ""},
		{"unknown part type", "POST", "/v1/chat/completions", "secret", []byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"audio","audio":{}}]}]}`), 400, "invalid_request_error", "invalid_value", "messages[0].content[0].type"},
		{"content of wrong type", "POST", "/v1/chat/completions", "secret", []byte(`{"model":"m","messages":[{"role":"user","content":42}]}`), 400, "invalid_request_error", "invalid_type", "messages[0].content"},
		{"unknown role", "POST", "/v1/chat/completions", "secret", []byte(`{"model":"m","messages":[{"role":"robot","content":"hi"}]}`), 400, "invalid_request_error", "invalid_value", "messages[0].role"},
		{"streaming", "POST", "/v1/chat/completions", "secret", []byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`), 400, "invalid_request_error", "unsupported_parameter", "stream"},
		{"wrong token", "POST", "/v1/chat/completions", "wrong", tf.body("m"), 401, "authentication_error", "invalid_api_key", ""},
		{"missing token", "POST", "/v1/chat/completions", "", tf.body("m"), 401, "authentication_error", "invalid_api_key", ""},
		{"wrong method", "GET", "/v1/chat/completions", "secret", nil, 405, "invalid_request_error", "method_not_allowed", ""},
		{"wrong method on models", "DELETE", "/v1/models", "secret", nil, 405, "invalid_request_error", "method_not_allowed", ""},
		{"unknown path", "POST", "/v1/completions", "secret", nil, 404, "invalid_request_error", "unknown_url", ""},
		{"unknown model", "GET", "/v1/models/gpt-4o", "secret", nil, 404, "invalid_request_error", "model_not_found", "model"},
	}
	for _, c := range cases {
		status, hdr, v := call(t, c.method, srv.URL+c.path, c.token, c.body)
		if status != c.status {
			t.Errorf("%s: status %d, want %d: %v", c.name, status, c.status, v)
		}
		checkError(t, c.name, v, c.typ, c.code, c.param)
		if status == 405 && hdr.Get("Allow") == "" {
			t.Errorf("%s: 405 without Allow", c.name)
		}
	}
	// A body over the limit without a Content-Length (chunked) is cut off
	// while reading.
	req, _ := http.NewRequest("POST", url, io.MultiReader(bytes.NewReader(big), strings.NewReader("")))
	req.Header.Set("Authorization", "Bearer secret")
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Errorf("chunked oversized body: status %d", resp.StatusCode)
	}
	// Still up and answering.
	if status, _, v := call(t, "GET", srv.URL+"/health", "", nil); status != 200 || v["status"] != "ok" {
		t.Errorf("health after faults: %d %v", status, v)
	}
	if status, _, v := call(t, "POST", url, "secret", tf.body("m")); status != 200 {
		t.Errorf("a good request after the faults: %d %v", status, v)
	}
}

// TestConcurrencyBounded: 500 requests at once against 2 analysis slots
// and 6 waiting places: each is answered, 200 with a reply or 429 with
// Retry-After and a rate-limit error, and the server answers normally
// afterwards.
func TestConcurrencyBounded(t *testing.T) {
	tf := newTwoFrames(t)
	srv := httptest.NewServer(Handler(Options{Concurrency: 2, Queue: 6}))
	defer srv.Close()
	body := tf.body("m")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 500}, Timeout: 2 * time.Minute}
	defer client.CloseIdleConnections()
	const n = 500
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[int]int{}
	var problems []string
	for range n {
		wg.Go(func() {
			resp, err := client.Post(srv.URL+"/v1/chat/completions", "application/json", bytes.NewReader(body))
			if err != nil {
				mu.Lock()
				problems = append(problems, err.Error())
				mu.Unlock()
				return
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var v map[string]any
			err = json.Unmarshal(raw, &v)
			mu.Lock()
			defer mu.Unlock()
			counts[resp.StatusCode]++
			switch {
			case err != nil:
				problems = append(problems, fmt.Sprintf("status %d, not JSON: %q", resp.StatusCode, raw))
			case resp.StatusCode == 200:
				c := v["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
				if pr := parse.Parse(c, "blinking"); pr.Count == nil || *pr.Count != 1 {
					problems = append(problems, "wrong reply "+c)
				}
			case resp.StatusCode == 429:
				e, _ := v["error"].(map[string]any)
				if resp.Header.Get("Retry-After") == "" || e["type"] != "rate_limit_error" || e["code"] != "rate_limit_exceeded" {
					problems = append(problems, fmt.Sprintf("unclear 429: %v %v", resp.Header, v))
				}
			default:
				problems = append(problems, fmt.Sprintf("status %d: %v", resp.StatusCode, v))
			}
		})
	}
	wg.Wait()
	t.Logf("500 concurrent requests: %v (status → count)", counts)
	if len(problems) > 0 {
		t.Errorf("%d problems, e.g. %s", len(problems), problems[0])
	}
	if counts[200] < 8 || counts[200]+counts[429] != n {
		t.Errorf("answers %v: want all 200 or 429, at least 8 served", counts)
	}
	if status, _, v := call(t, "POST", srv.URL+"/v1/chat/completions", "", body); status != 200 {
		t.Errorf("after the burst: %d %v", status, v)
	}
}

// writeMP4 encodes the clip's frames (every frame of its own rate) to an
// MP4, as package pipeline writes clips.
func writeMP4(t testing.TB, c *scene.Clip) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "clip.mp4")
	w, h := c.P.Width, c.P.Height
	ew, err := encode.Create(path, encode.Options{Width: w, Height: h, FPS: c.P.FPS, Preset: "ultrafast", CRF: 18})
	if err != nil {
		t.Fatal(err)
	}
	img := gpu.Image{Width: w, Height: h, Stride: 4 * w, Pix: make([]byte, 4*w*h)}
	var prev, cur scene.DrawList
	for k := range int(c.P.Duration) * c.P.FPS {
		c.StateInto(float64(k)/float64(c.P.FPS), &cur)
		if k > 0 && cur.Equal(&prev) {
			err = ew.Repeat()
		} else {
			if err = testRenderer.Render(&cur, img); err == nil {
				err = ew.WriteRGBA(encode.Image(img))
			}
			cur, prev = prev, cur
		}
		if err != nil {
			ew.Abort()
			t.Fatal(err)
		}
	}
	if err := ew.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVideoURL: a native video part is decoded with libav at the server's
// video rate. At 16 frames/s a 1 Hz blinking clip is counted exactly; at
// 1 frame/s (the paper's native rate) a 4 Hz one is undercounted, because
// its 0.125 s pulses fall between the samples.
func TestVideoURL(t *testing.T) {
	for _, c := range []struct {
		n    int
		f    float64
		rate float64
	}{{6, 1, 16}, {12, 4, 1}} {
		clip := newClip(t, "blinking", c.n, c.f, 0, testW, testH)
		mp4 := writeMP4(t, clip)
		tmpl, err := prompts.Default().Get("structured_trace")
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := tmpl.Build(prompts.Input{Domain: "blinking", Duration: 24, VideoURL: "data:video/mp4;base64," + base64.StdEncoding.EncodeToString(mp4)})
		if err != nil {
			t.Fatal(err)
		}
		det := Detector{Limits: Limits{VideoRate: c.rate}}
		reply, err := det.Answer(msgs)
		if err != nil {
			t.Fatal(err)
		}
		pr := parse.Parse(reply, "blinking")
		switch {
		case pr.Count == nil:
			t.Errorf("N=%d F=%v at %v frames/s: no count in %q", c.n, c.f, c.rate, reply)
		case c.rate >= 4*c.f && *pr.Count != c.n:
			t.Errorf("N=%d F=%v at %v frames/s: count %d\n%s", c.n, c.f, c.rate, *pr.Count, reply)
		case c.rate < 2*c.f && *pr.Count >= c.n:
			t.Errorf("N=%d F=%v at %v frames/s: count %d, but the samples cannot show every pulse", c.n, c.f, c.rate, *pr.Count)
		}
		t.Logf("video_url, N=%d F=%v Hz, sampled at %v frames/s: count %v", c.n, c.f, c.rate, *pr.Count)
	}
}
