// Package study reads and checks a study: the YAML file that says which
// models to ask (and how to reach and pay for them), which conditions
// (sampling policy × prompt) to run on which clips, how often, with which
// decoding settings and within which budget. It also estimates a study's
// cost before anything is sent (DryRun). The fields, their defaults and
// the cost rules are documented in docs/study.md.
//
// API keys are never part of a study: a model names the environment
// variable that holds its key (api_key_env) and APIKey reads it when the
// client is made. No type of this package has a field for a key, so no
// printing, JSON or YAML of a study can show one.
package study

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/client"
	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/sampling"
)

// VideoSupport says whether and how a model takes a whole video.
type VideoSupport struct {
	// Supported: the model takes a native video part. Conditions with a
	// native[:R] policy then send the clip's MP4 instead of frames.
	Supported bool `yaml:"supported" json:"supported"`
	// Rate is the frames per second the server samples from a video, used
	// only for cost estimates; 0 takes the native policy's R (1 for
	// "native").
	Rate float64 `yaml:"rate,omitempty" json:"rate,omitempty"`
	// Part is the content part type the video is sent as; "video_url" (the
	// default, vLLM's and several providers' extension) is the only one
	// the client speaks.
	Part string `yaml:"part,omitempty" json:"part,omitempty"`
	// TokensPerFrame is the input tokens of one sampled video frame, for
	// cost estimates (Gemini documents 258); 0 uses the model's image
	// token rule at the clip's frame size.
	TokensPerFrame int `yaml:"tokens_per_frame,omitempty" json:"tokens_per_frame,omitempty"`
}

// Prices are a model's list prices in US dollars per million tokens.
type Prices struct {
	InputPerMTok  float64 `yaml:"input_per_mtok" json:"input_per_mtok"`
	OutputPerMTok float64 `yaml:"output_per_mtok" json:"output_per_mtok"`
	// BatchDiscount multiplies the cost of a trial answered through a
	// provider's batch interface (tracegrid eval --batch-in); nil takes
	// DefaultBatchDiscount (0.5: OpenAI's and Google's batch prices are
	// half the online ones).
	BatchDiscount *float64 `yaml:"batch_discount,omitempty" json:"batch_discount,omitempty"`
}

// DefaultBatchDiscount is the batch price multiplier when a model names
// none.
const DefaultBatchDiscount = 0.5

// Batch is the model's batch price multiplier.
func (p Prices) Batch() float64 {
	if p.BatchDiscount != nil {
		return *p.BatchDiscount
	}
	return DefaultBatchDiscount
}

// Cost is the dollars of a reply's usage at these prices, times mult (1
// online, Batch() for a batch reply).
func (p Prices) Cost(promptTokens, completionTokens int, mult float64) float64 {
	return (float64(promptTokens)*p.InputPerMTok/1e6 + float64(completionTokens)*p.OutputPerMTok/1e6) * mult
}

// Image token rules (ImageTokenRule.Rule); EstimateImageTokens documents
// each.
const (
	RuleOpenAITiles   = "openai_tiles"
	RuleOpenAIPatches = "openai_patches"
	RulePerPixel      = "per_pixel"
	RuleFixed         = "fixed"
)

// ImageTokenRule says how many input tokens one image costs. Only the
// fields of the chosen rule are read; a zero field takes the rule's
// published default (given after each field).
type ImageTokenRule struct {
	// Rule: openai_tiles (default), openai_patches, per_pixel or fixed.
	Rule string `yaml:"rule" json:"rule"`
	// Fixed tokens per image (fixed).
	Fixed int `yaml:"fixed,omitempty" json:"fixed,omitempty"`
	// TilePx is the tile side (openai_tiles: 512).
	TilePx int `yaml:"tile_px,omitempty" json:"tile_px,omitempty"`
	// BaseTokens are added once per image (openai_tiles: 85).
	BaseTokens int `yaml:"base_tokens,omitempty" json:"base_tokens,omitempty"`
	// TileTokens per tile (openai_tiles: 170).
	TileTokens int `yaml:"tile_tokens,omitempty" json:"tile_tokens,omitempty"`
	// LowTokens per image with detail "low" (openai_tiles: 85).
	LowTokens int `yaml:"low_tokens,omitempty" json:"low_tokens,omitempty"`
	// MaxSide: the image is first scaled down to fit MaxSide×MaxSide
	// (openai_tiles: 2048).
	MaxSide int `yaml:"max_side,omitempty" json:"max_side,omitempty"`
	// ShortSide: then scaled down so its shorter side is at most ShortSide
	// (openai_tiles: 768).
	ShortSide int `yaml:"short_side,omitempty" json:"short_side,omitempty"`
	// Upscale also scales a smaller image up to ShortSide (openai_tiles:
	// false; third-party counters disagree on this step).
	Upscale bool `yaml:"upscale,omitempty" json:"upscale,omitempty"`
	// PatchPx is the patch side (openai_patches: 32).
	PatchPx int `yaml:"patch_px,omitempty" json:"patch_px,omitempty"`
	// MaxPatches caps the patches of one image (openai_patches: 1536).
	MaxPatches int `yaml:"max_patches,omitempty" json:"max_patches,omitempty"`
	// Multiplier turns patches into billed tokens (openai_patches: 1; the
	// published 1.62 for gpt-4.1-mini, 2.46 for gpt-4.1-nano).
	Multiplier float64 `yaml:"multiplier,omitempty" json:"multiplier,omitempty"`
	// PixelsPerToken (per_pixel: 750, Anthropic's published w·h/750).
	PixelsPerToken float64 `yaml:"pixels_per_token,omitempty" json:"pixels_per_token,omitempty"`
	// Audit says the rule is the server's own count: the input audit
	// checks every trial's reported prompt tokens against it (eval/runner
	// audit.go; docs/study.md, "Input audit").
	Audit bool `yaml:"audit,omitempty" json:"audit,omitempty"`
}

