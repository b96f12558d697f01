package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// blinkTrace: blinking N = 2 at 0.5 Hz (δ = 1 s, displaced window 2 s),
// on-pulses at 10.0 and 12.0 s.
const blinkTrace = `{"schema":"tracegrid/trace/v1","id":"blinking_N02_F0.5_s00","domain":"blinking","n":2,"f":0.5,"seed":0,"duration":24,"fps":30,"width":854,"height":480,"active_start":9,"active_end":13,"initial_state":"off","pulse":0.25,"nuisance":{},
"events":[{"t":10,"type":"pulse_on","before":"off","after":"on","count":1},{"t":12,"type":"pulse_on","before":"off","after":"on","count":2}]}`

type scoreJSON struct {
	Count        *int
	Alternatives []int
	Correct      bool
	Flags        []string
	Frames       int
	N, M, K      int
	Excluded     int
	F1           float64
	Events       []struct {
		T        float64
		Frame    int
		Excluded string
	}
	DisplacedWithin float64 `json:"displaced_within"`
	DisplacedRule   string  `json:"displaced_rule"`
	Displaced       []struct{ Truth, Report, Deviation float64 }
	Alignment       []struct {
		Class     string
		TruthT    *float64 `json:"truth_t"`
		ReportT   *float64 `json:"report_t"`
		Deviation *float64
	}
	Classes struct {
		Matched, Missed, Hallucinated, Displaced, Misidentified int
	}
	Outcome     string
	OutcomeIs   string `json:"outcome_definition"`
	Consistency struct{ Running, Listed string }
}

func scoreRun(t *testing.T, args ...string) scoreJSON {
	t.Helper()
	msg, code := run(t, append([]string{"score"}, args...)...)
	if code != 0 {
		t.Fatalf("score %v: exit %d: %s", args, code, msg)
	}
	var o scoreJSON
	if err := json.Unmarshal([]byte(msg), &o); err != nil {
		t.Fatalf("%v: %s", err, msg)
	}
	return o
}

// TestScoreBlinkOffLines: the ledger that also logs each turn-off.
// The off lines are listed as excluded, m = 2 (not 4), F1 = 1 (not 0.67),
// and the trial is faithful and correct (not accidental correctness); the
// alignment shows matched, excluded, matched, excluded in time order.
func TestScoreBlinkOffLines(t *testing.T) {
	tr := writeFile(t, "t.json", blinkTrace)
	resp := writeFile(t, "r.txt", `00:10.0 — the light turns on — running count 1
00:10.9 — the light turns off — running count 1
00:12.0 — the light turns on — running count 2
00:12.9 — the light turns off — running count 2
Final answer: 2
`)
	o := scoreRun(t, "--trace", tr, "--response", resp)
	if o.Count == nil || *o.Count != 2 || !o.Correct || o.N != 2 || o.M != 2 || o.K != 2 || o.Excluded != 2 || o.F1 != 1 {
		t.Errorf("count %v correct %v n %d m %d k %d excluded %d f1 %v", o.Count, o.Correct, o.N, o.M, o.K, o.Excluded, o.F1)
	}
	if len(o.Events) != 4 || o.Events[1].Excluded != "off_phase" || o.Events[3].Excluded != "off_phase" || o.Events[0].Excluded != "" {
		t.Errorf("events %+v", o.Events)
	}
	var classes []string
	for _, r := range o.Alignment {
		classes = append(classes, r.Class)
	}
	if strings.Join(classes, ",") != "matched,excluded,matched,excluded" {
		t.Errorf("alignment %v", classes)
	}
	if o.Outcome != "faithful_correct" || o.OutcomeIs == "" || o.Consistency.Running != "agree" || o.Consistency.Listed != "agree" {
		t.Errorf("outcome %s (%q), consistency %+v", o.Outcome, o.OutcomeIs, o.Consistency)
	}
}

// TestScoreDisplacedPairs: δ = 1 s, window 2 s. The reply reports 10.0
// (matched), 13.5 (1.5 s after the missed pulse at 12: displaced) and
// 25.0 s is outside the 24 s clip but still a time: 13 s from anything,
// hallucinated, not displaced. The alignment rows carry truth, report,
// deviation and class.
func TestScoreDisplacedPairs(t *testing.T) {
	tr := writeFile(t, "t.json", blinkTrace)
	resp := writeFile(t, "r.txt", "00:10.0 — flash\n00:13.5 — flash\n00:25.0 — flash\nFinal answer: 3\n")
	o := scoreRun(t, "--trace", tr, "--response", resp)
	if o.M != 3 || o.K != 1 || o.DisplacedWithin != 2 || !strings.Contains(o.DisplacedRule, "2δ") {
		t.Fatalf("m %d k %d within %v rule %q", o.M, o.K, o.DisplacedWithin, o.DisplacedRule)
	}
	if len(o.Displaced) != 1 || o.Displaced[0].Truth != 12 || o.Displaced[0].Report != 13.5 || math.Abs(o.Displaced[0].Deviation-1.5) > 1e-12 {
		t.Errorf("displaced %+v", o.Displaced)
	}
	if o.Classes.Matched != 1 || o.Classes.Missed != 1 || o.Classes.Hallucinated != 2 || o.Classes.Displaced != 1 {
		t.Errorf("classes %+v", o.Classes)
	}
	want := []struct {
		class    string
		tt, rt   float64 // NaN: none
		deviated bool
	}{{"matched", 10, 10, true}, {"displaced", 12, 13.5, true}, {"hallucinated", math.NaN(), 25, false}}
	if len(o.Alignment) != len(want) {
		t.Fatalf("alignment %+v", o.Alignment)
	}
	for i, w := range want {
		r := o.Alignment[i]
		if r.Class != w.class || (r.TruthT == nil) != math.IsNaN(w.tt) || (r.TruthT != nil && *r.TruthT != w.tt) ||
			r.ReportT == nil || *r.ReportT != w.rt || (r.Deviation != nil) != w.deviated {
			t.Errorf("row %d = %+v, want %+v", i, r, w)
		}
	}
	// K = 1, M = 3, N = 2: F1 = 2/5; count 3 is wrong and M > N.
	if o.Outcome != "hallucinated_extra" || math.Abs(o.F1-0.4) > 1e-12 {
		t.Errorf("outcome %s F1 %v", o.Outcome, o.F1)
	}
}

