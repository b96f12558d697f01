package score

import "github.com/tracegrid/tracegrid/eval/parse"

// FromParsed turns the parser's events into reports with the trace's
// attribute keys: wall, from and to carry over; a blink's phase is the
// state the event leads to, so "phase" becomes "after" (a reported "off"
// is not an on-pulse at all: Exclusion excludes it). Other keys are
// dropped.
//
// Excluded events (parse.Event.Excluded) stay in the result, with Excluded
// set, so that indices match events; ScoreTrial leaves them out of M and
// the alignment. Events stored before the field existed are re-derived by
// Exclusion from their attributes.
func FromParsed(events []parse.Event) []Report {
	out := make([]Report, len(events))
	for i, e := range events {
		out[i].T = e.T
		out[i].Excluded = e.Excluded
		for k, v := range e.Attrs {
			switch k {
			case "wall", "from", "to":
			case "phase":
				k = "after"
			default:
				continue
			}
			if out[i].Attrs == nil {
				out[i].Attrs = map[string]string{}
			}
			out[i].Attrs[k] = v
		}
	}
	return out
}
