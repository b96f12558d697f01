package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/pipeline"
)

var (
	testRenderer *gpu.Renderer
	manifest     string
)

// TestMain renders two short blinking clips (N=2 at 1 Hz, 4 s) once.
func TestMain(m *testing.M) {
	r, err := gpu.NewRenderer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "runner tests need EGL:", err)
		os.Exit(1)
	}
	testRenderer = r
	dir, _ := os.MkdirTemp("", "runner")
	spec, err := pipeline.ParseSpec([]byte("grid: default\ndomains: [blinking]\ncounts: [2]\nfrequencies: [1.0]\nseeds: 2\nduration: 4\nwidth: 160\nheight: 96\n"))
	if err == nil {
		_, err = pipeline.Render(context.Background(), spec, pipeline.Options{Out: dir, Renderer: r})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	manifest = filepath.Join(dir, pipeline.ManifestName)
	code := m.Run()
	r.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fakeServer answers every chat request with a two-line ledger and
// \boxed{2}; it rejects requests with more than maxImages images (0: no
// cap) as a provider would, and counts what it receives.
type fakeServer struct {
	*httptest.Server
	maxImages int
	requests  atomic.Int64
	mu        sync.Mutex
	seen      map[string]int // first frame label + turn count → requests
}

func newFake(t *testing.T, maxImages int) *fakeServer {
	f := &fakeServer{maxImages: maxImages, seen: map[string]int{}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		var req struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		images := 0
		for _, m := range req.Messages {
			images += strings.Count(string(m.Content), `"type":"image_url"`)
		}
		if f.maxImages > 0 && images > f.maxImages {
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":{"message":"too many images: %d > %d","type":"invalid_request_error"}}`, images, f.maxImages)
			return
		}
		f.mu.Lock()
		f.seen[string(req.Messages[0].Content)+fmt.Sprint(len(req.Messages))]++
		f.mu.Unlock()
		fmt.Fprintf(w, `{"id":"x","object":"chat.completion","model":"fake-1","choices":[{"index":0,"message":{"role":"assistant","content":"00:01.0 — on — running count 1\n00:02.0 — on — running count 2\n\\boxed{2}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":%d,"completion_tokens":20,"total_tokens":%d}}`, 100+10*images, 120+10*images)
	}))
	t.Cleanup(f.Close)
	return f
}

func newStudy(t *testing.T, url string, conds ...study.Condition) *study.Study {
	st := &study.Study{Name: "t", Manifest: manifest, Repetitions: 2, Conditions: conds,
		Models: []study.Model{{Name: "fake", BaseURL: url + "/v1", ModelID: "fake-1", Concurrency: 2,
			Prices: study.Prices{InputPerMTok: 1000, OutputPerMTok: 2000}}}}
	st.SetDefaults()
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
	return st
}

