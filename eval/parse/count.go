package parse

import (
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

const numWords = `zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety`

// Event nouns and verbs for the zero phrases ("there are no blinks").
const (
	evNouns = `(?:bounces?|blinks?|flash(?:es)?|pulses?|on-pulses?|transitions?|contacts?|wall contacts?|hits?|wall hits?|collisions?|events?|state changes?|changes?|switch(?:es)?)`
	evVerbs = `(?:bounces?|blinks?|flash(?:es)?|turns? on|lights? up|hits? (?:a |any )?walls?|touch(?:es)? (?:a |any )?walls?|transitions?|changes?(?: state| states)?|switch(?:es)?(?: state| states)?|moves?)`
	zeroEnd = `(?:\s*(?:at all|in total|whatsoever|in (?:the|this) (?:entire |whole )?(?:video|clip)|during (?:the|this) (?:entire |whole )?(?:video|clip)|visible|observed|detected))*\s*(?:[.!,;)]|$)`
)

var (
	reBoxed      = regexp.MustCompile(`\\boxed\s*\{`)
	reBoxedJunk  = regexp.MustCompile(`\\(?:text|mathrm|mathbf|textbf|bf|rm|displaystyle)|[{}$\\,~]`)
	reBoxedValue = regexp.MustCompile(`^\s*([-−]?)\s*(\d+(?:\.\d+)?)\s*(:|s\b|sec|seconds?\b)?`)
	reNumWord    = regexp.MustCompile(`\b(` + numWords + `)(?:[\s-]+(one|two|three|four|five|six|seven|eight|nine)\b)?\b`)

	// Strong final-answer phrases, anywhere.
	reFinal       = regexp.MustCompile(`\bfinal[\s_]*(?:answer|count|total|tally|result|number|verdict)s?\b`)
	reAnswer      = regexp.MustCompile(`\banswer\s*(?:is\b|was\b|would be\b|will be\b|:|=|—|–)`)
	reAnswerTag   = regexp.MustCompile(`<answer>`)
	reATotalOf    = regexp.MustCompile(`\ba total of\b`)
	reInTotal     = regexp.MustCompile(`\bin total\b`)
	reBeforeTotal = regexp.MustCompile(`(-?\d+(?:\.\d+)?|\b(?:` + numWords + `)(?:[\s-]+(?:one|two|three|four|five|six|seven|eight|nine))?)\s+(?:[a-z'’\-]+\s+){0,3}$`)
	reJSONStrong  = regexp.MustCompile(`"(?:final_?answer|answer|final_?count|final_?total)"\s*:`)
	reZero1       = regexp.MustCompile(`\bthere\s+(?:are|were|is|was)\s+no\s+(?:[a-z\-]+\s+){0,2}?` + evNouns + `\b`)
	reZero2       = regexp.MustCompile(`\bno\s+(?:[a-z\-]+\s+){0,2}?` + evNouns + `\s+(?:were|was|are|is)\s+(?:observed|detected|seen|visible|recorded|present|found|registered)\b`)
	reZero3       = regexp.MustCompile(`\b(?:never|does not|doesn't|did not|didn't)\s+(?:ever\s+)?` + evVerbs + `\b`)
	reZeroEnd     = regexp.MustCompile(`^` + zeroEnd)

	// Weak phrases: not inside a ledger row, not a running total.
	reTotalIs  = regexp.MustCompile(`\btotal(?:\s+(?:number|count))?(?:\s+of)?(?:\s+[a-z'\-]+){0,3}?\s*(?:is\b|was\b|are\b|were\b|:|=|\||equals\b|comes to\b)`)
	reNumberOf = regexp.MustCompile(`\bnumber of [a-z'\- ]{1,40}?\s*(?:is\b|was\b|:|=|equals\b)`)
	reCountEnd = regexp.MustCompile(`^[\s\-#>|]*(?:count|total count|bounces|blinks|transitions|flashes|pulses|contacts|events|wall contacts|state changes|changes)\s*(?:is\b|:|=)`)
	reJSONWeak = regexp.MustCompile(`"(?:count|total|total_?count|num_[a-z_]+|number_of_[a-z_]+|n_[a-z_]+|total_[a-z_]+|[a-z_]+_count)"\s*:`)
	reRunning  = regexp.MustCompile(`(?:running|cumulative|current|sub|partial|interim|so far)\s*$`)
	reSoFar    = regexp.MustCompile(`^[^.\n]{0,25}?\b(?:so far|until now|up to (?:now|here|this point)|thus far)\b`)

	// Last-integer exclusions.
	reIntUnitAfter  = regexp.MustCompile(`^(?:\s*(?:%|fps\b|hz\b|khz\b|frames?\b|px\b|pixels?\b|p\b|k\b|x\b|×|degrees?\b|°|/\s*\d|:\d)|-[a-z])`)
	reIntLabel      = regexp.MustCompile(`(?:^|[^a-z])(?:event|bounce|blink|flash|pulse|transition|contact|collision|change|switch|step|item|entry|frame|frames|row|line|case|no\.|number|#|fps)\s*#?\s*$`)
	reFrameOf       = regexp.MustCompile(`\bframe\s*#?\s*\d+\s+of\s+$`)
	reFrameRange    = regexp.MustCompile(`\bframes?\s*#?\s*\d+\s*(?:-|–|to|and|through)\s*$`)
	reLineIndexPre  = regexp.MustCompile(`^\s*(?:[-+•>]\s*)*[(\[#]?\s*$`)
	reLineIndexPost = regexp.MustCompile(`^[.):\]]\s+\S`)
	reTimesAfter    = regexp.MustCompile(`^\s*times\b`)
	reWordUnitAfter = regexp.MustCompile(`^[\s-]*(?:seconds?|secs?|minutes?|frames?|fps|hertz|hz|of\b|by\b|another\b|at a time)`)
	reWordOnePre    = regexp.MustCompile(`(?:^|[^a-z])(?:this|that|the|each|every|any|which|no|another|last|next|first|only)\s+$`)

	reRefusal = regexp.MustCompile(`\bi\s*(?:cannot|can['’]?t|can not|am unable to|['’]m unable to|am not able to|['’]m not able to)\s+(?:determine|count|tell|see|view|watch|access|process|analy[sz]e|open|play|provide|answer|identify|be sure|reliably)|\bunable to (?:determine|count|tell|see|view|watch|access|process|analy[sz]e)|\b(?:cannot|can['’]?t) be (?:determined|counted)|\b(?:not possible|impossible) to (?:determine|count|tell)|\bi['’]?m sorry|\bi am sorry|\bi apologi[sz]e|\bas an ai\b|\b(?:don['’]?t|do not) have (?:access|the ability)|\bno video (?:was|has been|is) (?:provided|attached|uploaded|available)|\b(?:video|file|clip) (?:is|was) not (?:provided|attached|available|visible|accessible)|\bcannot (?:view|watch|access|see|process|open|play) (?:the |this |any )?(?:video|clip|file)`)
)

type cand struct {
	pos  int
	val  float64
	s, e int       // the value's span in the text; s < 0 when none (a zero phrase, a \boxed{} body)
	alts []float64 // other counts the statement names as alternatives (boxed bodies)
}

func (c cand) valid() bool {
	return c.val >= 0 && c.val <= MaxCount && c.val == math.Trunc(c.val)
}

// finalCount applies the precedence \boxed > final-answer phrase > last
// integer > number word to the answer region (after </think> if any).
func (d *doc) finalCount() (*int, string) {
	boxed := d.boxedCands()
	phrases := d.phraseCands()
	vals := map[float64]bool{}
	for _, c := range append(append([]cand{}, boxed...), phrases...) {
		vals[c.val] = true
	}
	if len(vals) > 1 {
		d.flag(FlagConflictingFinalAnswers)
	}
	for li, level := range []struct {
		cs  []cand
		src string
	}{{boxed, SourceBoxed}, {phrases, SourceFinalAnswer}} {
		if len(level.cs) == 0 {
			continue
		}
		last := level.cs[len(level.cs)-1]
		alts := last.alts
		if last.s >= 0 {
			alts = append(alts, d.alternativesAt(last.s, last.e)...)
		}
		if li == 0 && len(level.cs) > 1 {
			alts = append(alts, d.boxedAlternative(level.cs[len(level.cs)-2], last)...)
		}
		if d.ambiguous(last.val, alts) {
			return nil, ""
		}
		if !last.valid() {
			// An explicit answer that is not a count: the reply answered,
			// wrongly; no other number stands in for it.
			d.flag(FlagRejectedCount)
			d.flag(FlagUnparseableCount)
			return nil, ""
		}
		v := int(last.val)
		return &v, level.src
	}
	if v, k, ok := d.lastInteger(); ok {
		if d.ambiguous(float64(v), d.alternativesAt(d.nums[k].start, d.nums[k].end)) {
			return nil, ""
		}
		return &v, SourceLastInteger
	}
	if v, s, e, ok := d.lastNumberWord(); ok {
		if d.ambiguous(float64(v), d.alternativesAt(s, e)) {
			return nil, ""
		}
		return &v, SourceNumberWord
	}
	d.flag(FlagUnparseableCount)
	if reRefusal.MatchString(d.w[d.countFrom:]) {
		d.flag(FlagRefusal)
	}
	return nil, ""
}

// boxedCands reads every \boxed{…} in order. One without a number
// ("\boxed{?}") is flagged and skipped.
func (d *doc) boxedCands() []cand {
	var out []cand
	for _, m := range reBoxed.FindAllStringIndex(d.w[d.countFrom:], -1) {
		open := d.countFrom + m[1] - 1
		depth, end := 0, -1
		for p := open; p < len(d.w) && p < open+200; p++ {
			if d.w[p] == '{' {
				depth++
			} else if d.w[p] == '}' {
				depth--
				if depth == 0 {
					end = p
					break
				}
			}
		}
		if end < 0 {
			d.flag(FlagUnparseableBoxed)
			continue
		}
		body := reBoxedJunk.ReplaceAllString(d.w[open+1:end], " ")
		if v, ok := boxedValue(body); ok {
			out = append(out, cand{pos: open, val: v, s: -1, e: end + 1, alts: bodyAlternatives(body)})
		} else if v, alts, ok := hedgedBoxedValue(body); ok {
			out = append(out, cand{pos: open, val: v, s: -1, e: end + 1, alts: alts})
		} else {
			d.flag(FlagUnparseableBoxed)
		}
	}
	return out
}

func boxedValue(body string) (float64, bool) {
	if m := reBoxedValue.FindStringSubmatch(body); m != nil {
		if m[3] != "" { // a time, not a count
			return 0, false
		}
		v, _ := strconv.ParseFloat(m[2], 64)
		if m[1] != "" {
			v = -v
		}
		return v, true
	}
	t := strings.TrimSpace(body)
	if m := reNumWord.FindStringSubmatchIndex(t); m != nil && m[0] == 0 {
		return float64(wordValue(t, m)), true
	}
	for _, z := range []string{"none", "no ", "nothing"} {
		if strings.HasPrefix(t+" ", z) {
			return 0, true
		}
	}
	return 0, false
}

// wordValue is the value of a reNumWord match: "seven", "twenty-one".
func wordValue(s string, m []int) int {
	v := wordNum[s[m[2]:m[3]]]
	if m[4] >= 0 && v >= 20 {
		v += wordNum[s[m[4]:m[5]]]
	}
	return v
}

var wordNum = func() map[string]int {
	m := map[string]int{}
	for i, w := range strings.Split(numWords, "|") {
		if i < 20 {
			m[w] = i
		} else {
			m[w] = 20 + 10*(i-20)
		}
	}
	return m
}()

// phraseCands finds the final-answer phrases, in order of position.
func (d *doc) phraseCands() []cand {
	from := d.countFrom
	w := d.w
	var out []cand
	add := func(pos int, v float64, ok bool) {
		// "There are 7 bounces in total? No, 4." asks, it does not answer.
		if ok && !d.inQuestion(pos) {
			out = append(out, cand{pos: pos, val: v, s: d.valS, e: d.valE})
		}
	}
	// all finds re's matches in the answer region; need is a substring
	// every match contains, checked first because it is much cheaper.
	all := func(re *regexp.Regexp, need string) [][]int {
		if !strings.Contains(w[from:], need) {
			return nil
		}
		ms := re.FindAllStringIndex(w[from:], -1)
		for _, m := range ms {
			m[0] += from
			m[1] += from
		}
		return ms
	}
	for _, m := range all(reFinal, "final") {
		v, ok := d.valueAfter(m[1], 6, true)
		add(m[0], v, ok)
	}
	for _, m := range all(reAnswer, "answer") {
		v, ok := d.valueAfter(m[1], 6, true)
		add(m[0], v, ok)
	}
	for _, m := range all(reAnswerTag, "<answer>") {
		v, ok := d.valueAfter(m[1], 2, true)
		add(m[0], v, ok)
	}
	for _, m := range all(reJSONStrong, `"`) {
		v, ok := d.valueAfter(m[1], 0, true)
		add(m[0], v, ok)
	}
	for _, m := range all(reATotalOf, "total") {
		v, ok := d.valueAfter(m[1], 1, false)
		add(m[0], v, ok)
	}
	for _, m := range all(reInTotal, "total") {
		win := max(from, m[0]-80)
		if b := reBeforeTotal.FindStringSubmatchIndex(w[win:m[0]]); b != nil {
			v, ok := d.valueAt(win + b[2])
			add(win+b[2], v, ok)
		}
		v, ok := d.valueAfter(m[1], 4, false)
		add(m[0], v, ok)
	}
	for _, re := range []*regexp.Regexp{reZero1, reZero2, reZero3} {
		for _, m := range all(re, "n") { // "no", "never", "not", "n't"
			_, le := d.line(m[0])
			if m[1] <= le && reZeroEnd.MatchString(w[m[1]:min(le, m[1]+120)]) {
				d.valS = -1
				add(m[0], 0, true)
			}
		}
	}
	// Weak phrases.
	for _, re := range []*regexp.Regexp{reTotalIs, reNumberOf} {
		need := "total"
		if re == reNumberOf {
			need = "number of"
		}
		for _, m := range all(re, need) {
			if d.runningContext(m[0], m[1]) || d.inLedgerRow(m[0]) {
				continue
			}
			if m[0] >= 2 && w[m[0]-2:m[0]] == "a " { // "a total of" is strong
				continue
			}
			v, ok := d.valueAfter(m[1], 3, false)
			add(m[0], v, ok)
		}
	}
	for _, m := range all(reJSONWeak, `"`) {
		key := w[m[0]:m[1]]
		if strings.Contains(key, "running") || strings.Contains(key, "cumulative") || strings.Contains(key, "current") {
			continue
		}
		if d.inEventObject(m[0]) {
			continue
		}
		v, ok := d.valueAfter(m[1], 0, false)
		add(m[0], v, ok)
	}
	// "Count: 7" only as the last non-empty line.
	if ls, le, ok := d.lastLine(); ok {
		if m := reCountEnd.FindStringIndex(w[ls:le]); m != nil && !d.runningContext(ls+m[0], ls+m[1]) {
			v, ok := d.valueAfter(ls+m[1], 2, false)
			add(ls+m[0], v, ok)
		}
	}
	sortCands(out)
	return out
}

// inQuestion reports whether the sentence holding pos ends with '?'.
func (d *doc) inQuestion(pos int) bool {
	_, le := d.line(pos)
	for p := pos; p < le && p < pos+300; p++ {
		switch d.w[p] {
		case '.', '!', ';':
			if p+1 >= le || d.w[p+1] == ' ' {
				return false
			}
		case '?':
			return true
		}
	}
	return false
}

func sortCands(cs []cand) {
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].pos < cs[j].pos })
}

