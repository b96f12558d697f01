package runner

import (
	"context"
	"math"
	"net/http/httptest"
	"testing"

	"github.com/tracegrid/tracegrid/eval/perceiver"
	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/pipeline"
)

// TestDryRunMatchesReportedUsage runs a study against the reference
// perceiver, which reports usage by OpenAI's published rules, and checks
// that the dry-run estimate of input tokens and images is within 10 % of
// what the server reported, per condition.
func TestDryRunMatchesReportedUsage(t *testing.T) {
	srv := httptest.NewServer(perceiver.Handler(perceiver.Options{}))
	defer srv.Close()
	st := newStudy(t, srv.URL, study.Condition{Policy: "fps:4", Prompt: "structured_trace"},
		study.Condition{Policy: "keyframes", Prompt: "direct"}, study.Condition{Policy: "uniform:8", Prompt: "multi_turn_verification"})
	st.Models[0].ImageWidth, st.Models[0].ImageHeight = 128, 76
	st.Repetitions = 1
	// The second turn of multi-turn verification carries the first reply,
	// whose length a dry run can only take from max_tokens: give one close
	// to the perceiver's short replies.
	st.Decoding.MaxTokens = 80
	db := openDB(t)
	if _, err := runStudy(t, context.Background(), st, db); err != nil {
		t.Fatal(err)
	}
	var clips []study.ClipInfo
	entries, _, _ := pipeline.ReadManifest(manifest)
	for _, e := range entries {
		_, tr, _, err := pipeline.LoadClip(manifest, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		clips = append(clips, study.ClipInfo{ID: e.ID, Domain: e.Domain, Duration: tr.Duration, FPS: float64(tr.FPS), N: tr.N, Events: tr.Times(), Width: tr.Width, Height: tr.Height, Seed: tr.Seed})
	}
	est, err := st.DryRun(clips, prompts.Default())
	if err != nil {
		t.Fatal(err)
	}
	trials, _ := db.Trials(context.Background(), results.Filter{Study: st.Name})
	for _, e := range est {
		var in, images, turns int
		for _, tr := range trials {
			if tr.Policy == e.Policy && tr.Prompt == e.Prompt {
				in += tr.Usage.PromptTokens
				images += tr.Images * len(tr.Responses)
				turns += len(tr.Responses)
			}
		}
		if turns != e.Requests || images != e.Images {
			t.Errorf("%s × %s: estimated %d requests, %d images; sent %d, %d", e.Policy, e.Prompt, e.Requests, e.Images, turns, images)
		}
		if rel := math.Abs(float64(e.InputTokens-in)) / float64(in); rel > 0.10 {
			t.Errorf("%s × %s: estimated %d input tokens, server reported %d (%.1f %% off)", e.Policy, e.Prompt, e.InputTokens, in, 100*rel)
		} else {
			t.Logf("%s × %s: estimated %d input tokens, server reported %d (%.1f %% off)", e.Policy, e.Prompt, e.InputTokens, in, 100*rel)
		}
	}
}
