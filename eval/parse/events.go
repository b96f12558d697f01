package parse

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// piece is the text a time belongs to: a table row, a JSON object, or a
// clause of a line (the sentence split between consecutive times).
type piece struct {
	s, e       int
	st         stamp
	row        *tableRow
	structured bool // a ledger row, table row or JSON object: no event word needed
	sent       int  // sentence id, for thin clauses; -1 when the piece stands alone
	question   bool
	thin       bool
	accepted   bool
}

var reWordy = regexp.MustCompile(`^(?:at|@|from|between|around|about|approximately|approx|roughly|by|until|till|~|≈)`)
var reResidualWord = regexp.MustCompile(`[a-z][a-z0-9'’]*`)
var reLabelWord = regexp.MustCompile(`^[a-z][0-9]{0,2}$`)

// extractEvents turns the times into events in five named passes:
//
//  1. pieces: the text each time belongs to (a table row, a JSON object or
//     a clause of a line), in time order;
//  2. judge: whether each piece reports an event on its own (accept,
//     reject, or thin: it says nothing beyond its time), and what a
//     rejected stative ledger row states;
//  3. inherit: a thin clause takes its sentence's decision; a stative row
//     that states the domain's non-event is kept as an excluded line;
//  4. readAttrs: the attributes of the pieces that report or lend them;
//  5. emit: the accepted pieces as events, with the attributes a listed
//     time shares, the exclusion rule and the running counts.
func (d *doc) extractEvents() []Event {
	pieces := d.pieces()
	own, stative := d.judge(pieces)
	from := d.inherit(pieces, own, stative)
	attrs := d.readAttrs(pieces, from, stative)
	return d.emit(pieces, from, attrs)
}

// pieces finds each time's piece: its table row (one event per row) or
// JSON object when it is in one, else its clause of a line. They are
// returned in the order of their times.
func (d *doc) pieces() []piece {
	var pieces []piece
	byLine := map[int][]stamp{}
	var lineOrder []int
	takenRow := map[*tableRow]bool{}
	for _, st := range d.times {
		if row := d.rowAt(st.start); row != nil {
			// One event per row: the time column's time, or the row's first
			// time ("| 1 | 00:03.5 | 00:03.7 |" is one pulse, start and end).
			if c, ok := row.roles["time"]; ok && (st.start < c[0] || st.start >= c[1]) {
				continue
			}
			if takenRow[row] {
				continue
			}
			takenRow[row] = true
			pieces = append(pieces, piece{s: row.start, e: row.end, st: st, row: row, structured: true, sent: -1})
			continue
		}
		if s, e, ok := d.jsonObject(st); ok {
			pieces = append(pieces, piece{s: s, e: e, st: st, structured: true, sent: -1})
			continue
		}
		ls, _ := d.line(st.start)
		if _, ok := byLine[ls]; !ok {
			lineOrder = append(lineOrder, ls)
		}
		byLine[ls] = append(byLine[ls], st)
	}
	pieces = append(pieces, d.clausePieces(byLine, lineOrder)...)
	sort.SliceStable(pieces, func(i, j int) bool { return pieces[i].st.start < pieces[j].st.start })
	return pieces
}

// clausePieces splits each line (in lineOrder, starting at the keys of
// byLine) into sentences and each sentence into one clause per time. A
// line is structured (a ledger row, which needs no event word) when it
// starts like one.
func (d *doc) clausePieces(byLine map[int][]stamp, lineOrder []int) []piece {
	var pieces []piece
	sentID := 0
	for _, ls := range lineOrder {
		sts := byLine[ls]
		_, le := d.line(ls)
		first := sts[0]
		structured := first.kind == kLedger
		if first.cue-ls <= 60 && reLedgerPrefix.MatchString(d.w[ls:first.cue]) {
			cue := strings.TrimSpace(d.w[first.cue:first.start])
			structured = !reWordy.MatchString(cue) || reLedgerSep.MatchString(d.w[first.end:min(le, first.end+8)])
		}
		k := 0
		for _, sn := range d.sentences(ls, le) {
			var in []stamp
			for ; k < len(sts) && sts[k].start < sn[1]; k++ {
				in = append(in, sts[k])
			}
			if len(in) == 0 {
				continue
			}
			q := strings.HasSuffix(strings.TrimRight(d.w[sn[0]:sn[1]], " \t)\"'"), "?")
			bnd := make([]int, len(in)+1)
			bnd[0], bnd[len(in)] = sn[0], sn[1]
			for i := 1; i < len(in); i++ {
				bnd[i] = d.clauseBreak(in[i-1].end, max(in[i].cue, in[i-1].end))
			}
			for i, st := range in {
				pieces = append(pieces, piece{s: bnd[i], e: max(bnd[i], bnd[i+1]), st: st, structured: structured, sent: sentID, question: q})
			}
			sentID++
		}
	}
	return pieces
}

