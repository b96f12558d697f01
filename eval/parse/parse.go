package parse

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/tracegrid/tracegrid/domain"
)

// Event is one timestamp the reply states explicitly.
type Event struct {
	T     float64           `json:"t"`               // seconds from the start of the clip
	Attrs map[string]string `json:"attrs,omitempty"` // "wall", "phase", "from", "to" when the reply states them; nil otherwise
	Text  string            `json:"text"`            // the source snippet (the line or clause it came from), for audit
	// Frame is the 1-based shown position k when the time was read from
	// "frame k" (or the first frame of "frames k–l") through
	// Options.FrameTimes; 0 otherwise.
	Frame int `json:"frame,omitempty"`
	// Running is the running count the reply states with this event
	// ("running count 3", "(total: 3)", {"count": 3}); nil when none.
	Running *int `json:"running,omitempty"`
	// Excluded is why this reported line is not an event of the domain
	// (ExcludedOffPhase, ExcludedNoChange); "" for a counted event. An
	// excluded event stays in Result.Events for audit but is not a reported
	// event: scoring ignores it (M, alignment, taxonomy).
	Excluded string `json:"excluded,omitempty"`
}

// Counted reports whether the event is a reported event of its domain
// (Excluded is empty).
func (e Event) Counted() bool { return e.Excluded == "" }

// Result is everything Parse extracts from one reply. Count and Events are
// parsed independently: a ledger of five events followed by "Final answer:
// 4" yields Count 4 and five events (the paper's "wrong accumulation").
type Result struct {
	Count       *int     // the final answer; nil when none could be parsed (→ scored incorrect)
	CountSource string   // how it was found: "boxed", "final_answer", "last_integer", "number_word", "" when none
	Events      []Event  // explicit timestamps only, sorted by T, deduplicated within DedupWindow; nil when none. Excluded ones are flagged, not removed
	Flags       []string // sorted; see the Flag constants
	// Alternatives are the distinct counts of a final answer that names
	// several as alternatives ("12 or 13"), sorted; Count is then nil and
	// FlagAmbiguousCount is set. nil otherwise.
	Alternatives []int
	// Self-consistency inputs (issue 11 point 8). LastRunningCount is the
	// running count stated last in the reply's text with a reported line
	// (counted or excluded), nil when the reply states none. LedgerEvents
	// is the number of counted events. HasLedger is true when the reply
	// lists at least one timestamped line (counted or excluded) or states
	// a running count.
	LastRunningCount *int
	LedgerEvents     int
	HasLedger        bool
}

// CountedEvents returns the events that are reported events of the domain
// (Excluded empty), in order; nil when there are none.
func (r Result) CountedEvents() []Event {
	var out []Event
	for _, e := range r.Events {
		if e.Counted() {
			out = append(out, e)
		}
	}
	return out
}

// Options are the inputs of ParseWith.
type Options struct {
	// Domain (domain.BounceBall, domain.Blinking, domain.StateMachine)
	// selects the event vocabulary, the attributes and the excluded-line
	// rules; any other value uses the union vocabulary and no attributes.
	Domain string
	// FrameTimes are the sample times, in seconds, of the frames shown to
	// the model, in the order shown: FrameTimes[k-1] is the time of the
	// frame labelled (or shown) k-th. With it, "frame k" is a time (see the
	// package doc); nil or empty leaves frame numbers no times, as Parse
	// does.
	FrameTimes []float64
}

// DedupWindow is the distance in seconds within which two reported events
// are the same report (Appendix C.15: "mentions within 0.1 seconds are
// deduplicated"). The window is inclusive: events 0.1 s apart merge.
const DedupWindow = 0.1

// dedupEps absorbs binary rounding, so that 3.0 and 3.1 (3.1-3.0 =
// 0.10000000000000009) are within the inclusive window.
const dedupEps = 1e-9

// MaxCount is the largest final count accepted; larger values are absurd for
// clips of at most a few dozen events and are rejected (FlagRejectedCount).
const MaxCount = 10000

// Count sources, the values of Result.CountSource.
const (
	SourceBoxed       = "boxed"        // the last \boxed{…}
	SourceFinalAnswer = "final_answer" // the last final-answer phrase
	SourceLastInteger = "last_integer" // the last integer that is not a time, index or frame/rate
	SourceNumberWord  = "number_word"  // the last cardinal number word
)

