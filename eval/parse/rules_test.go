package parse

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Each rule of the package doc, in isolation.

func TestCountPrecedence(t *testing.T) {
	cases := []struct {
		reply string
		count int
		src   string
		flags []string
	}{
		{`\boxed{3} on second thought \boxed{4}`, 4, SourceBoxed, []string{FlagConflictingFinalAnswers}},
		{"Final answer: 7", 7, SourceFinalAnswer, nil},
		{"**Answer:** 7", 7, SourceFinalAnswer, nil},
		{"So the total is 7.", 7, SourceFinalAnswer, nil},
		{"There are 7 bounces in total.", 7, SourceFinalAnswer, nil},
		{"A total of seven bounces.", 7, SourceFinalAnswer, nil},
		{`{"answer": 5}`, 5, SourceFinalAnswer, nil},
		{"Count: 3 so far\nthen two more\nCount: 5", 5, SourceFinalAnswer, nil},
		// "Count:" counts as a final answer only on the last line.
		{"Count: 7\nHope this helps!", 7, SourceLastInteger, nil},
		{"Total so far: 2\nTotal so far: 3", 3, SourceLastInteger, nil},
		// Numbers inside times are never the answer.
		{"Final answer: 00:21", none, "", []string{FlagUnparseableCount}},
		{"The last bounce is at 00:21. Final count = 7", 7, SourceFinalAnswer, nil},
		{"At 3.5 s the ball hits the wall. I see 4", 4, SourceLastInteger, nil},
		// (The range also yields an event at its start, flagged.)
		{"The ball bounced 3 times between 2 and 5 seconds.", 3, SourceLastInteger, []string{FlagTimeRanges + "1"}},
		{"The ball hits the walls at 2, 4 and 6 seconds.", none, "", []string{FlagUnparseableCount}},
		// Indices, frames, rates and glued numbers are not answers.
		{"Frame 12 shows a bounce.", none, "", []string{FlagUnparseableCount}},
		{"Sampled at 4 fps.", none, "", []string{FlagUnparseableCount}},
		{"1. left wall\n2. top wall", none, "", []string{FlagUnparseableCount}},
		{"Bounce 3 at 00:05.0", none, "", []string{FlagUnparseableCount}},
		{"I think 5, but it is a 24-second clip", 5, SourceLastInteger, nil},
		{"Qwen3-VL counts 4", 4, SourceLastInteger, nil},
		{"The ball will bounce 3 times.", 3, SourceLastInteger, nil},
		{"The answer is not 5, it is 6.", 6, SourceLastInteger, nil},
		{"Before my final answer, let me recount: 1, 2, 3", 3, SourceLastInteger, nil},
		// Number words.
		{"seven", 7, SourceNumberWord, nil},
		{"I saw twenty-one blinks.", 21, SourceNumberWord, nil},
		{"zero", 0, SourceNumberWord, nil},
		{"It happened one by one, seven in all.", 7, SourceNumberWord, nil},
		{"none", none, "", []string{FlagUnparseableCount}},
		{"Final answer: none", 0, SourceFinalAnswer, nil},
		{"Final answer: No blinks.", 0, SourceFinalAnswer, nil},
		{"There were no blinks.", 0, SourceFinalAnswer, nil},
		{"There were no blinks at 7 s, but one at 8 s.", 1, SourceNumberWord, nil},
		// Invalid explicit answers are rejected, not replaced.
		{"Final answer: 7.0", 7, SourceFinalAnswer, nil},
		{"Final answer: 7.5", none, "", []string{FlagRejectedCount, FlagUnparseableCount}},
		{"Answer: −2", none, "", []string{FlagRejectedCount, FlagUnparseableCount}},
		{"I counted 3 early on. 99999 bounces", 3, SourceLastInteger, []string{FlagRejectedCount}},
		{`\boxed{}`, none, "", []string{FlagUnparseableBoxed, FlagUnparseableCount}},
		{"There are 7 bounces in total? No, I count 4.", 4, SourceLastInteger, nil},
	}
	for _, c := range cases {
		r := Parse(c.reply, "bounce_ball")
		got := none
		if r.Count != nil {
			got = *r.Count
		}
		if got != c.count || r.CountSource != c.src || !sameFlags(r.Flags, c.flags) {
			t.Errorf("%q: count %d (%s) flags %q, want %d (%s) flags %q", c.reply, got, r.CountSource, r.Flags, c.count, c.src, c.flags)
		}
	}
}

