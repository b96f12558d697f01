package prompts_test

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/scene"
)

// The policies whose default label mode hides times (keyframes place frames
// at the true events, shuffled hides the true order, single picks one
// frame), and the rate policies for good measure: under position or none
// labels no text of any of them may state a time.
var leakPolicies = []string{"keyframes", "keyframes:0.2", "shuffled:8", "shuffled:5", "single:random", "single:best", "uniform:10", "fps:2", "adaptive:12"}

// wavyPixels is a PixelSource for adaptive whose picture changes with t.
type wavyPixels struct{}

func (wavyPixels) LowRes(t float64) ([]byte, error) {
	b := make([]byte, 64)
	for i := range b {
		b[i] = byte(128 + 100*math.Sin(t*3+float64(i)))
	}
	return b, nil
}

// numberPattern finds the numbers in a text: mm:ss(.s) times (group 1,
// 2) and plain decimals (group 3).
var numberPattern = regexp.MustCompile(`(\d+):(\d{2}(?:\.\d+)?)|(\d+(?:\.\d+)?)`)

func numbers(s string) []float64 {
	var out []float64
	for _, m := range numberPattern.FindAllStringSubmatch(s, -1) {
		if m[1] != "" {
			mm, _ := strconv.ParseFloat(m[1], 64)
			ss, _ := strconv.ParseFloat(m[2], 64)
			out = append(out, mm*60+ss)
			// The parts alone are numbers too ("00:07.5" holds 7.5).
			out = append(out, ss)
			continue
		}
		v, _ := strconv.ParseFloat(m[3], 64)
		out = append(out, v)
	}
	return out
}

func ms(v float64) int64 { return int64(math.Round(v * 1000)) }

// TestNoHiddenTimesInText walks every built-in template × policy × event
// domain × label mode position/none and checks that (1) no text part of the
// request (system, instructions, frame labels, follow-up turn) holds a
// number equal, to the millisecond, to a true event time or a sample time
// — the frame labels are exactly "Frame k of M" (position) or absent
// (none), and the only other numbers allowed are the frame count and the
// clip's duration when they happen to coincide with a time; and (2) the
// text does not depend on the times at all: the same request with every
// event and sample time moved gives the same text.
func TestNoHiddenTimesInText(t *testing.T) {
	set := prompts.Default()
	checked := 0
	for _, dom := range scene.Domains() {
		for _, n := range []int{1, 3, 6} {
			for _, f := range []float64{0.5, 1.5, 3.5} {
				for seed := range 2 {
					c, err := scene.New(scene.Params{Domain: dom, N: n, F: f, Seed: seed, Duration: 24, FPS: 30, Width: 64, Height: 64})
					if err != nil {
						t.Fatal(err)
					}
					events := c.Times()
					sc := sampling.Clip{ID: c.P.ID(), Duration: 24, FPS: 30, Seed: seed, Events: events, Pixels: wavyPixels{}}
					for _, ps := range leakPolicies {
						pol, err := sampling.Parse(ps)
						if err != nil {
							t.Fatal(err)
						}
						plan, err := pol.Plan(sc)
						if err != nil {
							t.Fatalf("%s %s: %v", c.P.ID(), ps, err)
						}
						hidden := map[int64]string{}
						for _, e := range events {
							hidden[ms(e)] = fmt.Sprintf("event time %.3f", e)
						}
						for _, fr := range plan.Frames {
							hidden[ms(fr.T)] = fmt.Sprintf("sample time %.3f", fr.T)
						}
						for _, labels := range []chat.Labels{chat.LabelsPosition, chat.LabelsNone} {
							for _, name := range set.Names() {
								tmpl, _ := set.Get(name)
								if tmpl.Family == prompts.FamilyObjects {
									continue // CountVideoBench's question is about objects, not these clips
								}
								where := fmt.Sprintf("%s %s labels=%s prompt=%s", c.P.ID(), ps, labels, name)
								texts := requestTexts(t, tmpl, dom, plan, labels, 0)
								checkTexts(t, where, texts, hidden, len(plan.Frames), labels)
								moved := requestTexts(t, tmpl, dom, plan, labels, 0.0137)
								if !slices.Equal(texts, moved) {
									t.Errorf("%s: the text changes when the frame times change:\n%q\n%q", where, texts, moved)
								}
								checked++
							}
						}
					}
				}
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d requests checked", checked)
	}
}

// requestTexts builds the request of plan (each sample time moved by
// shift) and returns every text part of both turns.
func requestTexts(t *testing.T, tmpl prompts.Template, dom string, plan sampling.Plan, labels chat.Labels, shift float64) []string {
	t.Helper()
	in := prompts.Input{Domain: dom, Duration: 24, Labels: labels}
	for i, fr := range plan.Frames {
		in.Frames = append(in.Frames, prompts.Frame{Position: i, T: fr.T + shift, DataURL: "data:image/png;base64,AAAA"})
	}
	msgs, err := tmpl.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if follow, ok := tmpl.FollowUpMessage(in); ok {
		msgs = append(msgs, follow)
	}
	var out []string
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Type == chat.TypeText {
				out = append(out, p.Text)
			}
		}
	}
	return out
}

