package runner

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/internal/fakemodel"
	"github.com/tracegrid/tracegrid/pipeline"
)

var (
	longOnce     sync.Once
	longManifest string
	longErr      error
)

// long24 renders, once, one blinking clip of 24 s at 10 fps (240 frames,
// 160×96) beside TestMain's clips: native:2 asks for 48 of its frames.
func long24(t *testing.T) string {
	t.Helper()
	longOnce.Do(func() {
		dir := filepath.Join(filepath.Dir(manifest), "long24")
		spec, err := pipeline.ParseSpec([]byte("grid: default\ndomains: [blinking]\ncounts: [3]\nfrequencies: [0.5]\nseeds: 1\nduration: 24\nfps: 10\nwidth: 160\nheight: 96\n"))
		if err == nil {
			_, err = pipeline.Render(context.Background(), spec, pipeline.Options{Out: dir, Renderer: testRenderer})
		}
		longManifest, longErr = filepath.Join(dir, pipeline.ManifestName), err
	})
	if longErr != nil {
		t.Fatal(longErr)
	}
	return longManifest
}

// qwenStudy is a one-model study of the 24 s clip against a vLLM-like
// stand-in: native video at 2 FPS through extra_body, 64 tokens a video
// frame and 256 an image, given as the server's rule (image_tokens.audit)
// when audit is set; reps repetitions, one request at a time.
func qwenStudy(t *testing.T, url string, audit bool, reps int, conds ...study.Condition) *study.Study {
	t.Helper()
	st := &study.Study{Name: "audit", Manifest: long24(t), Repetitions: reps, Conditions: conds,
		Models: []study.Model{{Name: "qwen", BaseURL: url, ModelID: "Qwen/Qwen3-VL-8B-Instruct", Concurrency: 1, MaxRetries: 0,
			Video:       study.VideoSupport{Supported: true, TokensPerFrame: 64},
			ImageTokens: study.ImageTokenRule{Rule: study.RuleFixed, Fixed: 256, Audit: audit},
			ExtraBody:   map[string]any{"mm_processor_kwargs": map[string]any{"fps": 2}}}}}
	st.SetDefaults()
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
	return st
}

