package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/tracegrid/tracegrid/eval/report"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/pipeline"
	"github.com/tracegrid/tracegrid/trace"
)

// objectsManifest renders two CountVideoBench clips (5 and 7 red cubes,
// 5 s at 30 fps, 160×96) and returns the manifest's path.
func objectsManifest(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	spec, err := pipeline.ParseSpec([]byte("grid: countvideobench\ncounts: [5, 7]\nclasses: [cube-red]\nseeds: 1\nwidth: 160\nheight: 96\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.Render(context.Background(), spec, pipeline.Options{Out: dir, Renderer: testRenderer}); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, pipeline.ManifestName)
}

// objectsServer answers CountVideoBench's question with a sentence naming
// 5 objects, as CVB's models reply (§5.1), and records each request's
// first text and its number of images.
type objectsServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []objectsRequest
}

type objectsRequest struct {
	text   string
	images int
}

var reQuestion = regexp.MustCompile(`How many (\w+) (\w+)s are in this video\?`)

func newObjectsServer(t *testing.T) *objectsServer {
	s := &objectsServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 || len(req.Messages[0].Content) == 0 {
			http.Error(w, fmt.Sprint("bad request: ", err), 400)
			return
		}
		parts := req.Messages[len(req.Messages)-1].Content
		rq := objectsRequest{text: parts[0].Text}
		for _, p := range parts {
			if p.Type == "image_url" {
				rq.images++
			}
		}
		s.mu.Lock()
		s.requests = append(s.requests, rq)
		s.mu.Unlock()
		reply := "I cannot tell."
		if m := reQuestion.FindStringSubmatch(rq.text); m != nil {
			reply = fmt.Sprintf("There are 5 %s %ss in this video.", m[1], m[2])
		}
		b, _ := json.Marshal(reply)
		fmt.Fprintf(w, `{"id":"x","object":"chat.completion","model":"fake-1","choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],"usage":{"prompt_tokens":50,"completion_tokens":10,"total_tokens":60}}`, b)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestObjectsClips runs CountVideoBench clips end to end under every kind
// of policy: uniform:10 with the countvideobench prompt (the paper's
// protocol) sends the class's question and ten frames at t = j·0.5 s and
// stores the parsed count; single:best and adaptive sample without
// events; keyframes, which needs events, is stored as a failed trial and
// never sent.
func TestObjectsClips(t *testing.T) {
	srv := newObjectsServer(t)
	st := newStudy(t, srv.URL,
		study.Condition{Policy: "uniform:10", Prompt: "countvideobench"},
		study.Condition{Policy: "keyframes", Prompt: "countvideobench"},
		study.Condition{Policy: "single:best", Prompt: "direct"},
		study.Condition{Policy: "adaptive:4", Prompt: "structured_trace"},
		study.Condition{Policy: "shuffled:10", Prompt: "countvideobench"},
	)
	st.Manifest = objectsManifest(t)
	st.Repetitions = 1
	db := openDB(t)
	sum, err := runStudy(t, context.Background(), st, db)
	if err != nil {
		t.Fatal(err)
	}
	// 2 clips × 5 conditions; keyframes is not applicable twice, without a
	// request.
	if sum.Total != 10 || sum.Done != 8 || sum.NotApplicable != 2 || sum.Failed != 0 || len(srv.requests) != 8 {
		t.Fatalf("summary %+v, %d requests", sum, len(srv.requests))
	}
	for _, rq := range srv.requests {
		if !strings.Contains(rq.text, "How many red cubes are in this video?") {
			t.Errorf("request text %q", rq.text)
		}
		if rq.images == 10 && rq.text != "How many red cubes are in this video?" {
			t.Errorf("countvideobench sends the question alone, got %q", rq.text)
		}
	}
	trials, _ := db.Trials(context.Background(), results.Filter{Study: "t"})
	if len(trials) != 10 {
		t.Fatalf("%d trials", len(trials))
	}
	for _, tr := range trials {
		var x trace.Trace
		if err := json.Unmarshal(tr.Trace, &x); err != nil || !x.IsObjects() || x.Class != "cube-red" {
			t.Errorf("%v: stored trace: %v, class %q", tr.Key, err, x.Class)
		}
		if tr.Domain != "objects" || (tr.N != 5 && tr.N != 7) || tr.F != 0 {
			t.Errorf("%v: domain %s n %d f %v", tr.Key, tr.Domain, tr.N, tr.F)
		}
		switch tr.Policy {
		case "keyframes":
			if tr.ErrorKind != results.KindNotApplicable || tr.Images != 0 || tr.Attempts != 0 || !tr.Done() ||
				!strings.Contains(tr.Error, "policy keyframes:0.1 places frames at the true events, and objects clip "+tr.Clip+" has none") {
				t.Errorf("%v: kind %q, error %q, %d images", tr.Key, tr.ErrorKind, tr.Error, tr.Images)
			}
			continue
		case "uniform:10":
			if fmt.Sprint(tr.FrameTimes) != "[0 0.5 1 1.5 2 2.5 3 3.5 4 4.5]" || tr.Images != 10 {
				t.Errorf("%v: frames %v", tr.Key, tr.FrameTimes)
			}
		case "single:best":
			// The frame with the most objects in view.
			most := 0
			for _, ids := range x.Objects.InView {
				most = max(most, len(ids))
			}
			if len(tr.FrameTimes) != 1 || len(x.Objects.InView[int(math.Round(tr.FrameTimes[0]*30))]) != most {
				t.Errorf("%v: single:best frames %v, want a frame with the most (%d) objects in view", tr.Key, tr.FrameTimes, most)
			}
		case "adaptive:4":
			if tr.Images != 4 {
				t.Errorf("%v: %d images", tr.Key, tr.Images)
			}
		case "shuffled:10":
			if tr.Images != 10 || fmt.Sprint(tr.FrameTimes) == "[0 0.5 1 1.5 2 2.5 3 3.5 4 4.5]" {
				t.Errorf("%v: frames %v", tr.Key, tr.FrameTimes)
			}
		}
		if tr.Error != "" || tr.Count == nil || *tr.Count != 5 || tr.CountSource != "last_integer" {
			t.Errorf("%v: error %q, count %v (%s)", tr.Key, tr.Error, tr.Count, tr.CountSource)
		}
		if c, ok := tr.Correct(); !ok || c != (tr.N == 5) {
			t.Errorf("%v: correct %v %v", tr.Key, c, ok)
		}
	}
	// The report: one CountVideoBench row per answered condition, each of
	// two trials with one right (N = 5) and one wrong (N = 7); the
	// keyframes trials are not applicable, not failures; no event-domain
	// table has a row.
	rep, err := report.Build(trials, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.CountVideoBench.Rows) != 4 || len(rep.Domains) != 0 || len(rep.Surfaces) != 0 || rep.CountVideoBench.Views.Clips != 2 {
		t.Fatalf("report: %d objects rows, %d domain rows, views %+v", len(rep.CountVideoBench.Rows), len(rep.Domains), rep.CountVideoBench.Views)
	}
	for _, c := range rep.CountVideoBench.Rows {
		if c.Trials != 2 || c.EM != 0.5 || c.Coverage != 1 || c.MAE == nil || *c.MAE != 1 || c.Support != 1 {
			t.Errorf("%s · %s: %+v", c.Policy, c.Prompt, c.CountStats)
		}
	}
	if len(rep.Failures) != 0 || rep.Totals.NotApplicable != 2 {
		t.Errorf("failures %+v, %d not applicable; want none and 2 (keyframes on objects clips)", rep.Failures, rep.Totals.NotApplicable)
	}
	// A rerun sends nothing: not applicable is permanent.
	n := len(srv.requests)
	if sum, err := runStudy(t, context.Background(), st, db); err != nil || sum.Skipped != 10 || len(srv.requests) != n {
		t.Errorf("rerun: %+v %v, %d requests", sum, err, len(srv.requests))
	}
}
