package parse

import (
	"math"
	"regexp"
	"strings"
)

// How a number came to be read as a time.
type kind uint8

const (
	kClock  kind = iota + 1 // mm:ss, m:ss.s, hh:mm:ss
	kUnit                   // a time unit: "3.5 s", "3.5s", "3.5 seconds", "3500 ms"
	kCue                    // a cue before a bare number: "t=3.5", "at 3.5", "[3.5]", a JSON time key, a time list
	kLedger                 // a bare decimal opening a ledger line: "3.5 — left wall"
	kTable                  // a cell of a markdown table's time column
)

// stamp is one time stated in the reply: a number, or a range of two.
type stamp struct {
	cue   int // start of the expression including its cue ("at", "t=", "from", "between")
	start int // start of the (first) number
	end   int // end of the expression, unit and range end included
	t     float64
	kind  kind
	rng   bool // a range; t is its start
	num   int  // index in doc.nums of the (first) number
}

var (
	// Key cues accept integers too: "t=12", "time: 12", {"t": 12}.
	reKeyCue = regexp.MustCompile(`(?:^|[^a-z0-9_])(?:t|time|timestamp|ts|t_s|time_s|time_sec|timestamp_s|onset|start_time|start_s|time \(s\)|t \(s\))"?\s*(?:[:=~]|≈)\s*"?\s*$`)
	// Word cues accept decimals only: "at 3.5", "at about 3.5", "@3.5",
	// "from 2.5", "time 3.5" (C.15: "at", "from").
	reWordCue = regexp.MustCompile(`(?:^|[^a-z0-9_])(?:at|@|from|time|timestamp)\s*(?:(?:around|about|approximately|approx\.?|roughly|~|≈|exactly|precisely|t\s*=|time)\s*)?$`)
	// A cue word directly before a unit or clock time, only to extend the
	// expression's start (for clause splitting).
	reAnyCue = regexp.MustCompile(`(?:^|[^a-z0-9_])((?:at|@|from|between|around|about|approximately|approx\.?|roughly|~|≈|by|until|till|t|time|timestamp)\s*(?:[:=]\s*)?(?:(?:around|about|approximately|approx\.?|roughly|~|≈|exactly)\s*)?)$`)
	// What may open a ledger line before its time: bullets, an index
	// ("1.", "(2)", "#3", "[4]"), a label ("Bounce 3:", "Event #2 -").
	reLedgerPrefix = regexp.MustCompile(`^\s*(?:[-+•>|]\s*)*(?:(?:\(?\d{1,3}[.):\]]|#\d{1,3}[.:)]?|\[\d{1,3}\])\s+)?(?:(?:event|bounce|blink|flash|pulse|transition|contact|hit|collision|change|switch|step|entry)\s*#?\s*\d{1,3}\s*[:.)\-–—]?\s*)?[(\[]?\s*$`)
	// What follows a ledger line's time: a separator.
	reLedgerSep = regexp.MustCompile(`^\s*(?:[-–—:|,)\]]|->|=>|→)`)
	// Units that make a cue's number something other than a time.
	reNonTimeUnit = regexp.MustCompile(`^\s*(?:hz|khz|fps|frames?\b|%|px|pixels?|x\b|×|times\b|degrees?|°|bounces?|blinks?|transitions?|contacts?|events?|per\b)`)
	// Time lists: every number up to the end of the list is a time
	// ("Bounce times: 1.5, 3.0, 4.5", {"timestamps": [1.5, 3.0]}).
	reTimeList = regexp.MustCompile(`(?:timestamps?|time_s|times_s|(?:event|bounce|blink|flash|pulse|transition|contact|hit|collision|change|switch|onset|on)[ _-]?times)"?\s*(?:\((?:s|sec|seconds|in seconds)\)\s*)?[:=]\s*\[?`)
)

