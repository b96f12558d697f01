package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"

	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/eval/study"
)

// The input audit (docs/study.md, "Input audit"). A server's reported
// prompt_tokens tell how much of the input it saw: a vLLM server that keeps
// 32 frames of a 48-frame video reports the tokens of 32. Every answered
// single-turn trial is checked against the model's input rule,
//
//	expected = text + frames × per-frame tokens,
//
// and one whose server reported fewer tokens than that, by more than the
// tolerance, is stored as results.KindInputMismatch. There is no tokenizer
// here, so the rule is learned where it can be:
//
//   - from tracegrid probe (results.InputRule, stored): the same clip at two
//     frame counts and the same text, so that the difference is the frames'
//     alone — per-frame tokens, and the text's tokens as the remainder;
//   - from the study (image_tokens.audit: true): per-frame tokens by the
//     image rule at the frame size (video frames: video.tokens_per_frame,
//     else the image rule), text by the dry run's ~4 bytes a token;
//   - from the run's own first two answered trials of a model and modality
//     at one frame size and in one wording (template, labels) with
//     different frame counts, the same way as the probe. A rule is only as good as what it was learned from; the probe
//     sends few frames (below any server's frame cap).
//
// Text that differs from what the rule was measured on (another template,
// other labels) is estimated at 4 bytes a token, and the tolerance grows
// with it: tolerance = per-frame/2 + |text bytes − measured bytes|/16 (a
// quarter of the estimate's bytes), so one lost frame is seen when the text
// is the measured one. Without a rule a trial is stored as unaudited, never
// as a mismatch.

// MismatchStop is how many input mismatches in a row of one model stop
// the run (exit 1): a server that drops frames drops them from every trial.
const MismatchStop = 3

// Modalities of an input rule: frames sent as images, frames of a video.
const (
	ModalityImage = "image"
	ModalityVideo = "video"
)

// ErrInputMismatch is wrapped by Run's error when MismatchStop mismatches
// in a row stopped it.
var ErrInputMismatch = errors.New("input mismatch")

// inputRule is one model's rule for one modality and frame size.
type inputRule struct {
	perFrame float64 // tokens per frame, labels included
	textBase float64 // tokens of the measured text
	refBytes int     // bytes of the measured text
	source   string
}

// observation is an answered trial's figures, for learning a rule.
type observation struct {
	frames, bytes, tokens int
}

type auditor struct {
	accept bool
	st     *study.Study
	log    *slog.Logger

	mu      sync.Mutex
	rules   map[string]inputRule // by model + modality + size (ruleKey)
	first   map[string]observation
	warned  map[string]bool
	streak  map[string]int // consecutive mismatches by model
	stopErr error
}

func ruleKey(model, modality string, w, h int) string {
	return fmt.Sprintf("%s\x00%s\x00%dx%d", model, modality, w, h)
}

// RuleModality is the modality column of a rule measured at w×h.
func RuleModality(modality string, w, h int) string { return fmt.Sprintf("%s %dx%d", modality, w, h) }

// newAuditor loads the study's stored (probed) rules.
func newAuditor(ctx context.Context, opt Options, log *slog.Logger) (*auditor, error) {
	a := &auditor{accept: opt.AcceptInputMismatch, st: opt.Study, log: log, rules: map[string]inputRule{},
		first: map[string]observation{}, warned: map[string]bool{}, streak: map[string]int{}}
	stored, err := opt.DB.InputRules(ctx, opt.Study.Name)
	if err != nil {
		return nil, err
	}
	for _, r := range stored {
		var mod string
		var w, h int
		if _, err := fmt.Sscanf(r.Modality, "%s %dx%d", &mod, &w, &h); err != nil {
			continue
		}
		a.rules[ruleKey(r.Model, mod, w, h)] = inputRule{perFrame: r.PerFrame, textBase: r.TextBase, refBytes: r.RefBytes, source: r.Source}
	}
	return a, nil
}

// stopped is the error that stops the run, nil while it may go on.
func (a *auditor) stopped() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stopErr
}

// trialInput is what the audit needs of a sent trial.
type trialInput struct {
	modality string
	frames   int // images sent, or the video's frames at the rate asked
	w, h     int // frame size
	bytes    int // text bytes of the request
	messages int
	// text names the condition's wording (template and labels): a rule is
	// learned only from two trials worded alike, whose difference is the
	// frames' alone.
	text string
}