// runningContext reports a running total ("running total: 3", "count so
// far: 3") rather than a final one.
func (d *doc) runningContext(s, e int) bool {
	return reRunning.MatchString(d.w[max(0, s-20):s]) || reSoFar.MatchString(d.w[s:min(len(d.w), e+40)])
}

// inLedgerRow reports whether a weak phrase trails a time on its line
// ("00:03.5 — left wall (total: 1)"): a ledger's running count.
func (d *doc) inLedgerRow(pos int) bool {
	ls, _ := d.line(pos)
	return d.timesIn(ls, pos) > 0
}

// inEventObject reports whether pos is inside a flat JSON object holding
// exactly one time: an event entry, whose "count" is a running count.
func (d *doc) inEventObject(pos int) bool {
	s, depth := -1, 0
	for p := pos - 1; p >= 0 && p >= pos-800; p-- {
		if d.w[p] == '}' {
			depth++
		} else if d.w[p] == '{' {
			if depth == 0 {
				s = p
				break
			}
			depth--
		}
	}
	if s < 0 {
		return false
	}
	e := strings.IndexAny(d.w[pos:min(len(d.w), pos+800)], "{}")
	if e < 0 || d.w[pos+e] != '}' {
		return false
	}
	return d.timesIn(s, pos+e) == 1
}

