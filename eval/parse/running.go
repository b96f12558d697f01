package parse

import (
	"regexp"
	"sort"
	"strings"

	"github.com/tracegrid/tracegrid/domain"
)

// Running counts stated with a reported line (issue 11 point 8): "running
// count 3", "cumulative total: 3", "(total: 3)", "count so far is 3",
// "— count 3", "c = 3", JSON {"count": 3}, a table's "Count"/"Running
// total" column.
var (
	reRun1 = regexp.MustCompile(`\b(?:running|cumulative)(?:[\s_-]+(?:count|total|tally|sum|number))?(?:\s+so\s+far)?\s*(?:is\b|=|:|→|->)?\s*(\d+)\b`)
	reRun2 = regexp.MustCompile(`\b(?:count|total|tally)(?:\s+(?:of\s+)?[a-z]+)?(?:\s+so\s+far|\s+now)?\s*(?:is\b|=|:|→|->)\s*(\d+)\b`)
	reRun3 = regexp.MustCompile(`(?:^|[(\[,;—–-])\s*(?:count|total|tally)\s+(\d+)\b`)
	reRun4 = regexp.MustCompile(`\bc(?:_?i)?\s*=\s*(\d+)\b`)
	reRun5 = regexp.MustCompile(`"(?:running_?count|cumulative_?count|running_?total|cumulative_?total|count|count_so_far|total_so_far|c|c_i|cumulative|running)"\s*:\s*"?(\d+)`)
	reRuns = []*regexp.Regexp{reRun1, reRun2, reRun3, reRun4, reRun5}
)

// runEnd is where the text that belongs to piece i ends when looking for
// its running count: a table row or JSON object ends with itself; a line
// piece extends to the next piece on its line, else to the end of the line
// ("00:01.0 — left wall. Running count: 1").
func (d *doc) runEnd(pieces []piece, i int) int {
	p := pieces[i]
	if p.row != nil || p.sent < 0 {
		return p.e
	}
	ls, le := d.line(p.st.start)
	if i+1 < len(pieces) {
		if q := pieces[i+1]; q.st.start >= ls && q.st.start < le {
			return max(p.e, q.s)
		}
	}
	return max(p.e, le)
}

// runningCount returns the first running count stated in [p.s, end): the
// value, its position, and whether there is one. The number must be an
// integer that is not (part of) a time.
func (d *doc) runningCount(p piece, end int) (int, int, bool) {
	if p.row != nil {
		if c, ok := p.row.roles["running"]; ok {
			if k := d.firstNumFrom(c[0]); k >= 0 && d.nums[k].start < c[1] && d.countLike(k) {
				return int(d.nums[k].plain), d.nums[k].start, true
			}
		}
	}
	if end <= p.s || end > len(d.w) {
		return 0, 0, false
	}
	text := d.w[p.s:end]
	if !strings.ContainsAny(text, "crt") { // every pattern holds one of these
		return 0, 0, false
	}
	best := -1
	for _, re := range reRuns {
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			pos := p.s + m[2]
			if best >= 0 && pos >= best {
				break
			}
			if k := d.numAt(pos); k >= 0 && d.countLike(k) {
				best = pos
				break
			}
		}
	}
	if best < 0 {
		return 0, 0, false
	}
	return int(d.nums[d.numAt(best)].plain), best, true
}

// firstNumFrom returns the index of the first number starting at or after
// pos, or -1.
func (d *doc) firstNumFrom(pos int) int {
	k := sort.Search(len(d.nums), func(i int) bool { return d.nums[i].start >= pos })
	if k == len(d.nums) {
		return -1
	}
	return k
}

// countLike reports whether number k can be a count: a non-negative
// integer within MaxCount that is not part of a time, not glued to letters
// and carries no unit.
func (d *doc) countLike(k int) bool {
	n := d.nums[k]
	return n.isInt && !n.glued && !n.neg && n.unit == "" && !d.isTimeNum(k) && n.plain <= MaxCount
}

var (
	// "stays on node B", "remains at B", "still in state C", "still B".
	reStaysOn = regexp.MustCompile(`(?i:\b(?:stays?|stayed|staying|remains?|remained|remaining|still|rests?|resting|persists?|persisted))(?:\s+(?i:highlighted|lit|active))?(?:\s+(?i:on|at|in))?\s+(?i:the\s+)?(?i:state\s+|node\s+)?([A-Z][0-9]{0,2})\b`)
	// "B (unchanged)", "B — unchanged", "B, same".
	reLabelSame = regexp.MustCompile(`\b([A-Z][0-9]{0,2})\s*[(\[—–,:-]*\s*(?i:unchanged|same)\b`)
)

// statedNonEvent reads what a stative ledger row states when it is the
// domain's non-event: blinking "light is off" → phase off; state_machine
// "highlight stays on B" → from B to B. nil when the row states neither:
// then it is no report at all (as "ball in the middle" is not).
func (d *doc) statedNonEvent(w, c string) map[string]string {
	switch d.domain {
	case domain.Blinking:
		if phaseOf(w, c) == "off" {
			return map[string]string{"phase": "off"}
		}
	case domain.StateMachine:
		m := reStaysOn.FindStringSubmatch(c)
		if m == nil {
			m = reLabelSame.FindStringSubmatch(c)
		}
		if m != nil {
			return map[string]string{"from": m[1], "to": m[1]}
		}
	}
	return nil
}
