package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/study"
	"github.com/tracegrid/tracegrid/internal/fakemodel"
	"github.com/tracegrid/tracegrid/pipeline"
)

// TestLabelModesSentAndKeyed: keyframes under its default label mode
// (position) sends "Frame k of M" labels and no time; the same policy
// under labels: time is a second condition with its own key; the frame
// references of a position-labelled ledger are scored at the shown frames'
// times.
func TestLabelModesSentAndKeyed(t *testing.T) {
	entries, err := pipeline.LoadManifest(manifest)
	if err != nil {
		t.Fatal(err)
	}
	_, tr, _, err := pipeline.LoadClip(manifest, entries[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	// The reply names frames 2 and 5: the frames at the two events
	// (keyframes shows t_i − 0.1, t_i, t_i + 0.1 per event).
	reply := "frame 2 — on — running count 1\nframe 5 — on — running count 2\n\\boxed{2}"
	fm := fakemodel.New(t, func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: reply} })
	st := standIn(t, fm, 1, 1,
		study.Condition{Policy: "keyframes", Prompt: "structured_trace"},
		study.Condition{Policy: "keyframes", Labels: "time", Prompt: "structured_trace"})
	st.Clips = []string{entries[0].ID}
	if st.Conditions[0].Labels != "position" || st.Conditions[1].Labels != "time" {
		t.Fatalf("labels after defaults: %+v", st.Conditions)
	}
	db := openDB(t)
	if _, err := runStudy(t, context.Background(), st, db); err != nil {
		t.Fatal(err)
	}
	got := fm.Received()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2 (one per label mode)", len(got))
	}
	var positionText, timeText string
	for _, rq := range got {
		if strings.Contains(rq.Text, " at t = ") {
			timeText = rq.Text
		} else {
			positionText = rq.Text
		}
	}
	if !strings.Contains(positionText, chat.PositionLabel(0, 6)) || !strings.Contains(positionText, chat.PositionLabel(5, 6)) {
		t.Errorf("position-labelled request lacks its labels:\n%s", positionText)
	}
	for _, e := range tr.Times() {
		for _, d := range []float64{-0.1, 0, 0.1} {
			if s := fmt.Sprintf("%.3f", e+d); strings.Contains(positionText, s) {
				t.Errorf("position-labelled request states the time %s:\n%s", s, positionText)
			}
		}
	}
	if !strings.Contains(timeText, fmt.Sprintf("at t = %.3f s", tr.Times()[0])) {
		t.Errorf("time-labelled request lacks the event time:\n%s", timeText)
	}
	trials, err := db.Trials(context.Background(), results.Filter{Study: st.Name})
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != 2 {
		t.Fatalf("%d trials stored", len(trials))
	}
	for _, x := range trials {
		if x.Labels == "position" {
			// Frames 2 and 5 are the event frames: the parsed events are
			// the true event times.
			if len(x.Events) != 2 || x.Events[0].T != x.FrameTimes[1] || x.Events[1].T != x.FrameTimes[4] ||
				x.Events[0].Frame != 2 || x.Events[1].Frame != 5 {
				t.Errorf("position trial events %+v with frames %v", x.Events, x.FrameTimes)
			}
			if d := x.Events[0].T - tr.Times()[0]; d > 1e-6 || d < -1e-6 {
				t.Errorf("frame 2 read as %v s, the first event is at %v s", x.Events[0].T, tr.Times()[0])
			}
		}
	}
}

// TestKeyframesOnControlsNotApplicable: keyframes on an N = 0 clip gives
// no frames: the trial is stored as not applicable, nothing is sent, and
// the run counts it as needing nothing.
func TestKeyframesOnControlsNotApplicable(t *testing.T) {
	dir := t.TempDir()
	spec, err := pipeline.ParseSpec([]byte("grid: default\ndomains: [blinking]\ncounts: [0, 1]\nfrequencies: [1.0]\nseeds: 1\nduration: 4\nwidth: 160\nheight: 96\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.Render(context.Background(), spec, pipeline.Options{Out: dir, Renderer: testRenderer}); err != nil {
		t.Fatal(err)
	}
	fm := fakemodel.New(t, func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{} })
	st := standIn(t, fm, 1, 1, study.Condition{Policy: "keyframes", Prompt: "direct"})
	st.Manifest = dir + "/" + pipeline.ManifestName
	db := openDB(t)
	sum, err := runStudy(t, context.Background(), st, db)
	if err != nil {
		t.Fatal(err)
	}
	if fm.Requests() != 1 || sum.NotApplicable != 1 || sum.Done != 1 || !sum.Answered() {
		t.Errorf("%d requests, summary %+v; want 1 request, 1 answered, 1 not applicable, nothing left", fm.Requests(), sum)
	}
	trials, err := db.Trials(context.Background(), results.Filter{Study: st.Name})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range trials {
		if x.N == 0 && (x.ErrorKind != results.KindNotApplicable || x.Attempts != 0 || x.CostUSD != 0 || !x.Done() ||
			!strings.Contains(x.Error, "not applicable")) {
			t.Errorf("control trial %+v", x)
		}
	}
	// A rerun sends nothing more.
	if _, err := runStudy(t, context.Background(), st, db); err != nil || fm.Requests() != 1 {
		t.Errorf("rerun: %v, %d requests", err, fm.Requests())
	}
}
