package parse

import (
	"regexp"
	"strings"

	"github.com/tracegrid/tracegrid/domain"
)

var (
	reWallWord   = regexp.MustCompile(`\b(?:top|upper|bottom|lower|left|right|ceiling|roof|floor|ground)\b`)
	reWallNoun   = regexp.MustCompile(`^[\s-]*(?:hand\s+)?(?:wall|side|edge|border|boundary|barrier|panel)\b`)
	reWallKV     = regexp.MustCompile(`\b(?:wall|side|edge|surface)"?\s*[:=]\s*"?(top|upper|bottom|lower|left|right|ceiling|floor)\b`)
	reContactThe = regexp.MustCompile(`(?:\bhits?|\bhitting|\btouch\w*|\bstrik\w*|\bstruck|\breach\w*|\boff|\bagainst|\bcontacts?|\bwith|\bbounc\w*\s+(?:on|at))\s+the\s+$`)
	reDirection  = regexp.MustCompile(`(?:\bto|\btoward|\btowards|\binto|\bmoving|\bheading|\bgoing)\s+(?:the\s+)?$`)
	rePhaseKV    = regexp.MustCompile(`\b(?:phase|state|status|light|led)"?\s*[:=]\s*"?(on|off)\b`)
	rePhaseArrow = regexp.MustCompile(`\b(?:on|off)\s*(?:→|->|=>|⟶|to)\s*(on|off)\b`)
	rePhaseVerb  = regexp.MustCompile(`\b(?:turns?|turned|turning|switch(?:es|ed)?|comes|came|goes|went|flicks?|flicked|becomes|became|is|was|gets|got|lights?|blinks)\s+(on|off)\b`)
	rePhaseOnW   = regexp.MustCompile(`\blit\b|\blights? up\b|\billuminat\w*|\bon-pulse\b`)
	rePhaseOffW  = regexp.MustCompile(`\b(?:goes|went|turns|turned)\s+dark\b|\bextinguish\w*`)
	rePhaseBare  = regexp.MustCompile(`\b(on|off)\b`)
	reStateKV    = regexp.MustCompile(`\b(from|prev|previous|source|old|to|next|new|target|new_state|state|dest|destination)"?\s*[:=]\s*"?([a-z][0-9]{0,2})\b`)
	reStateArrow = regexp.MustCompile(`\b([A-Z][0-9]{0,2})\s*(?:→|->|-->|=>|⟶|➔|—>|–>|\b(?i:to)\b)\s*(?i:state\s+|node\s+)?([A-Z][0-9]{0,2})\b`)
	reStateTo    = regexp.MustCompile(`(?:(?i:\bto|\binto|\benters?|\bentering|\breaches|\breached|\bnow\s+(?:at|in|on)|\bbecomes)\s+|→\s*|->\s*|=>\s*)(?i:state\s+|node\s+)?([A-Z][0-9]{0,2})\b`)
	reStateFrom  = regexp.MustCompile(`(?i:\bfrom|\bleaves|\bleaving|\bleft|\bexits?|\bexited)\s+(?i:state\s+|node\s+)?([A-Z][0-9]{0,2})\b`)
	reLabel      = regexp.MustCompile(`\b([A-Z][0-9]{0,2})\b`)
)

var wallCanon = map[string]string{
	"top": "top", "upper": "top", "ceiling": "top", "roof": "top",
	"bottom": "bottom", "lower": "bottom", "floor": "bottom", "ground": "bottom",
	"left": "left", "right": "right",
}

