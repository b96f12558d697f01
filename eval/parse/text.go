package parse

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// doc is one reply under analysis. All offsets index raw, c and w alike:
// the three strings have the same length and differ only in ASCII bytes.
type doc struct {
	domain string
	raw    string // the reply with CRLF/CR turned into LF (Event.Text comes from here)
	c      string // raw with markdown emphasis ('*', '`') blanked; case kept (state labels, "ON")
	w      string // c with ASCII letters lowercased; all keyword matching runs on w

	lineStarts []int // offset of each line's first byte
	nums       []num // every number in the reply, in order
	tables     map[int]*tableRow
	times      []stamp      // numbers (or ranges) that are times, in order
	timeNum    map[int]bool // indices of numbers that are (part of) times; lazily built
	listNum    map[int]bool // bare numbers sharing a later number's time unit ("2, 4 and 6 s")
	flags      map[string]bool
	countFrom  int // the final count is sought in w[countFrom:] (after </think>)

	frameTimes   []float64 // Options.FrameTimes: time of the k-th shown frame at [k-1]
	alternatives []int     // the counts of an ambiguous final answer
	lastRunning  *int      // the running count stated last (by position) with a reported line
	valS, valE   int       // span of the value valueAt/valueAfter read last; valS < 0 when none
}

func newDoc(reply, dom string) *doc {
	raw := strings.ReplaceAll(reply, "\r\n", "\n")
	raw = strings.ReplaceAll(raw, "\r", "\n")
	cb := []byte(raw)
	wb := make([]byte, len(cb))
	for i, b := range cb {
		// Emphasis and code spans wrap answers ("**Answer:** `7`") and would
		// otherwise break every phrase pattern.
		if b == '*' || b == '`' {
			cb[i] = ' '
			b = ' '
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		wb[i] = b
	}
	d := &doc{domain: dom, raw: raw, c: string(cb), w: string(wb), flags: map[string]bool{}}
	d.lineStarts = append(d.lineStarts, 0)
	for i := 0; i < len(raw); i++ {
		if raw[i] == '\n' {
			d.lineStarts = append(d.lineStarts, i+1)
		}
	}
	// A thinking model's answer follows its reasoning block; the count is
	// read from the answer when there is one.
	if k := strings.LastIndex(d.w, "</think>"); k >= 0 {
		if strings.TrimSpace(d.w[k+len("</think>"):]) != "" {
			d.countFrom = k + len("</think>")
		}
	}
	return d
}

func (d *doc) flag(f string) { d.flags[f] = true }

func (d *doc) flagList() []string {
	if len(d.flags) == 0 {
		return nil
	}
	out := make([]string, 0, len(d.flags))
	for f := range d.flags {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// line returns the bounds [start, end) of the line holding pos; end
// excludes the newline.
func (d *doc) line(pos int) (start, end int) {
	i := sort.SearchInts(d.lineStarts, pos+1) - 1
	if i < 0 {
		i = 0
	}
	start = d.lineStarts[i]
	end = len(d.raw)
	if i+1 < len(d.lineStarts) {
		end = d.lineStarts[i+1] - 1
	}
	return start, end
}

func isDigit(b byte) bool  { return '0' <= b && b <= '9' }
func isLetter(b byte) bool { return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' }
func isAlnum(b byte) bool  { return isDigit(b) || isLetter(b) || b == '_' }

func digitsAt(s string, i int) int {
	n := 0
	for i+n < len(s) && isDigit(s[i+n]) {
		n++
	}
	return n
}

// num is one number as written. A clock ("00:03.5") is one number.
type num struct {
	start, end int     // the digits, fraction and clock fields
	uEnd       int     // end including a trailing time unit ("3.5 s"); == end without one
	plain      float64 // the value as written (not for clocks)
	secs       float64 // the value in seconds, for clocks and numbers with a time unit
	isInt      bool    // digits only: no fraction, no clock
	frac       bool    // has a decimal fraction
	clock      bool    // mm:ss, m:ss.s, hh:mm:ss
	badClock   bool    // shaped like a clock but a field is out of range
	unit       string  // "s", "ms", "min" or "" (none)
	glued      bool    // followed directly by letters that are not a time unit ("3rd", "2x")
	neg        bool    // preceded directly by a minus sign
	// ambig: one side of "8,9" or "1,500" that is neither clearly a
	// decimal comma nor clearly a list or thousands separator; never a time.
	ambig bool
}

func (n num) timeUnit() bool { return n.clock || n.unit != "" }

// scanNumbers finds every number. Digits glued to a preceding letter are
// part of a word ("S1", "mp4", "Qwen3") and are skipped.
func (d *doc) scanNumbers() {
	w := d.w
	for i := 0; i < len(w); {
		if !isDigit(w[i]) {
			i++
			continue
		}
		if i > 0 && isAlnum(w[i-1]) {
			i += digitsAt(w, i)
			continue
		}
		n := d.scanNum(i)
		if k := len(d.nums) - 1; k >= 0 && d.nums[k].ambig && d.nums[k].end == n.start-1 {
			n.ambig = true // the right side of an ambiguous comma pair
		}
		d.nums = append(d.nums, n)
		i = n.uEnd
		if i <= n.start { // cannot happen; guards the loop
			i = n.start + 1
		}
	}
}

func (d *doc) scanNum(i int) num {
	w := d.w
	n := num{start: i}
	k := i + digitsAt(w, i)
	if k-i <= 2 && k < len(w) && w[k] == ':' && digitsAt(w, k+1) == 2 {
		fields := []int{atoi(w[i:k]), atoi(w[k+1 : k+3])}
		end := k + 3
		if end < len(w) && w[end] == ':' && digitsAt(w, end+1) == 2 {
			fields = append(fields, atoi(w[end+1:end+3]))
			end += 3
		}
		frac := 0.0
		if end+1 < len(w) && w[end] == '.' && isDigit(w[end+1]) {
			nd := digitsAt(w, end+1)
			frac = fracValue(w[end+1 : end+1+nd])
			end += 1 + nd
		} else if end+1 < len(w) && w[end] == ',' && isDigit(w[end+1]) {
			// SRT-style "00:00:03,500"; not "00:03,00:05" (a list).
			nd := digitsAt(w, end+1)
			if nd <= 3 && !(end+1+nd < len(w) && w[end+1+nd] == ':') {
				frac = fracValue(w[end+1 : end+1+nd])
				end += 1 + nd
			}
		}
		n.clock = true
		n.end = end
		switch len(fields) {
		case 2:
			n.badClock = fields[1] >= 60
			n.secs = float64(fields[0]*60+fields[1]) + frac
		default:
			n.badClock = fields[1] >= 60 || fields[2] >= 60
			n.secs = float64(fields[0]*3600+fields[1]*60+fields[2]) + frac
		}
		n.uEnd = n.end
		if u, e := d.unitAt(n.end); u == "s" {
			n.uEnd = e
		}
		return n
	}
	n.end = k
	n.isInt = true
	if k+1 < len(w) && w[k] == '.' && isDigit(w[k+1]) {
		n.end = k + 1 + digitsAt(w, k+1)
		n.isInt = false
		n.frac = true
	}
	n.plain, _ = strconv.ParseFloat(w[i:n.end], 64)
	if nd := d.commaPair(i, k); nd > 0 {
		if p := k + 1 + nd; nd != 3 && d.unitAhead(p) {
			// "8,0 s": a decimal comma (never three digits: "1,500 ms"
			// may be thousands).
			n.end, n.isInt, n.frac = p, false, true
			n.plain, _ = strconv.ParseFloat(w[i:k]+"."+w[k+1:p], 64)
		} else {
			n.ambig = true
		}
	}
	n.uEnd = n.end
	if u, e := d.unitAt(n.end); u != "" {
		n.unit, n.uEnd = u, e
		switch u {
		case "s":
			n.secs = n.plain
		case "ms":
			n.secs = n.plain / 1000
		case "min":
			n.secs = n.plain * 60
			// "1 min 5.5 s", "1m05s": one time. A bare "m" (only read
			// before digits) must be completed by seconds: "5m2" is no time.
			p := skipSpaces(w, e, 2)
			q := p + digitsAt(w, p)
			if q > p && q+1 < len(w) && w[q] == '.' && isDigit(w[q+1]) {
				q += 1 + digitsAt(w, q+1)
			}
			if u2, e2 := d.unitAt(q); q > p && u2 == "s" {
				s2, _ := strconv.ParseFloat(w[p:q], 64)
				n.secs += s2
				n.uEnd = e2
			} else if w[e-1] == 'm' {
				n.unit, n.uEnd, n.secs = "", n.end, 0
			}
		}
	}
	if n.unit == "" && n.end < len(w) && isLetter(w[n.end]) {
		n.glued = true
	}
	if i > 0 && w[i-1] == '-' && (i < 2 || !isAlnum(w[i-2])) {
		n.neg = true
	}
	if i >= 3 && w[i-3:i] == "−" && (i < 4 || !isAlnum(w[i-4])) {
		n.neg = true
	}
	return n
}

// commaPair reports the number of digits after a comma that joins the
// digits w[i:k] to more digits with nothing between ("8,0", "1,500"), or
// 0. Not a pair: a longer run ("2,4,6"), the digits of a decimal
// ("0.5,2"), a JSON array ("[1,2]"), a clock ("00:03,00:05").
func (d *doc) commaPair(i, k int) int {
	w := d.w
	if k+1 >= len(w) || w[k] != ',' {
		return 0
	}
	nd := digitsAt(w, k+1)
	if nd == 0 || i > 0 && w[i-1] == '[' || i > 1 && strings.IndexByte(",.:", w[i-1]) >= 0 && isDigit(w[i-2]) {
		return 0
	}
	if p := k + 1 + nd; p < len(w) && (w[p] == ']' || p+1 < len(w) && strings.IndexByte(",.:", w[p]) >= 0 && isDigit(w[p+1])) {
		return 0
	}
	return nd
}

// reCommaRangeEnd is the rest of a range whose start has a decimal comma:
// "2,5 to 3,0 s", "2,5–3,0 s", "between 2,5 and 3,0 seconds".
var reCommaRangeEnd = regexp.MustCompile(`^\s*(?:-|–|—|to|until|till|through|and)\s*\d+,(\d+)`)

// unitAhead reports whether a time unit follows p, directly or after the
// end of a range written with a decimal comma: what makes the comma before
// p clearly a decimal separator.
func (d *doc) unitAhead(p int) bool {
	if u, _ := d.unitAt(p); u != "" {
		return true
	}
	m := reCommaRangeEnd.FindStringSubmatchIndex(d.w[p:])
	if m == nil || m[3]-m[2] == 3 {
		return false
	}
	u, _ := d.unitAt(p + m[1])
	return u != ""
}

// unitAt reads a time unit starting at p (after at most two spaces, or a
// hyphen in "the 3.5-second mark"). It returns "s", "ms", "min" or "".
func (d *doc) unitAt(p int) (unit string, end int) {
	w := d.w
	if p < len(w) && w[p] == '-' {
		// Hyphenated units are adjectives ("a 24-second clip") unless they
		// name a point in time ("the 3.5-second mark").
		for _, u := range []string{"seconds", "second", "sec", "s"} {
			if strings.HasPrefix(w[p+1:], u) && wordEnd(w, p+1+len(u)) {
				rest := strings.TrimLeft(w[p+1+len(u):min(len(w), p+1+len(u)+12)], " ")
				if strings.HasPrefix(rest, "mark") || strings.HasPrefix(rest, "point") || strings.HasPrefix(rest, "timestamp") {
					return "s", p + 1 + len(u)
				}
			}
		}
		return "", p
	}
	q := skipSpaces(w, p, 2)
	for _, u := range []struct{ text, unit string }{
		{"milliseconds", "ms"}, {"millisecond", "ms"}, {"msec", "ms"}, {"ms", "ms"},
		{"seconds", "s"}, {"second", "s"}, {"secs", "s"}, {"sec", "s"},
		{"minutes", "min"}, {"minute", "min"}, {"mins", "min"}, {"min", "min"},
	} {
		if strings.HasPrefix(w[q:], u.text) && wordEnd(w, q+len(u.text)) {
			return u.unit, q + len(u.text)
		}
	}
	// A lone "s" only in lower case, so that "3 S1" or "5 S" (state
	// labels) are not read as seconds.
	if q < len(w) && d.c[q] == 's' && wordEnd(w, q+1) {
		return "s", q + 1
	}
	// Compact "1m05s".
	if q == p && q < len(w) && w[q] == 'm' && digitsAt(w, q+1) > 0 {
		return "min", q + 1
	}
	return "", p
}

// wordEnd reports whether a word ending at p is not continued by a letter
// or digit.
func wordEnd(s string, p int) bool { return p >= len(s) || !isAlnum(s[p]) }

func skipSpaces(s string, p, maxN int) int {
	for n := 0; p < len(s) && n < maxN && (s[p] == ' ' || s[p] == '\t'); n++ {
		p++
	}
	return p
}

func atoi(s string) int {
	v, _ := strconv.Atoi(s)
	return v
}

func fracValue(digits string) float64 {
	v, _ := strconv.ParseFloat("0."+digits, 64)
	return v
}

// numAt returns the index of the number starting at pos, or -1.
func (d *doc) numAt(pos int) int {
	k := sort.Search(len(d.nums), func(i int) bool { return d.nums[i].start >= pos })
	if k < len(d.nums) && d.nums[k].start == pos {
		return k
	}
	return -1
}