func TestTimestampFormats(t *testing.T) {
	cases := []struct {
		reply string
		want  []float64
	}{
		{"bounce at 00:03", []float64{3}},
		{"bounce at 0:03.5", []float64{3.5}},
		{"bounce at 1:05", []float64{65}},
		{"bounce at 01:02:03.5", []float64{3723.5}},
		{"bounce at 00:00:03,500", []float64{3.5}},
		{"bounce at 3.5 s", []float64{3.5}},
		{"bounce at 3.5s", []float64{3.5}},
		{"bounce at 3.5 seconds", []float64{3.5}},
		{"bounce at 3.5 sec.", []float64{3.5}},
		{"bounce at 12 s", []float64{12}},
		{"bounce at t=3.5", []float64{3.5}},
		{"bounce, t = 12", []float64{12}},
		{"bounce at 3.5", []float64{3.5}},
		{"bounce at around 3.5", []float64{3.5}},
		{"[3.5] bounce", []float64{3.5}},
		{"bounce at 3500 ms", []float64{3.5}},
		{"bounce at 1 min 5.5 s", []float64{65.5}},
		{"bounce at 1m05s", []float64{65}},
		{"bounce at the 3.5-second mark", []float64{3.5}},
		// Ranges report their start (C.15 reads "from" as a cue).
		{"bounce from 2.0 to 3.0 s", []float64{2}},
		{"bounce at 2.0–3.0 s", []float64{2}},
		{"bounce between 2 and 3 seconds", []float64{2}},
		{"bounce at 00:02-00:03", []float64{2}},
		// No temporal cue, no time.
		{"I count 3.5 bounces", nil},
		{"bounce at 3", nil},
		{"bounce in frame 12", nil},
		{"bounce at 4 fps", nil},
		{"bounce at 2.5 Hz", nil},
		{"the third bounce", nil},
		// Durations are not moments.
		{"it bounces every 0.5 s", nil},
		{"a 2 s gap between bounces", nil},
		{"another bounce 0.5 s later", nil},
		{"the bounces are 1.5 s apart", nil},
		{"it bounces for 3 seconds", nil},
		{"it bounces in the first 3 seconds", nil},
		{"a 24-second clip with a bounce", nil},
	}
	for _, c := range cases {
		r := Parse(c.reply, "bounce_ball")
		if got := times(r); !sameTimes(got, c.want) {
			t.Errorf("%q: times %v, want %v", c.reply, got, c.want)
		}
	}
}

func TestRangeFlag(t *testing.T) {
	r := Parse("bounce from 2.0 to 3.0 s", "bounce_ball")
	if !sameFlags(r.Flags, []string{FlagTimeRanges + "1", FlagUnparseableCount}) {
		t.Errorf("flags %q", r.Flags)
	}
}

func TestDedupWindow(t *testing.T) {
	cases := []struct {
		name    string
		reply   string
		want    []ev
		dropped int
	}{
		{"inclusive_boundary", "t=3.0: bounce\nt=3.1: bounce", []ev{{3, nil}}, 1},
		{"just_outside", "t=3.0: bounce\nt=3.11: bounce", []ev{{3, nil}, {3.11, nil}}, 0},
		{"anchored_on_kept", "t=3.00: bounce\nt=3.08: bounce\nt=3.16: bounce", []ev{{3, nil}, {3.16, nil}}, 1},
		{"merge_missing_attrs", "t=3.0: bounce\nt=3.05: bounce (left)", []ev{{3, wall("left")}}, 1},
		{"keep_first_attrs", "t=3.0: bounce (top)\nt=3.05: bounce (left)", []ev{{3, wall("top")}}, 1},
		{"earliest_time_kept", "t=3.05: bounce (left)\nt=3.0: bounce (top)", []ev{{3, wall("top")}}, 1},
		{"identical_repeat", "t=3.0: bounce (top)\nSummary: the bounce at 3.0 s hit the top wall.", []ev{{3, wall("top")}}, 1},
	}
	for _, c := range cases {
		r := Parse(c.reply, "bounce_ball")
		want := []string{FlagUnparseableCount}
		if c.dropped > 0 {
			want = []string{FlagDroppedDuplicates + strconv.Itoa(c.dropped), FlagUnparseableCount}
		}
		checkEvents(t, c.name, r, c.want)
		if !sameFlags(r.Flags, want) {
			t.Errorf("%s: flags %q, want %q", c.name, r.Flags, want)
		}
	}
}

