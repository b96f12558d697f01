package parse

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// An answer that names several counts as alternatives is no answer
// (CountVideoBench §5.1: "ambiguous outputs containing multiple
// incompatible integers" are non-responses). The patterns below find, on
// the line of the value a final-answer statement gives, another count it
// is offered as an alternative to:
//
//	12 or 13 · either 12 or 13 · 12 bounces, or maybe 13 · 12 (or 13)
//	12, maybe 13 · 12 (possibly 13) · 12 to 13 · 12-13 · 12–13
//	between 12 and 15 · twelve or thirteen · \boxed{12 or 13}
//	\boxed{12} or \boxed{13}
//
// Not alternatives: running counts on other lines, times and frame
// numbers (never counts), "3 out of 4", "from 3 to 4", "up to 5", "5 or
// more", "6 − 1 = 5" (arithmetic), a repeat of the same value.

const altNum = `(\d+|(?:` + numWords + `)(?:[\s-]+(?:one|two|three|four|five|six|seven|eight|nine))?)`
const altHedge = `(?:maybe|possibly|perhaps|probably|potentially|likely)`
const altWords = `(?:\s+[a-z'’]+){0,2}?`

var (
	reAltAfterOr    = regexp.MustCompile(`^` + altWords + `\s*(?:[,;—–]\s*|\(\s*)?or\s+(?:(?:` + altHedge + `|even|rather|else)\s+)?(?:(?:it(?:'s| is| was| could be| might be| may be)|there (?:are|were|could be|might be|may be))\s+)?` + altNum + `\b`)
	reAltAfterHedge = regexp.MustCompile(`^` + altWords + `\s*(?:[,;—–]|\()\s*(?:or\s+)?` + altHedge + `\s+(?:(?:it(?:'s| is| was| could be)|there (?:are|were|could be))\s+)?` + altNum + `\b`)
	reAltAfterTo    = regexp.MustCompile(`^\s?(?:-|–)\s?` + altNum + `\b|^\s+to\s+` + altNum + `\b`)
	reAltAfterAnd   = regexp.MustCompile(`^` + altWords + `\s+and\s+` + altNum + `\b`)
	reAltBetween    = regexp.MustCompile(`(?:^|[^a-z])between\s+(?:(?:about|around|roughly|approximately)\s+)?$`)
	reAltArith      = regexp.MustCompile(`^\s*(?:[=+*×/%]|percent\b)`)

	reAltBeforeOr    = regexp.MustCompile(`(?:^|[^a-z0-9.:,_-])` + altNum + altWords + `\s*(?:[,;—–]\s*|\(\s*)?(?:either\s+)?or\s+(?:(?:` + altHedge + `|even|rather|else)\s+)?(?:(?:it(?:'s| is| was| could be| might be| may be)|there (?:are|were|could be|might be|may be))\s+)?$`)
	reAltBeforeHedge = regexp.MustCompile(`(?:^|[^a-z0-9.:,_-])` + altNum + altWords + `\s*(?:[,;—–]|\()\s*(?:or\s+)?` + altHedge + `\s+(?:(?:it(?:'s| is| was| could be)|there (?:are|were|could be))\s+)?$`)
	reAltBeforeTo    = regexp.MustCompile(`(?:^|[^a-z0-9.:,_-])` + altNum + `(?:\s?(?:-|–)\s?|\s+to\s+)$`)
	reAltBeforeAnd   = regexp.MustCompile(`(?:^|[^a-z])between\s+(?:(?:about|around|roughly|approximately)\s+)?` + altNum + altWords + `\s+and\s+$`)
	reAltFromUp      = regexp.MustCompile(`(?:^|[^a-z])(?:from|up)\s+$`)
	// Plural nouns that label a range of items ("frames 10-15", "steps 1-3");
	// verbs ("bounces 12-13 times") are not among them.
	reAltPluralLabel = regexp.MustCompile(`(?:^|[^a-z])(?:frames|steps|events|items|rows|lines|entries|cases|transitions|contacts|collisions|changes|images|seconds|secs)\s*$`)

	// In a \boxed{} body: "12 or 13", "12, 13", "12-13", "12 to 13", "12
	// and 13", "12 (maybe 13)".
	reBoxAlt = regexp.MustCompile(`^\s*` + altNum + `(?:` +
		altWords + `\s*(?:[,;]\s*|\(\s*)?(?:or|to|and)\s+(?:` + altHedge + `\s+)?` +
		`|\s?[-–]\s?` +
		`|\s*[,;]\s*(?:` + altHedge + `\s+)?` +
		`|` + altWords + `\s*(?:[,;]\s*|\(\s*)` + altHedge + `\s+` +
		`)` + altNum + `\b`)
	reBoxLead     = regexp.MustCompile(`^\s*(?:either|between|about|around|roughly|approximately|approx|~)\s+`)
	reBoxBetween  = regexp.MustCompile(`^[\s$}]*(?:,\s*)?or\s+(?:` + altHedge + `\s+)?[\s$]*$`)
	reBoxBoxedPre = regexp.MustCompile(`\\boxed\s*$`)
)