func openDB(t *testing.T) *results.DB {
	db, err := results.Open(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func runStudy(t *testing.T, ctx context.Context, st *study.Study, db *results.DB) (Summary, error) {
	return Run(ctx, Options{Study: st, Prompts: prompts.Default(), DB: db, Renderer: testRenderer})
}

func TestRunStoresEveryTrialAndResumes(t *testing.T) {
	f := newFake(t, 0)
	st := newStudy(t, f.URL, study.Condition{Policy: "fps:1", Prompt: "direct"},
		study.Condition{Policy: "keyframes", Prompt: "structured_trace"}, study.Condition{Policy: "uniform:4", Prompt: "multi_turn_verification"})
	db := openDB(t)
	sum, err := runStudy(t, context.Background(), st, db)
	if err != nil {
		t.Fatal(err)
	}
	// 2 clips × 3 conditions × 2 repetitions; multi-turn sends 2 requests.
	if sum.Total != 12 || sum.Done != 12 || sum.Failed != 0 || f.requests.Load() != 16 {
		t.Fatalf("summary %+v, %d requests", sum, f.requests.Load())
	}
	trials, _ := db.Trials(context.Background(), results.Filter{Study: "t"})
	if len(trials) != 12 {
		t.Fatalf("%d trials stored", len(trials))
	}
	for _, tr := range trials {
		if tr.Count == nil || *tr.Count != 2 || len(tr.Events) != 2 || tr.PromptHash == "" || tr.Domain != "blinking" || tr.N != 2 || len(tr.Trace) == 0 {
			t.Errorf("%v: %+v", tr.Key, tr)
		}
		wantImages := map[string]int{"fps:1": 4, "keyframes": 6, "uniform:4": 4}[tr.Policy]
		if tr.Images != wantImages || len(tr.FrameTimes) != wantImages || tr.ImageBytes <= 0 {
			t.Errorf("%v: %d images, frame times %v", tr.Key, tr.Images, tr.FrameTimes)
		}
		turns := 1
		if tr.Prompt == "multi_turn_verification" {
			turns = 2
		}
		// usage: per turn prompt 100+10·images, completion 20; cost at
		// $1000/M in and $2000/M out.
		in, out := turns*(100+10*wantImages), turns*20
		if len(tr.Responses) != turns || tr.Usage.PromptTokens != in || tr.Usage.CompletionTokens != out ||
			math.Abs(tr.CostUSD-(float64(in)*1000+float64(out)*2000)/1e6) > 1e-12 {
			t.Errorf("%v: %d responses, usage %+v, cost %v", tr.Key, len(tr.Responses), tr.Usage, tr.CostUSD)
		}
	}
	if got := trials[0].FrameTimes; trials[0].Policy == "fps:1" && fmt.Sprint(got) != "[0 1 2 3]" {
		t.Errorf("fps:1 frame times %v", got)
	}
	// A rerun skips everything and sends nothing.
	sum, err = runStudy(t, context.Background(), st, db)
	if err != nil || sum.Skipped != 12 || sum.Done != 0 || f.requests.Load() != 16 {
		t.Errorf("rerun: %+v %v, %d requests", sum, err, f.requests.Load())
	}
}

func TestInvalidRequestRecordedNotRetried(t *testing.T) {
	f := newFake(t, 3) // the provider takes at most 3 images
	st := newStudy(t, f.URL, study.Condition{Policy: "fps:1", Prompt: "direct"})
	st.Repetitions = 1
	db := openDB(t)
	sum, err := runStudy(t, context.Background(), st, db)
	if err != nil || sum.Failed != 2 || f.requests.Load() != 2 {
		t.Fatalf("%+v %v, %d requests (want 2 failed trials, one request each)", sum, err, f.requests.Load())
	}
	trials, _ := db.Trials(context.Background(), results.Filter{})
	for _, tr := range trials {
		if tr.ErrorKind != "invalid_request" || !strings.Contains(tr.Error, "too many images") || tr.Attempts != 1 {
			t.Errorf("%v: kind %q error %q attempts %d", tr.Key, tr.ErrorKind, tr.Error, tr.Attempts)
		}
	}
	if sum, _ := runStudy(t, context.Background(), st, db); sum.Skipped != 2 || f.requests.Load() != 2 {
		t.Errorf("rerun resent rejected trials: %+v", sum)
	}
	// With the model's cap declared (refuse), nothing is sent at all.
	st.Models[0].MaxImages = 3
	st.Name = "capped"
	sum, err = runStudy(t, context.Background(), st, db)
	if err != nil || sum.Failed != 2 || f.requests.Load() != 2 {
		t.Errorf("declared cap: %+v %v, %d requests", sum, err, f.requests.Load())
	}
}

func TestSpendingCap(t *testing.T) {
	f := newFake(t, 0)
	st := newStudy(t, f.URL, study.Condition{Policy: "fps:1", Prompt: "direct"}, study.Condition{Policy: "fps:2", Prompt: "direct"})
	// Each fps:1 trial costs (140·1000 + 20·2000)/1e6 = $0.18, fps:2 $0.22.
	st.MaxUSD = 0.5
	db := openDB(t)
	sum, err := runStudy(t, context.Background(), st, db)
	if !errors.Is(err, ErrBudget) || !sum.StoppedByBudget {
		t.Fatalf("want ErrBudget, got %v %+v", err, sum)
	}
	// It stops starting trials once $0.50 is reached; the 2 in flight
	// finish: at most 2 more than the 3 needed to pass the cap.
	if sum.Done < 3 || sum.Done > 5 || sum.CostUSD < 0.5 {
		t.Errorf("stopped after %d trials, $%.2f", sum.Done, sum.CostUSD)
	}
	n := f.requests.Load()
	if _, err := runStudy(t, context.Background(), st, db); !errors.Is(err, ErrBudget) || f.requests.Load() != n {
		t.Errorf("rerun under the same cap sent requests: %v", err)
	}
}

func TestCancelThenResumeGivesTheSameTable(t *testing.T) {
	f := newFake(t, 0)
	st := newStudy(t, f.URL, study.Condition{Policy: "fps:2", Prompt: "structured_trace"}, study.Condition{Policy: "uniform:3", Prompt: "thinking"})
	db := openDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	var stored atomic.Int64
	_, err := Run(ctx, Options{Study: st, Prompts: prompts.Default(), DB: db, Renderer: testRenderer, Progress: func(p Progress) {
		if stored.Store(int64(p.Done)); p.Done >= 3 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want cancel, got %v", err)
	}
	if sum, err := runStudy(t, context.Background(), st, db); err != nil || sum.Skipped+sum.Done != 8 {
		t.Fatalf("resume: %+v %v", sum, err)
	}
	trials, _ := db.Trials(context.Background(), results.Filter{})
	if len(trials) != 8 {
		t.Errorf("%d trials after resume", len(trials))
	}
	// Finished trials are never requested again; a trial in flight at the
	// cancel (at most the 2 workers') may be.
	if n := f.requests.Load(); n > 8+2 {
		t.Errorf("%d requests for 8 trials", n)
	}
}