// Providers a model is reached through (Model.Provider).
const (
	// ProviderOpenAI: an OpenAI-compatible chat completions API (OpenAI,
	// vLLM, SGLang, Ollama, llama.cpp, the reference server).
	ProviderOpenAI = "openai"
	// ProviderGemini: the Gemini Developer API (generateContent) through
	// Google's Go SDK, with native video.
	ProviderGemini = "gemini"
)

// Model is one model under test behind a provider's API.
type Model struct {
	// Name identifies the model in results and reports (letters, digits,
	// '_', '.', '+', '-'); unique in a study.
	Name string `yaml:"name" json:"name"`
	// Provider is the API the model is reached through: openai (default)
	// or gemini.
	Provider string `yaml:"provider,omitempty" json:"provider,omitempty"`
	// BaseURL of the API: for openai the OpenAI-compatible root, e.g.
	// https://api.openai.com/v1 or http://127.0.0.1:8089/v1 (required);
	// for gemini the API root without version (default
	// https://generativelanguage.googleapis.com/). It must not carry
	// credentials.
	BaseURL string `yaml:"base_url" json:"base_url"`
	// APIKeyEnv is the NAME of the environment variable holding the API
	// key (never the key); empty sends no key (local servers).
	APIKeyEnv string `yaml:"api_key_env,omitempty" json:"api_key_env,omitempty"`
	// ModelID is the provider's model id sent in requests; default Name.
	ModelID string `yaml:"model_id" json:"model_id"`
	// MaxImages is the provider's cap on images per request; 0 for none.
	MaxImages int `yaml:"max_images,omitempty" json:"max_images,omitempty"`
	// LimitMode is what a plan above MaxImages does: "refuse" (default:
	// the trial is recorded as refused, nothing is sent) or "thin" (keep
	// MaxImages frames spread uniformly; sampling.ApplyLimit).
	LimitMode string `yaml:"limit_mode" json:"limit_mode"`
	// ImageWidth and ImageHeight are the size frames are rendered at (even;
	// another aspect ratio is letterboxed); 0, 0 keeps the clip's size.
	ImageWidth  int `yaml:"image_width,omitempty" json:"image_width,omitempty"`
	ImageHeight int `yaml:"image_height,omitempty" json:"image_height,omitempty"`
	// Detail is the image detail hint sent with every image: low, high or
	// auto; empty sends none (the provider's default, auto for OpenAI).
	Detail string `yaml:"detail,omitempty" json:"detail,omitempty"`
	// ImageFormat of the frames: jpg (default) or png.
	ImageFormat string `yaml:"image_format" json:"image_format"`
	// JPEGQuality 1–100 (default 90).
	JPEGQuality int `yaml:"jpeg_quality" json:"jpeg_quality"`
	// Video says whether the model takes native video and how.
	Video VideoSupport `yaml:"video" json:"video"`
	// Prices per million tokens, for the cost of every trial and for
	// DryRun; 0 for a free (local) model.
	Prices Prices `yaml:"prices" json:"prices"`
	// ImageTokens is the image token rule for DryRun.
	ImageTokens ImageTokenRule `yaml:"image_tokens" json:"image_tokens"`
	// Concurrency is the most requests in flight to this model (default 4).
	Concurrency int `yaml:"concurrency" json:"concurrency"`
	// RequestsPerMinute and TokensPerMinute are rate limits the client
	// keeps to; 0 for none.
	RequestsPerMinute int `yaml:"requests_per_minute,omitempty" json:"requests_per_minute,omitempty"`
	TokensPerMinute   int `yaml:"tokens_per_minute,omitempty" json:"tokens_per_minute,omitempty"`
	// TimeoutSeconds bounds one request (default 300).
	TimeoutSeconds float64 `yaml:"timeout_seconds" json:"timeout_seconds"`
	// MaxRetries of a failed request (rate limit, server error, timeout);
	// default 3 when the field is absent, 0 for none.
	MaxRetries int `yaml:"max_retries" json:"max_retries"`
	// MaxRetryWaitSeconds caps every wait before a retry: the exponential
	// backoff and a server's Retry-After alike (a longer Retry-After is cut
	// to this); 0 takes DefaultMaxRetryWaitSeconds.
	MaxRetryWaitSeconds float64 `yaml:"max_retry_wait_seconds,omitempty" json:"max_retry_wait_seconds,omitempty"`
	// DeadlineSeconds bounds one request as a whole — its attempts, the
	// waits between them and the rate-limit waits; a retry whose wait would
	// pass it is not made. 0 takes timeout_seconds × (max_retries + 1).
	DeadlineSeconds float64 `yaml:"deadline_seconds,omitempty" json:"deadline_seconds,omitempty"`
	// Decoding overrides the study's decoding for this model, field by
	// field (a field left out keeps the study's).
	Decoding *Decoding `yaml:"decoding,omitempty" json:"decoding,omitempty"`
	// SendTemperature says whether temperature and top_p are sent to this
	// model: nil applies the rule of SendsTemperature (not to OpenAI's
	// reasoning models), false never, true always.
	SendTemperature *bool `yaml:"send_temperature,omitempty" json:"send_temperature,omitempty"`
	// ExtraBody is merged into every request body: at the top level for
	// openai (vLLM's mm_processor_kwargs: {fps: 2}, chat_template_kwargs,
	// top_k), recursively for gemini. It may not set what the client writes
	// itself (client.ReservedBodyKeys).
	ExtraBody map[string]any `yaml:"extra_body,omitempty" json:"extra_body,omitempty"`
	// Server is an openai model's server kind, for what a request with a
	// video carries so that every frame is kept: vllm, sglang or other
	// (default; nothing is added). See sendas.go.
	Server string `yaml:"server,omitempty" json:"server,omitempty"`
}

// ProviderName is the model's provider with its default.
func (m Model) ProviderName() string {
	if m.Provider == "" {
		return ProviderOpenAI
	}
	return m.Provider
}

// reasoningModel matches the model ids of OpenAI's reasoning models, which
// refuse a temperature or top_p other than the default: o1, o3, o4 and
// gpt-5 and their variants (o3-mini, o4-mini-2025-04-16, gpt-5.1, …), the
// same families go-openai treats as reasoning models. A provider prefix
// ("openai/o3") is ignored.
var reasoningModel = regexp.MustCompile(`^(o[1-9]|gpt-5)([-.]|$)`)