func checkTexts(t *testing.T, where string, texts []string, hidden map[int64]string, frames int, labels chat.Labels) {
	t.Helper()
	allowed := map[int64]bool{ms(float64(frames)): true, ms(24): true}
	labelSeen := 0
	for _, s := range texts {
		if _, _, _, timed, ok := chat.ParseAnyFrameLabel(s); ok {
			if timed || labels == chat.LabelsNone || s != chat.PositionLabel(labelSeen, frames) {
				t.Errorf("%s: label %q (want %q under labels=%s)", where, s, chat.PositionLabel(labelSeen, frames), labels)
			}
			labelSeen++
			continue
		}
		for _, v := range numbers(s) {
			if what, ok := hidden[ms(v)]; ok && !allowed[ms(v)] {
				t.Errorf("%s: text states %v, a hidden %s:\n%s", where, v, what, s)
			}
		}
	}
	if want := map[chat.Labels]int{chat.LabelsPosition: frames, chat.LabelsNone: 0}[labels]; labelSeen != want {
		t.Errorf("%s: %d frame labels, want %d", where, labelSeen, want)
	}
}

// TestLeakCheckCatchesTimes makes sure the check above can fail: a time
// label under keyframes states the event times, and an instruction that
// quotes a sample time is caught.
func TestLeakCheckCatchesTimes(t *testing.T) {
	c, err := scene.New(scene.Params{Domain: scene.Domains()[0], N: 3, F: 1.5, Seed: 1, Duration: 24, FPS: 30, Width: 64, Height: 64})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := sampling.Parse("keyframes")
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Plan(sampling.Clip{ID: "x", Duration: 24, FPS: 30, Events: c.Times()})
	if err != nil {
		t.Fatal(err)
	}
	hidden := map[int64]string{}
	for _, fr := range p.Frames {
		hidden[ms(fr.T)] = "sample time"
	}
	tmpl, _ := prompts.Default().Get("structured_trace")
	texts := requestTexts(t, tmpl, scene.Domains()[0], p, chat.LabelsTime, 0)
	leaks := 0
	for _, s := range texts {
		for _, v := range numbers(s) {
			if _, ok := hidden[ms(v)]; ok {
				leaks++
			}
		}
	}
	if leaks < len(p.Frames) {
		t.Errorf("time labels under keyframes: %d hidden times found in the text, want ≥ %d", leaks, len(p.Frames))
	}
	if got := numbers(fmt.Sprintf("look at 00:%06.3f", p.Frames[1].T)); !slices.ContainsFunc(got, func(v float64) bool { _, ok := hidden[ms(v)]; return ok }) {
		t.Errorf("an mm:ss time was not read: %v", got)
	}
}
