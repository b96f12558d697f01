package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/results"
)

// TestInputAuditReported: an input_mismatch trial is out of the surfaces
// and tables like a failed trial — counted in Failures by its kind and
// listed in FailedTrials with both figures — and the Input audit section
// counts every verdict per model × condition; a study without audited
// trials has no such section (summary.json and the page as before).
func TestInputAuditReported(t *testing.T) {
	base, err := Build(fixture(), Options{Study: "fx"})
	if err != nil {
		t.Fatal(err)
	}
	if base.InputAudit != nil {
		t.Fatalf("unaudited study has an audit section: %+v", base.InputAudit)
	}
	trials := fixture()
	for i := range trials {
		if trials[i].Error == "" {
			trials[i].InputAudit = results.AuditOK
		}
	}
	trials[0].InputAudit = results.AuditUnaudited
	trials[1].InputAudit = results.AuditAccepted
	mm := trials[2]
	mm.Repeat = 9
	mm.InputAudit, mm.ExpectedPromptTokens = results.AuditMismatch, 3424
	mm.Error, mm.ErrorKind = "input mismatch: reported 2400 prompt tokens, expected 3424 (tolerance 57) for 48 video frames", results.KindInputMismatch
	trials = append(trials, mm)
	r, err := Build(trials, Options{Study: "fx"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Totals.Scored != base.Totals.Scored || r.Totals.Failed != base.Totals.Failed+1 {
		t.Errorf("scored %d failed %d, want %d and %d", r.Totals.Scored, r.Totals.Failed, base.Totals.Scored, base.Totals.Failed+1)
	}
	listed := false
	for _, f := range r.FailedTrials {
		listed = listed || f.Kind == results.KindInputMismatch && strings.Contains(f.Error, "reported 2400 prompt tokens, expected 3424")
	}
	kinds := 0
	for _, f := range r.Failures {
		kinds += f.ByKind[results.KindInputMismatch]
	}
	if !listed || kinds != 1 {
		t.Errorf("mismatch listed %v, counted %d", listed, kinds)
	}
	var ok, mis, acc, un int
	for _, a := range r.InputAudit {
		ok, mis, acc, un = ok+a.OK, mis+a.Mismatch, acc+a.Accepted, un+a.Unaudited
	}
	if mis != 1 || acc != 1 || un != 1 || ok != len(trials)-2-3 {
		t.Errorf("audit rows %+v: ok %d mismatch %d accepted %d unaudited %d", r.InputAudit, ok, mis, acc, un)
	}
	dir := t.TempDir()
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	sum, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	if !strings.Contains(string(page), "<h3>Input audit</h3>") || !strings.Contains(string(page), "1 mismatched, 1 accepted, 1 unaudited trials.") || !strings.Contains(string(sum), `"input_audit": [`) {
		t.Error("the page or summary.json lacks the input audit")
	}
}
