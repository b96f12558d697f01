package parse

import (
	"regexp"
	"sort"
	"strings"

	"github.com/tracegrid/tracegrid/domain"
)

// tableRow is one row of a markdown table. Columns are known only when the
// table has a header and a separator row.
type tableRow struct {
	start, end int               // the row's line
	cells      [][2]int          // cell spans, outer pipes dropped
	roles      map[string][2]int // "time", "index", "wall", "phase", "from", "to" → cell span
}

var (
	reTableSep = regexp.MustCompile(`^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)+\|?\s*$|^\s*\|\s*:?-{2,}:?\s*\|\s*$`)
	// Header roles, matched against a lowercased, trimmed header cell.
	reHdrNotTime = regexp.MustCompile(`duration|interval|gap|since|delta|length|end|stop|until|Δ`)
	reHdrTime    = regexp.MustCompile(`^(?:t|ts|t \(s\)|sec|secs|seconds?|when|onset.*|start.*|mm:ss.*)$|\btime\b|\btimestamps?\b|time_s|\(s\)|\(sec\)|\(seconds\)|mm:ss`)
	reHdrIndex   = regexp.MustCompile(`^(?:#|no\.?|n|i|idx|index|step|(?:event|bounce|blink|flash|pulse|transition|contact|hit|collision)\s*(?:#|no\.?|number|index|id)?)$`)
	reHdrWall    = regexp.MustCompile(`\b(?:wall|side|edge|surface)\b`)
	reHdrPhase   = regexp.MustCompile(`\b(?:phase|state|status|light|led|on/off)\b`)
	reHdrFrom    = regexp.MustCompile(`^(?:from|from state|prev.*|previous.*|source|before|old.*)$`)
	reHdrFrame   = regexp.MustCompile(`^(?:frames?|frame\s*(?:#|no\.?|number|index|position|k))$`)
	reHdrRunning = regexp.MustCompile(`^(?:running.*|cumulative.*|count|total|tally|(?:count|total) so far|c_?i|c)$`)
	reHdrTo      = regexp.MustCompile(`^(?:to|to state|next.*|new.*|target|after|dest.*|state|current state|state after|resulting state)$`)
)

func (d *doc) cellsOf(start, end int) [][2]int {
	var cells [][2]int
	s := start
	for p := start; p <= end; p++ {
		if p == end || d.w[p] == '|' {
			cells = append(cells, [2]int{s, p})
			s = p + 1
		}
	}
	trim := func(c [2]int) string { return strings.TrimSpace(d.w[c[0]:c[1]]) }
	if len(cells) > 0 && trim(cells[0]) == "" {
		cells = cells[1:]
	}
	if len(cells) > 0 && trim(cells[len(cells)-1]) == "" {
		cells = cells[:len(cells)-1]
	}
	return cells
}

// headerRole names what a header cell's column holds.
func (d *doc) headerRole(h string) string {
	h = strings.TrimSpace(h)
	switch {
	case reHdrFrame.MatchString(h):
		return "frame"
	case reHdrIndex.MatchString(h):
		return "index"
	case reHdrTime.MatchString(h) && !reHdrNotTime.MatchString(h):
		return "time"
	case reHdrRunning.MatchString(h):
		return "running"
	case reHdrFrom.MatchString(h):
		return "from"
	case d.domain == domain.StateMachine && reHdrTo.MatchString(h):
		return "to"
	case reHdrWall.MatchString(h):
		return "wall"
	case d.domain == domain.Blinking && reHdrPhase.MatchString(h):
		return "phase"
	}
	return ""
}

// scanTables finds markdown table rows. A table with a header row and a
// separator row gets column roles; a bare run of "| … |" lines does not.
func (d *doc) scanTables() {
	d.tables = map[int]*tableRow{}
	nl := len(d.lineStarts)
	bounds := func(i int) (int, int) {
		s := d.lineStarts[i]
		e := len(d.w)
		if i+1 < nl {
			e = d.lineStarts[i+1] - 1
		}
		return s, e
	}
	for i := 0; i < nl; i++ {
		s, e := bounds(i)
		ln := d.w[s:e]
		if i+1 < nl && strings.Contains(ln, "|") {
			ns, ne := bounds(i + 1)
			if reTableSep.MatchString(d.w[ns:ne]) {
				roles := map[int]string{}
				for k, c := range d.cellsOf(s, e) {
					if r := d.headerRole(d.w[c[0]:c[1]]); r != "" {
						roles[k] = r
					}
				}
				j := i + 2
				for ; j < nl; j++ {
					rs, re := bounds(j)
					if !strings.Contains(d.w[rs:re], "|") {
						break
					}
					row := &tableRow{start: rs, end: re, cells: d.cellsOf(rs, re), roles: map[string][2]int{}}
					for k, c := range row.cells {
						if r, ok := roles[k]; ok {
							if _, dup := row.roles[r]; !dup {
								row.roles[r] = c
							}
						}
					}
					d.tables[rs] = row
				}
				i = j - 1
				continue
			}
		}
		if t := strings.TrimSpace(ln); strings.HasPrefix(t, "|") && strings.Count(t, "|") >= 2 && !reTableSep.MatchString(ln) {
			d.tables[s] = &tableRow{start: s, end: e, cells: d.cellsOf(s, e), roles: map[string][2]int{}}
		}
	}
}

// rowAt returns the table row holding pos, or nil.
func (d *doc) rowAt(pos int) *tableRow {
	s, _ := d.line(pos)
	return d.tables[s]
}

// tableTime reports whether number i is the first number in the time
// column of a table with a header.
func (d *doc) tableTime(i int) bool {
	n := d.nums[i]
	row := d.rowAt(n.start)
	if row == nil {
		return false
	}
	c, ok := row.roles["time"]
	if !ok || n.start < c[0] || n.end > c[1] {
		return false
	}
	return i == 0 || d.nums[i-1].start < c[0]
}

// tableIndex reports whether the integer at [s, e) is a table row's index:
// the whole cell of an "index" column, or, in a table without roles, a
// first cell holding nothing but an integer in a row that states a time.
func (d *doc) tableIndex(s, e int) bool {
	row := d.rowAt(s)
	if row == nil || len(row.cells) == 0 {
		return false
	}
	whole := func(c [2]int) bool {
		return c[0] <= s && e <= c[1] && strings.TrimSpace(d.w[c[0]:c[1]]) == d.w[s:e]
	}
	if c, ok := row.roles["index"]; ok {
		return whole(c)
	}
	if !whole(row.cells[0]) {
		return false
	}
	return d.timesIn(row.start, row.end) > 0
}

// timesIn counts the times that start in [s, e).
func (d *doc) timesIn(s, e int) int {
	lo := sort.Search(len(d.times), func(i int) bool { return d.times[i].start >= s })
	hi := sort.Search(len(d.times), func(i int) bool { return d.times[i].start >= e })
	return hi - lo
}
