package perceiver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracegrid/tracegrid/eval/parse"
)

// nodeScript calls the server with the official OpenAI client: a chat
// completion with two images, then one with a wrong key.
const nodeScript = `
import OpenAI from 'openai';
import { readFileSync } from 'node:fs';

const input = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const image = (b64) => ({ type: 'image_url', image_url: { url: 'data:image/png;base64,' + b64 } });
const messages = [{ role: 'user', content: [
  { type: 'text', text: input.question },
  { type: 'text', text: input.labels[0] }, image(input.images[0]),
  { type: 'text', text: input.labels[1] }, image(input.images[1]),
] }];
const client = new OpenAI({ apiKey: input.key, baseURL: input.baseURL, maxRetries: 0 });
const r = await client.chat.completions.create({ model: 'tracegrid-perceiver', messages, temperature: 0 });
let auth = {};
try {
  await new OpenAI({ apiKey: 'wrong-key', baseURL: input.baseURL, maxRetries: 0 }).chat.completions.create({ model: 'tracegrid-perceiver', messages });
} catch (e) {
  auth = { status: e.status, name: e.constructor.name, code: e.code, type: e.type };
}
console.log(JSON.stringify({ object: r.object, model: r.model,
  content: r.choices[0].message.content, finish: r.choices[0].finish_reason, usage: r.usage, auth }));
`

// TestOpenAINodeClient: the official OpenAI client for Node (npm package
// openai, major version 4, which supports Debian 12's Node 18) talks to
// the server: a chat completion with two images comes back with the
// reply and the usage fields the client expects, and a wrong key raises
// the client's AuthenticationError. It runs where node and npm are
// installed (CI installs them: make deps) and needs the npm registry.
func TestOpenAINodeClient(t *testing.T) {
	node, err1 := exec.LookPath("node")
	npm, err2 := exec.LookPath("npm")
	if err1 != nil || err2 != nil {
		t.Skip("node and npm are not installed (make deps installs them)")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", dir, "openai@4")
	install.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(dir, ".npm-cache"))
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm could not install the openai package (the test needs the npm registry, which CI has): %v\n%s", err, out)
	}
	tf := newTwoFrames(t)
	srv := httptest.NewServer(Handler(Options{Token: "test-key"}))
	defer srv.Close()
	input, _ := json.Marshal(map[string]any{
		"key": "test-key", "baseURL": srv.URL + "/v1", "question": tf.question, "labels": tf.labels,
		"images": []string{base64.StdEncoding.EncodeToString(tf.pngs[0]), base64.StdEncoding.EncodeToString(tf.pngs[1])},
	})
	inPath := filepath.Join(dir, "input.json")
	script := filepath.Join(dir, "call.mjs")
	if err := os.WriteFile(inPath, input, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte(nodeScript), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, node, script, inPath).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var got struct {
		Object, Model, Content, Finish string
		Usage                          map[string]any
		Auth                           struct {
			Status     int
			Name, Code string
			Type       string
		}
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("node printed %q: %v", out, err)
	}
	var pkg struct{ Version string }
	if b, err := os.ReadFile(filepath.Join(dir, "node_modules", "openai", "package.json")); err == nil {
		_ = json.Unmarshal(b, &pkg)
	}
	t.Logf("openai %s on node: usage %v, reply %q", pkg.Version, got.Usage, got.Content)
	if got.Object != "chat.completion" || got.Model != "tracegrid-perceiver" || got.Finish != "stop" {
		t.Errorf("completion %+v", got)
	}
	if pr := parse.Parse(got.Content, "blinking"); pr.Count == nil || *pr.Count != 1 {
		t.Errorf("reply %q", got.Content)
	}
	pt, _ := got.Usage["prompt_tokens"].(float64)
	ct, _ := got.Usage["completion_tokens"].(float64)
	tt, _ := got.Usage["total_tokens"].(float64)
	if int(pt) != tf.wantTokens || int(ct) != textTokens(got.Content) || tt != pt+ct {
		t.Errorf("usage %v; want prompt %d, completion %d, total their sum", got.Usage, tf.wantTokens, textTokens(got.Content))
	}
	if got.Auth.Status != 401 || got.Auth.Name != "AuthenticationError" || got.Auth.Code != "invalid_api_key" {
		t.Errorf("wrong key raised %+v, want a 401 AuthenticationError", got.Auth)
	}
}