// alternativesAt returns the counts that the value spanning [s, e) of d.w
// is offered as an alternative to, on its line.
func (d *doc) alternativesAt(s, e int) []float64 {
	if s < 0 || e > len(d.w) || s >= e {
		return nil
	}
	ls, le := d.line(s)
	after := d.w[e:min(le, e+100)]
	before := d.w[max(ls, s-100):s]
	base := max(ls, s-100)
	var out []float64
	take := func(pos int) {
		if v, ok := d.altValueAt(pos); ok {
			out = append(out, v)
		}
	}
	for _, re := range []*regexp.Regexp{reAltAfterOr, reAltAfterHedge, reAltAfterTo} {
		if m := re.FindStringSubmatchIndex(after); m != nil {
			g := 2
			if m[g] < 0 {
				g = 4 // the "to" alternative of reAltAfterTo
			}
			take(e + m[g])
		}
	}
	if reAltBetween.MatchString(d.w[max(ls, s-30):s]) {
		if m := reAltAfterAnd.FindStringSubmatchIndex(after); m != nil {
			take(e + m[2])
		}
	}
	for _, re := range []*regexp.Regexp{reAltBeforeOr, reAltBeforeHedge, reAltBeforeAnd} {
		if m := re.FindStringSubmatchIndex(before); m != nil {
			take(base + m[2])
		}
	}
	if m := reAltBeforeTo.FindStringSubmatchIndex(before); m != nil {
		p := base + m[2]
		pre := d.w[max(ls, p-40):p]
		// "from 3 to 4" is a change, "up to 5" a bound, "frames 10-15" and
		// "steps 1-3" label ranges: none offers alternatives.
		if !reAltFromUp.MatchString(pre) && !reIntLabel.MatchString(pre) && !reAltPluralLabel.MatchString(pre) {
			take(p)
		}
	}
	return out
}

// altValueAt reads a count at pos (digits or a number word) that can be
// an alternative: not a time, a frame number, a rate or a percentage, and
// not the start of arithmetic ("5 − 1 = 4").
func (d *doc) altValueAt(pos int) (float64, bool) {
	if pos < 0 || pos >= len(d.w) {
		return 0, false
	}
	if isLetter(d.w[pos]) {
		m := reNumWord.FindStringSubmatchIndex(d.w[pos:min(len(d.w), pos+30)])
		if m == nil || m[0] != 0 || reWordUnitAfter.MatchString(d.w[pos+m[1]:min(len(d.w), pos+m[1]+20)]) {
			return 0, false
		}
		return float64(wordValue(d.w[pos:], m)), true
	}
	k := d.numAt(pos)
	if k < 0 || !d.countLike(k) || d.listNum[k] || d.intExcluded(d.nums[k]) {
		return 0, false
	}
	n := d.nums[k]
	if reAltArith.MatchString(d.w[n.end:min(len(d.w), n.end+10)]) {
		return 0, false
	}
	return n.plain, true
}

// bodyAlternatives returns the other counts a \boxed{} body offers
// ("12 or 13", "either 12 or 13", "12-13", "between 12 and 15", "12,
// 13"); nil for one value ("4 bounces", "3 (out of 4 walls)").
func bodyAlternatives(body string) []float64 {
	b := reBoxLead.ReplaceAllString(body, "")
	m := reBoxAlt.FindStringSubmatchIndex(b)
	if m == nil {
		return nil
	}
	if u, _ := unitAfter(b[m[5]:]); u {
		return nil // "3 – 4 s": a time range, not counts
	}
	return []float64{boxWordOrNum(b[m[4]:m[5]])}
}

// hedgedBoxedValue reads a \boxed{} body that opens with "either" or
// "between" ("either 12 or 13"), which boxedValue does not: its first
// value and alternatives.
func hedgedBoxedValue(body string) (float64, []float64, bool) {
	if !reBoxLead.MatchString(body) {
		return 0, nil, false
	}
	b := reBoxLead.ReplaceAllString(body, "")
	m := reBoxAlt.FindStringSubmatchIndex(b)
	if m == nil {
		return 0, nil, false
	}
	return boxWordOrNum(b[m[2]:m[3]]), []float64{boxWordOrNum(b[m[4]:m[5]])}, true
}

func boxWordOrNum(s string) float64 {
	s = strings.TrimSpace(s)
	if v, err := strconv.Atoi(s); err == nil {
		return float64(v)
	}
	if m := reNumWord.FindStringSubmatchIndex(s); m != nil {
		return float64(wordValue(s, m))
	}
	return -1
}

// unitAfter reports whether s opens with a time unit or rate ("3 – 4 s").
func unitAfter(s string) (bool, string) {
	t := strings.TrimLeft(s, " ")
	for _, u := range []string{"seconds", "second", "secs", "sec", "s", "ms", "min", "fps", "hz", "%"} {
		if strings.HasPrefix(t, u) && (len(t) == len(u) || !isAlnum(t[len(u)])) {
			return true, u
		}
	}
	return false, ""
}

// boxedAlternative: "\boxed{12} or \boxed{13}" offers two boxed values as
// alternatives; the last box then has the previous one's value as an
// alternative.
func (d *doc) boxedAlternative(prev, last cand) []float64 {
	if prev.e < 0 || prev.e > last.pos || last.pos > len(d.w) {
		return nil
	}
	gap := d.w[prev.e:last.pos]
	// gap runs from after the previous box's "}" to this box's "{".
	if loc := reBoxBoxedPre.FindStringIndex(gap); loc != nil && reBoxBetween.MatchString(gap[:loc[0]]) {
		return []float64{prev.val}
	}
	return nil
}

// ambiguous reports whether alts holds a count different from v; if so it
// records the alternatives and flags the reply.
func (d *doc) ambiguous(v float64, alts []float64) bool {
	set := map[int]bool{}
	for _, a := range alts {
		if a != v && a >= 0 && a <= MaxCount && a == float64(int(a)) {
			set[int(a)] = true
		}
	}
	if len(set) == 0 {
		return false
	}
	if v >= 0 && v <= MaxCount && v == float64(int(v)) {
		set[int(v)] = true
	}
	d.alternatives = make([]int, 0, len(set))
	for a := range set {
		d.alternatives = append(d.alternatives, a)
	}
	sort.Ints(d.alternatives)
	d.flag(FlagAmbiguousCount)
	d.flag(FlagUnparseableCount)
	return true
}
