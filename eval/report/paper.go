package report

import (
	"fmt"
	"math"

	"github.com/tracegrid/tracegrid/domain"
)

// The published reference: Gemini 3.6 Flash in low-frequency-trap, native
// video at about 1 FPS with the structured-trace prompt, 730 clips per
// domain. Printed beside every model and condition of a study, so a reader
// sees how far a model falls short of what its frames allowed (the
// reference perceiver's surface is that bound).

// PaperModel names the published model and its input.
const PaperModel = "Gemini 3.6 Flash (paper, native ≈1 FPS · structured_trace)"

// PaperDomainRow is one domain row of the paper's Table 1 Part A, in
// percent (VOR as a ratio), exactly as printed.
type PaperDomainRow struct {
	Domain                                   string `json:"domain"`
	EM, VOR, Precision, Recall, F1, ACR, RFR float64
}

// PaperTable1A is Table 1 Part A of low-frequency-trap.
var PaperTable1A = []PaperDomainRow{
	{domain.BounceBall, 19.6, 0.71, 59.2, 31.5, 36.6, 3.9, 3.6},
	{domain.Blinking, 6.4, 0.60, 42.2, 13.8, 18.6, 2.4, 0.3},
	{domain.StateMachine, 37.1, 0.74, 72.5, 48.1, 53.9, 10.8, 3.1},
}

// PaperCountBoundaries are Gemini's count boundaries N*0.8(F) as §4 states
// them ("Gemini count boundaries"): Bounce Ball reaches N = 10 only at
// 0.5 Hz and fails at the first positive count from 1.0 to 4.0 Hz;
// Blinking has no reliable positive-count region; State Machine is
// reliable through N = 12 at 0.5 and 1.0 Hz and N = 2 at 1.5 Hz, and "is
// generally limited to N = 1 above it" — with its frequency boundary of
// 3.0 Hz at N = 1 (§4, "Gemini frequency boundaries"), that is N = 1 from
// 2.0 to 3.0 Hz and below 1 at 3.5 and 4.0 Hz. 0 stands for "< 1".
var PaperCountBoundaries = map[string]map[float64]int{
	domain.BounceBall:   {0.5: 10, 1.0: 0, 1.5: 0, 2.0: 0, 2.5: 0, 3.0: 0, 3.5: 0, 4.0: 0},
	domain.Blinking:     {0.5: 0, 1.0: 0, 1.5: 0, 2.0: 0, 2.5: 0, 3.0: 0, 3.5: 0, 4.0: 0},
	domain.StateMachine: {0.5: 12, 1.0: 12, 1.5: 2, 2.0: 1, 2.5: 1, 3.0: 1, 3.5: 0, 4.0: 0},
}

// PaperComparison is the summary.json record of the comparison.
type PaperComparison struct {
	Reference      string               `json:"reference"`
	Table1A        []PaperDomainRow     `json:"table1_part_a"`
	CountBoundary  map[string][]PaperNF `json:"count_boundaries"`
	ComparedTo     []string             `json:"compared_to"`
	ToleranceNotes string               `json:"note"`
}

// PaperNF is one published count boundary.
type PaperNF struct {
	F     float64 `json:"f"`
	N     int     `json:"n"`
	Label string  `json:"label"`
}

func boundaryLabel(n int) string {
	if n == 0 {
		return "< 1"
	}
	return fmt.Sprint(n)
}

// paperComparison fills the summary.json record.
func (r *Report) paperComparison() PaperComparison {
	pc := PaperComparison{Reference: PaperModel, Table1A: PaperTable1A, CountBoundary: map[string][]PaperNF{},
		ToleranceNotes: "paper: δ = 1/(2F), positive-event trials for trace metrics, 10 seeds per cell; compare like with like (domain, condition, tolerance)"}
	for d, m := range PaperCountBoundaries {
		for _, f := range []float64{0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0} {
			pc.CountBoundary[d] = append(pc.CountBoundary[d], PaperNF{F: f, N: m[f], Label: boundaryLabel(m[f])})
		}
	}
	// The comparison is over the event domains: a condition with only
	// objects trials has nothing to compare.
	withEvents := map[rowKey]bool{}
	for _, row := range r.Domains {
		withEvents[row.key().condition()] = true
	}
	for _, mi := range r.Models {
		for _, c := range mi.Conditions {
			if withEvents[rowKey{mi.Model, c, ""}] {
				pc.ComparedTo = append(pc.ComparedTo, mi.Model+" · "+c.Label())
			}
		}
	}
	return pc
}

// paperTables are the HTML tables: Table 1 Part A with the paper's row
// first in each domain, and the count boundaries per frequency.
func (r *Report) paperTables() (htmlTable, htmlTable) {
	t1 := htmlTable{ID: "paper-table1", Head: table1Columns,
		Caption: "Table 1 Part A of low-frequency-trap (Gemini 3.6 Flash) beside every model and condition of this study, by domain. Trace metrics: δ = " + r.ToleranceLabel + " here, 1/(2F) in the paper."}
	for _, d := range eventDomains(r.DomainNames) {
		t1.Rows = append(t1.Rows, htmlRow{Section: DomainTitle(d)})
		for _, p := range PaperTable1A {
			if p.Domain == d {
				t1.Rows = append(t1.Rows, htmlRow{Class: "sel", Cells: []string{PaperModel, printed(p.EM), fix2(p.VOR), printed(p.Precision), printed(p.Recall), printed(p.F1), printed(p.ACR), printed(p.RFR)}})
			}
		}
		for _, row := range r.Domains {
			if row.Domain == d {
				t1.Rows = append(t1.Rows, htmlRow{Cells: metricCells(row.Model+" · "+Condition{row.Policy, row.Labels, row.Prompt}.Label(), row.Metrics)})
			}
		}
	}
	freqs := []float64{0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0}
	head := []string{"Domain / model · condition"}
	for _, f := range freqs {
		head = append(head, fmt.Sprintf("N*(%.1f Hz)", f))
	}
	t2 := htmlTable{ID: "paper-boundaries", Head: head,
		Caption: "Count boundaries N*τ(F) (contiguous-prefix rule): the paper's Gemini 3.6 Flash as §4 states them, beside every model and condition of this study. – : frequency not tested here."}
	for _, d := range eventDomains(r.DomainNames) {
		t2.Rows = append(t2.Rows, htmlRow{Section: DomainTitle(d)})
		if m, ok := PaperCountBoundaries[d]; ok {
			cells := []string{PaperModel}
			for _, f := range freqs {
				cells = append(cells, boundaryLabel(m[f]))
			}
			t2.Rows = append(t2.Rows, htmlRow{Class: "sel", Cells: cells})
		}
		for _, b := range r.Boundaries {
			if b.Domain != d {
				continue
			}
			cells := []string{b.Model + " · " + Condition{b.Policy, b.Labels, b.Prompt}.Label()}
			for _, f := range freqs {
				cell := "–"
				for _, cb := range b.Count {
					if math.Abs(cb.F-f) < 1e-9 {
						cell = cb.Label
					}
				}
				cells = append(cells, cell)
			}
			t2.Rows = append(t2.Rows, htmlRow{Cells: cells})
		}
	}
	return t1, t2
}

// printed formats a percentage the paper printed (already in percent).
func printed(v float64) string { return fmt.Sprintf("%.1f", v) }
