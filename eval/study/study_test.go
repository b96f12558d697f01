package study

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// docExample is the example study of docs/study.md, which must load.
func docExample(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/study.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- example -->\\s*```yaml\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatal("docs/study.md has no example block")
	}
	return string(m[1])
}

// TestLoadDocObjectsExample: the CountVideoBench study of docs/study.md
// loads, and its dry run on one 1920×1080 objects clip is the per-trial
// figure the section states (10 × 1,105 image tokens + 85 text tokens).
func TestLoadDocObjectsExample(t *testing.T) {
	b, err := os.ReadFile("../../docs/study.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- objects example -->\\s*```yaml\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatal("docs/study.md has no objects example block")
	}
	s, err := Load(write(t, t.TempDir(), "cvb.yaml", string(m[1])))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Conditions, []Condition{{"uniform:10", "time", "countvideobench", "", ""}}) || s.Decoding.MaxTokens != 1024 {
		t.Errorf("conditions %v, max_tokens %d", s.Conditions, s.Decoding.MaxTokens)
	}
	es, err := s.DryRun([]ClipInfo{{ID: "objects_N20_sphere-yellow_s03", Duration: 5, FPS: 30, N: 20, Width: 1920, Height: 1080}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// "How many yellow spheres are in this video?" is 43 bytes, 11 tokens,
	// one more than the red cubes' 10 of the 85.
	if len(es) != 1 || es[0].Images != 10 || es[0].InputTokens != 10*1105+85+1 || es[0].OutputTokens != 1024 {
		t.Errorf("dry run %+v", es)
	}
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadDocExample(t *testing.T) {
	dir := t.TempDir()
	s, err := Load(write(t, dir, "pilot.yaml", docExample(t)))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "pilot" || s.Manifest != filepath.Join(dir, "out/default/manifest.jsonl") || s.DB != filepath.Join(dir, "results.db") {
		t.Errorf("name %q manifest %q db %q", s.Name, s.Manifest, s.DB)
	}
	want := []Condition{{"fps:4", "time", "structured_trace", "", ""}, {"keyframes", "position", "direct", "", ""}}
	if !reflect.DeepEqual(s.Conditions, want) {
		t.Errorf("conditions %v", s.Conditions)
	}
	if len(s.Models) != 1 {
		t.Fatalf("%d models", len(s.Models))
	}
	m := s.Models[0]
	if m.BaseURL != "http://127.0.0.1:8089/v1" || m.APIKeyEnv != "TRACEGRID_API_KEY" || m.MaxImages != 50 || m.LimitMode != "thin" {
		t.Errorf("model %+v", m)
	}
	if s.Repetitions != 1 || s.Decoding.Temperature == nil || *s.Decoding.Temperature != 0 || s.Decoding.Seed == nil || *s.Decoding.Seed != 7 {
		t.Errorf("repetitions %d decoding %+v", s.Repetitions, s.Decoding)
	}
}

func TestDefaultsAndRoundTrip(t *testing.T) {
	dir := t.TempDir()
	doc := `
manifest: clips/manifest.jsonl
models:
  - name: m1
    base_url: https://api.example.com/v1
  - name: m2
    base_url: http://localhost:8000/v1
    max_retries: 0
    video: {supported: true}
    image_tokens: {rule: openai_patches, multiplier: 1.62}
policies: [fps:1, "uniform:8"]
prompts: [direct, thinking]
conditions:
  - {policy: keyframes, prompt: structured_trace}
`
	s, err := Load(write(t, dir, "my-study.yaml", doc))
	if err != nil {
		t.Fatal(err)
	}
	m := s.Models[0]
	wantM := Model{Name: "m1", BaseURL: "https://api.example.com/v1", ModelID: "m1", LimitMode: "refuse",
		ImageFormat: "jpg", JPEGQuality: 90, Concurrency: 4, TimeoutSeconds: 300, MaxRetries: 3,
		ImageTokens: ImageTokenRule{Rule: "openai_tiles", TilePx: 512, BaseTokens: 85, TileTokens: 170, LowTokens: 85, MaxSide: 2048, ShortSide: 768}}
	if !reflect.DeepEqual(m, wantM) {
		t.Errorf("defaults:\n got %+v\nwant %+v", m, wantM)
	}
	m2 := s.Models[1]
	if m2.MaxRetries != 0 || m2.Video.Part != "video_url" || m2.ImageTokens != (ImageTokenRule{Rule: "openai_patches", PatchPx: 32, MaxPatches: 1536, Multiplier: 1.62}) {
		t.Errorf("m2 %+v", m2)
	}
	if s.Name != "my-study" || s.Repetitions != 1 || s.DB != filepath.Join(dir, "results.db") || s.Manifest != filepath.Join(dir, "clips", "manifest.jsonl") {
		t.Errorf("study %+v", s)
	}
	want := []Condition{{"keyframes", "position", "structured_trace", "", ""}, {"fps:1", "time", "direct", "", ""}, {"fps:1", "time", "thinking", "", ""}, {"uniform:8", "time", "direct", "", ""}, {"uniform:8", "time", "thinking", "", ""}}
	if !reflect.DeepEqual(s.Conditions, want) || s.Policies != nil || s.PromptNames != nil {
		t.Errorf("conditions %v policies %v prompts %v", s.Conditions, s.Policies, s.PromptNames)
	}

	// YAML round trip, loaded from elsewhere: the same study.
	b, err := yaml.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := Load(write(t, t.TempDir(), "copy.yaml", string(b)))
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	s2.Name = s.Name
	if !reflect.DeepEqual(s, s2) {
		t.Errorf("YAML round trip:\n%+v\n%+v\n%s", s, s2, b)
	}
	// JSON round trip.
	j, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var s3 Study
	if err := json.Unmarshal(j, &s3); err != nil || !reflect.DeepEqual(s, &s3) {
		t.Errorf("JSON round trip: %v\n%s", err, j)
	}
}

func TestRepetitionsAndRetriesPresence(t *testing.T) {
	base := "manifest: m.jsonl\nmodels: [{name: a, base_url: 'http://x/v1', max_retries: 7}]\nconditions: [{policy: fps:1, prompt: direct}]\n"
	dir := t.TempDir()
	s, err := Load(write(t, dir, "a.yaml", base+"repetitions: 3\n"))
	if err != nil || s.Repetitions != 3 || s.Models[0].MaxRetries != 7 {
		t.Errorf("%v %+v", err, s)
	}
	_, err = Load(write(t, dir, "b.yaml", base+"repetitions: 0\n"))
	if err == nil || !strings.Contains(err.Error(), "repetitions 0: must be at least 1") {
		t.Errorf("repetitions 0: %v", err)
	}
}

func TestUnknownFieldsRejected(t *testing.T) {
	valid := `name: s
manifest: m.jsonl
models:
  - name: a
    base_url: http://127.0.0.1:8089/v1
    video: {supported: false}
    prices: {input_per_mtok: 1, output_per_mtok: 2}
    image_tokens: {rule: fixed, fixed: 258}
decoding: {max_tokens: 10}
conditions:
  - {policy: "fps:1", prompt: direct}
`
	if _, err := parse([]byte(valid)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, field string }{
		{"name: s", "name: s\ncolour: red", "colour"},
		{"    base_url:", "    max_image: 5\n    base_url:", "max_image"},
		{"{supported: false}", "{supported: false, fps: 2}", "fps"},
		{"output_per_mtok: 2}", "output_per_mtok: 2, usd: 3}", "usd"},
		{"fixed: 258}", "fixed: 258, tile: 3}", "tile"},
		{"{max_tokens: 10}", "{max_tokens: 10, top_k: 40}", "top_k"},
		{"prompt: direct}", "prompt: direct, model: a}", "model"},
	} {
		doc := strings.Replace(valid, c.from, c.to, 1)
		_, err := parse([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), "field "+c.field+" not found") || !errors.Is(err, ErrStudy) {
			t.Errorf("%s: got %v", c.field, err)
		}
	}
	for _, doc := range []string{"", "# nothing\n", valid + "---\nname: t\n"} {
		if _, err := parse([]byte(doc)); err == nil {
			t.Errorf("%q accepted", doc)
		}
	}
}

// valid is a programmatic study that passes Validate.
func valid() *Study {
	s := &Study{Name: "s", Manifest: "m.jsonl", Repetitions: 1,
		Models:     []Model{{Name: "a", BaseURL: "https://api.example.com/v1", APIKeyEnv: "EXAMPLE_KEY"}},
		Conditions: []Condition{{"fps:4", "time", "structured_trace", "", ""}}}
	s.SetDefaults()
	return s
}

func TestValidationErrors(t *testing.T) {
	if err := valid().Validate(); err != nil {
		t.Fatal(err)
	}
	f := func(v float64) *float64 { return &v }
	dir := t.TempDir()
	brokenTemplates := write(t, dir, "broken.yaml", "x:\n  user: \"{{.Nope}}\"\n")
	for _, c := range []struct {
		edit func(s *Study)
		want string
	}{
		{func(s *Study) { s.Name = "" }, "name is empty"},
		{func(s *Study) { s.Name = "a/b" }, `name "a/b": use letters, digits`},
		{func(s *Study) { s.Manifest = "" }, "manifest is empty"},
		{func(s *Study) { s.Clips = []string{"x", ""} }, "clips[1] is empty"},
		{func(s *Study) { s.Clips = []string{"x", "x"} }, `clips[1]: clip "x" listed twice`},
		{func(s *Study) { s.Models = nil }, "no models"},
		{func(s *Study) { s.Models = append(s.Models, s.Models[0]) }, `models[1]: name "a" already used by models[0]`},
		{func(s *Study) { s.Models[0].Name = "" }, "models[0] (): name is empty"},
		{func(s *Study) { s.Models[0].Name = "a b" }, `models[0] (a b): name "a b"`},
		{func(s *Study) { s.Models[0].BaseURL = "" }, "models[0] (a): base_url is empty"},
		{func(s *Study) { s.Models[0].BaseURL = "ftp://host/v1" }, `base_url scheme "ftp": want http or https`},
		{func(s *Study) { s.Models[0].BaseURL = "localhost:8000" }, `base_url scheme "localhost": want http or https`},
		{func(s *Study) { s.Models[0].BaseURL = "http:///v1" }, "base_url has no host"},
		{func(s *Study) { s.Models[0].BaseURL = "http://u:p@host/v1" }, "base_url must not carry credentials (user:password@host)"},
		{func(s *Study) { s.Models[0].BaseURL = "https://host/v1?api_key=zzz" }, `base_url must not carry credentials (query parameter "api_key")`},
		{func(s *Study) { s.Models[0].APIKeyEnv = "sk-abc" }, "api_key_env is not an environment variable name"},
		{func(s *Study) { s.Models[0].ModelID = "" }, "model_id is empty"},
		{func(s *Study) { s.Models[0].MaxImages = -1 }, "max_images -1: must be 0 (no cap) or positive"},
		{func(s *Study) { s.Models[0].LimitMode = "drop" }, `limit_mode "drop": want refuse or thin`},
		{func(s *Study) { s.Models[0].ImageWidth = 640 }, "image size 640x0: give image_width and image_height both positive, or neither"},
		{func(s *Study) { s.Models[0].ImageWidth, s.Models[0].ImageHeight = 641, 480 }, "image size 641x480: width and height must be even"},
		{func(s *Study) { s.Models[0].ImageWidth, s.Models[0].ImageHeight = 10000, 480 }, "at most 8192 on a side"},
		{func(s *Study) { s.Models[0].Detail = "ultra" }, `detail "ultra": want low, high or auto`},
		{func(s *Study) { s.Models[0].ImageFormat = "webp" }, `image_format "webp": want jpg or png`},
		{func(s *Study) { s.Models[0].JPEGQuality = 101 }, "jpeg_quality 101: must be in 1–100"},
		{func(s *Study) { s.Models[0].Video.Rate = -1 }, "video.rate -1"},
		{func(s *Study) { s.Models[0].Video.Part = "input_video" }, `video.part "input_video": the client sends video only as video_url`},
		{func(s *Study) { s.Models[0].Video.TokensPerFrame = -3 }, "video.tokens_per_frame -3"},
		{func(s *Study) { s.Models[0].Prices.InputPerMTok = -1 }, "prices.input_per_mtok -1: must be zero or positive"},
		{func(s *Study) { s.Models[0].Prices.OutputPerMTok = -0.5 }, "prices.output_per_mtok -0.5: must be zero or positive"},
		{func(s *Study) { s.Models[0].ImageTokens = ImageTokenRule{Rule: "magic"} }, `image_tokens: unknown rule "magic"`},
		{func(s *Study) { s.Models[0].ImageTokens = ImageTokenRule{Rule: "fixed"} }, "rule fixed needs fixed > 0"},
		{func(s *Study) { s.Models[0].ImageTokens = ImageTokenRule{Rule: "per_pixel", PixelsPerToken: -2} }, "pixels_per_token -2 must be positive"},
		{func(s *Study) { s.Models[0].ImageTokens.TileTokens = -1 }, "openai_tiles parameters must be positive"},
		{func(s *Study) { s.Models[0].ImageTokens = ImageTokenRule{Rule: "openai_patches", Multiplier: -1} }, "openai_patches parameters must be positive"},
		{func(s *Study) { s.Models[0].Concurrency = -1 }, "concurrency -1: must be positive"},
		{func(s *Study) { s.Models[0].RequestsPerMinute = -1 }, "requests_per_minute -1"},
		{func(s *Study) { s.Models[0].TokensPerMinute = -1 }, "tokens_per_minute -1"},
		{func(s *Study) { s.Models[0].TimeoutSeconds = -1 }, "timeout_seconds -1: must be positive"},
		{func(s *Study) { s.Models[0].MaxRetries = -1 }, "max_retries -1"},
		{func(s *Study) { s.Repetitions = 0 }, "repetitions 0: must be at least 1"},
		{func(s *Study) { s.Decoding.Temperature = f(2.5) }, "decoding.temperature 2.5: must be in [0, 2]"},
		{func(s *Study) { s.Decoding.MaxTokens = -1 }, "decoding.max_tokens -1"},
		{func(s *Study) { s.MaxUSD = -5 }, "max_usd -5"},
		{func(s *Study) { s.Conditions = nil }, "no conditions"},
		{func(s *Study) { s.Conditions = nil; s.Policies = []string{"fps:1"} }, "policies and prompts go together"},
		{func(s *Study) { s.Conditions[0].Policy = "fps:0" }, `conditions[0]: invalid sampling policy "fps:0"`},
		{func(s *Study) { s.Conditions[0].Policy = "every_frame" }, `unknown policy "every_frame"`},
		{func(s *Study) { s.Conditions[0].Prompt = "cot2" }, `conditions[0]: prompts: unknown prompt "cot2" (known: cot, countvideobench, direct,`},
		{func(s *Study) {
			s.Conditions = append(s.Conditions, Condition{Policy: "fps:4.0", Prompt: "structured_trace"})
		}, "conditions[1]: policy fps:4.0 with labels time and prompt structured_trace repeats conditions[0]"},
		{func(s *Study) { s.Prompts = brokenTemplates }, `templates: ` + brokenTemplates + `: prompts: template "x" user`},
		{func(s *Study) { s.Prompts = filepath.Join(dir, "none.yaml") }, "templates: prompts: open"},
	} {
		s := valid()
		c.edit(s)
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrStudy) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
	// Several problems are all reported.
	s := valid()
	s.Repetitions, s.Models[0].LimitMode = 0, "x"
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "repetitions") || !strings.Contains(err.Error(), "limit_mode") {
		t.Errorf("joined: %v", err)
	}
}

func TestTemplatesFile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "mine.yaml", "count_only:\n  user: \"{{.Question}} \\\\boxed{N}\"\n")
	s, err := Load(write(t, dir, "s.yaml", "manifest: m.jsonl\ntemplates: mine.yaml\nmodels: [{name: a, base_url: 'http://x/v1'}]\nconditions: [{policy: fps:1, prompt: count_only}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Prompts != filepath.Join(dir, "mine.yaml") {
		t.Errorf("templates path %q", s.Prompts)
	}
	set, err := s.PromptSet()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set.Get("count_only"); err != nil {
		t.Error(err)
	}
	// Without the file the prompt is unknown.
	_, err = Load(write(t, dir, "t.yaml", "manifest: m.jsonl\nmodels: [{name: a, base_url: 'http://x/v1'}]\nconditions: [{policy: fps:1, prompt: count_only}]\n"))
	if err == nil || !strings.Contains(err.Error(), `unknown prompt "count_only"`) {
		t.Errorf("%v", err)
	}
}