func auditTrials(t *testing.T, db *results.DB) []results.Trial {
	t.Helper()
	ts, err := db.Trials(context.Background(), results.Filter{Study: "audit"})
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestInputAuditVideoFrameCap: native:2 on a 24 s clip to a server with
// vLLM's defaults — its loader keeps 32 frames, so the model sees 32 of
// the 48 the condition claims. Each trial is stored as input_mismatch
// with both figures and its reply as received, unscored; after
// MismatchStop in a row the run stops (ErrInputMismatch) naming the cause
// and the fix, and sends nothing more. The same server started with
// num_frames -1 decodes 48 frames at 2 FPS: every trial passes.
// --accept-input-mismatch keeps the trials, marked.
func TestInputAuditVideoFrameCap(t *testing.T) {
	native := study.Condition{Policy: "native:2", Prompt: "direct"}

	v := &fakemodel.VLLM{}
	fm := fakemodel.New(t, v.Respond)
	db := openDB(t)
	sum, err := runStudy(t, context.Background(), qwenStudy(t, fm.URL(), true, 5, native), db)
	if !errors.Is(err, ErrInputMismatch) {
		t.Fatalf("run error %v, want ErrInputMismatch", err)
	}
	t.Logf("the run stopped with: %v", err)
	for _, want := range []string{"3 trials in a row of model qwen", "the server kept about", "of 48 frames", `--media-io-kwargs '{"video": {"num_frames": -1}}'`, "--accept-input-mismatch"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if fm.Requests() != MismatchStop || sum.Unanswered[results.KindInputMismatch] != MismatchStop || sum.Unanswered[NotRun] != 5-MismatchStop {
		t.Errorf("%d requests, unanswered %v", fm.Requests(), sum.Unanswered)
	}
	for i, s := range v.Seen() {
		if s.VideoFrames != 240 || s.Loaded != 32 || s.Frames != 32 {
			t.Errorf("request %d: the stand-in saw %+v", i, s)
		}
	}
	for _, tr := range auditTrials(t, db) {
		exp := tr.ExpectedPromptTokens
		if tr.ErrorKind != results.KindInputMismatch || tr.InputAudit != results.AuditMismatch || tr.Count != nil ||
			len(tr.Responses) != 1 || tr.Responses[0] != fakemodel.DefaultText || tr.Usage.PromptTokens >= exp-32 ||
			!strings.Contains(tr.AuditNote, "for 48 video frames at 64 tokens each") || !strings.Contains(tr.Error, tr.AuditNote) {
			t.Errorf("stored trial %+v", tr)
		}
		if _, ok := tr.Correct(); ok {
			t.Errorf("a mismatched trial is scored: %+v", tr.Key)
		}
	}

	// Started with --media-io-kwargs '{"video": {"num_frames": -1}}': the
	// processor samples 48 frames at 2 FPS, and the rerun asks again.
	v2 := &fakemodel.VLLM{NumFrames: -1}
	fm2 := fakemodel.New(t, v2.Respond)
	sum, err = runStudy(t, context.Background(), qwenStudy(t, fm2.URL(), true, 5, native), db)
	if err != nil || !sum.Answered() || fm2.Requests() != 5 {
		t.Fatalf("fixed server: %+v %v, %d requests", sum, err, fm2.Requests())
	}
	for i, s := range v2.Seen() {
		if s.Frames != 48 {
			t.Errorf("request %d: %d frames seen, want 48", i, s.Frames)
		}
	}
	for _, tr := range auditTrials(t, db) {
		if tr.Error != "" || tr.InputAudit != results.AuditOK || tr.Count == nil || tr.ExpectedPromptTokens == 0 || !strings.Contains(tr.AuditNote, "for 48 video frames") {
			t.Errorf("trial on the fixed server %+v", tr)
		}
	}

	// --accept-input-mismatch: kept, marked, scored; the run goes on.
	fm3 := fakemodel.New(t, (&fakemodel.VLLM{}).Respond)
	st := qwenStudy(t, fm3.URL(), true, 4, native)
	db3 := openDB(t)
	sum, err = Run(context.Background(), Options{Study: st, Prompts: prompts.Default(), DB: db3, Renderer: testRenderer, AcceptInputMismatch: true})
	if err != nil || !sum.Answered() || fm3.Requests() != 4 {
		t.Fatalf("accepted: %+v %v", sum, err)
	}
	for _, tr := range auditTrials(t, db3) {
		if tr.Error != "" || tr.InputAudit != results.AuditAccepted || tr.Count == nil || !strings.Contains(tr.AuditNote, "the server saw about") {
			t.Errorf("accepted trial %+v", tr)
		}
	}
}

// TestInputAuditImagesAndLearning: frames sent as images to the same
// default server are counted one by one — no mismatch under the study's
// rule. Without a rule, the first trials are unaudited (never a mismatch)
// until two with different frame counts give the tokens per frame; later
// trials are audited against it.
func TestInputAuditImagesAndLearning(t *testing.T) {
	fm := fakemodel.New(t, (&fakemodel.VLLM{}).Respond)
	db := openDB(t)
	sum, err := runStudy(t, context.Background(), qwenStudy(t, fm.URL(), true, 1, study.Condition{Policy: "fps:2", Prompt: "direct"}), db)
	if err != nil || !sum.Answered() {
		t.Fatalf("%+v %v", sum, err)
	}
	ts := auditTrials(t, db)
	if len(ts) != 1 || ts[0].Images != 48 || ts[0].InputAudit != results.AuditOK || !strings.Contains(ts[0].AuditNote, "for 48 image frames") {
		t.Errorf("images: %+v", ts)
	}

	db2 := openDB(t)
	conds := []study.Condition{{Policy: "uniform:2", Prompt: "direct"}, {Policy: "uniform:6", Prompt: "direct"}, {Policy: "uniform:4", Prompt: "direct"}, {Policy: "fps:2", Prompt: "structured_trace"}}
	if sum, err := runStudy(t, context.Background(), qwenStudy(t, fm.URL(), false, 1, conds...), db2); err != nil || !sum.Answered() {
		t.Fatalf("%+v %v", sum, err)
	}
	got := map[string]string{}
	for _, tr := range auditTrials(t, db2) {
		got[tr.Policy] = tr.InputAudit
	}
	want := map[string]string{"uniform:2": results.AuditUnaudited, "uniform:6": results.AuditUnaudited, "uniform:4": results.AuditOK, "fps:2": results.AuditOK}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: audit %q, want %q (all: %v)", p, got[p], w, got)
		}
	}
}

