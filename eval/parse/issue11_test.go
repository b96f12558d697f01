package parse

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// Issue 11 rules: excluded lines (point 2), ambiguous answers (point 3),
// frame references (point 5), running counts (point 8).

// TestBlinkOffLinesExcluded is the hand case: a correct ledger of
// two on-pulses that also writes when the lamp turns off. The four lines
// are all kept; the two "off" lines are excluded, so the reply lists two
// counted events (M = 2, not 4), and its running counts (1, 1, 2, 2) end
// at 2, equal to the final answer.
func TestBlinkOffLinesExcluded(t *testing.T) {
	r := Parse(`00:10.0 — the light turns on — running count 1
00:10.9 — the light turns off — running count 1
00:12.0 — the light turns on — running count 2
00:12.9 — the light turns off — running count 2
Final answer: 2`, "blinking")
	want := []struct {
		t    float64
		excl string
		run  int
	}{{10, "", 1}, {10.9, ExcludedOffPhase, 1}, {12, "", 2}, {12.9, ExcludedOffPhase, 2}}
	if len(r.Events) != len(want) {
		t.Fatalf("events %v, want 4", times(r))
	}
	for i, w := range want {
		e := r.Events[i]
		if math.Abs(e.T-w.t) > 1e-9 || e.Excluded != w.excl || e.Running == nil || *e.Running != w.run || e.Counted() != (w.excl == "") {
			t.Errorf("event %d = %+v, want t=%v excluded=%q running=%d", i, e, w.t, w.excl, w.run)
		}
	}
	if r.LedgerEvents != 2 || len(r.CountedEvents()) != 2 || !r.HasLedger || r.LastRunningCount == nil || *r.LastRunningCount != 2 {
		t.Errorf("ledger %d, counted %d, has %v, last running %v", r.LedgerEvents, len(r.CountedEvents()), r.HasLedger, r.LastRunningCount)
	}
	if r.Count == nil || *r.Count != 2 || !sameFlags(r.Flags, []string{FlagExcludedEvents + "2"}) {
		t.Errorf("count %v flags %q", r.Count, r.Flags)
	}
}

// TestExcludedLines: what is and is not an event of the domain. A line is
// excluded only when it positively states the domain's non-event; a bare
// timestamped line, or one without attributes, stays an event.
func TestExcludedLines(t *testing.T) {
	cases := []struct {
		domain, reply string
		excl          []string // per event, in time order; "" = counted
	}{
		// blinking: the counted event is the on-pulse.
		{"blinking", "00:01.0 — OFF", []string{ExcludedOffPhase}},
		{"blinking", "00:01.0 — ON → OFF", []string{ExcludedOffPhase}},
		{"blinking", "00:01.0 — OFF → ON", []string{""}},
		{"blinking", "The square goes dark at 3.7 s.", []string{ExcludedOffPhase}},
		{"blinking", "| t (s) | Phase |\n|---|---|\n| 1.0 | on |\n| 1.2 | off |", []string{"", ExcludedOffPhase}},
		{"blinking", `{"t": 1.2, "phase": "off"}`, []string{ExcludedOffPhase}},
		{"blinking", "00:01.0 — light is off", []string{ExcludedOffPhase}}, // a stative ledger row, kept
		{"blinking", "00:01.0 — blink", []string{""}},                      // no phase stated
		{"blinking", "00:01.0", []string{""}},                              // a bare timestamped line
		{"blinking", "At 5.0 s the light is off.", nil},                    // prose state: no report at all, as before
		// state_machine: the counted event changes the state.
		{"state_machine", "00:02.0 — B → B", []string{ExcludedNoChange}},
		{"state_machine", "00:02.0 — highlight stays on node B", []string{ExcludedNoChange}},
		{"state_machine", "00:02.0 — remains at S2", []string{ExcludedNoChange}},
		{"state_machine", "00:02.0 — C (unchanged)", []string{ExcludedNoChange}},
		{"state_machine", "00:02.0 — B", []string{""}},      // names a state, not that it stayed
		{"state_machine", "00:02.0 — B → C", []string{""}},  // a transition
		{"state_machine", "00:02.0 — moves", []string{""}},  // no labels: counted
		{"state_machine", "00:02.0 — no change", nil},       // negated: no report, as before
		{"state_machine", "At 2.0 s it remains on B.", nil}, // prose state: no report
		// bounce_ball and unknown domains have no excluded lines.
		{"bounce_ball", "00:02.0 — left wall", []string{""}},
		{"bounce_ball", "00:00.0 — start, ball at center", nil},
		{"objects", "00:02.0 — OFF", []string{""}},
	}
	for _, c := range cases {
		r := Parse(c.reply, c.domain)
		var got []string
		for _, e := range r.Events {
			got = append(got, e.Excluded)
		}
		if !reflect.DeepEqual(got, c.excl) {
			t.Errorf("%s %q: excluded %q, want %q", c.domain, c.reply, got, c.excl)
		}
	}
}

