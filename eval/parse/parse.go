package parse

import (
	"math"
	"sort"
	"strconv"
)

// Event is one timestamp the reply states explicitly.
type Event struct {
	T     float64           `json:"t"`               // seconds from the start of the clip
	Attrs map[string]string `json:"attrs,omitempty"` // "wall", "phase", "from", "to" when the reply states them; nil otherwise
	Text  string            `json:"text"`            // the source snippet (the line or clause it came from), for audit
}

// Result is everything Parse extracts from one reply. Count and Events are
// parsed independently: a ledger of five events followed by "Final answer:
// 4" yields Count 4 and five events (the paper's "wrong accumulation").
type Result struct {
	Count       *int     // the final answer; nil when none could be parsed (→ scored incorrect)
	CountSource string   // how it was found: "boxed", "final_answer", "last_integer", "number_word", "" when none
	Events      []Event  // explicit timestamps only, sorted by T, deduplicated within DedupWindow; nil when none
	Flags       []string // sorted; see the Flag constants
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
)

// Parse extracts the final count and the explicitly timestamped events from
// a model reply. domain ("bounce_ball", "blinking", "state_machine") selects
// the event vocabulary and attributes; an unknown domain still yields
// counts and times, with the union vocabulary and no attributes. Parse is
// pure, deterministic and never panics. The rules are in the package doc.
func Parse(reply, domain string) Result {
	d := newDoc(reply, domain)
	d.scanNumbers()
	d.scanTables()
	d.classifyTimes()
	raw := d.extractEvents()

	var res Result
	res.Count, res.CountSource = d.finalCount()
	res.Events = d.finishEvents(raw)
	res.Flags = d.flagList()
	return res
}

// finishEvents sorts the accepted events by time and merges those within
// DedupWindow of the last kept one (anchoring on the kept event, so a chain
// 3.00, 3.08, 3.16 keeps 3.00 and 3.16). The earliest report is kept and
// takes the attributes it lacks from the merged ones.
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
	dropped := 0
	for _, e := range evs {
		if n := len(out); n > 0 && e.T-out[n-1].T <= DedupWindow+dedupEps {
			k := &out[n-1]
			for key, v := range e.Attrs {
				if _, ok := k.Attrs[key]; !ok {
					if k.Attrs == nil {
						k.Attrs = map[string]string{}
					}
					k.Attrs[key] = v
				}
			}
			dropped++
			continue
		}
		out = append(out, e)
	}
	if dropped > 0 {
		d.flag(FlagDroppedDuplicates + strconv.Itoa(dropped))
	}
	return out
}
