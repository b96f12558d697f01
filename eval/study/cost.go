package study

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/message"

	dom "github.com/tracegrid/tracegrid/domain"
	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/sampling"
)

// EstimateImageTokens is the input tokens of one width×height image sent
// to m, by m's image token rule (zero parameters take the rule's
// defaults):
//
//   - openai_tiles, OpenAI's published rule for GPT-4o-class models
//     (platform.openai.com/docs/guides/images-vision, "Calculating costs"):
//     detail "low" costs LowTokens (85) whatever the size; otherwise (high,
//     auto or none, estimated as high) the image is scaled down to fit
//     2048×2048, then down so its shorter side is at most 768 px (up to
//     768 as well with Upscale), and costs 85 + 170 per 512-px tile
//     covering it. OpenAI's examples: 1024×1024 → 765, 2048×4096 → 1105.
//     A 854×480 frame: 2 tiles, 425. gpt-4o-mini bills the same image
//     with base_tokens 2833 and tile_tokens 5667.
//   - openai_patches, OpenAI's published rule for the patch-based models
//     (gpt-4.1-mini/nano, o4-mini; same page): ⌈w/32⌉·⌈h/32⌉ patches;
//     above 1536 the image is scaled by √(1536·32²/(w·h)), then a little
//     more so its width is a whole number of patches, and counted again;
//     the patches are multiplied by Multiplier (1.62 for gpt-4.1-mini,
//     2.46 for gpt-4.1-nano) and rounded up. Examples: 1024×1024 → 1024,
//     1800×2400 → 1452.
//   - per_pixel: ⌈w·h / PixelsPerToken⌉ (750: Anthropic's published
//     approximation; 784 = 28×28 approximates Qwen2-VL's patch merging).
//   - fixed: Fixed tokens per image (Gemini documents 258 for an image of
//     at most 384 px on each side).
//
// A non-positive size costs 0.
func EstimateImageTokens(m Model, width, height int) int {
	if width <= 0 || height <= 0 {
		return 0
	}
	r := m.ImageTokens.withDefaults()
	switch r.Rule {
	case RuleFixed:
		return r.Fixed
	case RulePerPixel:
		return int(math.Ceil(float64(width) * float64(height) / r.PixelsPerToken))
	case RuleOpenAIPatches:
		return openAIPatches(r, width, height)
	}
	if m.Detail == "low" {
		return r.LowTokens
	}
	w, h := float64(width), float64(height)
	if long := math.Max(w, h); long > float64(r.MaxSide) {
		s := float64(r.MaxSide) / long
		w, h = math.Round(w*s), math.Round(h*s)
	}
	if short := math.Min(w, h); short > float64(r.ShortSide) || (r.Upscale && short < float64(r.ShortSide)) {
		s := float64(r.ShortSide) / short
		w, h = math.Round(w*s), math.Round(h*s)
	}
	tiles := ceilDiv(int(w), r.TilePx) * ceilDiv(int(h), r.TilePx)
	return r.BaseTokens + r.TileTokens*tiles
}