// Flags, the values of Result.Flags. Those ending in ":" carry a count
// ("dropped_duplicates:2").
const (
	// FlagUnparseableCount: no final count could be parsed; Count is nil
	// and the reply is scored incorrect.
	FlagUnparseableCount = "unparseable_count"
	// FlagRefusal: the reply declines or says it cannot determine the count,
	// and no count was parsed.
	FlagRefusal = "refusal"
	// FlagConflictingFinalAnswers: the \boxed{} and final-answer phrases
	// state more than one distinct value; the highest-precedence, last one
	// is used.
	FlagConflictingFinalAnswers = "conflicting_final_answers"
	// FlagRejectedCount: a candidate answer was negative, non-integer or
	// above MaxCount. An explicit (boxed or final-answer) one leaves Count
	// nil; a fallback one is skipped.
	FlagRejectedCount = "rejected_count"
	// FlagUnparseableBoxed: a \boxed{} held no number; the search went on.
	FlagUnparseableBoxed = "unparseable_boxed"
	// FlagOutOfOrder: the reply lists event times out of order (repeats of
	// an earlier time do not count); Events are sorted regardless.
	FlagOutOfOrder = "timestamps_out_of_order"
	// FlagDroppedDuplicates: "dropped_duplicates:N", N events merged into an
	// earlier one within DedupWindow.
	FlagDroppedDuplicates = "dropped_duplicates:"
	// FlagTimeRanges: "time_ranges:N", N events were stated as a range of
	// times and are reported at the range's start.
	FlagTimeRanges = "time_ranges:"
	// FlagInvalidTimestamp: a clock time with a field out of range
	// ("00:75") was ignored.
	FlagInvalidTimestamp = "invalid_timestamp"
	// FlagAmbiguousCount: the final answer names several different counts
	// as alternatives ("12 or 13", "between 12 and 15", \boxed{12 or 13});
	// Count is nil (a non-response, CountVideoBench §5.1) and
	// Result.Alternatives lists them. FlagUnparseableCount is set too.
	FlagAmbiguousCount = "ambiguous_count"
	// FlagExcludedEvents: "excluded_events:N", N reported lines are kept in
	// Events but are not events of the domain (Event.Excluded).
	FlagExcludedEvents = "excluded_events:"
	// FlagFrameOutOfRange: a "frame k" named a frame outside 1…len(FrameTimes)
	// (or 0); it gave no time.
	FlagFrameOutOfRange = "frame_out_of_range"
	// FlagAmbiguousTime: a number with a comma between digits that may be
	// a decimal separator or a list or thousands separator ("at 8,9 and
	// 10 s", "1,500 ms") gave no time.
	FlagAmbiguousTime = "ambiguous_time"
)

// Reasons a reported line is not an event of its domain (Event.Excluded).
const (
	// ExcludedOffPhase: blinking counts on-pulses; a line reporting the
	// lamp turning (or being) off is not an on-pulse.
	ExcludedOffPhase = "off_phase"
	// ExcludedNoChange: state_machine counts transitions, which change the
	// state; a line whose state before and after are the same ("B → B",
	// "stays on node B") reports no transition.
	ExcludedNoChange = "no_state_change"
)

// ExclusionReason is the rule behind Event.Excluded, on the attributes a
// line states (parser keys: "phase", "from", "to"): blinking with phase
// "off" → ExcludedOffPhase; state_machine with "from" and "to" both stated
// and equal → ExcludedNoChange; otherwise "" (counted). Values compare
// case-insensitively after trimming. A line that states no attribute is
// always counted. Package score applies the same rule to reports (whose
// blink phase is keyed "after"), so stored events without the Excluded
// field score the same.
func ExclusionReason(dom string, attrs map[string]string) string {
	switch dom {
	case domain.Blinking:
		if strings.EqualFold(strings.TrimSpace(attrs["phase"]), "off") {
			return ExcludedOffPhase
		}
	case domain.StateMachine:
		f, t := strings.TrimSpace(attrs["from"]), strings.TrimSpace(attrs["to"])
		if f != "" && strings.EqualFold(f, t) {
			return ExcludedNoChange
		}
	}
	return ""
}

// Parse extracts the final count and the explicitly timestamped events from
// a model reply. dom (domain.BounceBall, domain.Blinking,
// domain.StateMachine) selects the event vocabulary and attributes; an
// unknown domain still yields counts and times, with the union vocabulary
// and no attributes. Parse is pure, deterministic and never panics. The rules are in the package doc.
// It is ParseWith without frame times: "frame k" is never a time.
func Parse(reply, dom string) Result {
	return ParseWith(reply, Options{Domain: dom})
}

