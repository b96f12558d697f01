package runner

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/study"
)

// ProbeFrames are the frame counts a probe sends (tracegrid probe): the
// same clip, wording and frame size at both, so that the difference of the
// reported prompt tokens is the frames' alone. Both are below vLLM's
// default of 32 frames a video, so a server's frame cap cannot bend the
// rule it measures.
var ProbeFrames = [2]int{4, 8}

// ProbeMaxTokens bounds each probe reply: only its prompt tokens matter.
const ProbeMaxTokens = 16

// ProbeRequest is one request of a probe, with its dry-run cost.
type ProbeRequest struct {
	Model    string  `json:"model"`
	Modality string  `json:"modality"` // ModalityImage or ModalityVideo
	Clip     string  `json:"clip"`
	Prompt   string  `json:"prompt"`
	Frames   int     `json:"frames"`
	Input    int     `json:"input_tokens"` // estimated
	Output   int     `json:"output_tokens"`
	USD      float64 `json:"usd"`
	cond     study.Condition
	model    int
}

// ProbePlan lists the requests tracegrid probe sends for the study (for
// the models named, all when none): for each model and each way its
// conditions send frames — as images, or as a video (native:R to a model
// with video.supported, or as: video) — two requests on the study's first
// clip in the first such condition's wording, at ProbeFrames frames
// (images: uniform:N; video: N frames at 1 per second as one MP4). Its
// estimates are the dry run's (study.Study.DryRun) for those requests.
func ProbePlan(st *study.Study, set *prompts.Set, models ...string) ([]ProbeRequest, error) {
	clips, err := ClipInfos(st)
	if err != nil {
		return nil, err
	}
	if len(clips) == 0 {
		return nil, fmt.Errorf("%w: the study has no clip to probe with", study.ErrStudy)
	}
	want := map[string]bool{}
	for _, m := range models {
		want[m] = true
	}
	var out []ProbeRequest
	for mi, m := range st.Models {
		if len(want) > 0 && !want[m.Name] {
			continue
		}
		delete(want, m.Name)
		seen := map[string]bool{}
		for _, c := range st.Conditions {
			modality := ModalityImage
			if c.Video() || m.Video.Supported && isNative(c.Policy) {
				modality = ModalityVideo
			}
			if seen[modality] {
				continue
			}
			seen[modality] = true
			for _, n := range ProbeFrames {
				pc := probeCondition(c, modality, n)
				clip := clips[0]
				if modality == ModalityVideo {
					clip.Duration = float64(n) // the probe's video is n s long
				}
				one := *st
				one.Models, one.Conditions, one.Repetitions = []study.Model{m}, []study.Condition{pc}, 1
				one.Decoding.MaxTokens = ProbeMaxTokens
				one.Models[0].Decoding = nil
				es, err := one.DryRun([]study.ClipInfo{clip}, set)
				if err != nil {
					return nil, err
				}
				e := es[0]
				out = append(out, ProbeRequest{Model: m.Name, Modality: modality, Clip: clip.ID, Prompt: c.Prompt, Frames: n,
					Input: e.InputTokens, Output: e.OutputTokens, USD: e.USD, cond: pc, model: mi})
			}
		}
	}
	if len(want) > 0 {
		var names []string
		for n := range want {
			names = append(names, n)
		}
		return nil, fmt.Errorf("%w: --model %s: no such model in the study", study.ErrStudy, strings.Join(names, ", "))
	}
	return out, nil
}

// probeCondition is c's wording with n frames: uniform:n as images, or
// fps:1 as one video (n frames at 1 per second, on a clip cut to n s).
func probeCondition(c study.Condition, modality string, n int) study.Condition {
	c = c.WithDefaults()
	if modality == ModalityVideo {
		return study.Condition{Policy: "fps:1", Prompt: c.Prompt, SendAs: study.SendVideo}
	}
	return study.Condition{Policy: fmt.Sprintf("uniform:%d", n), Prompt: c.Prompt, Labels: c.Labels}
}