// Words that make a unit or clock time a duration, not a moment: "every
// 0.5 s", "lasts 0.2 s", "a 2 s gap", "in the first 3 seconds".
var durBefore = map[string]bool{
	"every": true, "each": true, "for": true, "lasting": true, "lasts": true, "lasted": true,
	"last": true, "over": true, "within": true, "per": true, "in": true, "takes": true,
	"took": true, "spanning": true, "spans": true, "span": true, "first": true, "next": true,
	"remaining": true, "than": true, "under": true, "after": true, "a": true, "an": true,
	"another": true, "only": true, "duration": true, "interval": true, "period": true,
	"gap": true, "spacing": true, "delay": true, "pause": true, "length": true,
}

// Nouns that make "of N s" a duration ("a period of 2 s").
var durOfNoun = map[string]bool{
	"period": true, "interval": true, "duration": true, "gap": true, "spacing": true,
	"length": true, "delay": true, "pause": true, "span": true, "window": true,
	"total": true, "video": true, "clip": true, "footage": true, "rate": true,
}

var durAfter = map[string]bool{
	"apart": true, "long": true, "later": true, "earlier": true, "before": true,
	"interval": true, "intervals": true, "period": true, "periods": true, "each": true,
	"per": true, "duration": true, "gap": true, "gaps": true, "window": true, "cycle": true,
	"cycles": true, "span": true, "total": true, "between": true, "elapsed": true,
	"clip": true, "video": true, "footage": true, "recording": true, "of": true, "in": true,
	"after": true,
}

// Hedges skipped when looking for the word before a time.
var hedges = map[string]bool{
	"about": true, "approximately": true, "approx": true, "roughly": true, "around": true,
	"nearly": true, "almost": true, "exactly": true, "precisely": true, "just": true, "some": true,
}

var reWord = regexp.MustCompile(`[a-z]+`)

// classifyTimes decides which numbers are times and merges ranges.
func (d *doc) classifyTimes() {
	lists := d.timeListSpans()
	li := 0
	inList := func(p int) bool { // called with increasing p
		for li < len(lists) && lists[li][1] <= p {
			li++
		}
		return li < len(lists) && lists[li][0] <= p
	}
	var times []stamp
	for i, n := range d.nums {
		ls, le := d.line(n.start)
		gapStart := max(ls, n.start-48)
		if i > 0 && d.nums[i-1].uEnd > gapStart {
			gapStart = min(d.nums[i-1].uEnd, n.start)
		}
		before := d.w[gapStart:n.start]
		after := d.w[n.uEnd:min(le, n.uEnd+40)]
		st := stamp{cue: n.start, start: n.start, end: n.uEnd, num: i}
		if m := reAnyCue.FindStringSubmatchIndex(before); m != nil && m[2] >= 0 {
			st.cue = gapStart + m[2]
		}
		switch {
		case n.badClock:
			d.flag(FlagInvalidTimestamp)
			continue
		case n.ambig:
			// "8,9" may be 8.9 or 8 and 9: no time rather than a guess.
			if n.timeUnit() || inList(n.start) || reKeyCue.MatchString(before) {
				d.flag(FlagAmbiguousTime)
			}
			continue
		case n.neg:
			continue
		case n.clock || n.unit != "":
			if isDuration(before, after) {
				continue
			}
			st.t = n.secs
			st.kind = kUnit
			if n.clock {
				st.kind = kClock
			}
		case d.tableTime(i):
			st.t, st.kind = n.plain, kTable
		case inList(n.start):
			st.t, st.kind = n.plain, kCue
		case reKeyCue.MatchString(before) && !reNonTimeUnit.MatchString(after):
			st.t, st.kind = n.plain, kCue
		case n.frac && reWordCue.MatchString(before) && !reNonTimeUnit.MatchString(after):
			st.t, st.kind = n.plain, kCue
		case n.frac && n.start > 0 && d.w[n.start-1] == '[' && n.end < len(d.w) && d.w[n.end] == ']':
			st.t, st.kind = n.plain, kCue
		case n.frac && n.start-ls <= 60 && reLedgerPrefix.MatchString(d.w[ls:n.start]) && reLedgerSep.MatchString(d.w[n.end:min(le, n.end+8)]):
			st.t, st.kind = n.plain, kLedger
		default:
			continue
		}
		if n.glued {
			continue
		}
		times = append(times, st)
	}
	times = d.sharedUnitLists(times)
	times = d.mergeRanges(times)
	// A number too long for a float ("1e400" written out) is no time.
	d.times = times[:0]
	for _, st := range times {
		if !math.IsInf(st.t, 0) && !math.IsNaN(st.t) {
			d.times = append(d.times, st)
		}
	}
}

