package score

import (
	"sort"

	"github.com/tracegrid/tracegrid/trace"
)

// Classes of an alignment row.
const (
	RowMatched       = "matched"       // within δ, no stated attribute contradicts the truth
	RowMisidentified = "misidentified" // within δ, a stated attribute contradicts the truth
	RowDisplaced     = "displaced"     // order-aligned, δ < |deviation| ≤ 2δ (DisplacedRule)
	RowMissed        = "missed"        // a true event no report is aligned with
	RowHallucinated  = "hallucinated"  // a report aligned with no true event
	RowExcluded      = "excluded"      // a reported line that is not an event of the domain
)

// AlignmentRow is one line of a trial's alignment table: a true event, a
// report, or both, and how they were classified. Times and the deviation
// (report − truth) are nil where the row has no such side.
type AlignmentRow struct {
	Class     string   `json:"class"`
	Truth     int      `json:"truth"`  // index in the trace's events; -1 when none
	Report    int      `json:"report"` // index in the reports given to ScoreTrial; -1 when none
	TruthT    *float64 `json:"truth_t"`
	ReportT   *float64 `json:"report_t"`
	Deviation *float64 `json:"deviation"`
	Excluded  string   `json:"excluded,omitempty"` // the reason, for RowExcluded
}

// AlignmentTable lists every true event and every report of one scored
// trial once, in time order (a row's time is its truth's, else its
// report's): matched and misidentified pairs, displaced pairs (one row for
// the missed truth and the hallucinated report they are), the other missed
// truths and hallucinated reports, and the excluded reports. s must be
// ScoreTrial's result for the same trace and reports; indices out of range
// are skipped, never a panic. A count-only trial (static objects) has no
// alignment: nil.
func AlignmentTable(tr *trace.Trace, reported []Report, s TrialScore) []AlignmentRow {
	if tr == nil || s.CountOnly {
		return nil
	}
	f := func(v float64) *float64 { return &v }
	var rows []AlignmentRow
	usedT := map[int]bool{}
	usedR := map[int]bool{}
	okPair := func(p Pair) bool {
		return p.Truth >= 0 && p.Truth < len(tr.Events) && p.Report >= 0 && p.Report < len(reported)
	}
	for _, p := range s.Pairs {
		if !okPair(p) {
			continue
		}
		c := RowMatched
		if misidentified(tr.Events[p.Truth], reported[p.Report].Attrs) {
			c = RowMisidentified
		}
		rows = append(rows, AlignmentRow{Class: c, Truth: p.Truth, Report: p.Report, TruthT: f(p.TruthT), ReportT: f(p.ReportT), Deviation: f(p.Deviation)})
		usedT[p.Truth], usedR[p.Report] = true, true
	}
	for _, p := range s.Displaced {
		if !okPair(p) {
			continue
		}
		rows = append(rows, AlignmentRow{Class: RowDisplaced, Truth: p.Truth, Report: p.Report, TruthT: f(p.TruthT), ReportT: f(p.ReportT), Deviation: f(p.Deviation)})
		usedT[p.Truth], usedR[p.Report] = true, true
	}
	for i, e := range tr.Events {
		if !usedT[i] {
			rows = append(rows, AlignmentRow{Class: RowMissed, Truth: i, Report: -1, TruthT: f(e.T)})
		}
	}
	excluded := map[int]bool{}
	for _, j := range s.ExcludedReports {
		excluded[j] = true
	}
	for j, r := range reported {
		switch {
		case usedR[j]:
		case excluded[j]:
			rows = append(rows, AlignmentRow{Class: RowExcluded, Truth: -1, Report: j, ReportT: f(r.T), Excluded: Exclusion(tr.Domain, r)})
		default:
			rows = append(rows, AlignmentRow{Class: RowHallucinated, Truth: -1, Report: j, ReportT: f(r.T)})
		}
	}
	key := func(r AlignmentRow) float64 {
		if r.TruthT != nil {
			return *r.TruthT
		}
		return *r.ReportT
	}
	sort.SliceStable(rows, func(a, b int) bool {
		ka, kb := key(rows[a]), key(rows[b])
		if ka != kb {
			return ka < kb
		}
		// A truth's row before a report-only row at the same time.
		return rows[a].Truth >= 0 && rows[b].Truth < 0
	})
	return rows
}