func TestNonEventsYieldNothing(t *testing.T) {
	cases := []struct{ domain, reply string }{
		{"bounce_ball", "At 5.0 s the ball is in the middle."},
		{"bounce_ball", "The ball does not touch the wall at 5.0 s."},
		{"bounce_ball", "At 4.0 s the ball is moving toward the left wall."},
		{"bounce_ball", "The ball is about to hit the top wall at 4.9 s."},
		{"bounce_ball", "If the ball bounced at 4.0 s, the count would change."},
		{"bounce_ball", "Is there a bounce at 4.0 s?"},
		{"bounce_ball", "e.g. 00:01.5 — left"},
		{"bounce_ball", "00:00.0 — start"},
		{"bounce_ball", "The clip is 0:24 long."},
		{"bounce_ball", "I saw it at 1.5 s."},
		{"blinking", "No blink at 7 s."},
		{"blinking", "At 5.0 s the light is off."},
		{"blinking", "Nothing happens at 9.0 s."},
		{"state_machine", "At 2.0 s the highlight remains on B."},
		// Issue 11: a ledger row stating the highlight stays is kept as an
		// excluded line (no_state_change), never a counted event.
		{"state_machine", "00:02.0 — still on B"},
	}
	for _, c := range cases {
		if r := Parse(c.reply, c.domain); len(r.CountedEvents()) != 0 || r.LedgerEvents != 0 {
			t.Errorf("%s %q: counted events %v, want none", c.domain, c.reply, times(r))
		}
	}
}

func TestAttributes(t *testing.T) {
	cases := []struct {
		domain, reply string
		want          map[string]string
	}{
		{"bounce_ball", "It bounces off the ceiling at 2.0 s.", wall("top")},
		{"bounce_ball", "It hits the floor at 2.0 s.", wall("bottom")},
		{"bounce_ball", "It hits the upper edge at 2.0 s.", wall("top")},
		{"bounce_ball", "It bounces in the top-left corner at 2.0 s.", nil},
		{"bounce_ball", "Moving to the right, it hits the left wall at 2.0 s.", wall("left")},
		{"bounce_ball", "Right after that, at 2.0 s, it hits the bottom wall.", wall("bottom")},
		{"bounce_ball", `{"t": 2.0, "wall": "right"}`, wall("right")},
		{"bounce_ball", "t=2.0 wall: left", wall("left")},
		{"blinking", "On-pulse at 2.0 s.", phase("on")},
		{"blinking", "The light switches off at 2.0 s.", phase("off")},
		{"blinking", "00:02.0 — OFF → ON", phase("on")},
		{"blinking", "The light blinks at 2.0 s.", nil},
		{"state_machine", "At 2.0 s the highlight enters C.", trans("", "C")},
		{"state_machine", "At 2.0 s it leaves B.", trans("B", "")},
		{"state_machine", "00:02.0 — S5 → S6", trans("S5", "S6")},
		{"state_machine", "At 2.0 s, transition from state Q to state R.", trans("Q", "R")},
		{"state_machine", `{"t": 2.0, "from": "A", "to": "B"}`, trans("A", "B")},
		{"objects", "00:02.0 — left wall", nil},
	}
	for _, c := range cases {
		r := Parse(c.reply, c.domain)
		checkEvents(t, c.domain+" "+c.reply, r, []ev{{2, c.want}})
	}
}

