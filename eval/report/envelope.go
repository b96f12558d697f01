package report

import (
	"fmt"
	"github.com/tracegrid/tracegrid/eval/score"
	"strconv"
	"strings"
)

// pct formats a fraction as a percentage with one decimal ("19.6%").
func pct(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) + "%" }

// num formats a value with the fewest decimals that show it (0.5, 12).
func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// hz formats a frequency with one decimal, as the paper's axis does.
func hz(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

// freqRange names a run of tested frequencies without the unit: "0.5" or
// "0.5–1.0".
func freqRange(fs []float64) string {
	if len(fs) == 1 {
		return hz(fs[0])
	}
	return hz(fs[0]) + "–" + hz(fs[len(fs)-1])
}

// joinList joins phrases as prose: "a", "a and b", "a, b and c".
func joinList(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// countPhrase describes one surface's count boundaries, grouping the
// tested frequencies by boundary (runs of adjacent ones as ranges): "up to
// N = 12 at 0.5–1.0 Hz, N = 1 at 1.5 and 3.0 Hz (N < 1 at 2.0–2.5 and
// 3.5–4.0 Hz)". It returns "" when no frequency has a reliable positive
// count.
func countPhrase(b BoundaryRow) string {
	type group struct {
		label string
		below bool
		value float64
		runs  [][]float64
	}
	var groups []*group
	byLabel := map[string]*group{}
	prev := ""
	for _, c := range b.Count {
		g := byLabel[c.Label]
		if g == nil {
			g = &group{label: c.Label, below: c.Below, value: c.Value}
			byLabel[c.Label] = g
			groups = append(groups, g)
		}
		if prev == c.Label {
			g.runs[len(g.runs)-1] = append(g.runs[len(g.runs)-1], c.F)
		} else {
			g.runs = append(g.runs, []float64{c.F})
		}
		prev = c.Label
	}
	var ok, below []string
	for _, g := range groups {
		var rs []string
		for _, r := range g.runs {
			rs = append(rs, freqRange(r))
		}
		at := " at " + joinList(rs) + " Hz"
		if g.below {
			below = append(below, "N "+g.label+at)
		} else {
			ok = append(ok, "N = "+num(g.value)+at)
		}
	}
	if len(ok) == 0 {
		return ""
	}
	s := "up to " + strings.Join(ok, ", ")
	if len(below) > 0 {
		s += " (" + strings.Join(below, ", ") + ")"
	}
	return s
}

// envelope writes a model's reliability envelope, one paragraph: where
// its count boundaries let it count reliably under its baseline condition,
// the domains without a reliable region, overall exact match and the
// no-event controls; then each other condition's maximum count boundary
// and exact match; then its objects results (CountVideoBench); then the
// failed requests. A model with objects trials only gets the last two.
func (r *Report) envelope(mi ModelInfo) string {
	var b strings.Builder
	if len(eventDomains(mi.Domains)) > 0 {
		r.eventEnvelope(&b, mi)
	}
	var objects []string
	for _, c := range r.CountVideoBench.Rows {
		if c.Model == mi.Model {
			objects = append(objects, fmt.Sprintf("under %s exact match %s, Acc@10%% %s, coverage %s over %d trials (|S| = %d, PP = %s)",
				Condition{c.Policy, c.Labels, c.Prompt}.Label(), pct(c.EM), pct(c.Acc10), pct(c.Coverage), c.Trials, c.Support, fix2(c.Perplexity)))
		}
	}
	if len(objects) > 0 {
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "On static objects (CountVideoBench), %s: %s.", mi.Model, strings.Join(objects, "; "))
	}
	if r.NaturalSection != nil {
		var natural []string
		for _, c := range r.NaturalSection.Conditions {
			if c.Model == mi.Model && c.Accuracy != nil {
				natural = append(natural, fmt.Sprintf("under %s exact match %s (95%% CI %s–%s) over %d trials, exactly one away %s, %s",
					Condition{c.Policy, c.Labels, c.Prompt}.Label(), pct(*c.Accuracy), pct(*c.CILow), pct(*c.CIHigh), c.Trials, pct(*c.OneAwayRate), naturalErrors(c)))
			}
		}
		if len(natural) > 0 {
			if b.Len() > 0 {
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "On natural videos (repetition counting), %s: %s; by count bin in the Natural videos section.", mi.Model, strings.Join(natural, "; "))
		}
	}
	failed, total := 0, 0
	for _, f := range r.Failures {
		if f.Model == mi.Model {
			failed += f.Failed
		}
	}
	for _, c := range r.Cost {
		if c.Model == mi.Model {
			total += c.Trials
		}
	}
	if failed > 0 {
		fmt.Fprintf(&b, " %d of %d requests failed and are excluded from every accuracy.", failed, total)
	}
	return b.String()
}

// eventEnvelope writes the event-domain part of the envelope.
func (r *Report) eventEnvelope(b *strings.Builder, mi ModelInfo) {
	base := mi.Baseline
	fmt.Fprintf(b, "%s counts reliably (exact match ≥ %s%% at a count and at every smaller tested count) under %s",
		mi.Model, num(100*r.Tau), base.Label())
	var reliable, none, controls []string
	for _, br := range r.boundaryRows(mi.Model, base) {
		if p := countPhrase(br); p != "" {
			reliable = append(reliable, "on "+DomainTitle(br.Domain)+" "+p)
		} else if len(br.Count) > 0 {
			none = append(none, DomainTitle(br.Domain))
		}
		if br.Control != nil {
			controls = append(controls, fmt.Sprintf("%s %s", DomainTitle(br.Domain), pct(br.Control.Accuracy)))
		}
	}
	var parts []string
	if len(reliable) > 0 {
		parts = append(parts, " "+strings.Join(reliable, "; "))
	}
	if len(none) > 0 {
		parts = append(parts, " it has no reliable positive-count region on "+joinList(none))
	}
	if len(parts) == 0 {
		parts = append(parts, " it has no scored positive-count trials")
	}
	b.WriteString(strings.Join(parts, ";") + ".")
	if w, ok := r.wilsonAll(mi.Model, base); ok {
		fmt.Fprintf(b, " Overall exact match is %s (95%% CI %s–%s, %d trials)", pct(w.Accuracy), pct(w.Lo), pct(w.Hi), w.Trials)
		if len(controls) > 0 {
			b.WriteString("; no-event controls are answered correctly on " + joinList(controls))
		}
		b.WriteString(".")
	}
	var others []string
	for _, c := range mi.Conditions {
		if c == base || !r.hasEventTrials(mi.Model, c) {
			continue // the baseline, or objects trials only
		}
		o := c.Label() + ": " + nLabel(maxBoundary(r.boundaryRows(mi.Model, c)))
		if w, ok := r.wilsonAll(mi.Model, c); ok {
			o += ", " + pct(w.Accuracy)
		}
		others = append(others, o)
	}
	if len(others) > 0 {
		b.WriteString(" Other conditions (maximum count boundary, exact match): " + strings.Join(others, "; ") + ".")
	}
}

// hasEventTrials reports whether a model × condition has event-domain
// trials, scored or failed.
func (r *Report) hasEventTrials(model string, c Condition) bool {
	k := rowKey{model, c, ""}
	for _, d := range r.Domains {
		if d.key().condition() == k {
			return true
		}
	}
	for _, f := range r.Failures {
		if f.key().condition() == k && !countOnly(f.Domain) {
			return true
		}
	}
	return false
}

func (r *Report) boundaryRows(model string, c Condition) []BoundaryRow {
	var out []BoundaryRow
	for _, br := range r.Boundaries {
		if br.key().condition() == (rowKey{model, c, ""}) {
			out = append(out, br)
		}
	}
	return out
}

func (r *Report) wilsonAll(model string, c Condition) (WilsonRow, bool) {
	for _, w := range r.Wilson {
		if w.key() == (rowKey{model, c, "all"}) {
			return w, true
		}
	}
	return WilsonRow{}, false
}

// nLabel names a count boundary in prose: "N = 8", "N < 1", "no data".
func nLabel(b score.Boundary) string {
	switch {
	case b.Label == "no data":
		return b.Label
	case b.Below:
		return "N " + b.Label
	}
	return "N = " + b.Label
}

// naturalErrors states a natural condition's measures over its answered
// trials in prose, or that it has none (never a 0 that reads as perfect).
func naturalErrors(c NaturalCondition) string {
	if c.Answered == 0 {
		return "no answer with a count"
	}
	s := fmt.Sprintf("OBO %s, MAE %s", pct(*c.OBO), fix2(*c.MAE))
	if c.NormMAE != nil {
		s += " (normalised by the true count " + fix2(*c.NormMAE) + ")"
	}
	return s
}
