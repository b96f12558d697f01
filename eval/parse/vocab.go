package parse

import (
	"regexp"

	"github.com/tracegrid/tracegrid/domain"
)

// Event vocabulary. A clause of prose yields an event only when it uses one
// of these words (or an attribute-only clause inherits from one that does);
// see the package doc.
var (
	reEvGeneric = regexp.MustCompile(`\b(?:events?|occurrences?|timestamps?|occurs?|occurred|happens|happened)\b`)
	reEvBounce  = regexp.MustCompile(`\b(?:bounc\w*|hit|hits|hitting|strik\w*|struck|touch\w*|contact\w*|collid\w*|collision\w*|reflect\w*|rebound\w*|impact\w*|ricochet\w*|deflect\w*)\b|\b(?:reach\w*|arriv\w*\s+at)\s+(?:the\s+)?(?:(?:top|bottom|left|right|upper|lower)[\s-]+)?(?:wall|edge|side|border|boundary|ceiling|floor)\b`)
	reEvBlink   = regexp.MustCompile(`\b(?:blink\w*|flash\w*|puls\w*|flicker\w*|illuminat\w*|glow\w*|lit|lights? up|lighted|on-pulse|appear\w*|disappear\w*)\b|\b(?:turns?|turned|turning|switch(?:es|ed)?|comes|came|goes|went|flicks?|flicked|becomes|became|light|lights)\s+(?:on|off|dark|bright)\b|\b(?:is|was|gets|got)\s+(?:on|bright)\b`)
	reEvState   = regexp.MustCompile(`\b(?:transition\w*|switch\w*|chang\w*|move|moves|moved|moving|jump\w*|advanc\w*|enter\w*|leav\w*|left|shift\w*|hop\w*|goes to|went to|go to|goes back|went back|back to|return\w*|activat\w*|passes|passed)\b`)
	// On the case-kept text: "B → C", "S1->S2", "from B to C".
	reArrowLabels = regexp.MustCompile(`\b[A-Z][0-9]{0,2}\s*(?:→|->|-->|=>|⟶|➔|—>|–>)\s*[A-Z][0-9]{0,2}\b|(?i:\bfrom)\s+(?i:state\s+|node\s+)?[A-Z][0-9]{0,2}\s+(?i:to)\s+(?i:state\s+|node\s+)?[A-Z][0-9]{0,2}\b`)
	reUpperOn     = regexp.MustCompile(`\bON\b`)

	// Negation makes a clause a non-event ("no blink at 7 s", "the ball
	// does not touch the wall at 5.0 s"). Hedges are removed first.
	reNeg      = regexp.MustCompile(`\b(?:no|not|never|nothing|none|without|neither|nor|cannot|nobody)\b|n['’]t\b`)
	reNegHedge = regexp.MustCompile(`\bnot\s+(?:sure|certain|entirely|fully|quite|exactly|completely|clear|clearly|100%)|\bno\.\s*\d|\bno\s+doubt\b`)
	// Examples, conditionals and questions are not reports.
	reIrrealis = regexp.MustCompile(`\be\.g\.|\bi\.e\.|\bfor (?:example|instance)\b|\bexamples?\b|\bformat\b|\btemplate\b|\bplaceholder\b|\bif\b|\bwhether\b|\bsuppose\b|\bhypothetical\w*|\babout to\b|\bgoing to\b`)
	// Stative or meta descriptions: a ledger row saying where the ball is,
	// or that the clip starts, is not an event.
	reStative = regexp.MustCompile(`\b(?:initial\w*|highlighted|currently|shows?|showing|visible|position|is at|is in|is on|moving|moves|move|travel\w*|approach\w*|heading|heads|toward|towards|middle|center|centre|remain\w*|stay\w*|still|unchanged|static|stationary|idle|paused|rest|resting|near|close to|midway|start|starts|started|begin\w*|end|ends|ended|ending|same|steady|is off|was off)\b`)
)

// Words that carry no claim of their own: a clause made only of these (and
// the time, labels and numbers) is "thin" and inherits from its sentence.
var thinWords = map[string]bool{
	"the": true, "a": true, "an": true, "and": true, "or": true, "then": true, "also": true,
	"at": true, "around": true, "about": true, "approximately": true, "approx": true,
	"roughly": true, "exactly": true, "precisely": true, "near": true, "t": true, "time": true,
	"timestamp": true, "s": true, "sec": true, "secs": true, "seconds": true, "ms": true,
	"it": true, "its": true, "ball": true, "light": true, "square": true, "circle": true,
	"dot": true, "lamp": true, "shape": true, "highlight": true, "state": true, "node": true,
	"wall": true, "walls": true, "side": true, "edge": true, "on": true, "off": true,
	"from": true, "to": true, "top": true, "upper": true, "bottom": true, "lower": true,
	"left": true, "right": true, "ceiling": true, "floor": true, "event": true, "again": true,
	"first": true, "second": true, "third": true, "fourth": true, "fifth": true, "sixth": true,
	"seventh": true, "eighth": true, "ninth": true, "tenth": true, "eleventh": true,
	"twelfth": true, "last": true, "next": true, "final": true, "another": true, "one": true,
	"count": true, "total": true, "running": true, "cumulative": true, "so": true, "far": true,
	"now": true, "index": true, "est": true, "estimated": true, "approximate": true,
	"frame": true, "mm": true, "ss": true, "hand": true, "phase": true, "type": true,
	"with": true, "of": true, "bounce": true, "blink": true, "transition": true, "contact": true,
	"hit": true, "flash": true, "pulse": true, "mark": true, "point": true, "finally": true,
	"lastly": true, "eventually": true, "afterwards": true, "after": true, "that": true,
	"which": true, "subsequently": true, "once": true, "more": true, "too": true, "by": true,
	"later": true, "in": true, "frames": true,
}

func eventWords(dom string) []*regexp.Regexp {
	switch dom {
	case domain.BounceBall:
		return []*regexp.Regexp{reEvGeneric, reEvBounce}
	case domain.Blinking:
		return []*regexp.Regexp{reEvGeneric, reEvBlink}
	case domain.StateMachine:
		return []*regexp.Regexp{reEvGeneric, reEvState}
	}
	return []*regexp.Regexp{reEvGeneric, reEvBounce, reEvBlink, reEvState}
}

// hasEventWord reports whether the clause (lowercased w, case-kept c) names
// an event of the domain.
func (d *doc) hasEventWord(w, c string) bool {
	for _, re := range eventWords(d.domain) {
		if re.MatchString(w) {
			return true
		}
	}
	switch d.domain {
	case domain.StateMachine:
		return reArrowLabels.MatchString(c)
	case domain.Blinking:
		return reUpperOn.MatchString(c)
	case domain.BounceBall:
		return false
	}
	return reArrowLabels.MatchString(c)
}

func negated(w string) bool {
	return reNeg.MatchString(reNegHedge.ReplaceAllString(w, " "))
}