// ParseWith is Parse with options: with Options.FrameTimes, "frame k" and
// "frames k–l" are times (the package doc has the rule). It is pure,
// deterministic and never panics; FrameTimes is only read.
func ParseWith(reply string, opt Options) Result {
	d := newDoc(reply, opt.Domain)
	d.frameTimes = opt.FrameTimes
	d.scanNumbers()
	d.scanTables()
	d.classifyTimes()
	d.frameRefs()
	raw := d.extractEvents()

	var res Result
	res.Count, res.CountSource = d.finalCount()
	res.Alternatives = d.alternatives
	res.Events = d.finishEvents(raw)
	res.LastRunningCount = d.lastRunning
	for _, e := range res.Events {
		if e.Counted() {
			res.LedgerEvents++
		}
	}
	res.HasLedger = len(res.Events) > 0 || res.LastRunningCount != nil
	res.Flags = d.flagList()
	return res
}

// finishEvents sorts the accepted events by time and merges those within
// DedupWindow of the last kept one of the same kind, counted or excluded
// (anchoring on the kept event, so a chain 3.00, 3.08, 3.16 keeps 3.00 and
// 3.16). The earliest report is kept and takes the attributes (and the
// running count) it lacks from the merged ones, except an attribute that
// would make a counted event excluded. Counted and excluded events never
// merge: a lamp's "off" line 0.05 s before an "on" line must not swallow
// the on-pulse.
func (d *doc) finishEvents(evs []Event) []Event {
	if len(evs) == 0 {
		return nil
	}
	// Out of order: a time earlier than one already listed, unless it
	// repeats an earlier time (a summary restating the first bounce is a
	// duplicate, not disorder).
	// Earlier times by DedupWindow-wide bucket: a duplicate lies in the
	// same or a neighbouring bucket.
	buckets := map[int64][]float64{}
	bucket := func(t float64) int64 { return int64(math.Floor(t / DedupWindow)) }
	maxT := math.Inf(-1)
	for _, e := range evs {
		b := bucket(e.T)
		dup := false
		for _, k := range []int64{b - 1, b, b + 1} {
			for _, t := range buckets[k] {
				dup = dup || math.Abs(t-e.T) <= DedupWindow+dedupEps
			}
		}
		if dup {
			continue // buckets stay small: only non-duplicates are kept
		}
		if e.T < maxT {
			d.flag(FlagOutOfOrder)
			break
		}
		buckets[b] = append(buckets[b], e.T)
		maxT = math.Max(maxT, e.T)
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].T < evs[j].T })
	out := make([]Event, 0, len(evs))
	dropped, excluded := 0, 0
	last := [2]int{-1, -1} // index in out of the last kept counted, excluded event
	for _, e := range evs {
		kind := 0
		if !e.Counted() {
			kind = 1
		}
		if n := last[kind]; n >= 0 && e.T-out[n].T <= DedupWindow+dedupEps {
			d.mergeInto(&out[n], e)
			dropped++
			continue
		}
		last[kind] = len(out)
		out = append(out, e)
		excluded += kind
	}
	if dropped > 0 {
		d.flag(FlagDroppedDuplicates + strconv.Itoa(dropped))
	}
	if excluded > 0 {
		d.flag(FlagExcludedEvents + strconv.Itoa(excluded))
	}
	return out
}

// mergeInto gives the kept event k what a duplicate e states and k lacks:
// attributes (unless one would exclude a counted k) and the running count.
func (d *doc) mergeInto(k *Event, e Event) {
	keys := make([]string, 0, len(e.Attrs))
	for key := range e.Attrs {
		keys = append(keys, key)
	}
	sort.Strings(keys) // deterministic when two keys would each exclude
	for _, key := range keys {
		if _, ok := k.Attrs[key]; ok {
			continue
		}
		if k.Attrs == nil {
			k.Attrs = map[string]string{}
		}
		k.Attrs[key] = e.Attrs[key]
		if k.Counted() && ExclusionReason(d.domain, k.Attrs) != "" {
			delete(k.Attrs, key)
		}
	}
	if len(k.Attrs) == 0 {
		k.Attrs = nil
	}
	if k.Running == nil && e.Running != nil {
		v := *e.Running
		k.Running = &v
	}
}