func (d *doc) lastLine() (int, int, bool) {
	for i := len(d.lineStarts) - 1; i >= 0; i-- {
		s := d.lineStarts[i]
		if s < d.countFrom {
			break
		}
		e := len(d.w)
		if i+1 < len(d.lineStarts) {
			e = d.lineStarts[i+1] - 1
		}
		if strings.TrimSpace(d.w[s:e]) != "" {
			return s, e, true
		}
	}
	return 0, 0, false
}

// valueAfter reads the answer following a phrase: after separators
// (":", "=", "—", markdown, up to two line breaks) and at most maxWords
// words ("is that there are"), a number that is not a time, a number
// word, or with allowNone "none"/"no …"/"nothing" for 0. It stops at the
// end of a sentence.
func (d *doc) valueAfter(p, maxWords int, allowNone bool) (float64, bool) {
	d.valS = -1
	w := d.w
	words, nl := 0, 0
	for steps := 0; p < len(w) && steps < 200; steps++ {
		b := w[p]
		switch {
		case b == '\n':
			nl++
			if nl > 2 {
				return 0, false
			}
			p++
		case strings.IndexByte(" \t:=#>\"'([{|~,", b) >= 0:
			p++
		case b == '-' && p+1 < len(w) && isDigit(w[p+1]):
			return d.valueAt(p) // a negative answer, rejected later
		case strings.HasPrefix(w[p:], "−") && p+3 < len(w) && isDigit(w[p+3]):
			return d.valueAt(p + 3)
		case b == '-':
			p++
		case strings.HasPrefix(w[p:], "—") || strings.HasPrefix(w[p:], "–") || strings.HasPrefix(w[p:], "≈") || strings.HasPrefix(w[p:], "−"):
			p += 3
		case isDigit(b):
			return d.valueAt(p)
		case isLetter(b):
			q := p
			for q < len(w) && isLetter(w[q]) {
				q++
			}
			word := w[p:q]
			if m := reNumWord.FindStringSubmatchIndex(w[p:min(len(w), p+30)]); m != nil && m[0] == 0 {
				d.valS, d.valE = p, p+m[1]
				return float64(wordValue(w[p:], m)), true
			}
			if allowNone && (word == "none" || word == "no" || word == "nothing") {
				return 0, true
			}
			if words >= maxWords || !fillerWords[word] {
				return 0, false
			}
			words++
			p = q
		default:
			return 0, false
		}
	}
	return 0, false
}

