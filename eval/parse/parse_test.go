package parse

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

const none = -1 // expected Count nil

const fence = "```"

type ev struct {
	t float64
	a map[string]string
}

func wall(w string) map[string]string  { return map[string]string{"wall": w} }
func phase(p string) map[string]string { return map[string]string{"phase": p} }
func trans(f, t string) map[string]string {
	m := map[string]string{}
	if f != "" {
		m["from"] = f
	}
	if t != "" {
		m["to"] = t
	}
	return m
}

type replyCase struct {
	name   string
	domain string
	reply  string
	count  int // none for nil
	src    string
	events []ev
	excl   map[int]string // index in events → Event.Excluded; absent means counted
	flags  []string
}

// Realistic replies: structured ledgers in several formats, tables,
// JSON, prose, chain of thought, refusals. Counts and events are checked
// independently; a count that disagrees with the ledger is kept as is.
var replyCases = []replyCase{
	{
		name: "gemini_ledger_boxed", domain: "bounce_ball",
		reply: `Event ledger:
1. 00:02.0 — contact with the left wall
2. 00:03.0 — contact with the top wall
3. 00:04.0 — contact with the right wall
4. 00:05.0 — contact with the bottom wall
5. 00:06.0 — contact with the left wall

The ball contacts a wall 5 times.

\boxed{5}`,
		count: 5, src: SourceBoxed,
		events: []ev{{2, wall("left")}, {3, wall("top")}, {4, wall("right")}, {5, wall("bottom")}, {6, wall("left")}},
	},
	{
		name: "ledger_wrong_accumulation", domain: "bounce_ball",
		reply: `Step-by-step ledger:
- 00:01.5 | bottom
- 00:02.0 | right
- 00:02.5 | top
- 00:03.0 | left
- 00:03.5 | bottom
- 00:04.0 | right

Final answer: 5`,
		count: 5, src: SourceFinalAnswer,
		events: []ev{{1.5, wall("bottom")}, {2, wall("right")}, {2.5, wall("top")}, {3, wall("left")}, {3.5, wall("bottom")}, {4, wall("right")}},
	},
	{
		name: "markdown_table_clock", domain: "bounce_ball",
		reply: `| # | Time | Wall |
|---|------|------|
| 1 | 0:01.5 | Left |
| 2 | 0:02.5 | Top |
| 3 | 0:03.5 | Right |

**Total bounces:** 3`,
		count: 3, src: SourceFinalAnswer,
		events: []ev{{1.5, wall("left")}, {2.5, wall("top")}, {3.5, wall("right")}},
	},
	{
		name: "markdown_table_seconds_header", domain: "blinking",
		reply: `| Blink | t (s) | Phase |
|:-----:|:-----:|:-----:|
| 1 | 2.25 | on |
| 2 | 2.75 | on |
| 3 | 3.25 | on |
| 4 | 3.75 | on |

The light blinked **4** times.`,
		count: 4, src: SourceLastInteger,
		events: []ev{{2.25, phase("on")}, {2.75, phase("on")}, {3.25, phase("on")}, {3.75, phase("on")}},
	},
	{
		name: "markdown_table_state_columns", domain: "state_machine",
		reply: `| Event | Timestamp | From | To |
|---|---|---|---|
| 1 | 00:10.0 | P | Q |
| 2 | 00:12.0 | Q | S |
| 3 | 00:14.0 | S | T |
| 4 | 00:16.0 | T | P |

Total number of transitions: 4`,
		count: 4, src: SourceFinalAnswer,
		events: []ev{{10, trans("P", "Q")}, {12, trans("Q", "S")}, {14, trans("S", "T")}, {16, trans("T", "P")}},
	},
	{
		name: "json_events_final_count", domain: "state_machine",
		reply: fence + `json
{
  "events": [
    {"time": "00:04.0", "from": "S1", "to": "S2"},
    {"time": "00:05.0", "from": "S2", "to": "S4"},
    {"time": "00:06.0", "from": "S4", "to": "S5"}
  ],
  "final_count": 3
}
` + fence,
		count: 3, src: SourceFinalAnswer,
		events: []ev{{4, trans("S1", "S2")}, {5, trans("S2", "S4")}, {6, trans("S4", "S5")}},
	},
	{
		name: "json_multiline_objects", domain: "bounce_ball",
		reply: `[
  {
    "timestamp": 1.25,
    "wall": "bottom",
    "count": 1
  },
  {
    "timestamp": 1.75,
    "wall": "right",
    "count": 2
  }
]
Total: 2`,
		count: 2, src: SourceFinalAnswer,
		events: []ev{{1.25, wall("bottom")}, {1.75, wall("right")}},
	},
	{
		name: "json_time_list", domain: "blinking",
		reply: `{"timestamps": [1.0, 2.5, 4.0], "count": 3}`,
		count: 3, src: SourceFinalAnswer,
		events: []ev{{1, nil}, {2.5, nil}, {4, nil}},
	},
	{
		name: "prose_with_non_events", domain: "bounce_ball",
		reply: `The ball hits the top wall at 3.0 s and the left wall at 4.0 s. At 5.0 s the ball is in the middle of the box, and at 5.4 s it hits the right wall. There is no bounce at 7 s.
So the ball bounces 3 times. \boxed{3}`,
		count: 3, src: SourceBoxed,
		events: []ev{{3, wall("top")}, {4, wall("left")}, {5.4, wall("right")}},
	},
	{
		name: "cot_many_intermediate_numbers", domain: "bounce_ball",
		reply: `Let me analyze the video step by step. The clip is 24 seconds long and I sample it at 2 fps, which gives 48 frames.
- Frames 1-10: the ball travels from the center toward the right.
- Around frame 11 (about 5.5 s) the ball hits the right wall.
- At 6.5 s it strikes the top wall.
- At 7.5 s it bounces off the left wall.
- At 8.5 s it touches the bottom wall.
- At 9.5 s it hits the right wall again.
- At 10.5 s it bounces off the top wall.
After that the ball keeps moving for the remaining 13 seconds.
Counting: 1, 2, 3, 4, 5, 6.
So the answer is 6.`,
		count: 6, src: SourceFinalAnswer,
		events: []ev{{5.5, wall("right")}, {6.5, wall("top")}, {7.5, wall("left")}, {8.5, wall("bottom")}, {9.5, wall("right")}, {10.5, wall("top")}},
	},
	{
		name: "cot_last_integer_only", domain: "blinking",
		reply: `I looked at the frames one by one. The square flashes at 2.0 s, 2.5 s and 3.0 s; around 3.5 s it flashes once more. Between the flashes it stays dark. Counting them gives 4.`,
		count: 4, src: SourceLastInteger,
		events: []ev{{2, nil}, {2.5, nil}, {3, nil}, {3.5, nil}},
	},
	{
		name: "refusal_sorry", domain: "bounce_ball",
		reply: `I'm sorry, but I can't view videos directly. If you can describe the motion of the ball, I can help you count the bounces.`,
		count: none, flags: []string{FlagRefusal, FlagUnparseableCount},
	},
	{
		name: "refusal_cannot_determine", domain: "state_machine",
		reply: `I cannot determine the number of state transitions from the provided frames; the highlighted node is not visible clearly enough.`,
		count: none, flags: []string{FlagRefusal, FlagUnparseableCount},
	},
	{
		name: "hedged_refusal_with_estimate", domain: "bounce_ball",
		reply: `I cannot determine the exact number from the video, but my best estimate is 4 bounces.`,
		count: 4, src: SourceLastInteger,
	},
	{
		name: "multiple_integers_total_phrase", domain: "bounce_ball",
		reply: `There are 4 walls and the ball bounces between them. In the first 10 seconds I saw 3 bounces and then 2 more afterwards. The total is 5.`,
		count: 5, src: SourceFinalAnswer,
	},
	{
		name: "mmss_and_seconds_mixed", domain: "bounce_ball",
		reply: `Bounces: 0:12 (left), 13.5 s (top), 0:15.0 (right).
That makes three bounces.`,
		count: 3, src: SourceNumberWord,
		events: []ev{{12, wall("left")}, {13.5, wall("top")}, {15, wall("right")}},
	},
	{
		name: "hh_mm_ss_ledger", domain: "state_machine",
		reply: `00:00:03.5 — B → C
00:00:04.5 — C → A
Answer: 2`,
		count: 2, src: SourceFinalAnswer,
		events: []ev{{3.5, trans("B", "C")}, {4.5, trans("C", "A")}},
	},
	{
		name: "duplicates_merged_inclusive", domain: "bounce_ball",
		reply: `- 00:03.0 — bounce
- 00:04.0 — bounce (top)
Summary: the first bounce at 3.05 s was on the left wall, the second at 4.1 s on the top wall.
Final answer: 2`,
		count: 2, src: SourceFinalAnswer,
		events: []ev{{3, wall("left")}, {4, wall("top")}},
		flags:  []string{FlagDroppedDuplicates + "2"},
	},
	{
		name: "duplicates_just_outside_window", domain: "blinking",
		reply: `The light flashes at 2.00 s and again at 2.11 s, then at 2.21 s. Final answer: 3`,
		count: 3, src: SourceFinalAnswer,
		// 2.21 is within 0.1 s of 2.11 (inclusive) and merges into it.
		events: []ev{{2, nil}, {2.11, nil}},
		flags:  []string{FlagDroppedDuplicates + "1"},
	},
	{
		name: "out_of_order_ledger", domain: "bounce_ball",
		reply: `Contacts:
1. 00:05.0 — top
2. 00:03.0 — left
3. 00:07.0 — right
Total: 3`,
		count: 3, src: SourceFinalAnswer,
		events: []ev{{3, wall("left")}, {5, wall("top")}, {7, wall("right")}},
		flags:  []string{FlagOutOfOrder},
	},
	{
		name: "hallucinated_extra_lines", domain: "blinking",
		reply: `Blink log:
00:01.0 blink
00:02.0 blink
00:03.0 blink
00:04.0 blink
00:05.0 blink
00:06.0 blink
00:07.0 blink
00:08.0 blink
The light blinks 5 times in total.`,
		count: 5, src: SourceFinalAnswer,
		events: []ev{{1, nil}, {2, nil}, {3, nil}, {4, nil}, {5, nil}, {6, nil}, {7, nil}, {8, nil}},
	},
	{
		name: "ordinals_yield_no_timestamps", domain: "bounce_ball",
		reply: `The ball hits the left wall first, then the top wall second, and the right wall third. The third bounce is the last one.
Final answer: 3`,
		count: 3, src: SourceFinalAnswer,
	},
	{
		name: "frame_numbers_are_not_times", domain: "bounce_ball",
		reply: `Bounce detected at frame 12, frame 24 and frame 36. That is 3 bounces.`,
		count: 3, src: SourceLastInteger,
	},
	{
		name: "frame_with_stated_time", domain: "bounce_ball",
		reply: `Frame 12 (t = 6.0 s): the ball touches the top wall.
Frame 20 (t = 10.0 s): the ball is in the middle.
Total: 1`,
		count: 1, src: SourceFinalAnswer,
		events: []ev{{6, wall("top")}},
	},
	{
		name: "bare_decimal_is_neither_time_nor_count", domain: "bounce_ball",
		reply: `I count 3.5 bounces.`,
		count: none, flags: []string{FlagUnparseableCount},
	},
	{
		name: "number_word_answer", domain: "blinking",
		reply: `Watching the clip, the light blinks seven times.`,
		count: 7, src: SourceNumberWord,
	},
	{
		name: "final_answer_word", domain: "bounce_ball",
		reply: `After reviewing every contact carefully.

### Final Answer
Five`,
		count: 5, src: SourceFinalAnswer,
	},
	{
		name: "zero_never_and_none", domain: "blinking",
		reply: `The light never turns on during the clip.
Final answer: none`,
		count: 0, src: SourceFinalAnswer,
	},
	{
		name: "zero_there_are_no_blinks", domain: "blinking",
		reply: `After watching the whole video carefully, there are no blinks in the video.`,
		count: 0, src: SourceFinalAnswer,
	},
	{
		name: "negative_final_rejected", domain: "bounce_ball",
		reply: `I could not track the ball at 00:02.0 reliably.
Final answer: -1`,
		count: none, flags: []string{FlagRejectedCount, FlagUnparseableCount},
	},
	{
		name: "absurd_boxed_rejected", domain: "bounce_ball",
		reply: `The ball bounces constantly. \boxed{12000}`,
		count: none, flags: []string{FlagRejectedCount, FlagUnparseableCount},
	},
	{
		name: "conflicting_final_answers_last_wins", domain: "bounce_ball",
		reply: `Final answer: 6

Wait, let me recount. I missed a bounce at 00:12.5 on the right wall.

Final answer: 7`,
		count: 7, src: SourceFinalAnswer,
		events: []ev{{12.5, wall("right")}},
		flags:  []string{FlagConflictingFinalAnswers},
	},
	{
		name: "boxed_beats_phrase", domain: "state_machine",
		reply: `The final count is 4.
Actually, re-checking the last switch: \boxed{5}`,
		count: 5, src: SourceBoxed,
		flags: []string{FlagConflictingFinalAnswers},
	},
	{
		name: "boxed_text_wrapper", domain: "bounce_ball",
		reply: `$\boxed{\text{4 bounces}}$`,
		count: 4, src: SourceBoxed,
	},
	{
		name: "boxed_unparseable_then_phrase", domain: "bounce_ball",
		reply: `I am unsure: \boxed{?}
Looking again, the total is 4.`,
		count: 4, src: SourceFinalAnswer,
		flags: []string{FlagUnparseableBoxed},
	},
	{
		name: "answer_tag", domain: "blinking",
		reply: `<answer>3</answer>`,
		count: 3, src: SourceFinalAnswer,
	},
	{
		name: "range_reports_start", domain: "blinking",
		reply: `The light is on from 2.0 to 2.2 s, then again from 3.0 s to 3.2 s.
Answer: 2`,
		count: 2, src: SourceFinalAnswer,
		events: []ev{{2, phase("on")}, {3, phase("on")}},
		flags:  []string{FlagTimeRanges + "2"},
	},
	{
		name: "range_describing_motion_is_not_event", domain: "bounce_ball",
		reply: `Between 0:00 and 0:05 the ball moves toward the right wall. At 0:05.2 it hits the right wall.
1 bounce in total.`,
		count: 1, src: SourceFinalAnswer,
		events: []ev{{5.2, wall("right")}},
	},
	{
		name: "durations_are_not_times", domain: "blinking",
		reply: `The light blinks every 0.5 s, each pulse lasting 0.1 s, starting at 4.0 s. The pulses are 0.5 s apart. In total it blinks 6 times.`,
		count: 6, src: SourceFinalAnswer,
		events: []ev{{4, nil}},
	},
	{
		name: "state_machine_prose", domain: "state_machine",
		reply: `The highlight starts on A. At 1.0 s it moves to B, at 2.0 s from B to D, and at 3.0 s it goes back to A. That is 3 transitions.`,
		count: 3, src: SourceLastInteger,
		events: []ev{{1, trans("", "B")}, {2, trans("B", "D")}, {3, trans("", "A")}},
	},
	{
		name: "state_machine_S_labels_ascii_arrows", domain: "state_machine",
		reply: `Transitions observed:
- 0:02.0: S1 -> S2
- 0:02.5: S2 -> S3
- 0:03.0: S3 -> S1
Total transitions = 3`,
		count: 3, src: SourceFinalAnswer,
		events: []ev{{2, trans("S1", "S2")}, {2.5, trans("S2", "S3")}, {3, trans("S3", "S1")}},
	},
	{
		name: "state_machine_brackets_unicode_arrow", domain: "state_machine",
		reply: `[00:07.0] P ⟶ Q
[00:08.0] Q ⟶ R
[00:09.0] highlight stays on R
Final count: 2`,
		count: 2, src: SourceFinalAnswer,
		// Issue 11: the stative ledger row is kept, excluded (R → R is no
		// transition); it was dropped before.
		events: []ev{{7, trans("P", "Q")}, {8, trans("Q", "R")}, {9, trans("R", "R")}},
		excl:   map[int]string{2: ExcludedNoChange},
		flags:  []string{FlagExcludedEvents + "1"},
	},
	{
		name: "blinking_on_off_ledger", domain: "blinking",
		reply: `00:01.0 ON
00:01.2 OFF
00:02.0 ON
00:02.2 OFF
The light turned on 2 times.`,
		count: 2, src: SourceLastInteger,
		// Issue 11: the OFF lines are kept but are not on-pulses.
		events: []ev{{1, phase("on")}, {1.2, phase("off")}, {2, phase("on")}, {2.2, phase("off")}},
		excl:   map[int]string{1: ExcludedOffPhase, 3: ExcludedOffPhase},
		flags:  []string{FlagExcludedEvents + "2"},
	},
	{
		name: "blinking_prose_phases", domain: "blinking",
		reply: `At 3.5 s the square lights up, and it goes dark again at 3.7 s. Answer: 1`,
		count: 1, src: SourceFinalAnswer,
		events: []ev{{3.5, phase("on")}, {3.7, phase("off")}},
		excl:   map[int]string{1: ExcludedOffPhase},
		flags:  []string{FlagExcludedEvents + "1"},
	},
	{
		name: "blinking_state_descriptions_dropped", domain: "blinking",
		reply: `At 5.0 s the light is off. At 6.0 s it is still off. The first flash happens at 6.5 s.
Answer: 1`,
		count: 1, src: SourceFinalAnswer,
		events: []ev{{6.5, nil}},
	},
	{
		name: "think_block_answer_after", domain: "bounce_ball",
		reply: `<think>Let me count... at 1.0 s a bounce, 2.0 s another... maybe 5?</think>
The ball bounces 4 times.
Final answer: 4`,
		count: 4, src: SourceFinalAnswer,
		events: []ev{{1, nil}, {2, nil}},
	},
	{
		name: "think_block_truncated", domain: "bounce_ball",
		reply: `<think>I see bounces at 1.0 s and 2.0 s, so 2 bounces up to here`,
		count: 2, src: SourceLastInteger,
		events: []ev{{1, nil}, {2, nil}},
	},
	{
		name: "unknown_domain_times_without_attrs", domain: "objects",
		reply: `1. 00:02.0 — contact with the left wall
2. 00:03.0 — contact with the top wall
Final answer: 2`,
		count: 2, src: SourceFinalAnswer,
		events: []ev{{2, nil}, {3, nil}},
	},
	{
		name: "brackets_and_t_equals", domain: "bounce_ball",
		reply: `[1.5] bounce (left)
[3.0] bounce (right)
t=4.5: bounce (top)
Total: 3`,
		count: 3, src: SourceFinalAnswer,
		events: []ev{{1.5, wall("left")}, {3, wall("right")}, {4.5, wall("top")}},
	},
	{
		name: "at_integer_and_fps_not_times", domain: "bounce_ball",
		reply: `The count is at 3 now. At 4 fps I can barely see the ball. The final count is 3.`,
		count: 3, src: SourceFinalAnswer,
	},
	{
		name: "seconds_word_forms", domain: "bounce_ball",
		reply: `Contacts: at 2 seconds (left), at 3.5 sec (top), at 5s (right), and at 6.5 secs (bottom). Final count = 4`,
		count: 4, src: SourceFinalAnswer,
		events: []ev{{2, wall("left")}, {3.5, wall("top")}, {5, wall("right")}, {6.5, wall("bottom")}},
	},
	{
		name: "milliseconds", domain: "blinking",
		reply: `The first flash is at 1500 ms and the second at 2000 ms. Two flashes.`,
		count: 2, src: SourceNumberWord,
		events: []ev{{1.5, nil}, {2, nil}},
	},
	{
		name: "echoed_format_example_dropped", domain: "bounce_ball",
		reply: `Format: mm:ss.s — wall (e.g. 00:01.5 — left)
00:02.0 — right
Final answer: 1`,
		count: 1, src: SourceFinalAnswer,
		events: []ev{{2, wall("right")}},
	},
	{
		name: "question_is_not_a_report", domain: "bounce_ball",
		reply: `Is there a bounce at 4.0 s? Looking closer, yes: the ball hits the bottom wall at 4.1 s. Final answer: 1`,
		count: 1, src: SourceFinalAnswer,
		events: []ev{{4.1, wall("bottom")}},
	},
	{
		name: "hedge_not_sure_is_not_negation", domain: "bounce_ball",
		reply: `00:03.5 — left wall (not sure)
00:05.0 — no contact, the ball is mid-air
Final answer: 1`,
		count: 1, src: SourceFinalAnswer,
		events: []ev{{3.5, wall("left")}},
	},
	{
		name: "time_list_label", domain: "bounce_ball",
		reply: `Bounce times (s): 1.25, 2.5, 3.75
Number of bounces: 3`,
		count: 3, src: SourceFinalAnswer,
		events: []ev{{1.25, nil}, {2.5, nil}, {3.75, nil}},
	},
	{
		name: "running_counts_in_ledger", domain: "bounce_ball",
		reply: `00:01.0 left wall (running total: 1)
00:02.0 right wall (running total: 2)
00:03.0 top wall (running total: 3)`,
		count: 3, src: SourceLastInteger,
		events: []ev{{1, wall("left")}, {2, wall("right")}, {3, wall("top")}},
	},
	{
		name: "srt_style_range", domain: "blinking",
		reply: `00:00:01,500 --> 00:00:01,700 light on
00:00:02,500 --> 00:00:02,700 light on
Answer: 2`,
		count: 2, src: SourceFinalAnswer,
		events: []ev{{1.5, phase("on")}, {2.5, phase("on")}},
		flags:  []string{FlagTimeRanges + "2"},
	},
	{
		name: "table_without_header", domain: "bounce_ball",
		reply: `| 1 | 00:01.0 | left |
| 2 | 00:02.0 | right |
2 bounces.`,
		count: 2, src: SourceLastInteger,
		events: []ev{{1, wall("left")}, {2, wall("right")}},
	},
	{
		name: "bare_decimal_ledger", domain: "bounce_ball",
		reply: `1.5 — left
3.0 — top
4.5 — right
Total number of bounces: 3`,
		count: 3, src: SourceFinalAnswer,
		events: []ev{{1.5, wall("left")}, {3, wall("top")}, {4.5, wall("right")}},
	},
	{
		name: "stative_ledger_rows_dropped", domain: "bounce_ball",
		reply: `00:00.0 — start, ball at center
00:01.0 — ball moving toward the top wall
00:01.4 — top wall
00:24.0 — end of video
Count: 1`,
		count: 1, src: SourceFinalAnswer,
		events: []ev{{1.4, wall("top")}},
	},
	{
		name: "direct_answer_digit_only", domain: "blinking",
		reply: `7`,
		count: 7, src: SourceLastInteger,
	},
	{
		name: "empty_reply", domain: "blinking",
		reply: ``,
		count: none, flags: []string{FlagUnparseableCount},
	},
	{
		name: "invalid_clock_flagged", domain: "bounce_ball",
		reply: `Bounce at 00:75 and at 00:08.0.
Final answer: 1`,
		count: 1, src: SourceFinalAnswer,
		events: []ev{{8, nil}},
		flags:  []string{FlagInvalidTimestamp},
	},
}