// inputOf describes the first request of trial t: its frames and text.
func inputOf(t trial, m study.Model, p prepared, msgs []chat.Message) trialInput {
	c := t.cond.WithDefaults()
	in := trialInput{modality: ModalityImage, frames: len(p.in.Frames), w: m.ImageWidth, h: m.ImageHeight, messages: len(msgs),
		text: c.Prompt + "\x00" + c.Labels + "\x00" + c.SendAs}
	if in.w == 0 {
		in.w, in.h = t.clip.clip.Width, t.clip.clip.Height
	}
	if p.in.VideoURL != "" && t.cond.Video() {
		// as: video — the MP4 holds exactly the plan's frames, at the
		// model's frame size (videoInput).
		in.modality, in.frames, in.w, in.h = ModalityVideo, len(p.plan.Frames), in.w&^1, in.h&^1
	} else if p.in.VideoURL != "" {
		// The clip's own MP4 (native:R): the server samples it at R.
		in.modality, in.w, in.h = ModalityVideo, t.clip.clip.Width, t.clip.clip.Height
		rate := m.Video.Rate
		if pol, err := sampling.Parse(t.cond.Policy); err == nil && rate == 0 {
			if r, ok := study.NativeRate(pol); ok {
				rate = r
			} else {
				rate = 1
			}
		}
		in.frames = int(math.Ceil(t.clip.clip.Duration*rate - 1e-9))
	}
	for _, msg := range msgs {
		for _, part := range msg.Parts {
			if part.Type == chat.TypeText {
				in.bytes += len(part.Text)
			}
		}
	}
	return in
}

// rule is the model's rule for in, and whether there is one: a learned or
// probed rule, else the study's when image_tokens.audit is set.
func (a *auditor) rule(m study.Model, in trialInput) (inputRule, bool) {
	if r, ok := a.rules[ruleKey(m.Name, in.modality, in.w, in.h)]; ok {
		return r, true
	}
	if !m.ImageTokens.Audit {
		return inputRule{}, false
	}
	per := study.EstimateImageTokens(m, in.w, in.h)
	if in.modality == ModalityVideo && m.Video.TokensPerFrame > 0 {
		per = m.Video.TokensPerFrame
	}
	// The dry run's text rule: 4 bytes a token and 4 tokens a message.
	return inputRule{perFrame: float64(per), textBase: float64(4 * in.messages), source: "the study's image_tokens (audit: true)"}, true
}