// TestScoreFrames: with --frames, "frame k" is the time of the frame shown
// k-th. The frames were shown shuffled: position 0 is t = 12.0 s, position
// 1 is t = 4.0 s, position 2 is t = 10.0 s.
func TestScoreFrames(t *testing.T) {
	tr := writeFile(t, "t.json", blinkTrace)
	dir := t.TempDir()
	frames := filepath.Join(dir, "frames.json")
	if err := os.WriteFile(frames, []byte(`{"clip":"blinking_N02_F0.5_s00","source":"scene","policy":"shuffled:3","frames":[
{"index":0,"position":1,"t":4,"file":"a.jpg"},{"index":1,"position":2,"t":10,"file":"b.jpg"},{"index":2,"position":0,"t":12,"file":"c.jpg"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	resp := writeFile(t, "r.txt", "Frame 1: the light is lit.\nFrame 3: the light is lit.\nFinal answer: 2\n")
	o := scoreRun(t, "--trace", tr, "--response", resp, "--frames", frames)
	if o.Frames != 3 || len(o.Events) != 2 || o.Events[0].T != 10 || o.Events[0].Frame != 3 || o.Events[1].T != 12 || o.Events[1].Frame != 1 {
		t.Fatalf("frames %d events %+v", o.Frames, o.Events)
	}
	if o.M != 2 || o.K != 2 || o.F1 != 1 || o.Outcome != "faithful_correct" {
		t.Errorf("m %d k %d f1 %v outcome %s", o.M, o.K, o.F1, o.Outcome)
	}
	// Without the frame list "frame k" is no time: no trace, a correct
	// count is accidental.
	o = scoreRun(t, "--trace", tr, "--response", resp)
	if len(o.Events) != 0 || o.M != 0 || o.Outcome != "accidental_correct" {
		t.Errorf("without --frames: events %+v outcome %s", o.Events, o.Outcome)
	}
	// A frame number past the list gives no time and is flagged.
	resp4 := writeFile(t, "r4.txt", "Frame 4: the light is lit.\nFinal answer: 1\n")
	o = scoreRun(t, "--trace", tr, "--response", resp4, "--frames", frames)
	if len(o.Events) != 0 || !strings.Contains(strings.Join(o.Flags, ","), "frame_out_of_range") {
		t.Errorf("frame 4 of 3: events %+v flags %v", o.Events, o.Flags)
	}

	bad := []struct{ name, text, want string }{
		{"dup.json", `{"frames":[{"position":0,"t":1},{"position":0,"t":2}]}`, "exactly once"},
		{"gap.json", `{"frames":[{"position":0,"t":1},{"position":2,"t":2}]}`, "exactly once"},
		{"neg.json", `{"frames":[{"position":0,"t":-1}]}`, "non-negative"},
		{"none.json", `{"frames":[]}`, "no frames"},
		{"nopos.json", `{"frames":[{"t":1}]}`, "no position"},
		{"other.json", `{"clip":"bounce_ball_N03_F1.0_s00","frames":[{"position":0,"t":1}]}`, "the trace is blinking_N02_F0.5_s00"},
		{"junk.json", `not json`, "not a frames.json"},
	}
	for _, b := range bad {
		p := filepath.Join(dir, b.name)
		if err := os.WriteFile(p, []byte(b.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if msg, code := run(t, "score", "--trace", tr, "--response", resp, "--frames", p); code != 2 || !strings.Contains(msg, b.want) {
			t.Errorf("%s: exit %d: %s (want %q)", b.name, code, msg, b.want)
		}
	}
	if msg, code := run(t, "score", "--trace", tr, "--response", resp, "--frames", filepath.Join(dir, "missing.json")); code != 2 {
		t.Errorf("missing frames.json: exit %d: %s", code, msg)
	}
}

// TestScoreAmbiguousAnswer: "12 or 13"-style answers give no count; the
// trial is unparseable and the alternatives are shown.
func TestScoreAmbiguousAnswer(t *testing.T) {
	tr := writeFile(t, "t.json", blinkTrace)
	resp := writeFile(t, "r.txt", "00:10.0 — flash\n00:12.0 — flash\nSo the light blinked 2 or 3 times.\n")
	o := scoreRun(t, "--trace", tr, "--response", resp)
	if o.Count != nil || o.Correct || len(o.Alternatives) != 2 || o.Alternatives[0] != 2 || o.Alternatives[1] != 3 ||
		!strings.Contains(strings.Join(o.Flags, ","), "ambiguous_count") || o.Outcome != "unparseable" {
		t.Errorf("count %v alternatives %v flags %v outcome %s", o.Count, o.Alternatives, o.Flags, o.Outcome)
	}
	if o.Consistency.Listed != "unparseable" || o.Consistency.Running != "no_ledger" || o.F1 != 1 {
		t.Errorf("consistency %+v F1 %v", o.Consistency, o.F1)
	}
}