// valueAt reads the number starting at p, refusing times. It records the
// value's span in d.valS, d.valE.
func (d *doc) valueAt(p int) (float64, bool) {
	d.valS = -1
	if p < len(d.w) && isLetter(d.w[p]) {
		if m := reNumWord.FindStringSubmatchIndex(d.w[p:min(len(d.w), p+30)]); m != nil && m[0] == 0 {
			d.valS, d.valE = p, p+m[1]
			return float64(wordValue(d.w[p:], m)), true
		}
		return 0, false
	}
	if p < len(d.w) && d.w[p] == '-' {
		p++
	}
	k := d.numAt(p)
	if k < 0 {
		return 0, false
	}
	n := d.nums[k]
	if n.timeUnit() || n.badClock || d.isTimeNum(k) || d.listNum[k] || n.glued {
		return 0, false
	}
	v := n.plain
	if n.neg {
		v = -v
	}
	d.valS, d.valE = n.start, n.end
	return v, true
}

// isTimeNum reports whether number k is (part of) a time.
func (d *doc) isTimeNum(k int) bool {
	if d.timeNum == nil {
		d.timeNum = map[int]bool{}
		for _, t := range d.times {
			d.timeNum[t.num] = true
			if t.rng {
				d.timeNum[t.num+1] = true
			}
		}
	}
	return d.timeNum[k]
}

