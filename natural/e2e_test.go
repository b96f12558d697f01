package natural_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/perceiver"
	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/report"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/runner"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/internal/fakemodel"
	"github.com/tracegrid/tracegrid/natural"
	"github.com/tracegrid/tracegrid/pipeline"
)

// TestImportEvalReport: import → eval against a local model stand-in →
// report, as a user runs §7. Three 5 s videos at 25 fps: a.mp4 (one
// repetition, frames 10–25: its event at 25/25 = 1.0 s), b.mp4 (two,
// 10–25 and 30–50: events at 1.0 and 2.0 s) and c.mp4 (count 3 alone).
// Two models — one that takes frames, one that takes native video — and
// five conditions; the stand-in always answers two repetitions at 1.0 and
// 2.0 s, \boxed{2}. No GL: the frames are decoded from the videos.
func TestImportEvalReport(t *testing.T) {
	tmp := t.TempDir()
	videos := filepath.Join(tmp, "videos")
	if err := os.MkdirAll(videos, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, n := range []string{"a.mp4", "b.mp4", "c.mp4"} {
		b, err := os.ReadFile(filepath.Join(fixtureDir, "videos", names[i]))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(videos, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ann := filepath.Join(tmp, "test.csv")
	writeRepCount(t, ann, true, []row{
		{"jump", "a.mp4", "1", []int{10, 25}},
		{"jump", "b.mp4", "2", []int{10, 25, 30, 50}},
		{"jump", "c.mp4", "3", nil},
	})
	out := filepath.Join(tmp, "natural")
	res, err := natural.Import(context.Background(), natural.Options{Videos: videos, Annotations: ann, Out: out})
	if err != nil || res.Imported != 3 || res.Traces != 2 {
		t.Fatalf("import: %+v %v", res, err)
	}

	fake := fakemodel.New(t, fakemodel.Always(fakemodel.Reply{PromptTokens: 100, CompletionTokens: 10}))
	st := &study.Study{Name: "natural", Manifest: filepath.Join(out, pipeline.ManifestName), Repetitions: 1,
		Conditions: []study.Condition{
			{Policy: "fps:5", Prompt: "zero_shot"},
			{Policy: "keyframes", Prompt: "natural_direct"},
			{Policy: "single:best", Prompt: "zero_shot"},
			{Policy: "adaptive:3", Prompt: "cot"},
			{Policy: "native:1", Prompt: "zero_shot"},
		},
		Models: []study.Model{
			{Name: "frames", BaseURL: fake.URL(), ModelID: "fake-1", Concurrency: 2},
			{Name: "video", BaseURL: fake.URL(), ModelID: "fake-1", Concurrency: 2, Video: study.VideoSupport{Supported: true}},
		}}
	st.SetDefaults()
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
	infos, err := runner.ClipInfos(st)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 3 || infos[0].FPS != 25 || infos[0].Domain != "natural" || len(infos[1].Events) != 2 || len(infos[2].Events) != 0 {
		t.Fatalf("clip infos %+v", infos)
	}
	if _, err := st.DryRun(infos, prompts.Default()); err != nil {
		t.Fatal(err)
	}
	db, err := results.Open(filepath.Join(tmp, "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sum, err := runner.Run(context.Background(), runner.Options{Study: st, Prompts: prompts.Default(), DB: db})
	if err != nil {
		t.Fatal(err)
	}
	// 3 clips × 5 conditions × 2 models; keyframes and single:best are not
	// applicable to c.mp4 (count alone) for either model.
	if sum.Total != 30 || sum.NotApplicable != 4 || sum.Done != 26 || sum.Failed != 0 || fake.Requests() != 26 || !sum.Answered() {
		t.Fatalf("summary %+v, %d requests", sum, fake.Requests())
	}
	videoParts, imageRequests := 0, 0
	for _, r := range fake.Received() {
		videoParts += r.Videos
		if r.Images > 0 {
			imageRequests++
		}
	}
	// native:1 sends the file to the video model (3 clips); everything
	// else is frames.
	if videoParts != 3 || imageRequests != 23 {
		t.Errorf("%d video parts, %d requests with images; want 3 and 23", videoParts, imageRequests)
	}
	trials, err := db.Trials(context.Background(), results.Filter{Study: "natural"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trials {
		if tr.Domain != "natural" || tr.F != 0 {
			t.Errorf("%v: domain %s f %v", tr.Key, tr.Domain, tr.F)
		}
		switch {
		case tr.ErrorKind == results.KindNotApplicable:
			if tr.Clip != "c" || (tr.Policy != "keyframes" && tr.Policy != "single:best") || !strings.Contains(tr.Error, "count alone") {
				t.Errorf("%v: not applicable: %s", tr.Key, tr.Error)
			}
		case tr.Policy == "fps:5" && (tr.Images != 25 || tr.ImageBytes <= 0):
			t.Errorf("%v: %d images (%d bytes), want 25 decoded frames", tr.Key, tr.Images, tr.ImageBytes)
		case tr.Policy == "keyframes" && tr.Clip == "b" && !slices.Equal(tr.FrameTimes, []float64{0.9, 1, 1.1, 1.9, 2, 2.1}):
			t.Errorf("%v: keyframes at %v, want around the repetitions' ends 1.0 and 2.0 s", tr.Key, tr.FrameTimes)
		case tr.Policy == "single:best" && tr.Clip == "b" && !slices.Equal(tr.FrameTimes, []float64{1}):
			t.Errorf("%v: single:best at %v, want the middle repetition's end, 1.0 s", tr.Key, tr.FrameTimes)
		case tr.Policy == "adaptive:3" && tr.Images != 3:
			t.Errorf("%v: adaptive:3 gave %d images", tr.Key, tr.Images)
		}
		if tr.Clip == "c" {
			var ct map[string]any
			if err := json.Unmarshal(tr.Trace, &ct); err != nil || ct["n"] != 3.0 || len(ct["events"].([]any)) != 0 {
				t.Errorf("c's stored trace: %s", tr.Trace)
			}
		}
	}
	// A rerun sends nothing.
	if sum, err := runner.Run(context.Background(), runner.Options{Study: st, Prompts: prompts.Default(), DB: db}); err != nil || sum.Skipped != 30 || fake.Requests() != 26 {
		t.Errorf("rerun: %+v %v, %d requests", sum, err, fake.Requests())
	}

	r, err := report.Build(trials, report.Options{Study: "natural"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "report")
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Natural []map[string]any      `json:"natural"`
		Section report.NaturalSection `json:"natural_section"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	// frames · fps:5 · zero_shot: answers 2, 2, 2 to counts 1, 2, 3.
	got := map[string]string{}
	for _, row := range s.Natural {
		if row["model"] == "frames" && row["policy"] == "fps:5" && row["trials"].(float64) > 0 {
			got[row["bin"].(string)] = strings.TrimSuffix(strings.TrimSuffix(jsonNum(row["correct"])+"/"+jsonNum(row["trials"]), ".0"), ".0")
		}
	}
	if want := map[string]string{"1": "0/1", "2": "1/1", "3": "0/1"}; !mapsEqual(got, want) {
		t.Errorf("frames · fps:5 by bin %v, want %v", got, want)
	}
	var c *report.NaturalCondition
	for i := range s.Section.Conditions {
		if x := &s.Section.Conditions[i]; x.Model == "frames" && x.Policy == "fps:5" {
			c = x
		}
	}
	if c == nil {
		t.Fatalf("no frames · fps:5 condition in %+v", s.Section)
	}
	// a: truth 1.0, reports 1.0 and 2.0: K=1, M=2 (P 1/2, R 1, F1 2/3,
	// VOR 2); b: truth 1.0 and 2.0: K=2 (all 1).
	if c.Trials != 3 || c.Correct != 1 || c.OneAway != 2 || c.MAE == nil || math.Abs(*c.MAE-2.0/3) > 1e-12 || c.Traced != 2 ||
		c.Precision == nil || math.Abs(*c.Precision-0.75) > 1e-12 || c.Recall == nil || *c.Recall != 1 ||
		c.F1 == nil || math.Abs(*c.F1-5.0/6) > 1e-12 || c.VOR == nil || *c.VOR != 1.5 {
		t.Errorf("frames · fps:5: %+v", c)
	}
	if s.Section.Clips != 3 || s.Section.Traced != 2 || s.Section.Tolerance != report.DefaultNaturalTolerance {
		t.Errorf("section: %d clips, %d traced, tolerance %v", s.Section.Clips, s.Section.Traced, s.Section.Tolerance)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil || !strings.Contains(string(page), `<h2 id="natural">Natural videos</h2>`) ||
		!strings.Contains(string(page), "Evaluated on natural videos only") {
		t.Errorf("index.html has no Natural videos section (%v)", err)
	}
}

func jsonNum(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestPerceiverOnNaturalVideos: the reference perceiver, which reads the
// synthetic scenes only, answers a natural question honestly: it says it
// cannot determine the count and gives none (scored wrong), over decoded
// frames and over the native video alike.
func TestPerceiverOnNaturalVideos(t *testing.T) {
	tmp := t.TempDir()
	ann := filepath.Join(tmp, "counts.csv")
	if err := os.WriteFile(ann, []byte("name,count\n"+names[0]+",1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "natural")
	if _, err := natural.Import(context.Background(), natural.Options{Videos: filepath.Join(fixtureDir, "videos"), Annotations: ann, Out: out}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(perceiver.Handler(perceiver.Options{}))
	defer srv.Close()
	st := &study.Study{Name: "p", Manifest: filepath.Join(out, pipeline.ManifestName), Repetitions: 1,
		Conditions: []study.Condition{{Policy: "fps:2", Prompt: "cot"}, {Policy: "native:1", Prompt: "zero_shot"}},
		Models:     []study.Model{{Name: "reference", BaseURL: srv.URL + "/v1", ModelID: "reference", Video: study.VideoSupport{Supported: true}}}}
	st.SetDefaults()
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
	db, err := results.Open(filepath.Join(tmp, "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if sum, err := runner.Run(context.Background(), runner.Options{Study: st, Prompts: prompts.Default(), DB: db}); err != nil || sum.Done != 2 {
		t.Fatalf("%+v %v", sum, err)
	}
	trials, err := db.Trials(context.Background(), results.Filter{Study: "p"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trials {
		if tr.Count != nil || len(tr.Responses) != 1 || !strings.Contains(tr.Responses[0], "cannot determine a count") {
			t.Errorf("%v: count %v, reply %q", tr.Key, tr.Count, tr.Responses)
		}
	}
}

// TestGeminiNaturalVideo: through the Gemini provider, native:1 sends the
// imported file byte for byte as an inline video/mp4 part at 1 FPS, and
// fps:2 sends ten decoded frames of the 5 s clip.
func TestGeminiNaturalVideo(t *testing.T) {
	tmp := t.TempDir()
	ann := filepath.Join(tmp, "counts.csv")
	if err := os.WriteFile(ann, []byte("name,count\n"+names[1]+",2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "natural")
	if _, err := natural.Import(context.Background(), natural.Options{Videos: filepath.Join(fixtureDir, "videos"), Annotations: ann, Out: out}); err != nil {
		t.Fatal(err)
	}
	g := fakemodel.NewGemini(t, fakemodel.AlwaysGemini(fakemodel.GeminiReply{Text: "\\boxed{2}", PromptTokens: 100, CandidatesTokens: 5}))
	st := &study.Study{Name: "gem", Manifest: filepath.Join(out, pipeline.ManifestName), Repetitions: 1,
		Conditions: []study.Condition{{Policy: "native:1", Prompt: "natural_direct"}, {Policy: "fps:2", Prompt: "natural_direct"}},
		Models: []study.Model{{Name: "gemini", Provider: study.ProviderGemini, BaseURL: g.URL(), ModelID: "gemini-test", Concurrency: 1,
			Video: study.VideoSupport{Supported: true}}}}
	st.SetDefaults()
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
	db, err := results.Open(filepath.Join(tmp, "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if sum, err := runner.Run(context.Background(), runner.Options{Study: st, Prompts: prompts.Default(), DB: db}); err != nil || sum.Done != 2 {
		t.Fatalf("%+v %v", sum, err)
	}
	file, err := os.ReadFile(filepath.Join(fixtureDir, "videos", names[1]))
	if err != nil {
		t.Fatal(err)
	}
	videos, images := 0, 0
	for _, r := range g.Received() {
		for _, p := range r.Contents[0].Parts {
			switch {
			case strings.HasPrefix(p.MIMEType, "video/"):
				videos++
				if p.MIMEType != "video/mp4" || !slices.Equal(p.Data, file) || p.FPS == nil || *p.FPS != 1 {
					t.Errorf("video part %s, %d bytes (file %d), fps %v", p.MIMEType, len(p.Data), len(file), p.FPS)
				}
			case strings.HasPrefix(p.MIMEType, "image/"):
				images++
			}
		}
	}
	if videos != 1 || images != 10 {
		t.Errorf("%d video parts and %d images, want 1 and 10", videos, images)
	}
}