// SendsTemperature reports whether temperature and top_p are sent to the
// model: send_temperature when set; otherwise not to an openai model whose
// model_id (after any "provider/" prefix) names one of OpenAI's reasoning
// models (reasoningModel), and to every other model.
func (m Model) SendsTemperature() bool {
	if m.SendTemperature != nil {
		return *m.SendTemperature
	}
	if m.ProviderName() != ProviderOpenAI {
		return true
	}
	id := m.ModelID
	if i := strings.LastIndex(id, "/"); i >= 0 {
		id = id[i+1:]
	}
	return !reasoningModel.MatchString(id)
}

// RetryWait is the model's cap on a wait before a retry.
func (m Model) RetryWait() time.Duration {
	if m.MaxRetryWaitSeconds > 0 {
		return seconds(m.MaxRetryWaitSeconds)
	}
	return seconds(DefaultMaxRetryWaitSeconds)
}

// Deadline is the most one request may take, retries and waits included.
func (m Model) Deadline() time.Duration {
	if m.DeadlineSeconds > 0 {
		return seconds(m.DeadlineSeconds)
	}
	t := m.TimeoutSeconds
	if t <= 0 {
		t = DefaultTimeoutSeconds
	}
	return seconds(t * float64(max(m.MaxRetries, 0)+1))
}

// seconds converts a validated, finite number of seconds.
func seconds(s float64) time.Duration {
	const ceiling = 1000 * time.Hour
	if s >= ceiling.Seconds() {
		return ceiling
	}
	return time.Duration(s * float64(time.Second))
}

// Condition is one sampling policy with one prompt, its frames labelled
// in one label mode.
type Condition struct {
	// Policy is a sampling policy string (sampling.Parse), e.g. "fps:4".
	Policy string `yaml:"policy" json:"policy"`
	// Labels is how each frame is introduced to the model (chat.Labels):
	// "time" (its sample time), "position" (its place in the shown order
	// only) or "none". Empty takes the policy's default (DefaultLabels):
	// position where a time would reveal what the policy tests.
	Labels string `yaml:"labels,omitempty" json:"labels,omitempty"`
	// Prompt is a template name of the study's prompt set.
	Prompt string `yaml:"prompt" json:"prompt"`
	// As, when set, is the prompt name the condition's trials are stored
	// under instead of Prompt: the runner sets it (never the study file)
	// when a changed template is recorded as a new condition
	// (tracegrid eval --new-prompts: "<prompt>+<hash>").
	As string `yaml:"-" json:"as,omitempty"`
	// SendAs is how the frames reach the model (YAML key "as"): "images"
	// (one image part per frame; "" is the same) or "video" (the sampled
	// frames as one constant-rate MP4; sendas.go). Its JSON name is
	// send_as because "as" is As's in the study snapshots already stored.
	SendAs string `yaml:"as,omitempty" json:"send_as,omitempty"`
}

// KeyPrompt is the prompt name the condition's trials are stored under.
func (c Condition) KeyPrompt() string {
	if c.As != "" {
		return c.As
	}
	return c.Prompt
}

// DefaultLabels is the label mode of a policy that names none: position
// for keyframes, shuffled:M and single:* (a frame's time would state the
// event times, the true order or where the one frame lies:
// sampling.TimesReveal), time for the rate policies, uniform:M and
// adaptive:B (their times follow from the sampling rate, which the paper
// also tells the model). An unparseable policy gets time; validation
// reports the policy.
func DefaultLabels(policy string) chat.Labels {
	if p, err := sampling.Parse(policy); err == nil && sampling.TimesReveal(p) {
		return chat.LabelsPosition
	}
	return chat.LabelsTime
}

// WithDefaults is c with its label mode filled in.
func (c Condition) WithDefaults() Condition {
	if c.SendAs == SendImages {
		c.SendAs = ""
	}
	if c.Video() && (c.Labels == "" || c.Labels == string(chat.LabelsTime)) {
		// A video's frames are placed by its own timestamps.
		c.Labels = LabelsVideo
	}
	if c.Labels == "" {
		c.Labels = string(DefaultLabels(c.Policy))
	}
	return c
}

// Decoding are the generation settings sent with every request.
type Decoding struct {
	// Temperature 0–2; nil sends none (the provider's default).
	Temperature *float64 `yaml:"temperature,omitempty" json:"temperature,omitempty"`
	// TopP in (0, 1]; nil sends none.
	TopP *float64 `yaml:"top_p,omitempty" json:"top_p,omitempty"`
	// MaxTokens caps the reply (Gemini: maxOutputTokens, thoughts
	// included); 0 sends none. DryRun takes it as the output of every
	// request when set.
	MaxTokens int `yaml:"max_tokens,omitempty" json:"max_tokens,omitempty"`
	// Seed for providers that take one; nil sends none.
	Seed *int `yaml:"seed,omitempty" json:"seed,omitempty"`
	// ReasoningEffort (openai only) is sent as reasoning_effort: none,
	// minimal, low, medium, high or xhigh, as the model accepts.
	ReasoningEffort string `yaml:"reasoning_effort,omitempty" json:"reasoning_effort,omitempty"`
	// ThinkingBudget (gemini only) is thinkingConfig.thinkingBudget in
	// tokens: 0 off, -1 dynamic; nil sends none.
	ThinkingBudget *int `yaml:"thinking_budget,omitempty" json:"thinking_budget,omitempty"`
	// ThinkingLevel (gemini only) is thinkingConfig.thinkingLevel:
	// minimal, low, medium or high.
	ThinkingLevel string `yaml:"thinking_level,omitempty" json:"thinking_level,omitempty"`
}