// attrs reads the domain's attributes from an accepted piece: a table
// row's attribute columns first, then patterns over the piece's text.
func (d *doc) attrs(p piece) map[string]string {
	m := map[string]string{}
	set := func(k, v string) {
		if _, ok := m[k]; !ok && v != "" {
			m[k] = v
		}
	}
	cell := func(role string) (w, c string) {
		if p.row == nil {
			return "", ""
		}
		if sp, ok := p.row.roles[role]; ok {
			return d.w[sp[0]:sp[1]], d.c[sp[0]:sp[1]]
		}
		return "", ""
	}
	w, c := d.w[p.s:p.e], d.c[p.s:p.e]
	switch d.domain {
	case domain.BounceBall:
		if cw, _ := cell("wall"); cw != "" {
			set("wall", wallOf(cw, true))
		}
		set("wall", wallOf(w, false))
	case domain.Blinking:
		if cw, cc := cell("phase"); cw != "" {
			set("phase", phaseOf(cw, cc))
		}
		set("phase", phaseOf(w, c))
	case domain.StateMachine:
		if _, cc := cell("from"); cc != "" {
			if mm := reLabel.FindStringSubmatch(cc); mm != nil {
				set("from", mm[1])
			}
		}
		if _, cc := cell("to"); cc != "" {
			if mm := reLabel.FindStringSubmatch(cc); mm != nil {
				set("to", mm[1])
			}
		}
		from, to := statesOf(w, c)
		set("from", from)
		set("to", to)
	default:
		return nil
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// wallOf names the wall a clause says was hit. A wall word counts when a
// wall noun follows ("left wall", "top edge"), when it is a synonym that
// needs none ("ceiling", "floor"), when it follows a contact ("hits the
// bottom at 3.5 s"), or when it stands alone ("— left", "(top)", "wall":
// "right"); never as a direction ("moving to the right").
// Several walls: the first after the contact verb, else the first.
func wallOf(w string, cell bool) string {
	if m := reWallKV.FindStringSubmatch(w); m != nil {
		return wallCanon[m[1]]
	}
	type cand struct {
		pos  int
		wall string
	}
	var cs []cand
	for _, m := range reWallWord.FindAllStringIndex(w, -1) {
		word := w[m[0]:m[1]]
		rest := w[m[1]:]
		ok := reWallNoun.MatchString(rest)
		switch word {
		case "ceiling", "roof", "floor", "ground":
			ok = true
		}
		if !ok {
			r := strings.TrimLeft(rest, " \t")
			standalone := r == "" || !(isAlnum(r[0]) || r[0] == '-')
			if len(rest) > 0 && rest[0] == '-' { // "top-left corner"
				standalone = false
			}
			ok = (standalone || cell || reContactThe.MatchString(w[:m[0]])) && !reDirection.MatchString(w[:m[0]])
		}
		if ok {
			cs = append(cs, cand{m[0], wallCanon[word]})
		}
	}
	if len(cs) == 0 {
		return ""
	}
	if v := reEvBounce.FindStringIndex(w); v != nil {
		for _, c := range cs {
			if c.pos > v[0] {
				return c.wall
			}
		}
	}
	return cs[0].wall
}

// phaseOf reads "on"/"off": a key ("phase": "on"), an arrow's target
// ("off → on"), else the first explicit mention ("turns on", "lit", "goes
// dark", a standalone "ON"/"off"). "blink" alone states no phase.
func phaseOf(w, c string) string {
	if m := rePhaseKV.FindStringSubmatch(w); m != nil {
		return m[1]
	}
	if m := rePhaseArrow.FindStringSubmatch(w); m != nil {
		return m[1]
	}
	best, val := len(w)+1, ""
	consider := func(pos int, v string) {
		if pos < best {
			best, val = pos, v
		}
	}
	for _, m := range rePhaseVerb.FindAllStringSubmatchIndex(w, -1) {
		consider(m[2], w[m[2]:m[3]])
	}
	if m := rePhaseOnW.FindStringIndex(w); m != nil {
		consider(m[0], "on")
	}
	if m := rePhaseOffW.FindStringIndex(w); m != nil {
		consider(m[0], "off")
	}
	for _, m := range rePhaseBare.FindAllStringIndex(w, -1) {
		// Standalone: "— ON", "(off)", "on-pulse"; not "on the left".
		rest := strings.TrimLeft(w[m[1]:], " \t")
		upper := c[m[0]:m[1]] == "ON" || c[m[0]:m[1]] == "OFF"
		if upper || rest == "" || !isAlnum(rest[0]) {
			consider(m[0], w[m[0]:m[1]])
		}
	}
	return val
}

// statesOf reads a transition's labels: keys ("from": "B"), an arrow or
// "B to C", else "to C"/"enters C" and "from B"/"leaves B" separately.
// Labels are capital letters with up to two digits (A, S1, P).
func statesOf(w, c string) (from, to string) {
	for _, m := range reStateKV.FindAllStringSubmatchIndex(w, -1) {
		v := c[m[4]:m[5]]
		if v[0] < 'A' || v[0] > 'Z' {
			continue
		}
		switch w[m[2]:m[3]] {
		case "from", "prev", "previous", "source", "old":
			if from == "" {
				from = v
			}
		default:
			if to == "" {
				to = v
			}
		}
	}
	if from != "" || to != "" {
		return from, to
	}
	if m := reStateArrow.FindStringSubmatch(c); m != nil {
		return m[1], m[2]
	}
	if m := reStateTo.FindStringSubmatch(c); m != nil {
		to = m[1]
	}
	if m := reStateFrom.FindStringSubmatch(c); m != nil {
		from = m[1]
	}
	return from, to
}