// fillerWords may stand between a final-answer phrase and its number
// ("the final count of bounces is 7", "Final answer: the ball bounced 7
// times"); any other word ends the search ("my final answer, let me
// recount: 1, 2, …" has no value).
var fillerWords = map[string]bool{
	"is": true, "was": true, "are": true, "were": true, "be": true, "would": true, "will": true,
	"of": true, "that": true, "there": true, "the": true, "approximately": true, "approx": true,
	"about": true, "around": true, "roughly": true, "exactly": true, "equals": true, "equal": true,
	"to": true, "comes": true, "count": true, "total": true, "number": true, "counted": true,
	"i": true, "we": true, "get": true, "got": true, "have": true, "has": true, "therefore": true,
	"so": true, "thus": true, "hence": true, "a": true, "an": true, "it": true, "its": true, "in": true,
	"video": true, "clip": true, "my": true, "our": true, "final": true, "answer": true,
	"ball": true, "light": true, "highlight": true, "bounced": true, "blinked": true, "flashed": true,
	"transitioned": true, "changed": true, "switched": true, "hit": true, "hits": true,
	"made": true, "makes": true, "observed": true, "saw": true, "see": true, "detected": true,
	"bounce": true, "bounces": true, "blink": true, "blinks": true, "transition": true,
	"transitions": true, "flash": true, "flashes": true, "pulse": true, "pulses": true,
	"contact": true, "contacts": true, "wall": true, "walls": true, "event": true, "events": true,
	"change": true, "changes": true, "state": true, "states": true, "this": true, "for": true,
	"overall": true, "s": true, "t": true, "which": true, "here": true, "now": true, "only": true,
	// "Final answer: either 12 or 13", "… between 12 and 15": read the first
	// value; the alternatives rule then makes the answer ambiguous.
	"either": true, "between": true,
}