// Over is d with every field that o sets replaced by o's.
func (d Decoding) Over(o *Decoding) Decoding {
	if o == nil {
		return d
	}
	if o.Temperature != nil {
		d.Temperature = o.Temperature
	}
	if o.TopP != nil {
		d.TopP = o.TopP
	}
	if o.MaxTokens != 0 {
		d.MaxTokens = o.MaxTokens
	}
	if o.Seed != nil {
		d.Seed = o.Seed
	}
	if o.ReasoningEffort != "" {
		d.ReasoningEffort = o.ReasoningEffort
	}
	if o.ThinkingBudget != nil {
		d.ThinkingBudget = o.ThinkingBudget
	}
	if o.ThinkingLevel != "" {
		d.ThinkingLevel = o.ThinkingLevel
	}
	return d
}

// DecodingFor is what is sent to m: the study's decoding with m's over
// it, without temperature and top_p when m takes none
// (Model.SendsTemperature).
func (s *Study) DecodingFor(m Model) Decoding {
	d := s.Decoding.Over(m.Decoding)
	if !m.SendsTemperature() {
		d.Temperature, d.TopP = nil, nil
	}
	return d
}

// ReasoningEfforts and ThinkingLevels are the accepted values.
var (
	ReasoningEfforts = []string{"none", "minimal", "low", "medium", "high", "xhigh"}
	ThinkingLevels   = []string{"minimal", "low", "medium", "high"}
)

// validate returns the decoding's problems for a model of provider
// ("" checks the values only), each naming the field under prefix.
func (d Decoding) validate(prefix, provider string) []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(prefix+format, a...)) }
	if d.Temperature != nil && !(*d.Temperature >= 0 && *d.Temperature <= 2) {
		bad("temperature %v: must be in [0, 2]", *d.Temperature)
	}
	if d.TopP != nil && !(*d.TopP > 0 && *d.TopP <= 1) {
		bad("top_p %v: must be in (0, 1]", *d.TopP)
	}
	if d.MaxTokens < 0 {
		bad("max_tokens %d: must be 0 (provider default) or positive", d.MaxTokens)
	}
	if d.ReasoningEffort != "" && !slices.Contains(ReasoningEfforts, d.ReasoningEffort) {
		bad("reasoning_effort %q: want one of %s", d.ReasoningEffort, strings.Join(ReasoningEfforts, ", "))
	}
	if d.ThinkingBudget != nil && *d.ThinkingBudget < -1 {
		bad("thinking_budget %d: want -1 (dynamic), 0 (off) or a positive number of tokens", *d.ThinkingBudget)
	}
	if d.ThinkingLevel != "" && !slices.Contains(ThinkingLevels, d.ThinkingLevel) {
		bad("thinking_level %q: want one of %s", d.ThinkingLevel, strings.Join(ThinkingLevels, ", "))
	}
	switch provider {
	case ProviderOpenAI:
		if d.ThinkingBudget != nil || d.ThinkingLevel != "" {
			bad("thinking_budget and thinking_level are Gemini settings; an openai model takes reasoning_effort (or extra_body, e.g. chat_template_kwargs)")
		}
	case ProviderGemini:
		if d.ReasoningEffort != "" {
			bad("reasoning_effort is an OpenAI setting; a gemini model takes thinking_budget or thinking_level")
		}
	}
	return errs
}

// Study is one evaluation.
type Study struct {
	// Name keys the study's rows in the results database; default: the
	// study file's name without extension.
	Name string `yaml:"name" json:"name"`
	// Manifest is the manifest.jsonl of the clips (relative paths are read
	// from the study file's directory; Load makes them absolute).
	Manifest string `yaml:"manifest" json:"manifest"`
	// Clips optionally restricts the study to these clip ids.
	Clips []string `yaml:"clips,omitempty" json:"clips,omitempty"`
	// Models to ask.
	Models []Model `yaml:"models" json:"models"`
	// Conditions to run on every clip and model. Load appends the product
	// Policies × PromptNames (policy-major) and clears those two lists.
	Conditions []Condition `yaml:"conditions,omitempty" json:"conditions,omitempty"`
	// Policies and PromptNames are a shorthand for conditions: every
	// policy with every prompt.
	Policies    []string `yaml:"policies,omitempty" json:"policies,omitempty"`
	PromptNames []string `yaml:"prompts,omitempty" json:"prompts,omitempty"`
	// Repetitions of every trial (default 1).
	Repetitions int `yaml:"repetitions" json:"repetitions"`
	// Decoding settings.
	Decoding Decoding `yaml:"decoding" json:"decoding"`
	// Prompts is an optional templates file (YAML) adding to or overriding
	// the built-in templates (prompts.Load); YAML key "templates".
	Prompts string `yaml:"templates,omitempty" json:"templates,omitempty"`
	// DB is the results database (default results.db beside the study
	// file).
	DB string `yaml:"db" json:"db"`
	// MaxUSD stops the run when the spend reaches it; 0 for no cap.
	MaxUSD float64 `yaml:"max_usd,omitempty" json:"max_usd,omitempty"`
}

// Defaults.
const (
	DefaultRepetitions    = 1
	DefaultDB             = "results.db"
	DefaultLimitMode      = "refuse"
	DefaultImageFormat    = "jpg"
	DefaultJPEGQuality    = 90
	DefaultConcurrency    = 4
	DefaultTimeoutSeconds = 300
	DefaultMaxRetries     = 3
	DefaultVideoPart      = "video_url"
	// DefaultMaxRetryWaitSeconds caps a wait before a retry (backoff or
	// Retry-After) when max_retry_wait_seconds is not set.
	DefaultMaxRetryWaitSeconds = 60
	// MaxStudyBytes is the largest study file Load reads (a study is a few
	// KB; this keeps /dev/zero or a wrong file from filling memory).
	MaxStudyBytes = 1 << 20
	// MaxRetryWaitCeiling is the largest max_retry_wait_seconds accepted
	// (an hour).
	MaxRetryWaitCeiling = 3600
	// GeminiTokensPerFrame is video.tokens_per_frame's default for a
	// gemini model: Google documents that a video is tokenized at 258
	// tokens per sampled frame (66 with mediaResolution low), plus 32
	// tokens per second of audio, which tracegrid's clips do not have
	// (ai.google.dev/gemini-api/docs/video-understanding, "Technical
	// details").
	GeminiTokensPerFrame = 258
)