// TestExcludedNeverMergeWithCounted: an "off" line 0.05 s before an "on"
// line is within DedupWindow but must not swallow the on-pulse; two off
// lines 0.05 s apart merge with each other.
func TestExcludedNeverMergeWithCounted(t *testing.T) {
	r := Parse("t=2.00: light off\nt=2.05: light on\nt=2.08: light off", "blinking")
	if len(r.Events) != 2 || r.Events[0].T != 2 || r.Events[0].Excluded != ExcludedOffPhase || r.Events[1].T != 2.05 || !r.Events[1].Counted() {
		t.Fatalf("events %+v", r.Events)
	}
	if !sameFlags(r.Flags, []string{FlagDroppedDuplicates + "1", FlagExcludedEvents + "1", FlagUnparseableCount}) {
		t.Errorf("flags %q", r.Flags)
	}
	// A counted event never takes an attribute that would exclude it: "it
	// leaves B" (from B) merged with "enters B" (to B) stays a transition.
	r = Parse("t=3.0: the highlight leaves B\nt=3.05: the highlight enters B", "state_machine")
	if len(r.Events) != 1 || !r.Events[0].Counted() || !reflect.DeepEqual(r.Events[0].Attrs, trans("B", "")) {
		t.Errorf("events %+v", r.Events)
	}
}

func TestExclusionReason(t *testing.T) {
	cases := []struct {
		domain string
		attrs  map[string]string
		want   string
	}{
		{"blinking", phase("off"), ExcludedOffPhase},
		{"blinking", phase(" OFF "), ExcludedOffPhase},
		{"blinking", phase("on"), ""},
		{"blinking", nil, ""},
		{"state_machine", trans("B", "B"), ExcludedNoChange},
		{"state_machine", trans("s1", "S1"), ExcludedNoChange},
		{"state_machine", trans("B", "C"), ""},
		{"state_machine", trans("", "B"), ""},
		{"state_machine", trans("B", ""), ""},
		{"bounce_ball", phase("off"), ""},
		{"", trans("B", "B"), ""},
	}
	for _, c := range cases {
		if got := ExclusionReason(c.domain, c.attrs); got != c.want {
			t.Errorf("ExclusionReason(%s, %v) = %q, want %q", c.domain, c.attrs, got, c.want)
		}
	}
}

// TestAmbiguousAnswers: a final answer that names several different
// counts as alternatives gives no count (CountVideoBench §5.1: a
// non-response), whatever the domain and wherever the statement is found.
func TestAmbiguousAnswers(t *testing.T) {
	cases := []struct {
		domain, reply string
		alts          []int
	}{
		{"bounce_ball", "There are either 12 or 13 bounces.", []int{12, 13}},
		{"bounce_ball", "I count 12 or 13 bounces.", []int{12, 13}},
		{"bounce_ball", "Final answer: between 12 and 15", []int{12, 15}},
		{"bounce_ball", `$\boxed{12 \text{ or } 13}$`, []int{12, 13}},
		{"bounce_ball", `\boxed{either 12 or 13}`, []int{12, 13}},
		{"bounce_ball", `\boxed{12} or \boxed{13}`, []int{12, 13}},
		{"bounce_ball", `\boxed{12-13}`, []int{12, 13}},
		{"bounce_ball", "The ball bounces 12-13 times.", []int{12, 13}},
		{"bounce_ball", "Final answer: 12 (or possibly 13)", []int{12, 13}},
		{"bounce_ball", "Final answer: 12, maybe 13.", []int{12, 13}},
		{"bounce_ball", "There are 12 or 13 bounces in total.", []int{12, 13}},
		{"bounce_ball", "A total of 12 or 13 bounces.", []int{12, 13}},
		{"bounce_ball", "Answer: 7 — or 8 if the last contact counts.", []int{7, 8}},
		{"blinking", "There are twelve or thirteen blinks.", []int{12, 13}},
		{"blinking", "**Final count:** 9–10", []int{9, 10}},
		{"blinking", "Final answer: 8 to 9 blinks", []int{8, 9}},
		{"blinking", "The light blinked 5 times, maybe 6.", []int{5, 6}},
		{"blinking", "<answer>6 or 7</answer>", []int{6, 7}},
		{"state_machine", "Answer: 3 or 4 transitions.", []int{3, 4}},
		{"state_machine", "So the answer is either three or four.", []int{3, 4}},
		{"state_machine", `{"answer": "5 or 6"}`, []int{5, 6}},
		{"state_machine", "The final count is 2, or 3 if the first switch counts.", []int{2, 3}},
		{"state_machine", "Total transitions: 4 (possibly 5)", []int{4, 5}},
		{"objects", "I count approximately 23 or 24 cubes in the video.", []int{23, 24}},
		// A ledger whose final answer hedges: the running counts are not
		// the alternatives, the final statement is.
		{"bounce_ball", "00:01.0 left wall (running total: 1)\n00:02.0 right wall (running total: 2)\n00:03.0 top wall (running total: 3)\nFinal answer: 3 or 4", []int{3, 4}},
	}
	for _, c := range cases {
		r := Parse(c.reply, c.domain)
		if r.Count != nil || r.CountSource != "" || !reflect.DeepEqual(r.Alternatives, c.alts) ||
			!contains(r.Flags, FlagAmbiguousCount) || !contains(r.Flags, FlagUnparseableCount) {
			t.Errorf("%s %q: count %v (%s), alternatives %v, flags %q; want no count, alternatives %v", c.domain, c.reply, deref(r.Count), r.CountSource, r.Alternatives, r.Flags, c.alts)
		}
	}
}