// lastInteger returns the last integer in the answer region that is not a
// time, a range of times, an index, a frame number or rate, or glued to a
// word, and its index in d.nums. Negative and absurd integers are skipped
// and flagged.
func (d *doc) lastInteger() (int, int, bool) {
	for k := len(d.nums) - 1; k >= 0; k-- {
		n := d.nums[k]
		if n.start < d.countFrom {
			break
		}
		if !n.isInt || n.glued || n.unit != "" || d.isTimeNum(k) || d.listNum[k] || d.intExcluded(n) {
			continue
		}
		if n.neg || n.plain > MaxCount {
			d.flag(FlagRejectedCount)
			continue
		}
		return int(n.plain), k, true
	}
	return 0, -1, false
}

func (d *doc) intExcluded(n num) bool {
	w := d.w
	ls, le := d.line(n.start)
	before := w[max(ls, n.start-40):n.start]
	after := w[n.end:min(le, n.end+20)]
	switch {
	case reIntUnitAfter.MatchString(after):
		return true
	case n.start > 0 && w[n.start-1] == '/':
		return true
	case n.start > 1 && w[n.start-1] == '-' && isLetter(w[n.start-2]):
		return true // "GPT-4"
	case reIntLabel.MatchString(before) && !reTimesAfter.MatchString(after):
		return true // "Bounce 3:", "frame 12", "#2"
	case reFrameRange.MatchString(before):
		return true // "frames 10-15"
	case reFrameOf.MatchString(before):
		return true // the M of an echoed label "Frame 3 of 8"
	case n.start-ls <= 12 && reLineIndexPre.MatchString(w[ls:n.start]) && reLineIndexPost.MatchString(w[n.end:min(le, n.end+4)]):
		return true // "1. 00:03.5 left"
	case n.start > 0 && w[n.start-1] == '(' && n.end < len(w) && w[n.end] == ')':
		return true // "(2)"
	case d.tableIndex(n.start, n.end):
		return true
	}
	return false
}

// lastNumberWord returns the last cardinal number word that is not "one"
// as a pronoun ("one of", "this one") or a duration ("two seconds"), and
// its span in d.w.
func (d *doc) lastNumberWord() (int, int, int, bool) {
	w := d.w[d.countFrom:]
	ms := reNumWord.FindAllStringSubmatchIndex(w, -1)
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		after := w[m[1]:min(len(w), m[1]+20)]
		if reWordUnitAfter.MatchString(after) {
			continue
		}
		if w[m[2]:m[3]] == "one" && reWordOnePre.MatchString(w[max(0, m[0]-12):m[0]]) {
			continue
		}
		return wordValue(w, m), d.countFrom + m[0], d.countFrom + m[1], true
	}
	return 0, 0, 0, false
}