// ErrStudy is wrapped by every error about a study's content.
var ErrStudy = errors.New("invalid study")

// ErrNoAPIKey is wrapped by APIKey's error when the variable is unset,
// empty, or holds a key too short to redact (bad input, exit 2).
var ErrNoAPIKey = errors.New("API key not set")

// Load reads a study file: unknown fields (at any depth) are errors, as is
// an api_key field (keys live in the environment); defaults are filled,
// relative paths resolved against the file's directory, policies × prompts
// expanded into conditions, and the result validated.
func Load(path string) (*Study, error) {
	b, err := readCapped(path, MaxStudyBytes)
	if err != nil {
		return nil, fmt.Errorf("study: %w", err)
	}
	s, err := parse(b)
	if err != nil {
		return nil, fmt.Errorf("study %s: %w", path, err)
	}
	if o, ok := origins.Load(s); ok {
		o.(*origin).file = path
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	if s.DB == "" {
		s.DB = DefaultDB
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("study %s: %w", path, err)
	}
	for _, p := range []*string{&s.Manifest, &s.Prompts, &s.DB} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("study %s: %w", path, err)
	}
	return s, nil
}

// parse decodes a study document and fills defaults (without paths).
func parse(b []byte) (*Study, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStudy, err)
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, fmt.Errorf("%w: the file is empty", ErrStudy)
	}
	doc := root.Content[0]
	if err := refuseKeys(doc); err != nil {
		return nil, err
	}
	var s Study
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStudy, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: more than one YAML document", ErrStudy)
	}
	if errs := wholeNumbers(doc, reflect.TypeOf(s), ""); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	o := &origin{lines: map[string]int{}}
	o.record(doc, "")
	origins.Store(&s, o)
	if mapValue(doc, "repetitions") == nil {
		s.Repetitions = DefaultRepetitions
	}
	if ms := mapValue(doc, "models"); ms != nil && ms.Kind == yaml.SequenceNode {
		for i, mn := range ms.Content {
			if i < len(s.Models) && mapValue(mn, "max_retries") == nil {
				s.Models[i].MaxRetries = DefaultMaxRetries
			}
		}
	}
	s.SetDefaults()
	return &s, nil
}

// refuseKeys stops a document that holds a credential field, before the
// decoder would report it as merely unknown. The value is never quoted.
func refuseKeys(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			switch strings.ToLower(n.Content[i].Value) {
			case "api_key", "apikey", "api-key", "key", "token", "authorization", "password", "secret":
				return fmt.Errorf("%w: line %d: field %q is not accepted: keep the API key in an environment variable and put that variable's name in api_key_env", ErrStudy, n.Content[i].Line, n.Content[i].Value)
			}
		}
	}
	for _, c := range n.Content {
		if err := refuseKeys(c); err != nil {
			return err
		}
	}
	return nil
}

// mapValue is the value node of key in a mapping node, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// SetDefaults fills the zero fields that have a default (docs/study.md)
// and appends Policies × PromptNames to Conditions, clearing both lists.
// Repetitions and MaxRetries are left alone: their zero is a value (Load
// fills them only when the file omits them).
func (s *Study) SetDefaults() {
	for i := range s.Models {
		m := &s.Models[i]
		if m.ModelID == "" {
			m.ModelID = m.Name
		}
		if m.Provider == ProviderGemini {
			// Gemini takes the clip itself; its documented video rate is
			// 258 tokens per sampled frame at the default media resolution.
			m.Video.Supported = true
			if m.Video.TokensPerFrame == 0 {
				m.Video.TokensPerFrame = GeminiTokensPerFrame
			}
			if m.BaseURL == "" {
				m.BaseURL = client.DefaultGeminiBaseURL
			}
		}
		if m.LimitMode == "" {
			m.LimitMode = DefaultLimitMode
		}
		if m.ImageFormat == "" {
			m.ImageFormat = DefaultImageFormat
		}
		if m.JPEGQuality == 0 {
			m.JPEGQuality = DefaultJPEGQuality
		}
		if m.Video.Supported && m.Video.Part == "" && m.ProviderName() == ProviderOpenAI {
			m.Video.Part = DefaultVideoPart
		}
		if m.ImageTokens.Rule == "" {
			m.ImageTokens.Rule = RuleOpenAITiles
		}
		m.ImageTokens = m.ImageTokens.withDefaults()
		if m.Concurrency == 0 {
			m.Concurrency = DefaultConcurrency
		}
		if m.TimeoutSeconds == 0 {
			m.TimeoutSeconds = DefaultTimeoutSeconds
		}
	}
	if len(s.Policies) > 0 && len(s.PromptNames) > 0 {
		// A YAML flow list [fps:2,max:768] splits at every comma.
		for _, p := range sampling.SplitList(s.Policies) {
			for _, q := range s.PromptNames {
				s.Conditions = append(s.Conditions, Condition{Policy: p, Prompt: q})
			}
		}
		s.Policies, s.PromptNames = nil, nil
	}
	for i := range s.Conditions {
		s.Conditions[i] = s.Conditions[i].WithDefaults()
	}
}

// withDefaults fills the zero parameters of the chosen rule.
func (r ImageTokenRule) withDefaults() ImageTokenRule {
	set := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	switch r.Rule {
	case RuleOpenAITiles, "":
		set(&r.TilePx, 512)
		set(&r.BaseTokens, 85)
		set(&r.TileTokens, 170)
		set(&r.LowTokens, 85)
		set(&r.MaxSide, 2048)
		set(&r.ShortSide, 768)
	case RuleOpenAIPatches:
		set(&r.PatchPx, 32)
		set(&r.MaxPatches, 1536)
		if r.Multiplier == 0 {
			r.Multiplier = 1
		}
	case RulePerPixel:
		if r.PixelsPerToken == 0 {
			r.PixelsPerToken = 750
		}
	}
	return r
}

// PromptSet returns the templates the study uses: the built-ins, with the
// study's templates file over them when it names one.
func (s *Study) PromptSet() (*prompts.Set, error) {
	if s.Prompts == "" {
		return prompts.Default(), nil
	}
	return prompts.Load(s.Prompts)
}

