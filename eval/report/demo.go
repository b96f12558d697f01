package report

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"time"

	"github.com/tracegrid/tracegrid/domain"
	"github.com/tracegrid/tracegrid/eval/parse"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/scene"
	"github.com/tracegrid/tracegrid/trace"
)

// DemoStudy is the study name of DemoTrials.
const DemoStudy = "demo"

// DemoTrace builds a hand-made, valid trace: N events at t_i = t0 + (i−1)/F
// in a 24 s clip, with the states and attributes of the domain.
func DemoTrace(dom string, n int, f float64, seed int) *trace.Trace {
	id := fmt.Sprintf("%s_n%02d_f%.1f_s%d", dom, n, f, seed)
	tr := &trace.Trace{Schema: trace.Schema, ID: id, Domain: dom, N: n, F: f, Seed: seed,
		Duration: 24, FPS: 30, Width: 854, Height: 480, Nuisance: map[string]any{}, Events: []trace.Event{}}
	t0 := 1 + math.Mod(float64(seed)*0.37, 2)
	walls := []string{"left", "top", "right", "bottom"}
	states := []string{"A", "B", "C"}
	switch dom {
	case domain.Blinking:
		tr.InitialState, tr.Pulse = "off", 0.1
	case domain.StateMachine:
		tr.InitialState = "A"
	default:
		tr.InitialState = "moving"
	}
	state := tr.InitialState
	for i := range n {
		e := trace.Event{T: round6(t0 + float64(i)/f), Count: i + 1, Before: state}
		switch dom {
		case domain.Blinking:
			e.Type, e.After = "pulse_on", "on"
		case domain.StateMachine:
			next := states[(i+1+seed)%3]
			if next == state {
				next = states[(i+2+seed)%3]
			}
			e.Type, e.After, e.Attrs = "transition", next, map[string]string{"from": state, "to": next}
			state = next
		default:
			e.Type, e.After, e.Attrs = "wall_contact", "moving", map[string]string{"wall": walls[(i+seed)%4]}
		}
		tr.Events = append(tr.Events, e)
	}
	if n > 0 {
		tr.ActiveStart, tr.ActiveEnd = tr.Events[0].T, tr.Events[n-1].T
	}
	return tr
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// demoModel is a simulated model: how well it counts and how it errs.
type demoModel struct {
	name string
	// skill: log-odds of a correct count at N = 1, F = 0.5 Hz; slopes per
	// extra event and per Hz; bonus per domain and per condition.
	skill, perN, perF float64
	domain            map[string]float64
	conds             []demoCond
	preferred         []int // values it drifts to when wrong (local excesses)
}

type demoCond struct {
	policy, prompt string
	bonus          float64
	domains        []string
}

// labels is the condition's frame label mode: the TOMATO frame conditions
// (single, uniform and shuffled frames) share position labels, so that the
// frame principles compare them under one mode; the rate conditions show
// times.
func (c demoCond) labels() string {
	for _, p := range []string{"single:", "uniform:", "shuffled:"} {
		if strings.HasPrefix(c.policy, p) {
			return "position"
		}
	}
	return "time"
}

// demoGrid is the paper's grid (§3.1).
var (
	demoCounts = []int{0, 1, 2, 3, 4, 5, 6, 8, 10, 12}
	demoFreqs  = []float64{0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0}
)

// DemoTrials is a deterministic synthetic study (DemoStudy) for trying the
// report: two simulated models on the paper's grid (seeds seeds per cell)
// over the three domains, several sampling and prompt conditions, TOMATO's
// frame conditions on State Machine, some unparseable answers and some
// failed requests; and both models on CountVideoBench's objects clips
// (DemoObjectsTrials). The numbers are made up; only their shape is
// plausible.
func DemoTrials(seeds int) []results.Trial {
	all := []string{domain.BounceBall, domain.Blinking, domain.StateMachine}
	sm := []string{domain.StateMachine}
	models := []demoModel{
		{name: "sim-flash", skill: 3.2, perN: 0.28, perF: 1.1, domain: map[string]float64{domain.BounceBall: 0, domain.Blinking: -1.6, domain.StateMachine: 1.6},
			conds: []demoCond{
				{"native:1", "structured_trace", 0, all},
				{"fps:4", "structured_trace", 0.5, all},
				{"native:1", "direct", -0.1, all},
				{"single:random", "structured_trace", -2.5, sm},
				{"single:best", "structured_trace", -1.8, sm},
				{"uniform:8", "structured_trace", -0.6, sm},
				{"shuffled:8", "structured_trace", -1.4, sm},
			}, preferred: []int{3, 5}},
		{name: "sim-open-8b", skill: 1.6, perN: 0.45, perF: 0.8, domain: map[string]float64{domain.BounceBall: -0.3, domain.Blinking: -0.8, domain.StateMachine: 0.9},
			conds: []demoCond{{"native:2", "structured_trace", 0, all}}, preferred: []int{2, 4, 10}},
	}
	finished := time.Date(2025, 11, 30, 12, 0, 0, 0, time.UTC)
	var out []results.Trial
	for _, m := range models {
		for _, c := range m.conds {
			for _, d := range c.domains {
				for _, n := range demoCounts {
					fs := demoFreqs
					if n == 0 {
						fs = []float64{1.0}
					}
					for _, f := range fs {
						for s := range seeds {
							tr := DemoTrace(d, n, f, s)
							out = append(out, m.trial(c, tr, finished))
						}
					}
				}
			}
		}
	}
	return append(out, DemoObjectsTrials(2*seeds)...)
}

// demoRand is a deterministic uniform number in [0, 1) for one decision.
func demoRand(parts ...any) float64 {
	h := fnv.New64a()
	fmt.Fprint(h, parts...)
	return float64(h.Sum64()>>11) / (1 << 53)
}

func (m demoModel) trial(c demoCond, tr *trace.Trace, finished time.Time) results.Trial {
	raw, _ := json.Marshal(tr)
	t := results.Trial{Key: results.Key{Study: DemoStudy, Model: m.name, Clip: tr.ID, Policy: c.policy, Labels: c.labels(), Prompt: c.prompt},
		Domain: tr.Domain, N: tr.N, F: tr.F, Seed: tr.Seed, Trace: raw, Images: 24, ImageBytes: 24 * 40000,
		Usage: results.Usage{PromptTokens: 6200, CompletionTokens: 180 + 40*tr.N}, LatencyMS: 2400 + int64(300*tr.N),
		Attempts: 1, FinishedAt: finished}
	t.Usage.TotalTokens = t.Usage.PromptTokens + t.Usage.CompletionTokens
	t.CostUSD = float64(t.Usage.TotalTokens) * 1.5e-6
	rnd := func(what ...any) float64 {
		return demoRand(append([]any{m.name, c.policy, c.prompt, tr.ID}, what...)...)
	}
	if rnd("fail") < 0.012 {
		t.Error, t.ErrorKind, t.Attempts = "request timed out after 120s", results.KindTimeout, 3
		t.Usage, t.CostUSD = results.Usage{}, 0
		return t
	}
	n := tr.N
	logit := m.skill + m.domain[tr.Domain] + c.bonus - m.perN*float64(max(n-1, 0)) - m.perF*(tr.F-0.5)
	if n == 0 {
		logit = m.skill + 0.5
	}
	correct := rnd("correct") < 1/(1+math.Exp(-logit))
	var count int
	switch {
	case correct:
		count = n
	case rnd("prefer") < 0.35:
		count = m.preferred[int(rnd("which")*float64(len(m.preferred)))]
		if count == n {
			count = n + 1
		}
	default:
		// Under-report at high load, over-report at low load.
		delta := 1 + int(rnd("delta")*3)
		if n >= 4 && rnd("dir") < 0.75 || n > 0 && rnd("dir") < 0.3 {
			delta = -min(delta, n)
		}
		count = n + delta
	}
	if rnd("unparseable") < 0.02 {
		t.Responses = []string{"I cannot determine the exact number of events."}
		t.ParseFlags = []string{"refusal", "unparseable_count"}
	} else {
		t.Count = &count
		t.CountSource = "boxed"
		t.Responses = []string{fmt.Sprintf("… Final answer: \\boxed{%d}", count)}
	}
	// Reported events: each true event is recovered with a probability that
	// falls with F; a recovered one is jittered, sometimes out of window.
	recall := 0.95 - 0.18*(tr.F-0.5) - 0.03*float64(n)
	if correct {
		recall += 0.15
	}
	for i, e := range tr.Events {
		if rnd("recall", i) > recall {
			continue
		}
		jitter := (rnd("jitter", i) - 0.5) * 0.6 / tr.F
		ev := parse.Event{T: round6(max(0, e.T+jitter)), Text: "event"}
		if rnd("attr", i) < 0.1 && e.Attrs["wall"] != "" {
			ev.Attrs = map[string]string{"wall": "left"}
		}
		t.Events = append(t.Events, ev)
	}
	// Hallucinations, more at low load.
	for j := range int(rnd("halluc") * 2.4 / float64(1+n/3)) {
		t.Events = append(t.Events, parse.Event{T: round6(0.5 + 23*rnd("ht", j)), Text: "event"})
	}
	sortEvents(t.Events)
	return t
}

// sortEvents sorts reports by time, as the parser returns them.
func sortEvents(evs []parse.Event) {
	for i := 1; i < len(evs); i++ {
		for j := i; j > 0 && evs[j].T < evs[j-1].T; j-- {
			evs[j], evs[j-1] = evs[j-1], evs[j]
		}
	}
}

// DemoObjectsTrials simulates CountVideoBench's protocol (uniform:10 ·
// countvideobench) for the two demo models on objects clips made by
// package scene at the benchmark's 26 cardinalities, perCount clips each
// (class j mod 10, seed j/10: ten or more cover every class, §4.3). The
// flash model errs by near misses and avoids 30; the small one drifts to
// its preferred values 10, 20, 30, 50 and abstains more as N grows, the
// two behaviours of CVB §6. A few requests fail.
func DemoObjectsTrials(perCount int) []results.Trial {
	classes := scene.ObjectClasses()
	finished := time.Date(2025, 11, 30, 12, 30, 0, 0, time.UTC)
	var out []results.Trial
	for _, n := range scene.CountVideoBenchCounts {
		for j := range perCount {
			p := scene.Params{Domain: domain.Objects, N: n, Class: classes[j%len(classes)], Seed: j / len(classes),
				Duration: scene.CountVideoBenchDuration, FPS: scene.DefaultFPS, Width: 854, Height: 480}
			c, err := scene.New(p)
			if err != nil {
				continue // cannot happen for the benchmark's own parameters
			}
			tr := c.Trace()
			raw, err := json.Marshal(tr)
			if err != nil {
				continue
			}
			for _, model := range []string{"sim-flash", "sim-open-8b"} {
				out = append(out, demoObjectsTrial(model, tr, raw, finished))
			}
		}
	}
	return out
}

func demoObjectsTrial(model string, tr *trace.Trace, raw []byte, finished time.Time) results.Trial {
	// The domain's own protocol (CountVideoBench: uniform:10 ·
	// countvideobench).
	policy, prompt := domain.Of(domain.Objects).Policy, domain.Of(domain.Objects).Prompt
	t := results.Trial{Key: results.Key{Study: DemoStudy, Model: model, Clip: tr.ID, Policy: policy, Labels: "time", Prompt: prompt},
		Domain: tr.Domain, N: tr.N, F: tr.F, Seed: tr.Seed, Trace: raw, Images: 10, ImageBytes: 10 * 40000,
		FrameTimes: []float64{0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5},
		Usage:      results.Usage{PromptTokens: 4300, CompletionTokens: 18}, LatencyMS: 1800, Attempts: 1, FinishedAt: finished}
	t.Usage.TotalTokens = t.Usage.PromptTokens + t.Usage.CompletionTokens
	t.CostUSD = float64(t.Usage.TotalTokens) * 1.5e-6
	rnd := func(what ...any) float64 { return demoRand(append([]any{model, tr.ID}, what...)...) }
	if rnd("fail") < 0.01 {
		t.Error, t.ErrorKind, t.Attempts = "HTTP 503: overloaded", results.KindServer, 4
		t.Usage, t.CostUSD = results.Usage{}, 0
		return t
	}
	n := tr.N
	var count int
	abstain := false
	if model == "sim-flash" {
		// Exact for small N, then near misses growing with N; 30 is avoided.
		if rnd("correct") < 1/(1+math.Exp(0.22*float64(n-12))) {
			count = n
		} else {
			d := 1 + int(rnd("d")*float64(1+n/8))
			if rnd("sign") < 0.6 {
				d = -d
			}
			count = n + d
		}
		if count == 30 {
			count = 31
		}
		abstain = rnd("abstain") < 0.02
	} else {
		preferred := []int{10, 20, 30, 50}
		closest := preferred[0]
		for _, v := range preferred {
			if math.Abs(float64(v-n)) < math.Abs(float64(closest-n)) {
				closest = v
			}
		}
		count = closest
		if rnd("exact") < 0.25 {
			count = n
		}
		abstain = rnd("abstain") < float64(n)/120
	}
	if abstain {
		t.Responses = []string{"There are many " + tr.Class + " objects; I cannot count them exactly."}
		t.ParseFlags = []string{"unparseable_count"}
		return t
	}
	t.Count, t.CountSource = &count, "last_integer"
	t.Responses = []string{fmt.Sprintf("There are %d objects of that kind in this video.", count)}
	return t
}