func openAIPatches(r ImageTokenRule, width, height int) int {
	p := float64(r.PatchPx)
	patches := ceilDiv(width, r.PatchPx) * ceilDiv(height, r.PatchPx)
	if patches > r.MaxPatches {
		w, h := float64(width), float64(height)
		s := math.Sqrt(float64(r.MaxPatches) * p * p / (w * h))
		w, h = w*s, h*s
		// Shrink further so the width is a whole number of patches.
		pw := w / p
		s2 := math.Floor(pw) / pw
		w, h = w*s2, h*s2
		patches = ceilEps(w/p) * ceilEps(h/p)
	}
	return int(math.Ceil(float64(patches)*r.Multiplier - 1e-9))
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// ceilEps rounds up, forgiving float error just above a whole number.
func ceilEps(x float64) int { return int(math.Ceil(x - 1e-6)) }

// EstimateTextTokens estimates the tokens of s by the rule of thumb of
// about four characters per token of English text (OpenAI's tokenizer
// guidance), counted in UTF-8 bytes and rounded up; it overestimates text
// with many non-ASCII characters, which is the safe side for a budget.
func EstimateTextTokens(s string) int { return (len(s) + 3) / 4 }

// messageOverheadTokens is added per message for the role and framing
// tokens chat formats add (OpenAI counts about 3–4).
const messageOverheadTokens = 4

// DefaultOutputTokens is the output tokens per request DryRun assumes when
// decoding.max_tokens is not set: by built-in prompt (a bare answer, a
// ledger, a reasoning chain), else by family. They are rough: the paper's
// Gemini runs averaged about 820 output tokens per structured-trace trial
// and about 900 over its prompting conditions (low-frequency-trap
// Appendix D, Table 10); reasoning models bill hidden thinking as output,
// so set max_tokens for an upper bound.
func DefaultOutputTokens(t prompts.Template) int {
	switch t.Name {
	case "direct", "natural_direct":
		return 50
	case "countvideobench":
		// The bare question: "typically short natural-language sentences
		// containing the predicted count" (CountVideoBench §5.1).
		return 100
	case "zero_shot":
		return 300
	case "role_prompting":
		return 400
	case "structured_trace", "multi_turn_verification":
		return 800
	case "thinking", "cot":
		return 1500
	}
	return 800
}

// ClipInfo is what a dry run needs to know of a clip.
type ClipInfo struct {
	ID string `json:"id"`
	// Domain selects the question (bounce_ball, blinking, state_machine,
	// natural, objects); empty takes the known domain the ID starts with.
	Domain string `json:"domain"`
	// Class is an objects clip's "<shape>-<colour>", which its question
	// names; empty takes it from an objects clip id
	// (objects_N<nn>_<shape>-<colour>_s<seed>).
	Class    string  `json:"class,omitempty"`
	Duration float64 `json:"duration"` // seconds
	FPS      float64 `json:"fps"`
	// N is the true event count; Events its times (keyframes and
	// single:best read them).
	N      int       `json:"n"`
	Events []float64 `json:"events"`
	// Width and Height of the clip's frames (the images' size when the
	// model sets none; the native video's size).
	Width  int `json:"width"`
	Height int `json:"height"`
	Seed   int `json:"seed"`
}

// Estimate is the predicted load and cost of one model under one
// condition over all clips and repetitions.
type Estimate struct {
	Model  string `json:"model"`
	Policy string `json:"policy"`
	Prompt string `json:"prompt"`
	// Requests sent: trials × turns (2 for a template with a follow-up).
	Requests int `json:"requests"`
	// Images sent, summed over requests (a second turn sends the first
	// turn's images again).
	Images int `json:"images"`
	// VideoFrames the server samples from native videos, summed over
	// requests (in InputTokens, not in Images).
	VideoFrames int `json:"video_frames,omitempty"`
	// Refused trials: the plan exceeds max_images under limit_mode refuse,
	// so nothing is sent (and nothing paid).
	Refused int `json:"refused,omitempty"`
	// Unsupported trials: a policy that places frames at the true events
	// (keyframes) on a clip without events (objects); the runner records
	// them as failed without sending anything.
	Unsupported  int     `json:"unsupported,omitempty"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	USD          float64 `json:"usd"`
}

// DryRun estimates every model × condition (model-major, conditions in the
// study's order) over the clips, without sending anything:
//
//   - trials = clips × repetitions, requests = trials × turns;
//   - a native[:R] policy for a model with video support sends the video:
//     ⌈D·rate⌉ sampled frames (rate = video.rate, else R) at
//     video.tokens_per_frame each (a gemini model's default: 258, Google's
//     documented rate), else at the image rule's cost for the clip's frame
//     size;
//   - a condition sent as video (as: video) sends the policy's plan for
//     the clip as one video: every planned frame is a video frame (no
//     image cap), at video.tokens_per_frame each, else at the image rule's
//     cost for the model's image size (else the clip's);
//   - otherwise the frames are the policy's plan for the clip after the
//     model's image cap (sampling.ApplyLimit); adaptive:B, which needs
//     pixels, is estimated as B uniformly spaced frames (at most the
//     clip's frame count); each image costs EstimateImageTokens at the
//     model's image size (else the clip's);
//   - text tokens are EstimateTextTokens of every text part the template
//     actually builds (instructions, frame labels) plus 4 per message;
//   - output tokens per request are the model's decoding.max_tokens
//     (DecodingFor) when set, else DefaultOutputTokens; a second turn's
//     input is the first turn's input and output plus the follow-up;
//   - dollars = input/10⁶ · input price + output/10⁶ · output price.
//
// set is the study's prompt set; nil loads it (PromptSet).
func (s *Study) DryRun(clips []ClipInfo, set *prompts.Set) ([]Estimate, error) {
	if set == nil {
		var err error
		if set, err = s.PromptSet(); err != nil {
			return nil, err
		}
	}
	reps := max(1, s.Repetitions)
	var out []Estimate
	for _, m := range s.Models {
		for _, c := range s.Conditions {
			tmpl, err := set.Get(c.Prompt)
			if err != nil {
				return nil, err
			}
			pol, err := sampling.Parse(c.Policy)
			if err != nil {
				return nil, err
			}
			outTok := s.DecodingFor(m).MaxTokens
			if outTok <= 0 {
				outTok = DefaultOutputTokens(tmpl)
			}
			turns := tmpl.Turns()
			e := Estimate{Model: m.Name, Policy: c.Policy, Prompt: c.Prompt}
			for _, clip := range clips {
				r, err := estimateTrial(m, pol, tmpl, clip, outTok, c.Video())
				if err != nil {
					return nil, fmt.Errorf("dry run: model %s, %s × %s, clip %s: %w", m.Name, c.Policy, c.Prompt, clip.ID, err)
				}
				if r.refused {
					e.Refused += reps
					continue
				}
				if r.unsupported {
					e.Unsupported += reps
					continue
				}
				e.Requests += reps * turns
				e.Images += reps * turns * r.images
				e.VideoFrames += reps * turns * r.videoFrames
				in := r.input
				if turns == 2 {
					in = 2*r.input + outTok + r.followUp
				}
				e.InputTokens += reps * in
				e.OutputTokens += reps * turns * outTok
			}
			e.USD = m.Prices.Cost(e.InputTokens, e.OutputTokens, 1)
			out = append(out, e)
		}
	}
	return out, nil
}

// trialEstimate is one trial's first request.
type trialEstimate struct {
	refused, unsupported bool
	images, videoFrames  int
	input, followUp      int // tokens
}

// Placeholder URLs: a dry run builds the real text with empty images.
const (
	placeholderImage = "data:image/jpeg;base64,"
	placeholderVideo = "data:video/mp4;base64,"
)

func estimateTrial(m Model, pol sampling.Policy, tmpl prompts.Template, c ClipInfo, outTok int, asVideo bool) (trialEstimate, error) {
	var r trialEstimate
	domain := c.Domain
	if domain == "" {
		for d := range prompts.Questions() {
			if strings.HasPrefix(c.ID, d+"_") && len(d) > len(domain) {
				domain = d
			}
		}
		if domain == "" {
			return r, fmt.Errorf("no domain given and none known in the id")
		}
	}
	in := prompts.Input{Domain: domain, Class: c.Class, Duration: c.Duration, Detail: m.Detail}
	if domain == prompts.DomainObjects && in.Class == "" {
		in.Class = classFromID(c.ID)
	}
	name := pol.String()
	imageTokens := 0
	if asVideo {
		// The policy's frames as one video: every planned frame is a video
		// frame (no image cap, which would break the constant rate).
		plan, err := planFor(pol, c, domain == prompts.DomainObjects)
		if err != nil {
			return r, err
		}
		if _, err := VideoRate(plan, c.Duration); err != nil {
			return r, err
		}
		r.videoFrames = len(plan.Frames)
		per := m.Video.TokensPerFrame
		if per <= 0 {
			w, h := m.ImageWidth, m.ImageHeight
			if w <= 0 || h <= 0 {
				w, h = c.Width, c.Height
			}
			per = EstimateImageTokens(m, w, h)
		}
		imageTokens = r.videoFrames * per
		in.VideoURL = placeholderVideo
	} else if m.Video.Supported && strings.HasPrefix(name, "native:") {
		rate := m.Video.Rate
		if rate <= 0 {
			rate, _ = strconv.ParseFloat(strings.TrimPrefix(name, "native:"), 64)
		}
		r.videoFrames = int(math.Ceil(c.Duration*rate - 1e-9))
		per := m.Video.TokensPerFrame
		if per <= 0 {
			per = EstimateImageTokens(m, c.Width, c.Height)
		}
		imageTokens = r.videoFrames * per
		in.VideoURL = placeholderVideo
	} else if domain == prompts.DomainObjects && EventPolicy(pol) {
		r.unsupported = true
		return r, nil
	} else if dom.Of(domain).MissingEvents(c.N, len(c.Events)) && (EventPolicy(pol) || name == "single:best") {
		// A natural video annotated with its count alone: the runner
		// records keyframes and single:best as not applicable.
		r.unsupported = true
		return r, nil
	} else {
		plan, err := planFor(pol, c, domain == prompts.DomainObjects)
		if err != nil {
			return r, err
		}
		if plan, err = sampling.ApplyLimit(plan, m.MaxImages, m.LimitMode); err != nil {
			r.refused = true
			return r, nil
		}
		w, h := m.ImageWidth, m.ImageHeight
		if w <= 0 || h <= 0 {
			w, h = c.Width, c.Height
		}
		if (w <= 0 || h <= 0) && len(plan.Frames) > 0 {
			return r, fmt.Errorf("no frame size: the clip gives none and the model sets no image_width/image_height")
		}
		r.images = len(plan.Frames)
		imageTokens = r.images * EstimateImageTokens(m, w, h)
		for _, f := range plan.Frames {
			in.Frames = append(in.Frames, prompts.Frame{Position: f.Position, T: f.T, DataURL: placeholderImage})
		}
	}
	msgs, err := tmpl.Build(in)
	if err != nil {
		return r, err
	}
	r.input = textTokens(msgs) + imageTokens
	if fu, ok := tmpl.FollowUpMessage(in); ok {
		r.followUp = textTokens([]chat.Message{fu}) + messageOverheadTokens // + the assistant reply's framing
	}
	return r, nil
}

// EventPolicy reports whether a policy places its frames at the clip's
// true event times (keyframes[:O]). On a static-object clip, which has no
// events, it would show no frames at all, so such a trial is not sent: the
// runner records it as failed (invalid request) and a dry run counts it as
// unsupported. single:best, which also reads events, falls back to the
// middle frame of a clip without events.
func EventPolicy(p sampling.Policy) bool { return strings.HasPrefix(p.String(), "keyframes") }

// classFromID reads the class of an objects clip id
// (objects_N<nn>_<shape>-<colour>_s<seed>); "" when it holds none, and
// prompts.Build then names the missing class.
func classFromID(id string) string {
	parts := strings.Split(id, "_")
	if len(parts) == 4 && parts[0] == prompts.DomainObjects && prompts.CheckClass(parts[2]) == nil {
		return parts[2]
	}
	return ""
}

// planFor is the policy's plan; adaptive:B becomes B uniform frames. An
// objects clip has no events by design, so single:best is not refused for
// their absence (it shows one frame either way, which is all a cost needs).
func planFor(pol sampling.Policy, c ClipInfo, objects bool) (sampling.Plan, error) {
	sc := sampling.Clip{ID: c.ID, Duration: c.Duration, FPS: c.FPS, Seed: c.Seed, Events: c.Events}
	name := pol.String()
	if b, ok := strings.CutPrefix(name, "adaptive:"); ok {
		budget, err := strconv.Atoi(b)
		if err != nil {
			return sampling.Plan{}, err
		}
		if !(c.Duration > 0) || !(c.FPS > 0) {
			return sampling.Plan{}, fmt.Errorf("clip needs a positive duration and frame rate (got %v s, %v fps)", c.Duration, c.FPS)
		}
		budget = min(budget, max(1, int(math.Ceil(c.Duration*c.FPS-1e-9))))
		p := sampling.Plan{Policy: name}
		for j := range budget {
			p.Frames = append(p.Frames, sampling.Frame{Index: j, Position: j, T: float64(j) * c.Duration / float64(budget)})
		}
		return p, nil
	}
	if (strings.HasPrefix(name, "keyframes") || name == "single:best") && len(c.Events) != c.N && !objects {
		return sampling.Plan{}, fmt.Errorf("%s reads the event times: N=%d but %d given", name, c.N, len(c.Events))
	}
	return pol.Plan(sc)
}

func textTokens(msgs []chat.Message) int {
	n := 0
	for _, m := range msgs {
		n += messageOverheadTokens
		for _, p := range m.Parts {
			if p.Type == chat.TypeText {
				n += EstimateTextTokens(p.Text)
			}
		}
	}
	return n
}

// WriteEstimates writes the estimates as an aligned text table — model,
// policy, prompt, requests, images, input and output tokens, dollars, plus
// video frames, refused and unsupported trials when any — with a subtotal
// per model (when there are several) and a grand total.
func WriteEstimates(w io.Writer, es []Estimate) error {
	var video, refused, unsupported bool
	for _, e := range es {
		video = video || e.VideoFrames > 0
		refused = refused || e.Refused > 0
		unsupported = unsupported || e.Unsupported > 0
	}
	header := []string{"model", "policy", "prompt", "requests", "images"}
	if video {
		header = append(header, "video frames")
	}
	if refused {
		header = append(header, "refused")
	}
	if unsupported {
		header = append(header, "unsupported")
	}
	header = append(header, "input tokens", "output tokens", "USD")
	row := func(e Estimate) []string {
		r := []string{e.Model, e.Policy, e.Prompt, group(e.Requests), group(e.Images)}
		if video {
			r = append(r, group(e.VideoFrames))
		}
		if refused {
			r = append(r, group(e.Refused))
		}
		if unsupported {
			r = append(r, group(e.Unsupported))
		}
		return append(r, group(e.InputTokens), group(e.OutputTokens), dollars(e.USD))
	}
	add := func(a *Estimate, e Estimate) {
		a.Requests += e.Requests
		a.Images += e.Images
		a.VideoFrames += e.VideoFrames
		a.Refused += e.Refused
		a.Unsupported += e.Unsupported
		a.InputTokens += e.InputTokens
		a.OutputTokens += e.OutputTokens
		a.USD += e.USD
	}
	models := map[string]bool{}
	for _, e := range es {
		models[e.Model] = true
	}
	rows := [][]string{header}
	var rules []int // rows preceded by a rule
	total := Estimate{Model: "total"}
	for i := 0; i < len(es); {
		sub := Estimate{Model: "total " + es[i].Model}
		j := i
		for ; j < len(es) && es[j].Model == es[i].Model; j++ {
			rows = append(rows, row(es[j]))
			add(&sub, es[j])
			add(&total, es[j])
		}
		if len(models) > 1 {
			rows = append(rows, row(sub))
		}
		i = j
	}
	rules = append(rules, 1, len(rows))
	rows = append(rows, row(total))

	width := make([]int, len(header))
	for _, r := range rows {
		for k, c := range r {
			width[k] = max(width[k], len([]rune(c)))
		}
	}
	var b strings.Builder
	line := func() {
		n := 0
		for _, wd := range width {
			n += wd + 2
		}
		b.WriteString(strings.Repeat("-", n-2) + "\n")
	}
	for i, r := range rows {
		for _, at := range rules {
			if at == i {
				line()
			}
		}
		for k, c := range r {
			pad := strings.Repeat(" ", width[k]-len([]rune(c)))
			if k < 3 { // text columns left, numbers right
				c += pad
			} else {
				c = pad + c
			}
			if k > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c)
		}
		b.WriteString("\n")
	}
	if refused {
		b.WriteString("refused: trials whose frames exceed the model's max_images under limit_mode refuse; not sent, not counted above.\n")
	}
	if unsupported {
		b.WriteString("unsupported: keyframes trials on objects clips, which have no events to centre frames on; recorded as failed, not sent, not counted above.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// group writes n with thousands separators (12240 → "12,240"), as the
// paper's tables do.
func group(n int) string { return thousands.Sprintf("%d", n) }

// thousands formats numbers the English way.
var thousands = message.NewPrinter(language.English)

// dollars writes an amount with cents; a positive amount below half a
// cent shows as <0.01 rather than 0.00.
func dollars(v float64) string {
	if v > 0 && v < 0.005 {
		return "<0.01"
	}
	cents := int(math.Round(v * 100))
	return group(cents/100) + "." + fmt.Sprintf("%02d", cents%100)
}