// check audits an answered single-turn trial, filling its InputAudit,
// ExpectedPromptTokens and AuditNote; a mismatch (unless accepted) becomes
// the trial's error. It reports whether the trial is to be scored.
func (a *auditor) check(rec *results.Trial, m study.Model, in trialInput, turns int) bool {
	if a == nil {
		return true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if turns > 1 {
		// The second turn's prompt holds the first reply, whose tokens
		// are not known apart: not audited.
		rec.InputAudit, rec.AuditNote = results.AuditUnaudited, "two-turn template: the second turn's prompt holds the first reply"
		return true
	}
	reported := rec.Usage.PromptTokens
	r, ok := a.rule(m, in)
	if !ok {
		a.learn(m, in, reported)
		rec.InputAudit = results.AuditUnaudited
		rec.AuditNote = fmt.Sprintf("no rule yet for %s's tokens per %s frame at %dx%d (tracegrid probe, or image_tokens.audit)", m.Name, in.modality, in.w, in.h)
		return true
	}
	text := r.textBase + float64(in.bytes-r.refBytes)/4
	exp := text + float64(in.frames)*r.perFrame
	tol := r.perFrame/2 + math.Abs(float64(in.bytes-r.refBytes))/16
	rec.ExpectedPromptTokens = int(math.Round(exp))
	seen := min(in.frames, max(0, int(math.Round((float64(reported)-text)/r.perFrame))))
	if float64(reported) >= exp-tol {
		rec.InputAudit = results.AuditOK
		rec.AuditNote = fmt.Sprintf("reported %d prompt tokens, expected %d ± %.0f for %d %s frames (%s)", reported, rec.ExpectedPromptTokens, tol, in.frames, in.modality, r.source)
		a.streak[m.Name] = 0
		return true
	}
	note := fmt.Sprintf("reported %d prompt tokens, expected %d (tolerance %.0f) for %d %s frames at %.0f tokens each (%s): the server saw about %d of %d frames",
		reported, rec.ExpectedPromptTokens, tol, in.frames, in.modality, r.perFrame, r.source, seen, in.frames)
	rec.AuditNote = note
	if a.accept {
		rec.InputAudit = results.AuditAccepted
		return true
	}
	rec.InputAudit, rec.Error, rec.ErrorKind = results.AuditMismatch, "input mismatch: "+note, results.KindInputMismatch
	a.streak[m.Name]++
	if a.streak[m.Name] >= MismatchStop && a.stopErr == nil {
		a.stopErr = fmt.Errorf("%w: %d trials in a row of model %s: %s. %s; or rerun with --accept-input-mismatch to keep such trials, marked",
			ErrInputMismatch, a.streak[m.Name], m.Name, fmt.Sprintf("the server kept about %d of %d frames", seen, in.frames), fix(m, in.modality))
	}
	return false
}

// fix names the likely cause of a mismatch and its fix.
func fix(m study.Model, modality string) string {
	if modality != ModalityVideo {
		return fmt.Sprintf("the server counted fewer image tokens than %s's rule: it may drop images or shrink them (max_pixels); check its limits, or probe again (tracegrid probe)", m.Name)
	}
	switch m.ServerName() {
	case study.ServerVLLM:
		// The request already asked for every frame: this server does not
		// take media_io_kwargs from requests.
		return `the requests carried media_io_kwargs {"video": {"num_frames": -1}} and the server ignored them: start vLLM with --media-io-kwargs '{"video": {"num_frames": -1}}'`
	case study.ServerSGLang:
		return "SGLang takes a video's frame count at start: start it with --mm-process-config keeping every frame (docs/study.md, the SGLang recipe)"
	}
	return `vLLM's video loader keeps 32 frames by default: start vLLM with --media-io-kwargs '{"video": {"num_frames": -1}}' or let tracegrid send media_io_kwargs (server: vllm)`
}

// MinFrameTokens is the least a frame may cost in a learned rule: no
// published image or video-frame rule charges fewer (Gemini's low media
// resolution, 66; OpenAI's low detail, 85), and a smaller difference
// between two trials says the server's count does not follow the frames.
const MinFrameTokens = 16

// learn keeps a model's first answered trial per modality, frame size and
// wording and, at the first later one with another frame count, makes the
// rule from the two; a rule whose frames cost under MinFrameTokens, or
// whose text would cost less than nothing, is refused (the server's count
// does not follow the frames: a frame cap, or a fixed report).
func (a *auditor) learn(m study.Model, in trialInput, reported int) {
	k := ruleKey(m.Name, in.modality, in.w, in.h)
	o := observation{frames: in.frames, bytes: in.bytes, tokens: reported}
	f, ok := a.first[k+"\x00"+in.text]
	if !ok {
		a.first[k+"\x00"+in.text] = o
		return
	}
	if f.frames == o.frames {
		return
	}
	per := (float64(o.tokens-f.tokens) - float64(o.bytes-f.bytes)/4) / float64(o.frames-f.frames)
	if per < MinFrameTokens || float64(f.tokens)-float64(f.frames)*per < 0 {
		if !a.warned[k] {
			a.warned[k] = true
			a.log.Warn("input audit: the server's prompt tokens do not grow with the frames sent; trials stay unaudited (run tracegrid probe)",
				"model", m.Name, "modality", in.modality, "frames", []int{f.frames, o.frames}, "prompt_tokens", []int{f.tokens, o.tokens})
		}
		return
	}
	a.rules[k] = inputRule{perFrame: per, textBase: float64(f.tokens) - float64(f.frames)*per, refBytes: f.bytes,
		source: fmt.Sprintf("learned from this run's trials at %d and %d frames", f.frames, o.frames)}
	a.log.Info("input audit: rule learned", "model", m.Name, "modality", in.modality, "tokens_per_frame", math.Round(per*10)/10)
}