// judge decides each piece on its own (and marks it thin or not):
// own[i] is 1 to accept, -1 to reject, 0 for a thin piece left to its
// sentence. A ledger row rejected as stative that states the domain's
// non-event ("00:05.0 — light is off", "00:09.0 — highlight stays on R")
// gets, in stative[i], the attributes it states.
func (d *doc) judge(pieces []piece) (own []int8, stative []map[string]string) {
	own = make([]int8, len(pieces))
	stative = make([]map[string]string, len(pieces))
	for i := range pieces {
		p := &pieces[i]
		w, c := d.w[p.s:p.e], d.c[p.s:p.e]
		p.thin = d.isThin(p)
		switch {
		case negated(w) || reIrrealis.MatchString(w) || p.question:
			own[i] = -1
		case d.hasEventWord(w, c):
			own[i] = 1
		case p.thin && p.structured:
			own[i] = 1
		case p.thin:
			own[i] = 0
		case p.structured && !reStative.MatchString(w):
			own[i] = 1
		default:
			own[i] = -1
			if p.structured {
				stative[i] = d.statedNonEvent(w, c)
			}
		}
	}
	return own, stative
}

// inherit sets every piece's accepted and returns from[i], the piece a
// thin one inherits from (-1 for none). A thin clause takes the decision
// of the nearest non-thin clause of its sentence before it, else the
// nearest after it: "The ball hits the top wall at 3.0 s and the left
// wall at 4.0 s", "At 1.5 s, 3.0 s and 4.5 s the ball bounces". A stative
// row with stated attributes is accepted, as an excluded line.
func (d *doc) inherit(pieces []piece, own []int8, stative []map[string]string) []int {
	before, after := make([]int, len(pieces)), make([]int, len(pieces))
	for i := range pieces {
		before[i] = -1
		if i > 0 && pieces[i-1].sent == pieces[i].sent && pieces[i].sent >= 0 {
			before[i] = before[i-1]
			if own[i-1] != 0 {
				before[i] = i - 1
			}
		}
	}
	for i := len(pieces) - 1; i >= 0; i-- {
		after[i] = -1
		if i+1 < len(pieces) && pieces[i+1].sent == pieces[i].sent && pieces[i].sent >= 0 {
			after[i] = after[i+1]
			if own[i+1] != 0 {
				after[i] = i + 1
			}
		}
	}
	from := make([]int, len(pieces))
	for i := range pieces {
		p := &pieces[i]
		from[i] = -1
		switch {
		case own[i] != 0:
			p.accepted = own[i] > 0
		case before[i] >= 0:
			from[i] = before[i]
		case after[i] >= 0:
			from[i] = after[i]
		default:
			// A sentence of times and attribute values only ("frame 20
			// (1.0 s) on, frame 40 (2.0 s) on") reports what it names.
			p.accepted = d.attrs(*p) != nil
		}
		if from[i] >= 0 {
			p.accepted = own[from[i]] > 0
		}
	}
	for i := range pieces {
		if stative[i] != nil {
			pieces[i].accepted = true
		}
	}
	return from
}

// readAttrs reads the attributes of every accepted piece and of every
// piece an accepted one inherits from; a stative row's are those it
// states.
func (d *doc) readAttrs(pieces []piece, from []int, stative []map[string]string) []map[string]string {
	needed := make([]bool, len(pieces))
	for i, j := range from {
		needed[i] = needed[i] || pieces[i].accepted
		if j >= 0 && pieces[i].accepted {
			needed[j] = true
		}
	}
	attrs := make([]map[string]string, len(pieces))
	for i, p := range pieces {
		switch {
		case stative[i] != nil:
			attrs[i] = stative[i]
		case needed[i]:
			attrs[i] = d.attrs(p)
		}
	}
	return attrs
}

