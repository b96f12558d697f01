// Package parse reads a video-language model's reply: the final count, and
// the events the reply timestamps explicitly (low-frequency-trap §3.2,
// Appendix C.8 and C.15). Scores depend on every rule below, so they are
// stated precisely; each has a test.
//
// Parse (and ParseWith, which also takes the times of the frames shown) is
// pure, deterministic, never panics, and treats the count and the events
// independently: a ledger never changes the count and a count never
// creates events (a five-line ledger ending "Final answer: 4" is the
// paper's wrong accumulation, kept as such).
//
// # Final count
//
// The count is sought after the last "</think>" when text follows it (a
// thinking model's answer), else in the whole reply. Precedence, highest
// first; within a level the last occurrence wins:
//
//  1. "boxed": \boxed{N}. LaTeX wrappers are dropped (\boxed{\text{4
//     bounces}} is 4). A \boxed{} without a number is flagged
//     (FlagUnparseableBoxed) and skipped.
//  2. "final_answer": a final-answer phrase followed, after separators
//     (":", "=", "—", markdown, at most two line breaks) and a few filler
//     words ("is", "that there are", "the ball bounced"), by the value:
//     "final answer/count/total/tally/result", "answer is/:", "<answer>",
//     "a total of N", "N … in total", "in total … N", JSON keys "answer",
//     "final_count". Weaker phrases — "the total is N", "total bounces: N",
//     "number of X: N", JSON "count"/"total" — count only outside a ledger
//     row (a line whose time comes before the phrase, or a JSON object
//     holding one time) and without "running", "cumulative", "so far";
//     "Count: N" (or "Bounces: N") counts only on the last non-empty line.
//     Zero phrases give 0: "there are no blinks (in the video).", "no
//     bounces were observed.", "the light never turns on.", and "none"/"no
//     …" directly after "final answer"/"answer". A phrase in a sentence
//     ending with "?" is not an answer.
//  3. "last_integer": the last integer that is not part of a time or range
//     of times ("00:03", "3.5 s", "t=12", "between 2 and 5 s", the "2, 4" of
//     "at 2, 4 and 6 seconds"), not a list index ("1." or "3)" opening a
//     line, "(2)", "Bounce 3:", "#2", a table's index column), not a frame
//     number or rate ("frame 12", "frames 10-15", "4 fps", "30 Hz", "96
//     frames"), not glued to letters ("3rd", "2x", "S1", "GPT-4") and not a
//     fraction or percentage. Decimals are never integers ("I count 3.5
//     bounces" has no count).
//  4. "number_word": the last cardinal word, zero to ninety-nine ("seven",
//     "twenty-one"), except "one" as a pronoun ("one of", "this one") and
//     words naming a duration ("two seconds").
//
// A value that is negative, not an integer (7.0 is 7) or above MaxCount
// is rejected (FlagRejectedCount). At levels 1–2 the reply has answered,
// invalidly, so Count is nil rather than replaced by another number; at
// level 3 the integer is skipped. When boxed values and phrases disagree
// the reply is flagged (FlagConflictingFinalAnswers). With no count, Count
// is nil (scored incorrect) and FlagUnparseableCount is set, plus
// FlagRefusal when the reply declines ("I'm sorry", "I cannot determine",
// "unable to view the video").
//
// # Ambiguous answers
//
// A final answer that names several different counts as alternatives is
// no answer: CountVideoBench §5.1 counts "ambiguous outputs containing
// multiple incompatible integers" as non-responses, which lower Coverage,
// not EM, and taking the last integer ("13" of "12 or 13") would turn doubt
// into a number. The statement the count comes from — the last \boxed{},
// the last final-answer phrase, or at levels 3–4 the sentence of the last
// integer or number word (never an earlier one instead) — is ambiguous when,
// on its line, its value is offered together with another count: "12 or
// 13", "either 12 or 13", "12 bounces, or maybe 13", "12 (or 13)", "12,
// maybe 13", "12 (possibly 13)", "12 to 13", "12-13", "12–13", "between 12
// and 15", "twelve or thirteen", \boxed{12 or 13}, \boxed{12-13},
// \boxed{12, 13}, \boxed{12} or \boxed{13}. Count is then nil,
// FlagAmbiguousCount and FlagUnparseableCount are set and Alternatives
// lists the distinct values. Not alternatives: running counts and earlier
// statements on other lines (a later single final answer stands), times and
// frame numbers (never counts: "between 2 and 5 s", "frames 10-15"), "3 out
// of 4", "from 3 to 4" (a change), "up to 5", "5 or more", arithmetic ("6 −
// 1 = 5"), "4, not 5", and the same value twice ("12 (12 bounces)"). The
// check is line-local: "Final answer: 12" followed on the next line by "or
// maybe 13" is not caught.
//
// # Times
//
// A number is a time only with a temporal cue (C.15); bare decimals are
// not ("I count 3.5 bounces"):
//
//   - clock forms mm:ss, m:ss.s, hh:mm:ss(.s), and SRT "00:00:03,500"; a
//     field out of range ("00:75") is ignored and flagged;
//   - a time unit: "3.5 s", "3.5s", "3.5 sec", "3.5 seconds", "3500 ms",
//     "1 min 5 s", "1m05s", "the 3.5-second mark";
//   - a key before it (integers too): "t=3.5", "t = 12", "time: 3.5",
//     JSON "t"/"time"/"timestamp"/"onset";
//   - a word cue before a decimal: "at 3.5", "at about 3.5", "@3.5",
//     "from 2.5", "[3.5]" (an integer after "at" is not a time: "the count
//     is at 3");
//   - structure: a decimal opening a ledger line before a separator
//     ("3.5 — left wall"), a cell of a markdown table's time column ("t
//     (s)", "Time", "Timestamp"), a time list ("Bounce times (s): 1.25,
//     2.5", JSON "timestamps": [1.0, 2.5]).
//
// A comma between digits with no space is a decimal comma only where that
// is clear: not three digits after it (thousands), and a time unit after
// it or after the end of a range so written ("8,0 s", "2,5–3,0 s"). A pair
// that could be either ("at 8,9 and 10 s", "1,500 ms") is no time
// (FlagAmbiguousTime); longer runs and JSON arrays are lists ("2,4,6",
// "[1,2]").
//
// Bare numbers listed before a unit share it ("at 2, 4 and 6 seconds").
// Durations are not moments: a unit or clock time after "every", "each",
// "for", "lasting", "in", "within", "after", "first/last/next", "a/an",
// "period/interval/gap of", or before "apart", "long", "later",
// "interval(s)", "of video".
//
// # Frame references
//
// Parse never reads a frame number as a time ("bounce in frame 12" has
// none), unless the reply states the frame's time ("frame 12 (t = 6.0 s)").
// ParseWith with Options.FrameTimes (the sample times of the frames shown,
// in the order shown, as tracegrid eval sends them and frames.json lists
// them by position) reads frame references as times, because open models
// often say "in frame 5" instead of a timestamp (C.15 lists "frame" as a
// temporal cue):
//
//   - "frame k", "Frame #k", "frame no. k", JSON "frame": k, a table column
//     headed "Frame" give FrameTimes[k−1]: k is the 1-based position as
//     labelled ("Frame k of M") or shown, not the time order, so shuffled
//     frames map correctly;
//   - "frames k–l", "frames k to l", "between frames k and l" give frame k's
//     time, the first of the range, as a range of times gives its start: an
//     on-pulse or contact seen over frames k…l began by frame k, and the
//     first frame is the one the reply commits to;
//   - "frames 3, 7 and 12" gives one time per frame;
//   - a number outside 1…len(FrameTimes) (including "frame 0") gives no
//     time and sets FlagFrameOutOfRange (a range with either end outside
//     gives none);
//   - a frame reference next to a time the reply states for it ("frame 12
//     (t = 6.0 s)", "Frame 3 of 96 at t = 1.000 s", "at 6.0 s (frame 12)")
//     gives no time of its own: the stated time stands.
//
// Event.Frame records k for events whose time came from a frame reference.
// The M of an echoed label "Frame k of M" is never the count.
//
// A range — "from 2.0 to 3.0 s", "2.0–3.0 s", "between 2 and 3 seconds",
// "00:02-00:04", "00:00:01,500 --> 00:00:01,700" — is one time at its
// start (C.15 reads "from" as the cue; a blink's "on from 2.0 to 2.2 s"
// starts at its onset) and is counted in the flag "time_ranges:N".
//
// # Events
//
// Each time belongs to a piece of text: its table row (one event per row:
// the time column's time, else the row's first), the innermost JSON object
// holding only that time, or else a clause of its line — the line is split
// into sentences at ". ", "! ", "? ", "; ", and a sentence with several
// times is split between them at the last ",", "and", "then", "but",
// "while", " - " before the next time's cue. A piece is an event when:
//
//   - it is not negated ("no", "not", "never", "nothing", "n't", "without";
//     "not sure" is a hedge, not a negation), not an example or condition
//     ("e.g.", "for example", "format", "if", "whether", "about to"), and
//     not in a question; and
//   - it names an event of the domain (bounce_ball: bounce, hit, strike,
//     touch, contact, collide, reflect, "reaches the … wall"; blinking:
//     blink, flash, pulse, lights up, turns on/off, is on, "ON"; state
//     machine: transition, switch, change, move, jump, enter, leave, go
//     back, "B → C", "from B to C"; any domain: event, occurrence,
//     timestamp; an unknown domain uses all of these), or
//   - it is a structured row (a line opening with its time after bullets,
//     an index or a label like "Bounce 3:", a table row, a JSON object)
//     that is not stative or meta ("ball in the middle", "moving toward",
//     "remains on B", "initial state", "start", "end of video"), or
//   - it is thin — nothing but its time, articles, connectors, ordinals,
//     labels and attribute values ("and the left wall at 4.0 s", ", 3.0 s")
//     — and it is a structured row, or else the nearest non-thin clause of
//     its sentence (before it, else after it) is an event, or else, with no
//     such clause, it states an attribute ("frame 20 (1.0 s) on").
//
// Ordinals ("the third bounce") and counts never produce times. The code
// follows these rules in named passes (events.go: pieces, judge, inherit,
// readAttrs, emit).
//
// # Excluded lines
//
// The paper's counted events are wall contacts, on-pulses and state
// transitions (§3.1). A reported line that positively states something that
// is not an event of its domain is kept in Events, with Event.Excluded set
// and FlagExcludedEvents counting them, but it is not a reported event:
// package score leaves it out of M, the alignment, the taxonomy, ACR and
// RFR. The rule is ExclusionReason on the line's attributes:
//
//   - blinking, phase "off" → ExcludedOffPhase: "00:10.9 — the light turns
//     off", "OFF", "ON → OFF", "goes dark". Without this a correct ledger
//     that also logs each turn-off scored M = 2N, precision 0.5, F1 0.67
//     and landed in accidental correctness;
//   - state_machine, "from" and "to" both stated and equal →
//     ExcludedNoChange: "B → B".
//
// Ledger rows (structured pieces) that the stative rule rejects are kept
// as excluded lines when they state the domain's non-event: blinking "light
// is off" (phase off), state_machine "highlight stays on node B", "remains
// at S2", "still on B", "C (unchanged)" (from = to = the named state). Prose
// statives ("At 5.0 s the light is off."), negations ("no change") and
// stative rows naming nothing ("ball at center") are still not reports at
// all. Merely lacking attributes never excludes: a bare timestamped line,
// "00:02.0 — B", "00:01.0 — blink" are counted events.
//
// # Running counts and ledgers
//
// Event.Running is the running count stated with a line: "running count
// 3", "cumulative total: 3", "(total: 3)", "count so far is 3", "— count 3",
// "c = 3", JSON "count"/"running_count": 3, or a table column headed
// "Count", "Total" or "Running …", looked for in the line's clause up to the
// next time on its line (else the line's end), its table row or its JSON
// object; the first one found, an integer that is not part of a time.
// LastRunningCount is the one written last in the reply (by position, not
// by time), counted or excluded lines alike. LedgerEvents is the number of
// counted events; HasLedger is true when the reply lists any timestamped
// line or states a running count. Package score compares them with the
// final count (self-consistency).
//
// # Attributes
//
// Attrs holds what the piece states, never a guess; unknown domains get
// none. bounce_ball "wall" ∈ top/right/bottom/left (upper, ceiling →
// top; lower, floor → bottom) from a wall column, "wall: left", or a wall
// word followed by wall/side/edge, after a contact ("hits the bottom"), or
// standing alone ("— left", "(top)"); never a direction ("moving to the
// right") or a corner. With several walls, the first after the contact
// verb. blinking "phase" ∈ on/off from a phase/state column, "phase: on",
// an arrow's target ("OFF → ON"), or the first of "turns on", "lights up",
// "lit", "goes dark", a standalone "on"/"OFF"; "blink" alone states no
// phase. state_machine "from"/"to" are labels (a capital letter with up to
// two digits: A, S1, P) from From/To/State columns, "from: B", "B → C",
// "B -> C", "B to C", "from state B to state C", else "to C"/"enters C"
// and "from B"/"leaves B" separately. A thin clause listed after another
// shares its wall or phase when it states none ("the light is on from 2.0
// to 2.2 s, then again from 3.0 to 3.2 s"); transitions are not shared.
//
// # Order and duplicates
//
// Events are sorted by time. Events within DedupWindow (0.1 s, inclusive)
// of the last kept one of the same kind (counted, or excluded) merge into
// it: the earliest is kept, it takes the attributes (and running count) it
// lacks from the merged ones — but never one that would exclude a counted
// event — and the flag "dropped_duplicates:N" counts the merged. A counted
// and an excluded line never merge (an "off" line 0.05 s before an "on"
// line must not swallow the on-pulse). FlagOutOfOrder marks a reply
// that lists a time before an earlier-listed later one, unless it repeats
// an earlier time.
//
// Known limits, by design conservative: a clause whose only event cue is
// a pronoun ("I saw it at 1.5 s") yields no event; retractions ("at 4.0 s
// — no wait, 4.2 s") are not resolved; timestamps inside a <think> block
// are reported events like any other visible text.
package parse
