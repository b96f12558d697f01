package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tracegrid/tracegrid/domain"
	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/frames"
	"github.com/tracegrid/tracegrid/eval/runner"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/pipeline"
	"github.com/tracegrid/tracegrid/scene"
	"github.com/tracegrid/tracegrid/trace"
)

// options are the command's flags.
type options struct {
	manifest, clipID    string
	domain, class, size string
	n, seed, fps        int
	f, duration         float64
	policy, labels      string
	at                  float64
	screenshot, window  string
	noOverlay, verbose  bool
	script, windowDump  string
	changed             func(name string) bool
	windowW, windowH    int             // parsed --window; 0: the clip's size
	pol                 sampling.Policy // parsed --policy
	labelMode           chat.Labels     // parsed --labels
}

// check validates the flags that need no clip.
func (o *options) check() error {
	byManifest := o.manifest != "" || o.clipID != ""
	byParams := o.domain != ""
	for _, name := range []string{"n", "f", "class", "seed", "duration", "fps", "size"} {
		byParams = byParams || o.changed(name)
	}
	switch {
	case byManifest && byParams:
		return usageError{errors.New("give --manifest and --clip, or --domain with its parameters, not both")}
	case byManifest && (o.manifest == "" || o.clipID == ""):
		return usageError{errors.New("give both --manifest and --clip")}
	case !byManifest && o.domain == "":
		return usageError{errors.New("say which clip: --manifest M --clip ID, or --domain D --n N [--f F] [--class C] [--seed S]")}
	}
	if o.changed("at") && (math.IsNaN(o.at) || math.IsInf(o.at, 0) || o.at < 0) {
		return usageError{fmt.Errorf("--at %v is not a time in seconds", o.at)}
	}
	if o.window != "" {
		w, h, err := parseWxH(o.window, 16, 16384)
		if err != nil {
			return usageError{fmt.Errorf("--window: %w", err)}
		}
		o.windowW, o.windowH = w, h
	}
	if o.labels != "" && o.policy == "" {
		return usageError{errors.New("--labels applies to --policy: name the policy whose frames to label")}
	}
	if o.policy != "" {
		p, err := sampling.Parse(o.policy)
		if err != nil {
			return usageError{err}
		}
		o.pol = p
		o.labelMode = study.DefaultLabels(p.String())
		if o.labels != "" {
			if o.labelMode, err = chat.ParseLabels(o.labels); err != nil {
				return usageError{err}
			}
		}
	}
	if o.windowDump != "" && o.script == "" && o.screenshot == "" {
		return usageError{errors.New("--window-dump needs --script or --screenshot")}
	}
	return nil
}

// parseWxH reads "WxH" with both sides in [lo, hi].
func parseWxH(s string, lo, hi int) (int, int, error) {
	ws, hs, ok := strings.Cut(strings.ToLower(s), "x")
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if !ok || err1 != nil || err2 != nil || w < lo || h < lo || w > hi || h > hi {
		return 0, 0, fmt.Errorf("%q: want WxH, each %d–%d", s, lo, hi)
	}
	return w, h, nil
}

// loadClip rebuilds the clip: from a manifest (checked against its trace
// file, as frames does) or from parameters, validated by the render
// spec's rules (pipeline.Spec.Validate) so any clip a spec allows and no
// other can be previewed.
func (o *options) loadClip() (*scene.Clip, *trace.Trace, error) {
	if o.manifest != "" {
		clip, tr, _, err := pipeline.LoadClip(o.manifest, o.clipID)
		if errors.Is(err, trace.ErrInvalid) {
			return nil, nil, usageError{err}
		}
		return clip, tr, err
	}
	objects := domain.Of(o.domain).Class
	grid := pipeline.GridPaper
	if objects {
		grid = pipeline.GridCountVideoBench
	}
	spec, err := pipeline.BuiltinSpec(grid)
	if err != nil {
		return nil, nil, err
	}
	spec.Domains, spec.Counts, spec.Seeds = []string{o.domain}, []int{o.n}, 1
	switch {
	case objects:
		if o.changed("f") {
			return nil, nil, usageError{errors.New("--f: the objects domain has no events, so no frequency")}
		}
		if o.class == "" {
			return nil, nil, usageError{fmt.Errorf("--class is required for objects clips (one of %s)", strings.Join(scene.ObjectClasses(), ", "))}
		}
		spec.Classes, spec.Frequencies = []string{o.class}, nil
	default:
		if o.changed("class") {
			return nil, nil, usageError{fmt.Errorf("--class applies only to the %s domain", domain.Objects)}
		}
		switch {
		case o.n > 0 && !o.changed("f"):
			return nil, nil, usageError{fmt.Errorf("--f is required for N = %d > 0 (event frequency in Hz)", o.n)}
		case o.n > 0:
			spec.Frequencies = []float64{o.f}
		case o.changed("f"):
			spec.NominalFrequency = o.f
		}
		spec.Classes = nil
	}
	if o.changed("duration") {
		spec.Duration = o.duration
	}
	if o.changed("fps") {
		spec.FPS = o.fps
	}
	if o.size != "" {
		if spec.Width, spec.Height, err = parseWxH(o.size, scene.MinSize, scene.MaxSize); err != nil {
			return nil, nil, usageError{fmt.Errorf("--size: %w", err)}
		}
	}
	if o.seed < 0 {
		return nil, nil, usageError{fmt.Errorf("--seed %d must be non-negative", o.seed)}
	}
	if err := spec.Validate(); err != nil {
		return nil, nil, usageError{err}
	}
	plan, err := spec.Plan()
	if err != nil {
		return nil, nil, usageError{err}
	}
	if len(plan) != 1 {
		return nil, nil, fmt.Errorf("internal: %d clips planned for one set of parameters", len(plan))
	}
	p := plan[0]
	p.Seed = o.seed
	clip, err := scene.New(p)
	if err != nil {
		return nil, nil, usageError{err}
	}
	return clip, clip.Trace(), nil
}

// plan is the policy's plan for the clip, made as eval makes it (no image
// cap: that is a model's setting), or nil without --policy.
func (o *options) plan(r *gpu.Renderer, clip *scene.Clip, tr *trace.Trace) (*sampling.Plan, error) {
	if o.pol == nil {
		return nil, nil
	}
	if err := o.checkPolicy(clip, tr); err != nil {
		return nil, err
	}
	sc := sampling.Clip{ID: clip.P.ID(), Duration: clip.P.Duration, FPS: float64(clip.P.FPS), Seed: clip.P.Seed, Events: tr.Times(),
		InView: runner.InViewCounts(tr), Pixels: frames.NewLowRes(r, clip)}
	plan, err := o.pol.Plan(sc)
	if err != nil {
		return nil, err
	}
	if len(plan.Frames) == 0 {
		why := plan.Note
		if why == "" {
			why = "the policy gives no frames for this clip"
		}
		return nil, usageError{fmt.Errorf("policy %s on clip %s: %s (eval records it as not applicable)", o.pol, clip.P.ID(), why)}
	}
	return &plan, nil
}

// checkPolicy refuses a policy that cannot apply to the clip, before
// anything is rendered: keyframes on an objects clip, which has no events
// (eval records such trials as not applicable).
func (o *options) checkPolicy(clip *scene.Clip, tr *trace.Trace) error {
	if o.pol != nil && !domain.Of(tr.Domain).EventPolicies && study.EventPolicy(o.pol) {
		return usageError{fmt.Errorf("policy %s places its frames at the true events, and objects clip %s has none: eval records it as not applicable", o.pol, clip.P.ID())}
	}
	return nil
}