var reListSep = regexp.MustCompile(`^\s*(?:,|,?\s*and|,?\s*or|&)\s*$`)

// sharedUnitLists reads "at 2, 4, 6 and 8 seconds": bare numbers listed
// before a unit time share its unit. They are times only after a cue
// ("at", "t=") before the list; either way they are excluded from the
// count (d.listNum), being parts of a time expression.
func (d *doc) sharedUnitLists(times []stamp) []stamp {
	if d.listNum == nil {
		d.listNum = map[int]bool{}
	}
	var out []stamp
	for _, b := range times {
		nb := d.nums[b.num]
		if b.kind != kUnit || nb.clock || b.num == 0 {
			out = append(out, b)
			continue
		}
		first := b.num
		for k := b.num - 1; k >= 0; k-- {
			n := d.nums[k]
			if n.ambig {
				d.flag(FlagAmbiguousTime)
				break
			}
			if n.timeUnit() || n.neg || n.glued || n.badClock || !reListSep.MatchString(d.w[n.uEnd:d.nums[k+1].start]) {
				break
			}
			first = k
		}
		if first == b.num {
			out = append(out, b)
			continue
		}
		ls, _ := d.line(d.nums[first].start)
		before := d.w[max(ls, d.nums[first].start-48):d.nums[first].start]
		cued := reWordCue.MatchString(before) || reKeyCue.MatchString(before)
		scale := nb.secs / nb.plain
		if nb.plain == 0 {
			scale = 1
		}
		for k := first; k < b.num; k++ {
			d.listNum[k] = true
			// Drop a stamp the list's number already got (e.g. "at 2.5").
			for len(out) > 0 && out[len(out)-1].num >= k {
				out = out[:len(out)-1]
			}
			if cued {
				n := d.nums[k]
				st := stamp{cue: n.start, start: n.start, end: n.end, t: n.plain * scale, kind: kUnit, num: k}
				if k == first {
					if m := reAnyCue.FindStringSubmatchIndex(before); m != nil && m[2] >= 0 {
						st.cue = max(ls, d.nums[first].start-48) + m[2]
					}
				}
				out = append(out, st)
			}
		}
		out = append(out, b)
	}
	return out
}

// isDuration reports whether the words around a unit or clock time make it
// a length of time rather than a moment.
func isDuration(before, after string) bool {
	words := reWord.FindAllString(before, -1)
	for k := len(words) - 1; k >= 0 && k >= len(words)-3; k-- {
		wd := words[k]
		if hedges[wd] {
			continue
		}
		if wd == "of" && k > 0 && durOfNoun[words[k-1]] {
			return true
		}
		if durBefore[wd] {
			return true
		}
		break
	}
	a := strings.TrimLeft(after, " \t")
	if strings.HasPrefix(a, "/") {
		return true
	}
	if m := reWord.FindString(a); m != "" && strings.HasPrefix(a, m) && durAfter[m] {
		switch m {
		case "of":
			rest := strings.TrimSpace(a[2:])
			return strings.HasPrefix(rest, "video") || strings.HasPrefix(rest, "footage") ||
				strings.HasPrefix(rest, "the video") || strings.HasPrefix(rest, "the clip") ||
				strings.HasPrefix(rest, "clip") || strings.HasPrefix(rest, "recording")
		case "in":
			return strings.HasPrefix(strings.TrimSpace(a[2:]), "length")
		}
		return true
	}
	return false
}