// APIKey reads the model's key from the environment variable APIKeyEnv
// (surrounding white space trimmed). With no APIKeyEnv the model takes no
// key and APIKey returns "". An unset or empty variable, or a key shorter
// than client.MinAPIKeyLength characters, is an error that names the
// variable (never a value) and wraps ErrNoAPIKey.
func (m Model) APIKey() (string, error) {
	if m.APIKeyEnv == "" {
		return "", nil
	}
	v, ok := os.LookupEnv(m.APIKeyEnv)
	v = strings.TrimSpace(v)
	if !ok || v == "" {
		return "", fmt.Errorf("model %s: %w: environment variable %s is not set or empty (api_key_env names the variable that holds the key)", m.Name, ErrNoAPIKey, m.APIKeyEnv)
	}
	if utf8.RuneCountInString(v) < client.MinAPIKeyLength {
		// Neither the value nor its length is quoted.
		return "", fmt.Errorf("model %s: %w: environment variable %s holds a key shorter than %d characters, too short to redact from error texts safely; start the server with a longer key (vLLM: --api-key), or leave api_key_env out if the server checks none", m.Name, ErrNoAPIKey, m.APIKeyEnv, client.MinAPIKeyLength)
	}
	return v, nil
}

var (
	// geminiVersioned matches a base_url path that ends in an API version.
	geminiVersioned = regexp.MustCompile(`/v1(alpha|beta)?\d*/?$`)
	namePattern     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)
	envPattern      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// secretQuery matches query parameter names that carry credentials.
	secretQuery = regexp.MustCompile(`(?i)key|token|secret|sig|pass|auth`)
)

// Validate checks the study and returns every problem found, each
// wrapping ErrStudy and naming the field (models[i] (name).field). It
// loads the templates file to check prompt names.
func (s *Study) Validate() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrStudy}, a...)...))
	}
	if s.Name == "" {
		bad("name is empty")
	} else if !namePattern.MatchString(s.Name) {
		bad("name %q: use letters, digits, '_', '.', '+', '-'", s.Name)
	}
	if s.Manifest == "" {
		bad("manifest is empty: give the manifest.jsonl of the clips")
	}
	seenClip := map[string]bool{}
	for i, c := range s.Clips {
		switch {
		case c == "":
			bad("clips[%d] is empty", i)
		case seenClip[c]:
			bad("clips[%d]: clip %q listed twice", i, c)
		}
		seenClip[c] = true
	}
	if len(s.Models) == 0 {
		bad("no models: give at least one under models")
	}
	seenModel := map[string]int{}
	for i, m := range s.Models {
		if j, ok := seenModel[m.Name]; ok && m.Name != "" {
			bad("models[%d]: name %q already used by models[%d]", i, m.Name, j)
		} else {
			seenModel[m.Name] = i
		}
		for _, err := range m.validate() {
			bad("models[%d] (%s): %v", i, m.Name, err)
		}
	}
	if s.Repetitions < 1 {
		bad("repetitions %d: must be at least 1", s.Repetitions)
	}
	for _, err := range s.Decoding.validate("decoding.", "") {
		bad("%v", err)
	}
	for i, m := range s.Models {
		if m.Decoding != nil {
			for _, err := range m.Decoding.validate("decoding.", "") {
				bad("models[%d] (%s): %v", i, m.Name, err)
			}
		}
		for _, err := range s.Decoding.Over(m.Decoding).validate("decoding: ", m.ProviderName()) {
			bad("models[%d] (%s): %v", i, m.Name, err)
		}
	}
	if !(s.MaxUSD >= 0) || math.IsInf(s.MaxUSD, 0) {
		bad("max_usd %v: must be 0 (no cap) or a positive number of dollars", s.MaxUSD)
	}
	if (len(s.Policies) > 0) != (len(s.PromptNames) > 0) {
		bad("policies and prompts go together (every policy with every prompt); give both or use conditions")
	}
	conds := append([]Condition(nil), s.Conditions...)
	for _, p := range sampling.SplitList(s.Policies) {
		for _, q := range s.PromptNames {
			conds = append(conds, Condition{Policy: p, Prompt: q})
		}
	}
	if len(conds) == 0 {
		bad("no conditions: give conditions (policy, prompt) or policies and prompts")
	}
	set, err := s.PromptSet()
	if err != nil {
		bad("templates: %v", err)
	}
	seenCond := map[Condition]int{}
	for i, c := range conds {
		c = c.WithDefaults()
		if err := chatLabelsOK(c); err != nil {
			bad("conditions[%d]: %v", i, err)
		}
		pol, err := sampling.Parse(c.Policy)
		if err != nil {
			bad("conditions[%d]: %v", i, err)
		} else {
			for _, err := range s.checkSendAs(c, pol) {
				bad("conditions[%d] (%s): %v", i, c.Policy, err)
			}
			if r, ok := NativeRate(pol); ok {
				for mi, m := range s.Models {
					if err := m.checkVideoRate(r); err != nil {
						bad("conditions[%d] (%s) with models[%d] (%s): %v", i, c.Policy, mi, m.Name, err)
					}
				}
			}
			key := Condition{Policy: pol.String(), Labels: c.Labels, Prompt: c.Prompt, SendAs: c.SendAs}
			if j, ok := seenCond[key]; ok {
				bad("conditions[%d]: policy %s with labels %s and prompt %s repeats conditions[%d]", i, c.Policy, c.Labels, c.Prompt, j)
			} else {
				seenCond[key] = i
			}
		}
		if set != nil {
			if _, err := set.Get(c.Prompt); err != nil {
				bad("conditions[%d]: %v", i, err)
			}
		}
	}
	return errors.Join(errs...)
}