func TestAPIKey(t *testing.T) {
	t.Setenv("TRACEGRID_TEST_KEY", "  sk-test-value\n")
	m := Model{Name: "a", APIKeyEnv: "TRACEGRID_TEST_KEY"}
	if k, err := m.APIKey(); err != nil || k != "sk-test-value" {
		t.Errorf("%q %v", k, err)
	}
	m.APIKeyEnv = "TRACEGRID_TEST_UNSET_KEY"
	t.Setenv("TRACEGRID_TEST_UNSET_KEY", "") // restored after the test
	if err := os.Unsetenv("TRACEGRID_TEST_UNSET_KEY"); err != nil {
		t.Fatal(err)
	}
	k, err := m.APIKey()
	if err == nil || k != "" || !errors.Is(err, ErrNoAPIKey) || !strings.Contains(err.Error(), "environment variable TRACEGRID_TEST_UNSET_KEY is not set") {
		t.Errorf("unset: %q %v", k, err)
	}
	t.Setenv("TRACEGRID_TEST_EMPTY", "")
	m.APIKeyEnv = "TRACEGRID_TEST_EMPTY"
	if _, err := m.APIKey(); !errors.Is(err, ErrNoAPIKey) {
		t.Errorf("empty: %v", err)
	}
	m.APIKeyEnv = ""
	if k, err := m.APIKey(); k != "" || err != nil {
		t.Errorf("no key: %q %v", k, err)
	}
}