// Probe sends the requests of ProbePlan and stores, per model and
// modality, the rule the two replies give (results.InputRule, at the
// frame size sent): tokens per frame = the difference of the reported
// prompt tokens, less the difference of the text at 4 bytes a token, over
// the difference of the frames; the text's tokens are the rest. A probe
// whose frames cost under MinFrameTokens is an error naming both figures
// (the server's count does not follow the frames), and no rule is stored.
// Nothing is stored as a trial.
func Probe(ctx context.Context, opt Options, models ...string) ([]results.InputRule, error) {
	st := opt.Study
	log := opt.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	plan, err := ProbePlan(st, opt.Prompts, models...)
	if err != nil {
		return nil, err
	}
	clips, err := loadClips(st)
	if err != nil {
		return nil, err
	}
	clients, err := makeModels(opt, log)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, m := range clients {
			closeModel(m)
		}
	}()
	r := &run{opt: opt, log: log}
	var rules []results.InputRule
	for i := 0; i+1 < len(plan); i += 2 {
		var obs [2]observation
		var in trialInput
		for j, pr := range plan[i : i+2] {
			m := st.Models[pr.model]
			t := trial{model: pr.model, clip: clips[0], cond: pr.cond}
			if pr.Modality == ModalityVideo {
				cut := *clips[0]
				clip := *cut.clip
				clip.Duration = float64(pr.Frames)
				cut.clip = &clip
				t.clip = &cut
			}
			var p prepared
			if p.in, p.plan, p.bytes, p.err = r.input(ctx, t, m); p.err != nil {
				return rules, fmt.Errorf("probe %s (%s, %d frames): %w", m.Name, pr.Modality, pr.Frames, p.err)
			}
			tmpl, err := opt.Prompts.Get(pr.cond.Prompt)
			if err != nil {
				return rules, err
			}
			msgs, err := tmpl.Build(p.in)
			if err != nil {
				return rules, err
			}
			req := requestFor(st, m, pr.cond, msgs)
			req.MaxTokens = ProbeMaxTokens
			videoRequest(&req, m, pr.cond, p.plan, t.clip.clip.Duration)
			resp, err := clients[pr.model].Chat(ctx, req)
			if err != nil {
				return rules, fmt.Errorf("probe %s (%s, %d frames): %w", m.Name, pr.Modality, pr.Frames, err)
			}
			if _, problem := checkUsage(resp.Usage, 0); problem != "" || resp.Usage.PromptTokens == 0 {
				return rules, fmt.Errorf("probe %s: the server reported prompt_tokens %d: no rule can be measured", m.Name, resp.Usage.PromptTokens)
			}
			in = inputOf(t, m, p, msgs)
			obs[j] = observation{frames: in.frames, bytes: in.bytes, tokens: resp.Usage.PromptTokens}
		}
		m := st.Models[plan[i].model]
		f, o := obs[0], obs[1]
		per := (float64(o.tokens-f.tokens) - float64(o.bytes-f.bytes)/4) / float64(o.frames-f.frames)
		if per < MinFrameTokens {
			return rules, fmt.Errorf("probe %s (%s): the server reported %d prompt tokens for %d frames and %d for %d: under %d tokens a frame, its count does not follow the frames sent",
				m.Name, in.modality, f.tokens, f.frames, o.tokens, o.frames, MinFrameTokens)
		}
		rule := results.InputRule{Study: st.Name, Model: m.Name, Modality: RuleModality(in.modality, in.w, in.h), PerFrame: per,
			TextBase: float64(f.tokens) - float64(f.frames)*per, RefBytes: f.bytes,
			Source: fmt.Sprintf("probe: clip %s, %s, %d and %d frames: %d and %d prompt tokens", plan[i].Clip, plan[i].Prompt, f.frames, o.frames, f.tokens, o.tokens)}
		if err := opt.DB.PutInputRule(ctx, rule); err != nil {
			return rules, err
		}
		log.Info("probe", "model", m.Name, "modality", rule.Modality, "tokens_per_frame", per, "text_tokens", rule.TextBase)
		rules = append(rules, rule)
	}
	return rules, nil
}
