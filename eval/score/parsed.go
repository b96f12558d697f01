package score

import "github.com/tracegrid/tracegrid/eval/parse"

// FromParsed turns the parser's events into reports with the trace's
// attribute keys: wall, from and to carry over; a blink's phase is the
// state the event leads to, so "phase" becomes "after" (a reported "off"
// aligned with a true on-pulse is then misidentified). Other keys are
// dropped.
func FromParsed(events []parse.Event) []Report {
	out := make([]Report, len(events))
	for i, e := range events {
		out[i].T = e.T
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