// The count and the events are parsed independently: a ledger never
// changes the count, a count never creates events.
func TestCountAndEventsIndependent(t *testing.T) {
	r := Parse("00:01.0 — left\n00:02.0 — top\n00:03.0 — right\nFinal answer: 12", "bounce_ball")
	if r.Count == nil || *r.Count != 12 || len(r.Events) != 3 {
		t.Errorf("got count %v and %d events", r.Count, len(r.Events))
	}
	r = Parse("Final answer: 12", "bounce_ball")
	if len(r.Events) != 0 {
		t.Errorf("a count created events: %v", times(r))
	}
}

// Pathological inputs stay roughly linear; a quadratic step would take
// minutes here.
func TestLargeInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("large inputs")
	}
	inputs := []string{
		strings.Repeat("1.5 s, ", 10000),
		"The ball bounces at " + strings.Repeat("1.5 s, ", 10000),
		"at " + strings.Repeat("1, ", 10000) + "2 s",
		strings.Repeat("{", 5000) + "t: 1.5" + strings.Repeat("}", 5000),
		strings.Repeat(`{"t": 1.5, "wall": "left"}, `, 3000),
		strings.Repeat("00:01.0 — left wall\n", 10000),
		"| t | wall |\n|---|---|\n" + strings.Repeat("| 1.5 | left |\n", 10000),
		strings.Repeat("final answer: 3. ", 10000),
		strings.Repeat("7 bounces in total ", 10000),
		strings.Repeat(`\boxed{`, 10000),
		strings.Repeat("a. ", 30000),
	}
	for i, in := range inputs {
		start := time.Now()
		checkInvariants(t, Parse(in, "bounce_ball"), "bounce_ball")
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("input %d (%d bytes) took %v", i, len(in), d)
		}
	}
	// Frame references, excluded lines, ambiguity and running counts.
	inputs = []string{
		strings.Repeat("frame 1 at 1.0 s ", 5000),
		"frames " + strings.Repeat("1, ", 10000),
		strings.Repeat("00:01.0 — B → B (count 1)\n", 10000),
		strings.Repeat("12 or 13 ", 10000),
		strings.Repeat(`\boxed{12} or `, 5000),
		strings.Repeat("t=1.0 light off, ", 5000),
	}
	frames := []float64{0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5}
	for i, in := range inputs {
		for _, domain := range []string{"blinking", "state_machine"} {
			start := time.Now()
			checkInvariants(t, ParseWith(in, Options{Domain: domain, FrameTimes: frames}), domain)
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("input %d (%d bytes, %s) took %v", i, len(in), domain, d)
			}
		}
	}
}

func BenchmarkParse(b *testing.B) {
	reply := replyCases[0].reply + "\n" + replyCases[9].reply
	b.ReportAllocs()
	b.SetBytes(int64(len(reply)))
	for b.Loop() {
		Parse(reply, "bounce_ball")
	}
}

func checkEvents(t *testing.T, name string, r Result, want []ev) {
	t.Helper()
	if len(r.Events) != len(want) {
		t.Errorf("%s: events %v, want %d", name, times(r), len(want))
		return
	}
	for i, e := range r.Events {
		if math.Abs(e.T-want[i].t) > 1e-9 {
			t.Errorf("%s: event %d at %v, want %v", name, i, e.T, want[i].t)
		}
		if !reflect.DeepEqual(e.Attrs, want[i].a) && !(len(e.Attrs) == 0 && len(want[i].a) == 0) {
			t.Errorf("%s: event %d attrs %v, want %v", name, i, e.Attrs, want[i].a)
		}
	}
}

func times(r Result) []float64 {
	var out []float64
	for _, e := range r.Events {
		out = append(out, e.T)
	}
	return out
}

func sameTimes(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return true
}

func sameFlags(a, b []string) bool {
	return reflect.DeepEqual(a, b) || (len(a) == 0 && len(b) == 0)
}