// validate returns the model's problems.
func (m Model) validate() []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if m.Name == "" {
		bad("name is empty")
	} else if !namePattern.MatchString(m.Name) {
		bad("name %q: use letters, digits, '_', '.', '+', '-'", m.Name)
	}
	switch m.ProviderName() {
	case ProviderOpenAI:
		if err := checkBaseURL(m.BaseURL); err != nil {
			errs = append(errs, err)
		}
		if m.Video.Part != "" && m.Video.Part != DefaultVideoPart {
			bad("video.part %q: the client sends video only as %s", m.Video.Part, DefaultVideoPart)
		}
	case ProviderGemini:
		if m.BaseURL != "" {
			if err := checkBaseURL(m.BaseURL); err != nil {
				errs = append(errs, err)
			} else if u, _ := url.Parse(m.BaseURL); geminiVersioned.MatchString(u.Path) {
				bad("base_url: give the Gemini API root without its version (e.g. https://generativelanguage.googleapis.com/); the SDK adds v1beta")
			}
		}
		if m.Video.Part != "" {
			bad("video.part %q: a gemini model takes the video as an inline part or a Files API upload; leave video.part out", m.Video.Part)
		}
	default:
		bad("provider %q: want %s or %s", m.Provider, ProviderOpenAI, ProviderGemini)
	}
	if m.ProviderName() == ProviderOpenAI || m.ProviderName() == ProviderGemini {
		if err := client.CheckExtraBody(m.ProviderName(), m.ExtraBody); err != nil {
			errs = append(errs, errors.New(strings.TrimPrefix(err.Error(), "client: ")))
		}
	}
	errs = append(errs, m.checkServer()...)
	if p := m.Prices.BatchDiscount; p != nil && !(*p >= 0 && *p <= 1) {
		bad("prices.batch_discount %v: must be in [0, 1] (the batch price over the online price)", *p)
	}
	if m.APIKeyEnv != "" && !envPattern.MatchString(m.APIKeyEnv) {
		// The value is not quoted: a key pasted here must not reach a log.
		bad("api_key_env is not an environment variable name (letters, digits, '_'); it names the variable holding the key, never the key itself")
	}
	if m.ModelID == "" {
		bad("model_id is empty")
	}
	if m.MaxImages < 0 {
		bad("max_images %d: must be 0 (no cap) or positive", m.MaxImages)
	}
	if m.LimitMode != "refuse" && m.LimitMode != "thin" {
		bad("limit_mode %q: want refuse or thin", m.LimitMode)
	}
	w, h := m.ImageWidth, m.ImageHeight
	switch {
	case w == 0 && h == 0:
	case w <= 0 || h <= 0:
		bad("image size %dx%d: give image_width and image_height both positive, or neither", w, h)
	case w%2 != 0 || h%2 != 0:
		bad("image size %dx%d: width and height must be even", w, h)
	case w > 8192 || h > 8192:
		bad("image size %dx%d: at most 8192 on a side", w, h)
	}
	switch m.Detail {
	case "", "low", "high", "auto":
	default:
		bad("detail %q: want low, high or auto (or leave it out)", m.Detail)
	}
	switch m.ImageFormat {
	case "jpg", "jpeg", "png":
	default:
		bad("image_format %q: want jpg or png", m.ImageFormat)
	}
	if m.JPEGQuality < 0 || m.JPEGQuality > 100 {
		bad("jpeg_quality %d: must be in 1–100", m.JPEGQuality)
	}
	v := m.Video
	if !(v.Rate >= 0) || math.IsInf(v.Rate, 0) {
		bad("video.rate %v: must be 0 (the policy's rate) or positive", v.Rate)
	}
	if v.TokensPerFrame < 0 {
		bad("video.tokens_per_frame %d: must be 0 (image rule) or positive", v.TokensPerFrame)
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"prices.input_per_mtok", m.Prices.InputPerMTok}, {"prices.output_per_mtok", m.Prices.OutputPerMTok}} {
		if !(p.v >= 0) || math.IsInf(p.v, 0) {
			bad("%s %v: must be zero or positive", p.name, p.v)
		}
	}
	if err := m.ImageTokens.validate(); err != nil {
		errs = append(errs, err)
	}
	if m.Concurrency < 0 {
		bad("concurrency %d: must be positive", m.Concurrency)
	}
	if m.RequestsPerMinute < 0 {
		bad("requests_per_minute %d: must be 0 (no limit) or positive", m.RequestsPerMinute)
	}
	if m.TokensPerMinute < 0 {
		bad("tokens_per_minute %d: must be 0 (no limit) or positive", m.TokensPerMinute)
	}
	if !(m.TimeoutSeconds >= 0) || math.IsInf(m.TimeoutSeconds, 0) {
		bad("timeout_seconds %v: must be positive", m.TimeoutSeconds)
	}
	if m.MaxRetries < 0 {
		bad("max_retries %d: must be 0 or positive", m.MaxRetries)
	}
	if !(m.MaxRetryWaitSeconds >= 0) || m.MaxRetryWaitSeconds > MaxRetryWaitCeiling {
		bad("max_retry_wait_seconds %v: must be 0 (the default, %d s) or positive, at most %d", m.MaxRetryWaitSeconds, DefaultMaxRetryWaitSeconds, MaxRetryWaitCeiling)
	}
	if !(m.DeadlineSeconds >= 0) || math.IsInf(m.DeadlineSeconds, 0) {
		bad("deadline_seconds %v: must be 0 (timeout_seconds × (max_retries + 1)) or positive", m.DeadlineSeconds)
	}
	return errs
}

// NativeRate is R of a native[:R] policy; ok is false for other policies.
func NativeRate(p sampling.Policy) (float64, bool) {
	r, ok := strings.CutPrefix(p.String(), "native:")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(r, 64)
	return v, err == nil
}