// TestKeyNeverShown sets a secret in the environment and checks that no
// rendering of a study or of its errors and estimates contains it.
func TestKeyNeverShown(t *testing.T) {
	const secret = "sk-live-SECRET-4242-do-not-print"
	t.Setenv("TRACEGRID_API_KEY", secret)
	dir := t.TempDir()
	s, err := Load(write(t, dir, "pilot.yaml", docExample(t)))
	if err != nil {
		t.Fatal(err)
	}
	if k, err := s.Models[0].APIKey(); err != nil || k != secret {
		t.Fatalf("APIKey: %v", err)
	}
	var shown []string
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		shown = append(shown, fmt.Sprintf(format, s), fmt.Sprintf(format, *s), fmt.Sprintf(format, s.Models[0]))
	}
	j, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	y, err := yaml.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	shown = append(shown, string(j), string(y))
	es, err := s.DryRun([]ClipInfo{{ID: "bounce_ball_N03_F1.0_s00", Duration: 24, FPS: 30, N: 3, Events: []float64{1, 2, 3}, Width: 854, Height: 480}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	if err := WriteEstimates(&table, es); err != nil {
		t.Fatal(err)
	}
	shown = append(shown, table.String(), fmt.Sprintf("%+v", es))
	// Errors: a key pasted where names go, in the URL, or in a key field.
	bad := valid()
	bad.Models[0].APIKeyEnv = secret
	bad.Models[0].BaseURL = "https://user:" + secret + "@api.example.com/v1"
	shown = append(shown, fmt.Sprint(bad.Validate()))
	bad.Models[0].BaseURL = "https://api.example.com/v1?key=" + secret
	shown = append(shown, fmt.Sprint(bad.Validate()))
	bad.Models[0].BaseURL = "https://api.example.com/v1?auth=1&x=" + secret
	shown = append(shown, fmt.Sprint(bad.Validate()))
	bad.Models[0].BaseURL = "ftp://api.example.com/v1?x=" + secret
	shown = append(shown, fmt.Sprint(bad.Validate()))
	bad.Models[0].BaseURL = "https://api.example.com/%zz" + secret
	shown = append(shown, fmt.Sprint(bad.Validate()))
	_, err = parse([]byte("manifest: m\nmodels:\n  - name: a\n    api_key: " + secret + "\n"))
	if err == nil || !strings.Contains(err.Error(), "api_key_env") {
		t.Errorf("api_key field: %v", err)
	}
	shown = append(shown, fmt.Sprint(err))
	_, err = parse([]byte("manifest: m\nmodels:\n  - name: a\n    api_key_env: [" + secret + "]\n"))
	shown = append(shown, fmt.Sprint(err))
	for i, s := range shown {
		if strings.Contains(s, secret) || strings.Contains(s, "SECRET-4242") {
			t.Errorf("rendering %d shows the key: %s", i, s)
		}
	}
}
