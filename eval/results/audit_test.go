package results_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tracegrid/tracegrid/eval/results"
)

// TestInputAuditStored: a trial's audit verdict, expected prompt tokens
// and note read back as written; an input_mismatch trial is not done (a
// rerun sends it again) and has nothing to score; an accepted mismatch is
// an answered trial. Input rules are kept per study, model and modality,
// a second measurement replacing the first.
func TestInputAuditStored(t *testing.T) {
	ctx := context.Background()
	db, err := results.Open(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	k := results.Key{Study: "s", Model: "m", Clip: "c", Policy: "native:2", Labels: "time", Prompt: "direct"}
	mm := results.Trial{Key: k, Domain: "blinking", Responses: []string{`\boxed{2}`}, Usage: results.Usage{PromptTokens: 2400},
		Error: "input mismatch", ErrorKind: results.KindInputMismatch, InputAudit: results.AuditMismatch, ExpectedPromptTokens: 3424,
		AuditNote: "reported 2400 < expected 3424"}
	if err := db.Put(ctx, mm); err != nil {
		t.Fatal(err)
	}
	got, ok, err := db.Get(ctx, k)
	if err != nil || !ok || got.InputAudit != results.AuditMismatch || got.ExpectedPromptTokens != 3424 || got.AuditNote != mm.AuditNote || got.Responses[0] != `\boxed{2}` {
		t.Fatalf("%+v %v", got, err)
	}
	if _, ok := got.Correct(); got.Done() || ok {
		t.Errorf("an input mismatch is done (%v) or scored (%v)", got.Done(), ok)
	}
	k.Repeat = 1
	acc := results.Trial{Key: k, Domain: "blinking", InputAudit: results.AuditAccepted, ExpectedPromptTokens: 3424, AuditNote: "kept"}
	if err := db.Put(ctx, acc); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := db.Get(ctx, k); !got.Done() || got.InputAudit != results.AuditAccepted {
		t.Errorf("accepted mismatch %+v", got)
	}
	for _, r := range []results.InputRule{
		{Study: "s", Model: "m", Modality: "video", PerFrame: 70, TextBase: 100, RefBytes: 200, Source: "first"},
		{Study: "s", Model: "m", Modality: "video", PerFrame: 64, TextBase: 120, RefBytes: 300, Source: "second"},
		{Study: "s", Model: "m", Modality: "image", PerFrame: 256, TextBase: 90, RefBytes: 250, Source: "probe"},
		{Study: "other", Model: "m", Modality: "image", PerFrame: 1, Source: "x"},
	} {
		if err := db.PutInputRule(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := db.InputRules(ctx, "s")
	if err != nil || len(rs) != 2 || rs[0].Modality != "image" || rs[1].PerFrame != 64 || rs[1].TextBase != 120 || rs[1].RefBytes != 300 || rs[1].Source != "second" || rs[1].MeasuredAt.IsZero() {
		t.Errorf("rules %+v %v", rs, err)
	}
	if err := db.PutInputRule(ctx, results.InputRule{Study: "s", Model: "m"}); err == nil {
		t.Error("a rule without modality was stored")
	}
}