// VideoFPSParam is the sampling rate an openai model's extra_body asks a
// vLLM server for (mm_processor_kwargs.fps); ok is false when it sets
// none.
func (m Model) VideoFPSParam() (float64, bool) {
	kw, _ := m.ExtraBody["mm_processor_kwargs"].(map[string]any)
	switch v := kw["fps"].(type) {
	case int:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}

// checkVideoRate refuses a native:R condition the model would sample at
// another rate than R: a Gemini model takes R as videoMetadata.fps, which
// must lie in (0, 24]; a vLLM model whose extra_body fixes
// mm_processor_kwargs.fps samples at that rate, so R must equal it (else
// the condition's name would not say what the model saw).
func (m Model) checkVideoRate(r float64) error {
	if !m.Video.Supported {
		return nil
	}
	switch m.ProviderName() {
	case ProviderGemini:
		if r > client.MaxGeminiVideoFPS {
			return fmt.Errorf("Gemini's videoMetadata.fps must be in (0, %d]; %v is above it", client.MaxGeminiVideoFPS, r)
		}
	case ProviderOpenAI:
		if fps, ok := m.VideoFPSParam(); ok && fps != r {
			return fmt.Errorf("extra_body.mm_processor_kwargs.fps %v makes the server sample the video at %v per second, not the policy's %v; use native:%v or change the fps", fps, fps, r, fps)
		}
	}
	return nil
}

// checkBaseURL accepts an http(s) URL with a host and no credentials. Its
// errors never quote the URL, which might hold a key.
func checkBaseURL(raw string) error {
	if raw == "" {
		return errors.New("base_url is empty: give the API's URL, e.g. http://127.0.0.1:8089/v1")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("base_url does not parse as a URL")
	}
	if u.User != nil {
		return errors.New("base_url must not carry credentials (user:password@host): keep the key in the environment variable named by api_key_env")
	}
	for k := range u.Query() {
		if secretQuery.MatchString(k) {
			return fmt.Errorf("base_url must not carry credentials (query parameter %s): keep the key in the environment variable named by api_key_env", strconv.Quote(k))
		}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("base_url scheme %q: want http or https (e.g. http://127.0.0.1:8089/v1)", u.Scheme)
	}
	if u.Host == "" {
		return errors.New("base_url has no host")
	}
	return nil
}

// validate checks the rule's name and the parameters it reads.
func (r ImageTokenRule) validate() error {
	d := r.withDefaults()
	switch r.Rule {
	case RuleOpenAITiles, "":
		if d.TilePx < 0 || d.BaseTokens < 0 || d.TileTokens < 0 || d.LowTokens < 0 || d.MaxSide < 0 || d.ShortSide < 0 {
			return errors.New("image_tokens: openai_tiles parameters must be positive")
		}
	case RuleOpenAIPatches:
		if d.PatchPx < 0 || d.MaxPatches < 0 || !(d.Multiplier > 0) || math.IsInf(d.Multiplier, 0) {
			return errors.New("image_tokens: openai_patches parameters must be positive")
		}
	case RulePerPixel:
		if !(d.PixelsPerToken > 0) || math.IsInf(d.PixelsPerToken, 0) {
			return fmt.Errorf("image_tokens: pixels_per_token %v must be positive", r.PixelsPerToken)
		}
	case RuleFixed:
		if r.Fixed <= 0 {
			return fmt.Errorf("image_tokens: rule fixed needs fixed > 0 tokens per image (got %d)", r.Fixed)
		}
	default:
		return fmt.Errorf("image_tokens: unknown rule %q (want %s, %s, %s or %s)", r.Rule, RuleOpenAITiles, RuleOpenAIPatches, RulePerPixel, RuleFixed)
	}
	return nil
}

// readCapped reads a file of at most limit bytes; a larger one (or an
// endless one, /dev/zero) is an error, read no further than limit+1.
func readCapped(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: %s is larger than %d KiB, the most a study file may be", ErrStudy, path, limit>>10)
	}
	return b, nil
}

// wholeNumbers refuses a float where the study has an integer field
// (yaml.v3 would truncate repetitions: 2.9 to 2): every scalar tagged
// !!float that decodes into an int or uint field, at any depth, is an
// error naming its line and field. It follows the Go types, so fields added
// later are covered.
func wholeNumbers(n *yaml.Node, t reflect.Type, path string) []error {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var errs []error
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		fields := map[string]reflect.Type{}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name != "" && name != "-" {
				fields[name] = f.Type
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if ft, ok := fields[n.Content[i].Value]; ok {
				errs = append(errs, wholeNumbers(n.Content[i+1], ft, join(path, n.Content[i].Value))...)
			}
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, c := range n.Content {
			errs = append(errs, wholeNumbers(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))...)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			errs = append(errs, wholeNumbers(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value))...)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!float" {
			errs = append(errs, fmt.Errorf("%w: line %d: %s: %s is not a whole number", ErrStudy, n.Line, path, n.Value))
		}
	}
	return errs
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// origin is where a loaded study came from: its file and the line of each
// field ("repetitions", "clips[2]", "models[0].concurrency"). It is kept
// beside the Study (origins), not in it, so that a study read back from
// its YAML or JSON compares equal to the one written.
type origin struct {
	file  string
	lines map[string]int
}

// origins maps each *Study made by Load or parse to its origin. Studies
// are few per process; entries are never removed.
var origins sync.Map

func (o *origin) record(n *yaml.Node, path string) {
	if n == nil {
		return
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if path != "" {
		if _, ok := o.lines[path]; !ok {
			o.lines[path] = n.Line
		}
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			o.record(n.Content[i+1], join(path, n.Content[i].Value))
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			o.record(c, fmt.Sprintf("%s[%d]", path, i))
		}
	}
}

// Position says where a field of a loaded study is written: "FILE:LINE",
// "FILE" when the line is unknown, "" for a study not read from a file.
// field is a path such as "clips[2]" or "models[0].concurrency".
func (s *Study) Position(field string) string {
	v, ok := origins.Load(s)
	if !ok {
		return ""
	}
	o := v.(*origin)
	if line, ok := o.lines[field]; ok && o.file != "" {
		return fmt.Sprintf("%s:%d", o.file, line)
	}
	return o.file
}

// FieldError is an error about one field of the study, wrapping ErrStudy
// and naming the file and line where it is written when known:
// "invalid study: pilot.yaml:7: clips[2]: …".
func (s *Study) FieldError(field string, err error) error {
	if pos := s.Position(field); pos != "" {
		return fmt.Errorf("%w: %s: %s: %w", ErrStudy, pos, field, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrStudy, field, err)
}