func TestParseReplies(t *testing.T) {
	if len(replyCases) < 40 {
		t.Fatalf("only %d reply cases; the issue asks for at least 40", len(replyCases))
	}
	seen := map[string]bool{}
	for _, tc := range replyCases {
		if seen[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			checkResult(t, Parse(tc.reply, tc.domain), tc)
		})
	}
}

func checkResult(t *testing.T, got Result, tc replyCase) {
	t.Helper()
	switch {
	case tc.count == none && got.Count != nil:
		t.Errorf("Count = %d, want nil", *got.Count)
	case tc.count != none && got.Count == nil:
		t.Errorf("Count = nil, want %d", tc.count)
	case tc.count != none && *got.Count != tc.count:
		t.Errorf("Count = %d, want %d", *got.Count, tc.count)
	}
	if got.CountSource != tc.src {
		t.Errorf("CountSource = %q, want %q", got.CountSource, tc.src)
	}
	if len(got.Events) != len(tc.events) {
		t.Errorf("%d events, want %d:\n%s", len(got.Events), len(tc.events), dumpEvents(got.Events))
	} else {
		for i, e := range got.Events {
			w := tc.events[i]
			if math.Abs(e.T-w.t) > 1e-9 {
				t.Errorf("event %d at %v, want %v (%q)", i, e.T, w.t, e.Text)
			}
			if !reflect.DeepEqual(e.Attrs, w.a) && !(len(e.Attrs) == 0 && len(w.a) == 0) {
				t.Errorf("event %d at %v: attrs %v, want %v (%q)", i, e.T, e.Attrs, w.a, e.Text)
			}
			if e.Text == "" {
				t.Errorf("event %d has no source text", i)
			}
			if e.Excluded != tc.excl[i] {
				t.Errorf("event %d at %v: excluded %q, want %q (%q)", i, e.T, e.Excluded, tc.excl[i], e.Text)
			}
		}
	}
	if !reflect.DeepEqual(got.Flags, tc.flags) && !(len(got.Flags) == 0 && len(tc.flags) == 0) {
		t.Errorf("Flags = %q, want %q", got.Flags, tc.flags)
	}
}

func dumpEvents(evs []Event) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString("  ")
		b.WriteString(strings.TrimSpace(strings.ReplaceAll(e.Text, "\n", " ")))
		b.WriteString("\n")
	}
	return b.String()
}