// timeListSpans returns the spans of time lists: after the label, numbers,
// units, clocks and separators up to anything else.
func (d *doc) timeListSpans() [][2]int {
	var out [][2]int
	if !strings.Contains(d.w, "time") {
		return nil
	}
	for _, m := range reTimeList.FindAllStringIndex(d.w, -1) {
		// "number of times" is a count, not a list of times.
		if pre := d.w[max(0, m[0]-10):m[0]]; strings.HasSuffix(strings.TrimSpace(pre), "of") {
			continue
		}
		p := m[1]
		for p < len(d.w) {
			b := d.w[p]
			switch {
			case isDigit(b) || strings.IndexByte(" \t,;[]\"'().:", b) >= 0:
				p++
			case b == '\n' && strings.Contains(d.w[m[0]:m[1]], "["):
				p++ // a bracketed list may span lines
			case strings.HasPrefix(d.w[p:], "and "):
				p += 4
			case strings.HasPrefix(d.w[p:], "seconds"):
				p += 7
			case strings.HasPrefix(d.w[p:], "sec"):
				p += 3
			case b == 's' && wordEnd(d.w, p+1):
				p++
			default:
				goto done
			}
		}
	done:
		out = append(out, [2]int{m[1], p})
	}
	return out
}

var reBetween = regexp.MustCompile(`(?:^|[^a-z])between\s*(?:(?:around|about|approximately|roughly|~)\s*)?$`)
var reRangeConn = regexp.MustCompile(`^\s*(?:-|–|-->|->|→|to|until|till|through|thru|and)\s*$`)

// mergeRanges turns "from 2.0 to 3.0 s", "2.0–3.0 s", "between 2 and 3
// seconds", "00:02-00:04" into one stamp at the range's start. The first
// number may be bare: the second's unit applies to it. C.15 names "from"
// as a temporal cue, so a range reports the moment it starts from.
func (d *doc) mergeRanges(times []stamp) []stamp {
	out := make([]stamp, 0, len(times))
	for _, b := range times {
		if b.num == 0 || b.rng {
			out = append(out, b)
			continue
		}
		nb := d.nums[b.num]
		ia := b.num - 1
		na := d.nums[ia]
		gap := d.w[na.uEnd:nb.start]
		m := reRangeConn.FindStringSubmatch(gap)
		if m == nil || na.neg || na.badClock || na.glued || na.ambig {
			out = append(out, b)
			continue
		}
		conn := strings.TrimSpace(gap)
		ls, _ := d.line(na.start)
		pre := d.w[max(ls, na.start-30):na.start]
		if conn == "and" && !reBetween.MatchString(pre) {
			out = append(out, b)
			continue
		}
		// The first end's value in seconds: its own time, or the bare
		// number in the second end's unit.
		var ta float64
		prevIsTime := len(out) > 0 && out[len(out)-1].num == ia && !out[len(out)-1].rng
		switch {
		case prevIsTime:
			ta = out[len(out)-1].t
		case na.clock != nb.clock:
			out = append(out, b)
			continue
		case nb.unit == "ms":
			ta = na.plain / 1000
		case nb.unit == "min":
			ta = na.plain * 60
		default:
			ta = na.plain
		}
		if ta > b.t {
			out = append(out, b)
			continue
		}
		r := stamp{cue: na.start, start: na.start, end: b.end, t: ta, kind: b.kind, rng: true, num: ia}
		if prevIsTime {
			r.cue = out[len(out)-1].cue
			r.kind = out[len(out)-1].kind
			out = out[:len(out)-1]
		} else if mm := reAnyCue.FindStringSubmatchIndex(pre); mm != nil && mm[2] >= 0 {
			r.cue = max(ls, na.start-30) + mm[2]
		}
		out = append(out, r)
	}
	return out
}