// vllmStudy is qwenStudy for a server: vllm model (tracegrid sends
// media_io_kwargs and mm_processor_kwargs itself) under the study's rule.
func vllmStudy(t *testing.T, url string, reps int, conds ...study.Condition) *study.Study {
	t.Helper()
	st := &study.Study{Name: "audit", Manifest: long24(t), Repetitions: reps, Conditions: conds,
		Models: []study.Model{{Name: "qwen", BaseURL: url, ModelID: "Qwen/Qwen3-VL-8B-Instruct", Concurrency: 1, MaxRetries: 0, Server: study.ServerVLLM,
			Video:       study.VideoSupport{Supported: true, TokensPerFrame: 64},
			ImageTokens: study.ImageTokenRule{Rule: study.RuleFixed, Fixed: 256, Audit: true}}}}
	st.SetDefaults()
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestInputAuditAsVideo: fps:2 sent as one video and native:2, from a
// server: vllm model, on a 24 s clip: the requests ask for every frame, so
// the stand-in decodes 48 frames at 2 FPS and no trial is a mismatch. A
// server that ignores request kwargs keeps 32: input_mismatch trials, and
// the run stops naming the start flag.
func TestInputAuditAsVideo(t *testing.T) {
	for _, cond := range []study.Condition{{Policy: "fps:2", Prompt: "direct", SendAs: study.SendVideo}, {Policy: "native:2", Prompt: "direct"}} {
		v := &fakemodel.VLLM{}
		fm := fakemodel.New(t, v.Respond)
		db := openDB(t)
		sum, err := runStudy(t, context.Background(), vllmStudy(t, fm.URL(), 2, cond), db)
		if err != nil || !sum.Answered() || fm.Requests() != 2 {
			t.Fatalf("%s: %+v %v", cond.Policy, sum, err)
		}
		for i, s := range v.Seen() {
			if s.Frames != 48 || s.Duration != 24 {
				t.Errorf("%s: request %d: the stand-in saw %+v, want 48 frames over 24 s", cond.Policy, i, s)
			}
		}
		for _, tr := range auditTrials(t, db) {
			if tr.Error != "" || tr.InputAudit != results.AuditOK || !strings.Contains(tr.AuditNote, "for 48 video frames") {
				t.Errorf("%s: %+v", cond.Policy, tr)
			}
		}

		deaf := &fakemodel.VLLM{IgnoreRequestKwargs: true}
		fm2 := fakemodel.New(t, deaf.Respond)
		db2 := openDB(t)
		sum, err = runStudy(t, context.Background(), vllmStudy(t, fm2.URL(), 4, cond), db2)
		if !errors.Is(err, ErrInputMismatch) || !strings.Contains(err.Error(), "the server ignored them: start vLLM with --media-io-kwargs") ||
			fm2.Requests() != MismatchStop || sum.Unanswered[results.KindInputMismatch] != MismatchStop {
			t.Errorf("%s, server ignoring kwargs: %v, %d requests, %v", cond.Policy, err, fm2.Requests(), sum.Unanswered)
		}
		for i, s := range deaf.Seen() {
			if s.Frames != 32 {
				t.Errorf("%s: request %d to the deaf server: %+v", cond.Policy, i, s)
			}
		}
	}
}

// TestProbe: tracegrid probe sends the study's first clip at 4 and 8
// frames per way of sending (images; a video), learns the stand-in's
// tokens per frame exactly (256 an image, 64 a video frame) despite its
// text count differing from tracegrid's, and stores them; a run of the
// same study then audits its first trials against them: with the
// stand-in's defaults, native:2 is stopped as a mismatch from the first
// trial on, with no rule given by the study.
func TestProbe(t *testing.T) {
	v := &fakemodel.VLLM{}
	fm := fakemodel.New(t, v.Respond)
	st := qwenStudy(t, fm.URL(), false, 3, study.Condition{Policy: "uniform:2", Prompt: "direct"}, study.Condition{Policy: "native:2", Prompt: "direct"})
	plan, err := ProbePlan(st, prompts.Default())
	if err != nil || len(plan) != 4 || plan[0].Modality != ModalityImage || plan[0].Frames != 4 || plan[3].Modality != ModalityVideo || plan[3].Frames != 8 || plan[3].Input == 0 {
		t.Fatalf("plan %+v %v", plan, err)
	}
	if fm.Requests() != 0 {
		t.Fatal("ProbePlan sent a request")
	}
	db := openDB(t)
	rules, err := Probe(context.Background(), Options{Study: st, Prompts: prompts.Default(), DB: db, Renderer: testRenderer})
	if err != nil || len(rules) != 2 || fm.Requests() != 4 {
		t.Fatalf("probe: %+v %v, %d requests", rules, err, fm.Requests())
	}
	per := map[string]float64{}
	for _, r := range rules {
		per[r.Modality] = r.PerFrame
	}
	// The stand-in's text is bytes/3: the probe's label text grows with
	// the frames, so the per-frame figure carries a few tokens of it.
	if p := per["video 160x96"]; p < 64 || p > 66 {
		t.Errorf("video tokens per frame %v (rules %+v)", p, rules)
	}
	if p := per["image 160x96"]; p < 256 || p > 266 {
		t.Errorf("image tokens per frame %v (rules %+v)", p, rules)
	}
	for i, s := range v.Seen()[2:4] {
		if s.Frames != 4*(i+1) {
			t.Errorf("probe video %d: %+v", i, s)
		}
	}
	stored, err := db.InputRules(context.Background(), "audit")
	if err != nil || len(stored) != 2 {
		t.Fatalf("stored rules %+v %v", stored, err)
	}
	sum, err := runStudy(t, context.Background(), st, db)
	if !errors.Is(err, ErrInputMismatch) || sum.Unanswered[results.KindInputMismatch] != MismatchStop {
		t.Errorf("run after the probe: %v %v", err, sum.Unanswered)
	}
	images := 0
	for _, tr := range auditTrials(t, db) {
		if tr.Policy == "uniform:2" {
			images++
		}
		if tr.Policy == "uniform:2" && tr.InputAudit != results.AuditOK {
			t.Errorf("images trial after the probe: %+v", tr)
		}
		if tr.Policy == "native:2" && (tr.InputAudit != results.AuditMismatch || !strings.Contains(tr.AuditNote, "probe: clip")) {
			t.Errorf("video trial after the probe: %+v", tr)
		}
	}
	if images != 3 {
		t.Errorf("%d images trials, want 3", images)
	}
}