// TestAmbiguityLookAlikes: numbers that are not alternative counts.
func TestAmbiguityLookAlikes(t *testing.T) {
	cases := []struct {
		domain, reply string
		count         int
	}{
		{"blinking", "The light is on in 3 out of 4 frames. Final answer: 3", 3},
		{"bounce_ball", "Final answer: 12 (12 bounces)", 12},
		{"bounce_ball", `\boxed{12} ... so \boxed{12}`, 12},
		{"bounce_ball", "I see 6 bounces (or 6 contacts with the walls).", 6},
		{"bounce_ball", "The light blinks 3 times between 2 and 5 seconds.", 3},
		{"bounce_ball", "Frames 10-15 show the ball near the wall. Final answer: 4", 4},
		{"bounce_ball", "Final answer: 5 or more", 5},
		{"bounce_ball", "I count up to 5 bounces.", 5},
		{"state_machine", "The count went from 3 to 4.", 4},
		{"bounce_ball", `\boxed{3 \text{ (out of 4 walls)}}`, 3},
		{"bounce_ball", `\boxed{4 \text{ bounces in } 24 \text{ s}}`, 4},
		{"bounce_ball", "Answer: 4, not 5.", 4},
		{"bounce_ball", "The ball hits the left wall 2 or 3 times, but in total it bounces 6 times.", 6},
		{"bounce_ball", "It bounced 3 times off the left wall and 4 times off the right, so 7 in total.", 7},
		{"bounce_ball", "I counted 4 bounces; an earlier pass gave 5. Final answer: 4", 4},
		{"bounce_ball", "I think it's 4. Or maybe 5? Final answer: 5", 5},
		{"bounce_ball", "Final answer: 4\n\nNote: bounces 2 and 3 were close together.", 4},
		{"blinking", "00:01.0 — flash (running count 1)\n00:02.0 — flash (running count 2)\n00:03.0 — flash (running count 3)\nFinal answer: 3", 3},
		{"blinking", "The light flashes at 2.0 s, 2.5 s or so, and 3.0 s. Final answer: 3", 3},
		{"state_machine", "At 00:12 or 00:13 the highlight moves to C. Final count: 1", 1},
		{"state_machine", "1. 00:01.0 — A → B\n2. 00:02.0 — B → C\nThe highlight changes 2 times.", 2},
		{"bounce_ball", "Before my final answer, let me recount: 1, 2, 3", 3},
		{"objects", "There are 23 red cubes in total; 3 of them leave the view.", 23},
	}
	for _, c := range cases {
		r := Parse(c.reply, c.domain)
		if r.Count == nil || *r.Count != c.count || r.Alternatives != nil || contains(r.Flags, FlagAmbiguousCount) {
			t.Errorf("%s %q: count %v (%s), alternatives %v, flags %q; want %d", c.domain, c.reply, deref(r.Count), r.CountSource, r.Alternatives, r.Flags, c.count)
		}
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// shownTimes: eight frames shown shuffled; FrameTimes is in shown order,
// so "frame 1" is the first frame shown (t = 3.5 s), not the earliest.
var shownTimes = []float64{3.5, 0.5, 2.0, 1.0, 0.0, 3.0, 1.5, 2.5}

func TestFrameReferences(t *testing.T) {
	cases := []struct {
		name, domain, reply string
		times               []float64
		frames              []int // Event.Frame per event
		flags               []string
	}{
		{"frame k is the k-th shown frame", "blinking", "The light flashes in frame 1.", []float64{3.5}, []int{1}, []string{FlagUnparseableCount}},
		{"frame #k", "blinking", "Flash at frame #4.", []float64{1.0}, []int{4}, []string{FlagUnparseableCount}},
		{"a range maps to its first frame", "blinking", "The light is on in frames 5–7.", []float64{0.0}, []int{5}, []string{FlagTimeRanges + "1", FlagUnparseableCount}},
		{"frames k to l", "blinking", "Frames 2 to 3: the light turns on.", []float64{0.5}, []int{2}, []string{FlagTimeRanges + "1", FlagUnparseableCount}},
		{"between frames k and l", "bounce_ball", "The ball hits the top wall between frames 3 and 4.", []float64{2.0}, []int{3}, []string{FlagTimeRanges + "1", FlagUnparseableCount}},
		{"a list of frames", "blinking", "In frames 2, 4 and 8 the light blinks.", []float64{0.5, 1.0, 2.5}, []int{2, 4, 8}, []string{FlagUnparseableCount}},
		{"ledger by frame", "bounce_ball", "Frame 6: ball hits the left wall\nFrame 8 — right wall\nTotal: 2", []float64{2.5, 3.0}, []int{8, 6}, []string{FlagOutOfOrder}},
		{"a stated time wins", "bounce_ball", "Frame 3 (t = 6.0 s): the ball hits the top wall.", []float64{6.0}, []int{0}, []string{FlagUnparseableCount}},
		{"an echoed label's time wins", "blinking", "Frame 3 of 8 at t = 2.000 s: the light turns on.", []float64{2.0}, []int{0}, []string{FlagUnparseableCount}},
		{"time before the frame wins", "blinking", "The light turns on at 1.25 s (frame 3).", []float64{1.25}, []int{0}, []string{FlagUnparseableCount}},
		{"frame 0 is out of range", "blinking", "Frame 0: light on", nil, nil, []string{FlagFrameOutOfRange, FlagUnparseableCount}},
		{"frame 9 of 8 is out of range", "blinking", "Frame 9: light on", nil, nil, []string{FlagFrameOutOfRange, FlagUnparseableCount}},
		{"a range past the end gives none", "blinking", "Frames 7-9: light on", nil, nil, []string{FlagFrameOutOfRange, FlagUnparseableCount}},
		{"a frame column", "blinking", "| Frame | Phase |\n|---|---|\n| 2 | on |\n| 4 | off |", []float64{0.5, 1.0}, []int{2, 4}, []string{FlagExcludedEvents + "1", FlagUnparseableCount}},
		{"a JSON frame key", "blinking", `[{"frame": 6, "phase": "on"}]`, []float64{3.0}, []int{6}, []string{FlagUnparseableCount}},
		{"frame numbers are never the count", "bounce_ball", "Bounces in frame 2 and frame 7.", []float64{0.5, 1.5}, []int{2, 7}, []string{FlagUnparseableCount}},
	}
	for _, c := range cases {
		r := ParseWith(c.reply, Options{Domain: c.domain, FrameTimes: shownTimes})
		var gotT []float64
		var gotF []int
		for _, e := range r.Events {
			gotT = append(gotT, e.T)
			gotF = append(gotF, e.Frame)
		}
		if !sameTimes(gotT, c.times) || !reflect.DeepEqual(gotF, c.frames) || !sameFlags(r.Flags, c.flags) {
			t.Errorf("%s: %q: times %v frames %v flags %q; want %v %v %q", c.name, c.reply, gotT, gotF, r.Flags, c.times, c.frames, c.flags)
		}
		// Without the frame list a frame number is no time, as before.
		for _, e := range Parse(c.reply, c.domain).Events {
			if e.Frame != 0 {
				t.Errorf("%s: Parse without frames gave frame %d", c.name, e.Frame)
			}
		}
		if p := Parse(c.reply, c.domain); !reflect.DeepEqual(p, ParseWith(c.reply, Options{Domain: c.domain})) {
			t.Errorf("%s: Parse and ParseWith without frames differ", c.name)
		}
	}
}

// TestParseUnchangedWithoutFrames: every reply case parses the same with
// ParseWith and no frame list as with Parse.
func TestParseUnchangedWithoutFrames(t *testing.T) {
	for _, tc := range replyCases {
		if a, b := Parse(tc.reply, tc.domain), ParseWith(tc.reply, Options{Domain: tc.domain, FrameTimes: []float64{}}); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: Parse %+v, ParseWith %+v", tc.name, a, b)
		}
	}
}

// TestRunningCounts: the running count stated with each line, the last
// one in the text, and the ledger size (issue 11 point 8).
func TestRunningCounts(t *testing.T) {
	cases := []struct {
		name, domain, reply string
		running             []int // per event; -1 = none
		last, ledger        int   // last = -1 for none
		hasLedger           bool
	}{
		{"parenthesised total", "bounce_ball", "00:01.0 left wall (running total: 1)\n00:02.0 right wall (running total: 2)\nFinal answer: 3", []int{1, 2}, 2, 2, true},
		{"dash count", "bounce_ball", "00:02.1 — the ball hits the left wall (count 1)\n00:03.7 — the ball hits the right wall (count 2)", []int{1, 2}, 2, 2, true},
		{"next sentence on the line", "bounce_ball", "00:01.0 — left wall. Running count: 1.\n00:02.0 — top wall. Running count: 2.", []int{1, 2}, 2, 2, true},
		{"count so far", "blinking", "At 1.0 s the light flashes, count so far is 1; at 2.0 s it flashes again, count so far is 2.", []int{1, 2}, 2, 2, true},
		{"c equals", "state_machine", "00:01.0 A → B, c = 1\n00:02.0 B → C, c = 2", []int{1, 2}, 2, 2, true},
		{"JSON count key", "state_machine", `[{"t": 1.0, "from": "A", "to": "B", "count": 1}, {"t": 2.0, "from": "B", "to": "C", "count": 2}]` + "\nFinal count: 2", []int{1, 2}, 2, 2, true},
		{"table column", "bounce_ball", "| t (s) | Wall | Count |\n|---|---|---|\n| 1.0 | left | 1 |\n| 2.0 | top | 2 |\n| 3.0 | right | 3 |", []int{1, 2, 3}, 3, 3, true},
		{"last by position, not by time", "bounce_ball", "00:05.0 left (count 2)\n00:01.0 right (count 1)", []int{1, 2}, 1, 2, true},
		{"excluded lines carry counts too", "blinking", "00:01.0 on (count 1)\n00:01.2 off (count 1)", []int{1, 1}, 1, 1, true},
		{"a decimal is not a running count", "bounce_ball", "00:01.0 left (count: 2.5)", []int{-1}, -1, 1, true},
		{"ledger without counts", "bounce_ball", "00:01.0 left\n00:02.0 top\nFinal answer: 2", []int{-1, -1}, -1, 2, true},
		{"only excluded lines", "blinking", "00:01.2 off\n00:02.2 off", []int{-1, -1}, -1, 0, true},
		{"no ledger", "bounce_ball", "The ball bounces 4 times. Final answer: 4", nil, -1, 0, false},
		{"a final total is not a running count", "bounce_ball", "00:01.0 left\nTotal: 1", []int{-1}, -1, 1, true},
	}
	for _, c := range cases {
		r := Parse(c.reply, c.domain)
		var got []int
		for _, e := range r.Events {
			v := -1
			if e.Running != nil {
				v = *e.Running
			}
			got = append(got, v)
		}
		last := -1
		if r.LastRunningCount != nil {
			last = *r.LastRunningCount
		}
		if !reflect.DeepEqual(got, c.running) || last != c.last || r.LedgerEvents != c.ledger || r.HasLedger != c.hasLedger {
			t.Errorf("%s: running %v last %d ledger %d has %v; want %v %d %d %v", c.name, got, last, r.LedgerEvents, r.HasLedger, c.running, c.last, c.ledger, c.hasLedger)
		}
	}
}

func TestEventJSON(t *testing.T) {
	r := ParseWith("Frame 2: light off (count 1)", Options{Domain: "blinking", FrameTimes: []float64{0, 0.5}})
	if len(r.Events) != 1 {
		t.Fatalf("events %+v", r.Events)
	}
	b, err := jsonMarshal(r.Events[0])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"t":0.5,"attrs":{"phase":"off"},"text":"Frame 2: light off (count 1)","frame":2,"running":1,"excluded":"off_phase"}`
	if strings.TrimSpace(string(b)) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
