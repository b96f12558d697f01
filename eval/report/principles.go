package report

import (
	"sort"
	"strconv"
	"strings"

	"github.com/tracegrid/tracegrid/eval/score"
)

// TOMATO's frame principles (§3) compare a model's accuracy under two
// matched frame conditions with the same prompt and the same frame label
// mode (a time label would tell the order that shuffled:M hides, so
// uniform:M under time labels against shuffled:M under position labels
// would measure the labels, not the order; a study that wants τ runs
// uniform:M with labels: position too). The report computes each
// measure whose two conditions exist, on the clips both ran on:
//
//	κ (multi-frame gain)         = (A_uniform:M − A_single)/A_single, single = single:random or single:best
//	τ (frame order sensitivity)  = (A_uniform:M − A_shuffled:M)/A_shuffled:M
//	ρ (frame info disparity)     = (A_single:best − A_single:random)/A_single:random
//
// via score.RelativeGain (undefined when the baseline accuracy is 0).

const (
	policyRandom = "single:random"
	policyBest   = "single:best"
)

// Formulas of the frame principles, as the report prints them.
const (
	FormulaMultiFrameGain   = "κ = (A_m − A_1) / A_1, A_m: m uniform frames in order, A_1: one frame (random or hand-picked)"
	FormulaOrderSensitivity = "τ = (A_m − A_shuffled) / A_shuffled, the same m frames ordered vs shuffled"
	FormulaInfoDisparity    = "ρ = (A_best − A_random) / A_random, one hand-picked vs one random frame"
)

type clipTally struct{ correct, trials int }

// tally is a condition's outcome per clip (repeats add up).
func tally(g []*scored, into map[string]clipTally) {
	for _, s := range g {
		c := into[s.src.Clip]
		c.trials++
		if s.trial.Score.Correct {
			c.correct++
		}
		into[s.src.Clip] = c
	}
}

// matched computes the accuracies of two conditions on their common clips.
func matched(from, to map[string]clipTally) (FrameSide, FrameSide, int) {
	var f, t FrameSide
	clips := 0
	for clip, a := range from {
		b, ok := to[clip]
		if !ok {
			continue
		}
		clips++
		f.Trials += a.trials
		f.Correct += a.correct
		t.Trials += b.trials
		t.Correct += b.correct
	}
	if f.Trials > 0 {
		f.Accuracy = float64(f.Correct) / float64(f.Trials)
	}
	if t.Trials > 0 {
		t.Accuracy = float64(t.Correct) / float64(t.Trials)
	}
	return f, t, clips
}

// framePolicy splits "uniform:16" into ("uniform", 16).
func framePolicy(p string) (string, int) {
	name, arg, ok := strings.Cut(p, ":")
	if !ok {
		return p, 0
	}
	m, err := strconv.Atoi(arg)
	if err != nil || m <= 0 {
		return p, 0
	}
	return name, m
}

func (r *Report) addFramePrinciples(mi ModelInfo, groups map[rowKey][]*scored) {
	prompts := map[string]bool{}
	for _, c := range mi.Conditions {
		prompts[c.Prompt] = true
	}
	labelModes := map[string]bool{}
	for _, c := range mi.Conditions {
		labelModes[c.labels()] = true
	}
	for _, prompt := range sortedStrings(prompts) {
		for _, labels := range sortedStrings(labelModes) {
			r.framePrinciplesOf(mi, groups, prompt, labels)
		}
	}
}

func (r *Report) framePrinciplesOf(mi ModelInfo, groups map[rowKey][]*scored, prompt, labels string) {
	{
		withRows := 0 // event domains with a measure; "all" only pools two or more
		for _, domain := range append(append([]string{}, mi.Domains...), "all") {
			if domain == "all" && withRows < 2 {
				continue
			}
			before := len(r.FramePrinciples)
			// Per policy of this prompt and label mode: clip → outcome.
			byPolicy := map[string]map[string]clipTally{}
			for _, c := range mi.Conditions {
				if c.Prompt != prompt || c.labels() != labels {
					continue
				}
				name, _ := framePolicy(c.Policy)
				if c.Policy != policyRandom && c.Policy != policyBest && name != "uniform" && name != "shuffled" {
					continue
				}
				t := map[string]clipTally{}
				for _, d := range mi.Domains {
					// "all" pools the event domains: a count-only clip's
					// count is another task, shown in its own rows.
					if domain == "all" && !countOnly(d) || d == domain {
						tally(groups[rowKey{mi.Model, c, d}], t)
					}
				}
				if len(t) > 0 {
					byPolicy[c.Policy] = t
				}
			}
			r.framesFor(mi.Model, prompt, labels, domain, byPolicy)
			if len(r.FramePrinciples) > before && !countOnly(domain) {
				withRows++
			}
		}
	}
}

func (r *Report) framesFor(model, prompt, labels, domain string, byPolicy map[string]map[string]clipTally) {
	add := func(measure, symbol, formula string, m int, fromP, toP string) {
		from, to := byPolicy[fromP], byPolicy[toP]
		if from == nil || to == nil {
			return
		}
		f, t, clips := matched(from, to)
		if clips == 0 {
			return
		}
		f.Policy, t.Policy = fromP, toP
		f.Labels, t.Labels = labels, labels
		g := score.RelativeGain(f.Accuracy, t.Accuracy)
		r.FramePrinciples = append(r.FramePrinciples, FrameRow{Model: model, Labels: labels, Prompt: prompt, Domain: domain,
			Measure: measure, Symbol: symbol, Formula: formula, M: m, Clips: clips, From: f, To: t, Value: g.Value, Defined: g.Defined})
	}
	var ms []int
	for p := range byPolicy {
		if name, m := framePolicy(p); name == "uniform" && m > 0 {
			ms = append(ms, m)
		}
	}
	sort.Ints(ms)
	for _, m := range ms {
		u := "uniform:" + strconv.Itoa(m)
		add("multi_frame_gain_random", "κ", FormulaMultiFrameGain, m, policyRandom, u)
		add("multi_frame_gain_best", "κ", FormulaMultiFrameGain, m, policyBest, u)
		add("order_sensitivity", "τ", FormulaOrderSensitivity, m, "shuffled:"+strconv.Itoa(m), u)
	}
	add("information_disparity", "ρ", FormulaInfoDisparity, 0, policyRandom, policyBest)
}
