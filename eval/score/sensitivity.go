package score

import (
	"fmt"

	"github.com/tracegrid/tracegrid/trace"
)

// TrialInput is everything needed to (re-)score one clip: the condition it
// ran under, its ground truth and the parsed response.
type TrialInput struct {
	Model   string       `json:"model"`
	Policy  string       `json:"policy"`
	Prompt  string       `json:"prompt"`
	Trace   *trace.Trace `json:"-"`
	Count   *int         `json:"count"`   // parsed final answer; nil if unparseable
	Reports []Report     `json:"reports"` // parsed timestamped events (excluded ones flagged)
	// Consistency, when set, is copied to the Trial (self-consistency does
	// not depend on the tolerance).
	Consistency *Consistency `json:"consistency,omitempty"`
}

// ScoreAll scores every input under tol; Domain, N, F and Seed come from
// the trace. The first failure is returned with the input's index and
// trace ID.
func ScoreAll(inputs []TrialInput, tol Tolerance) ([]Trial, error) {
	out := make([]Trial, len(inputs))
	for i, in := range inputs {
		sc, err := ScoreTrial(in.Trace, in.Count, in.Reports, tol)
		if err != nil {
			return nil, fmt.Errorf("trial %d: %w", i, err)
		}
		tr := in.Trace
		out[i] = Trial{Model: in.Model, Policy: in.Policy, Prompt: in.Prompt,
			Domain: tr.Domain, N: tr.N, F: tr.F, Seed: tr.Seed, Score: sc, Consistency: in.Consistency}
	}
	return out, nil
}

// SensitivityRow is one line of Table 9: the summary of all inputs scored
// under one tolerance. EM and VOR do not depend on the window; P, R, F1,
// ACR and RFR do.
type SensitivityRow struct {
	Tolerance Tolerance `json:"tolerance"`
	Label     string    `json:"label"`
	Summary   Summary   `json:"summary"`
}

// Sensitivity re-scores the same inputs under each tolerance (Table 9,
// C.15). With no tolerances given it uses PaperTolerances: fixed 1.0, 0.5,
// 0.25 s and rate-relative 1/(2F), in that order.
func Sensitivity(inputs []TrialInput, tols []Tolerance) ([]SensitivityRow, error) {
	if len(tols) == 0 {
		tols = PaperTolerances()
	}
	rows := make([]SensitivityRow, 0, len(tols))
	for _, tol := range tols {
		trials, err := ScoreAll(inputs, tol)
		if err != nil {
			return nil, fmt.Errorf("tolerance %s: %w", tol, err)
		}
		rows = append(rows, SensitivityRow{Tolerance: tol, Label: tol.Label(), Summary: Summarize(trials)})
	}
	return rows, nil
}
