package job_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracegrid/tracegrid/job"
	"github.com/tracegrid/tracegrid/pipeline"
)

// TestRunEndToEnd is the whole path on a small grid: render → the
// reference perceiver served on loopback → eval → score → report, checked
// through summary.json. With fps:16 the frames hold every event, so the
// perceiver must count every clip right and recover every event; with
// keyframes it recovers every event of the positive clips (N = 0 gets no
// frames and no answer).
func TestRunEndToEnd(t *testing.T) {
	out := t.TempDir()
	spec, err := pipeline.ParseSpec([]byte("grid: default\ncounts: [0, 3]\nfrequencies: [1.0, 2.5]\nduration: 4\nwidth: 320\nheight: 180\n"))
	if err != nil {
		t.Fatal(err)
	}
	opt := job.Options{Spec: spec, Out: out, Study: job.BuiltinStudy()}
	res, err := job.Run(context.Background(), opt)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.Index != filepath.Join(out, "report", "index.html") || res.Summary != filepath.Join(out, "report", "summary.json") {
		t.Fatalf("report at %s and %s", res.Index, res.Summary)
	}
	b, err := os.ReadFile(res.Summary)
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Totals  struct{ Trials, Scored, Failed int }
		Domains []struct {
			Policy, Domain string
			EM, F1         float64
			Eligible       int
		}
		Surfaces []struct {
			Policy, Domain string
			N              int
			Accuracy       float64
		}
		PaperReference struct {
			Table1A []struct{ Domain string } `json:"table1_part_a"`
		} `json:"paper_reference"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	// 3 domains × (N=0 + N=3 at 2 frequencies) × 4 policies.
	if sum.Totals.Trials != 36 || sum.Totals.Failed != 0 || len(sum.PaperReference.Table1A) != 3 {
		t.Fatalf("totals %+v, paper rows %d", sum.Totals, len(sum.PaperReference.Table1A))
	}
	if res.Totals.Trials != 36 || res.Render.Rendered != 9 || len(res.Eval) != 1 || res.Eval[0].Total != 36 {
		t.Fatalf("result: totals %+v, rendered %d, eval %+v", res.Totals, res.Render.Rendered, res.Eval)
	}
	seen := 0
	for _, d := range sum.Domains {
		switch d.Policy {
		case "fps:16":
			seen++
			if d.EM != 1 || d.F1 != 1 {
				t.Errorf("fps:16 %s: EM %v F1 %v, want 1 and 1", d.Domain, d.EM, d.F1)
			}
		case "keyframes":
			seen++
			if d.F1 != 1 {
				t.Errorf("keyframes %s: F1 %v, want 1", d.Domain, d.F1)
			}
		}
	}
	if seen != 6 {
		t.Errorf("%d fps:16/keyframes domain rows, want 6", seen)
	}
	// A rerun keeps every clip and trial.
	res, err = job.Run(context.Background(), opt)
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if res.Render.Skipped != 9 || res.Render.Rendered != 0 || len(res.Eval) != 1 || res.Eval[0].Skipped != 36 || res.Eval[0].Done != 0 {
		t.Errorf("rerun: render %+v, eval %+v; want every clip and trial kept", res.Render, res.Eval)
	}
}

// A job without an output directory is refused before anything is made.
func TestRunNeedsOut(t *testing.T) {
	if _, err := job.Run(context.Background(), job.Options{}); err == nil {
		t.Fatal("Run without Out: no error")
	}
}

// BuiltinStudy is the study README and `tracegrid run --help` describe,
// and each call is a fresh value.
func TestBuiltinStudy(t *testing.T) {
	s := job.BuiltinStudy()
	if s.Name != "run" || s.Model != "reference-perceiver" ||
		len(s.Events.Policies) != 4 || s.Events.Policies[0] != "native:1" || s.Events.Policies[3] != "keyframes" ||
		s.Events.Prompt != "structured_trace" || s.Events.ImageWidth != 428 || s.Events.ImageHeight != 240 ||
		len(s.Objects.Policies) != 1 || s.Objects.Policies[0] != "uniform:10" || s.Objects.Prompt != "countvideobench" ||
		s.Objects.ImageWidth != 960 || s.Objects.ImageHeight != 540 {
		t.Fatalf("BuiltinStudy() = %+v", s)
	}
	s.Events.Policies[0] = "fps:1"
	if job.BuiltinStudy().Events.Policies[0] != "native:1" {
		t.Error("BuiltinStudy shares its slices between calls")
	}
}