// emit makes the events of the accepted pieces: a listed time shares its
// sentence's wall or phase, the exclusion rule applies to the attributes,
// and each event gets the running count it states (the last one read is
// kept for the self-consistency check). Time ranges are flagged.
func (d *doc) emit(pieces []piece, from []int, attrs []map[string]string) []Event {
	var evs []Event
	ranges := 0
	lastRunPos := -1
	for i, p := range pieces {
		if !p.accepted {
			continue
		}
		if p.st.rng {
			ranges++
		}
		a := attrs[i]
		if j := from[i]; j >= 0 {
			// A listed time shares its sentence's wall or phase ("the
			// light is on from 2.0 to 2.2 s, then again from 3.0 to
			// 3.2 s"); transitions are not shared, each has its own
			// labels.
			for k, v := range attrs[j] {
				if _, ok := a[k]; !ok && (k == "wall" || k == "phase") {
					if a == nil {
						a = map[string]string{}
					}
					a[k] = v
				}
			}
		}
		ev := Event{T: p.st.t, Attrs: a, Text: snippet(d.raw[p.s:p.e]), Excluded: ExclusionReason(d.domain, a)}
		if p.st.kind == kFrame {
			ev.Frame = int(d.nums[p.st.num].plain)
		}
		end := d.runEnd(pieces, i)
		if v, pos, ok := d.runningCount(p, end); ok {
			ev.Running = &v
			if pos > lastRunPos {
				lastRunPos = pos
				vv := v
				d.lastRunning = &vv
			}
		}
		evs = append(evs, ev)
	}
	if ranges > 0 {
		d.flag(FlagTimeRanges + strconv.Itoa(ranges))
	}
	return evs
}

// isThin reports whether a piece says nothing beyond its time: every word
// left after removing the time is an article, connector, ordinal,
// attribute value, state label or index.
func (d *doc) isThin(p *piece) bool {
	text := d.w[p.s:max(p.s, min(p.st.cue, p.e))] + " " + d.w[min(p.e, max(p.s, p.st.end)):p.e]
	for _, wd := range reResidualWord.FindAllString(text, -1) {
		if !thinWords[wd] && !reLabelWord.MatchString(wd) {
			return false
		}
	}
	return true
}

var clauseSeps = []string{",", ";", " and ", " then ", " while ", " but ", " whereas ", " followed by ", " after which ", " - ", " — ", " – "}

// clauseBreak returns where a sentence splits between a time ending at a
// and one whose expression starts at b: at the last clause separator
// between them, else right before the second time's cue.
func (d *doc) clauseBreak(a, b int) int {
	if a >= b {
		return b
	}
	gap := d.w[a:b]
	best := -1
	for _, s := range clauseSeps {
		if k := strings.LastIndex(gap, s); k > best {
			best = k
		}
	}
	if best < 0 {
		return b
	}
	return a + best
}

var abbrevs = map[string]bool{"e.g": true, "i.e": true, "approx": true, "vs": true, "no": true, "ca": true, "cf": true, "fig": true, "eq": true, "e": true, "i": true}
var reListIndex = regexp.MustCompile(`^\s*(?:[-+•>]\s*)?\(?\d{1,3}$`)

// sentences splits the line [ls, le) at '.', '!', '?' and ';' followed by
// a space or the end of the line, but not after an abbreviation ("e.g.",
// "approx.") or a list index ("1.").
func (d *doc) sentences(ls, le int) [][2]int {
	var out [][2]int
	s := ls
	for p := ls; p < le; p++ {
		b := d.w[p]
		if b != '.' && b != '!' && b != '?' && b != ';' {
			continue
		}
		if p+1 < le && d.w[p+1] != ' ' && d.w[p+1] != '\t' {
			continue
		}
		if b == '.' {
			k := p
			for k > ls && k > p-8 && (isLetter(d.w[k-1]) || d.w[k-1] == '.') {
				k--
			}
			if abbrevs[d.w[k:p]] || (p-ls <= 8 && reListIndex.MatchString(d.w[ls:p])) {
				continue
			}
		}
		out = append(out, [2]int{s, p + 1})
		s = p + 1
	}
	if s < le {
		out = append(out, [2]int{s, le})
	}
	return out
}

// jsonObject returns the innermost {…} around a time when it holds exactly
// that one time and looks like a key-value object.
func (d *doc) jsonObject(st stamp) (int, int, bool) {
	const reach = 800
	s := -1
	depth := 0
	for p := st.start - 1; p >= 0 && p >= st.start-reach; p-- {
		switch d.w[p] {
		case '}':
			depth++
		case '{':
			if depth == 0 {
				s = p
			} else {
				depth--
			}
		}
		if s >= 0 {
			break
		}
	}
	if s < 0 {
		return 0, 0, false
	}
	e := -1
	depth = 0
	for p := st.end; p < len(d.w) && p < st.end+reach; p++ {
		switch d.w[p] {
		case '{':
			depth++
		case '}':
			if depth == 0 {
				e = p + 1
			} else {
				depth--
			}
		}
		if e >= 0 {
			break
		}
	}
	if e < 0 || !strings.Contains(d.w[s:e], ":") {
		return 0, 0, false
	}
	return s, e, d.timesIn(s, e) == 1
}

// snippet is a piece's text for Event.Text: whitespace collapsed, leading
// connectors dropped.
func snippet(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.TrimLeft(s, ",; ")
	for _, c := range []string{"and ", "then ", "but ", "while "} {
		s = strings.TrimPrefix(s, c)
	}
	return strings.TrimSpace(s)
}
