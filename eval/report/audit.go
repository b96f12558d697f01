package report

import (
	"fmt"

	"github.com/tracegrid/tracegrid/eval/results"
)

// AuditRow counts one model × condition's trials by their input audit
// verdict (docs/study.md, "Input audit"). Mismatched trials are failed
// trials too (kind input_mismatch: counted in Failures, listed in
// FailedTrials with both figures, out of every table); accepted ones are
// scored, and marked here.
type AuditRow struct {
	Model     string `json:"model"`
	Policy    string `json:"policy"`
	Labels    string `json:"labels"`
	Prompt    string `json:"prompt"`
	OK        int    `json:"ok"`
	Mismatch  int    `json:"mismatch"`
	Accepted  int    `json:"accepted"`
	Unaudited int    `json:"unaudited"`
	// Before counts trials stored before audits existed (schema version
	// 4) or never audited (batch replies).
	Before int `json:"not_audited"`
}

// buildInputAudit fills InputAudit — only when some trial was audited, so
// a study from before the audit reports as it did.
func buildInputAudit(r *Report, in *input) error {
	any := false
	for _, ts := range in.all {
		for _, t := range ts {
			any = any || t.InputAudit != ""
		}
	}
	if !any {
		return nil
	}
	for _, k := range sortedKeys(in.all) {
		row := AuditRow{Model: k.model, Policy: k.cond.Policy, Labels: k.cond.labels(), Prompt: k.cond.Prompt}
		for _, t := range in.all[k] {
			switch t.InputAudit {
			case results.AuditOK:
				row.OK++
			case results.AuditMismatch:
				row.Mismatch++
			case results.AuditAccepted:
				row.Accepted++
			case results.AuditUnaudited:
				row.Unaudited++
			default:
				if t.Error == "" || t.ErrorKind == results.KindParse {
					row.Before++
				}
			}
		}
		r.InputAudit = append(r.InputAudit, row)
	}
	return nil
}

// auditTable is the HTML table of InputAudit.
func (r *Report) auditTable() htmlTable {
	t := htmlTable{ID: "input-audit", Head: []string{"Model", "Condition", "OK", "Mismatch", "Accepted", "Unaudited", "Not audited"},
		Caption: "Input audit: each answered trial's reported prompt tokens against text + frames × the server's tokens per frame. " +
			"A mismatch (the server saw fewer frames than sent) is a failed trial, out of every table; accepted mismatches (--accept-input-mismatch) are scored and counted here; " +
			"unaudited trials had no rule yet (run tracegrid probe, or give image_tokens.audit)."}
	for _, a := range r.InputAudit {
		t.Rows = append(t.Rows, htmlRow{Cells: []string{a.Model, Condition{a.Policy, a.Labels, a.Prompt}.Label(), itoa(a.OK), itoa(a.Mismatch), itoa(a.Accepted), itoa(a.Unaudited), itoa(a.Before)}})
	}
	if len(t.Rows) > 0 {
		mm, acc, un := 0, 0, 0
		for _, a := range r.InputAudit {
			mm, acc, un = mm+a.Mismatch, acc+a.Accepted, un+a.Unaudited
		}
		t.Note = fmt.Sprintf("%d mismatched, %d accepted, %d unaudited trials.", mm, acc, un)
	}
	return t
}
