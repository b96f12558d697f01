package variants

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/results"
)

// TestDataset: one row per clip × policy × prompt, holding the request
// exactly as prompts builds it for eval (frame labels by the policy's
// default mode), the frame files in shown order and the answer.
func TestDataset(t *testing.T) {
	manifest := grid(t)
	out := t.TempDir()
	sum := run(t, Options{Manifest: manifest, Out: out, Policies: policies(t, "fps:2", "keyframes", "shuffled:4"),
		Clips:   []string{"bounce_ball_N02_F1.0_s00", "blinking_N00_F1.0_s00"},
		Dataset: &DatasetOptions{Prompts: []string{"structured_trace", "direct"}}})
	// keyframes on the N=0 clip shows no frames: eval never sends it, so
	// it has no row (2 clips × 3 policies × 2 prompts, less those 2).
	if sum.Dataset != 2*3*2-2 {
		t.Fatalf("%d rows", sum.Dataset)
	}
	rows, err := ReadDataset(filepath.Join(out, DatasetName))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 10 {
		t.Fatalf("%d rows", len(rows))
	}
	byID := map[string]Row{}
	for i, r := range rows {
		if r.Index != i {
			t.Errorf("row %d has index %d", i, r.Index)
		}
		byID[r.ID] = r
		if r.PromptHash != prompts.Hash(r.Messages) {
			t.Errorf("%s: prompt hash does not match its messages", r.ID)
		}
		for _, f := range r.Frames {
			if _, err := os.Stat(filepath.Join(out, f)); err != nil {
				t.Errorf("%s: %v", r.ID, err)
			}
		}
		if _, err := os.Stat(filepath.Join(out, r.Trace)); err != nil {
			t.Errorf("%s: trace %v", r.ID, err)
		}
	}
	// fps:2 on the 4 s clip, structured_trace: 8 frames labelled with
	// their times (the default for a rate policy).
	r, ok := byID["fps_2/bounce_ball_N02_F1.0_s00/structured_trace"]
	if !ok {
		t.Fatalf("no fps:2 row; ids %v", rows)
	}
	tmpl, _ := prompts.Default().Get("structured_trace")
	var in prompts.Input
	in.Domain, in.Duration, in.Labels = "bounce_ball", 4, chat.LabelsTime
	for j := range 8 {
		in.Frames = append(in.Frames, prompts.Frame{Position: j, T: 0.5 * float64(j), DataURL: r.Frames[j]})
	}
	want, err := tmpl.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if r.Labels != "time" || len(r.Frames) != 8 || r.Frames[1] != "fps_2/bounce_ball_N02_F1.0_s00/0001.jpg" ||
		r.FrameTimes[7] != 3.5 || r.Answer != 2 || r.N != 2 || r.Domain != "bounce_ball" || r.Policy != "fps:2" || r.As != "frames" ||
		len(r.FrameLabels) != 8 || r.FrameLabels[1] != "Frame 2 of 8 at t = 0.500 s" || r.Trace != "traces/bounce_ball_N02_F1.0_s00.trace.json" {
		t.Errorf("fps:2 row: %+v", r)
	}
	if prompts.Hash(want) != r.PromptHash || r.Text != want[len(want)-1].Parts[0].Text || r.System != systemOf(want) {
		t.Errorf("fps:2 row's request differs from prompts.Build's")
	}
	// keyframes (times would reveal the events): position labels. N=2
	// gives 6 frames; the N=0 clip has no keyframes row.
	k := byID["keyframes_0.1/bounce_ball_N02_F1.0_s00/direct"]
	if k.Labels != "position" || len(k.Frames) != 6 || k.FrameLabels[0] != "Frame 1 of 6" {
		t.Errorf("keyframes row: labels %q, %d frames, %q", k.Labels, len(k.Frames), k.FrameLabels)
	}
	for _, l := range k.FrameLabels {
		if strings.Contains(l, " s") {
			t.Errorf("keyframes label %q states a time", l)
		}
	}
	for _, p := range []string{"structured_trace", "direct"} {
		if k0, ok := byID["keyframes_0.1/blinking_N00_F1.0_s00/"+p]; ok {
			t.Errorf("keyframes on N=0 has a row: %+v", k0)
		}
	}
	if _, ok := byID["fps_2/blinking_N00_F1.0_s00/direct"]; !ok {
		t.Errorf("the N=0 clip lost its fps:2 row")
	}
	// shuffled: frames in shown order, not time order.
	s := byID["shuffled_4/bounce_ball_N02_F1.0_s00/direct"]
	if s.Labels != "position" || len(s.FrameTimes) != 4 || (s.FrameTimes[0] < s.FrameTimes[1] && s.FrameTimes[1] < s.FrameTimes[2] && s.FrameTimes[2] < s.FrameTimes[3]) {
		t.Errorf("shuffled row: %v", s.FrameTimes)
	}
	// --labels none: no label texts.
	out2 := t.TempDir()
	run(t, Options{Manifest: manifest, Out: out2, Policies: policies(t, "fps:1"), Clips: []string{"bounce_ball_N02_F1.0_s00"},
		Dataset: &DatasetOptions{Labels: chat.LabelsNone}})
	rows2, err := ReadDataset(filepath.Join(out2, DatasetName))
	if err != nil || len(rows2) != 1 || rows2[0].Labels != "none" || rows2[0].FrameLabels != nil || rows2[0].Prompt != "structured_trace" {
		t.Errorf("labels none: %+v %v", rows2, err)
	}
}

func systemOf(msgs []chat.Message) string {
	for _, m := range msgs {
		if m.Role == chat.RoleSystem {
			return m.Parts[0].Text
		}
	}
	return ""
}

// TestDatasetVideo: video rows point at the MP4 and its trace copy, with
// the video label.
func TestDatasetVideo(t *testing.T) {
	manifest := grid(t)
	out := t.TempDir()
	run(t, Options{Manifest: manifest, Out: out, As: AsVideo, Policies: policies(t, "fps:4"), Clips: []string{"state_machine_N02_F1.0_s00"},
		Dataset: &DatasetOptions{}})
	rows, err := ReadDataset(filepath.Join(out, DatasetName))
	if err != nil || len(rows) != 1 {
		t.Fatalf("%v %v", rows, err)
	}
	r := rows[0]
	if r.Video != "fps_4/state_machine_N02_F1.0_s00.mp4" || r.Trace != "fps_4/state_machine_N02_F1.0_s00.trace.json" || r.Frames != nil ||
		r.VideoLabel != chat.VideoLabel(4) || r.Labels != "" || r.Bytes <= 0 || r.As != "video" {
		t.Errorf("video row: %+v", r)
	}
}

// writePredictions writes a predictions file.
func writePredictions(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var testRows = []Row{
	{Index: 0, ID: "fps_1/a/direct", Answer: 3},
	{Index: 1, ID: "fps_1/b/direct", Answer: 0},
	{Index: 2, ID: "fps_2/a/direct", Answer: 3},
}

// TestReadPredictions: the formats of tracegrid, lmms-eval and VLMEvalKit
// name the same rows and replies.
func TestReadPredictions(t *testing.T) {
	cases := []struct {
		name, file, text string
		want             map[int]string
	}{
		{"tracegrid jsonl", "p.jsonl", `{"id": "fps_1/a/direct", "response": "\\boxed{3}"}` + "\n\n" + `{"id": "fps_2/a/direct", "response": "two"}` + "\n",
			map[int]string{0: `\boxed{3}`, 2: "two"}},
		// lmms-eval --log_samples: doc_id is the row's index; with the
		// recipe's process_results, tracegrid_id names the row.
		{"lmms-eval samples", "20260101_samples_tracegrid.jsonl",
			`{"doc_id": 1, "target": "0", "filtered_resps": ["none"], "input": "…", "doc_hash": "x"}` + "\n" +
				`{"doc_id": 0, "tracegrid_id": "fps_2/a/direct", "target": "3", "resps": [["Final answer: 3"]], "filtered_resps": "Final answer: 3"}` + "\n",
			map[int]string{1: "none", 2: "Final answer: 3"}},
		// VLMEvalKit PRED_FORMAT=tsv: pandas to_csv(sep='\t', quoting=QUOTE_ALL).
		{"vlmevalkit tsv", "GPT4o_Tracegrid.tsv",
			"\"index\"\t\"question\"\t\"answer\"\t\"prediction\"\n\"0\"\t\"How many?\"\t\"3\"\t\"I see\n\\boxed{3}\"\n\"2\"\t\"How many?\"\t\"3\"\t\"4\"\n",
			map[int]string{0: "I see\n\\boxed{3}", 2: "4"}},
		{"vlmevalkit json", "GPT4o_Tracegrid.json", `[{"index": 1, "answer": 0, "prediction": "0"}, {"index": 2.0, "answer": "3.0", "prediction": "3"}]`,
			map[int]string{1: "0", 2: "3"}},
		{"csv", "p.csv", "id,response\nfps_1/b/direct,\"zero, I think\"\n", map[int]string{1: "zero, I think"}},
		// Saved again by a Windows tool: a byte order mark and CRLF line
		// ends read the same in every format.
		{"jsonl bom crlf", "p.jsonl", "\ufeff" + `{"id": "fps_1/a/direct", "response": "3"}` + "\r\n" + `{"index": 1, "response": "0"}` + "\r\n",
			map[int]string{0: "3", 1: "0"}},
		{"json bom", "p.json", "\ufeff" + `[{"index": 2, "prediction": "4"}]` + "\r\n", map[int]string{2: "4"}},
		{"tsv bom crlf", "p.tsv", "\ufeffindex\tprediction\r\n0\t3\r\n", map[int]string{0: "3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps, err := ReadPredictions(writePredictions(t, c.file, c.text), testRows)
			if err != nil {
				t.Fatal(err)
			}
			got := map[int]string{}
			for _, p := range ps {
				got[p.Row] = p.Response
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("row %d: %q, want %q", k, got[k], v)
				}
			}
		})
	}
	bad := []struct{ name, file, text, want string }{
		{"unknown id", "p.jsonl", `{"id": "fps_9/a/direct", "response": "1"}`, `id "fps_9/a/direct" is not a row`},
		{"index out of range", "p.jsonl", `{"doc_id": 3, "resps": ["1"]}`, "doc_id 3 is not a row of the dataset (0…2)"},
		{"two answers", "p.jsonl", `{"id": "fps_1/a/direct", "response": "1"}` + "\n" + `{"index": 0, "prediction": "2"}`, `answers row "fps_1/a/direct" again`},
		{"no reply", "p.jsonl", `{"id": "fps_1/a/direct"}`, "no reply"},
		{"no row", "p.jsonl", `{"response": "1"}`, "names the dataset row"},
		{"other dataset", "p.jsonl", `{"doc_id": 1, "target": "5", "resps": ["5"]}`, `recorded answer "5" for row "fps_1/b/direct", the dataset says 0`},
		{"xlsx", "p.xlsx", "PK\x03\x04rest", "PRED_FORMAT=tsv"},
		{"no prediction column", "p.tsv", "index\tquestion\n0\tq\n", `no "prediction" or "response" column`},
		{"empty", "p.jsonl", "\n", "is empty"},
		{"not json", "p.jsonl", "{oops", "not a JSON object"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadPredictions(writePredictions(t, c.file, c.text), testRows)
			if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want ErrInput with %q", err, c.want)
			}
		})
	}
}

// TestIngest: answers become trials parsed as eval parses them ("frame k"
// read through the row's frame times), with the clip's truth; the same
// answers again change nothing; another answer is refused without
// --replace.
func TestIngest(t *testing.T) {
	manifest := grid(t)
	out := t.TempDir()
	run(t, Options{Manifest: manifest, Out: out, Policies: policies(t, "fps:2", "keyframes"), Clips: []string{"blinking_N02_F1.0_s00"},
		Dataset: &DatasetOptions{}})
	ds := filepath.Join(out, DatasetName)
	rows, err := ReadDataset(ds)
	if err != nil || len(rows) != 2 {
		t.Fatalf("%v %v", rows, err)
	}
	// Row 1 is keyframes (position labels): "frame 2" is the second shown
	// frame's time.
	kf := rows[1]
	preds := writePredictions(t, "m.jsonl",
		`{"id": "`+rows[0].ID+`", "response": "It lights up twice. \\boxed{2}"}`+"\n"+
			`{"id": "`+kf.ID+`", "response": "frame 2 — on — running count 1\nframe 5 — on — running count 2\n\\boxed{3}"}`+"\n")
	db := filepath.Join(t.TempDir(), "r.db")
	opt := IngestOptions{Dataset: ds, Predictions: preds, DB: db, Study: "harness", Model: "m"}
	sum, err := Ingest(context.Background(), opt)
	if err != nil || sum.Stored != 2 || sum.Missing != 0 || sum.Rows != 2 {
		t.Fatalf("ingest %+v %v", sum, err)
	}
	rdb, err := results.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	trials, err := rdb.Trials(context.Background(), results.Filter{Study: "harness"})
	rdb.Close()
	if err != nil || len(trials) != 2 {
		t.Fatalf("%d trials %v", len(trials), err)
	}
	for _, tr := range trials {
		if tr.Model != "m" || tr.Clip != "blinking_N02_F1.0_s00" || tr.N != 2 || tr.Domain != "blinking" || tr.Attempts != 1 || len(tr.Trace) == 0 || tr.Error != "" {
			t.Errorf("trial %+v", tr.Key)
		}
		switch tr.Policy {
		case "fps:2":
			if tr.Labels != "time" || tr.Count == nil || *tr.Count != 2 || tr.Images != 8 || len(tr.FrameTimes) != 8 || tr.PromptHash != rows[0].PromptHash {
				t.Errorf("fps:2 trial: count %v images %d", tr.Count, tr.Images)
			}
			if c, ok := tr.Correct(); !c || !ok {
				t.Errorf("fps:2 trial not correct")
			}
		case "keyframes:0.1":
			if tr.Labels != "position" || tr.Count == nil || *tr.Count != 3 || len(tr.Events) != 2 || tr.Events[0].T != kf.FrameTimes[1] || tr.Events[1].T != kf.FrameTimes[4] {
				t.Errorf("keyframes trial: count %v events %+v, frame times %v", tr.Count, tr.Events, kf.FrameTimes)
			}
		default:
			t.Errorf("policy %s", tr.Policy)
		}
	}
	if s, err := Ingest(context.Background(), opt); err != nil || s.Stored != 0 || s.Unchanged != 2 {
		t.Errorf("same answers again: %+v %v", s, err)
	}
	other := writePredictions(t, "m2.jsonl", `{"id": "`+rows[0].ID+`", "response": "\\boxed{4}"}`+"\n")
	opt.Predictions = other
	if _, err := Ingest(context.Background(), opt); !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "--replace") {
		t.Errorf("another answer: %v", err)
	}
	opt.Replace = true
	if s, err := Ingest(context.Background(), opt); err != nil || s.Stored != 1 || s.Missing != 1 {
		t.Errorf("replace: %+v %v", s, err)
	}
	// A trace that is not the row's clip is refused.
	os.WriteFile(filepath.Join(out, rows[0].Trace), []byte(`{"schema":"tracegrid/trace/v1"}`), 0o644)
	opt.Replace, opt.Study = false, "other"
	if _, err := Ingest(context.Background(), opt); !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "trace") {
		t.Errorf("broken trace: %v", err)
	}
}

// TestIngestBoundedQuote: a prediction naming a 10 MB id is refused with a
// message that quotes 200 bytes of it, not all of it.
func TestIngestBoundedQuote(t *testing.T) {
	id := strings.Repeat("z", 10<<20)
	_, err := ReadPredictions(writePredictions(t, "p.jsonl", `{"id": "`+id+`", "response": "1"}`+"\n"), testRows)
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), `zzz"… (10485760 bytes) is not a row`) || len(err.Error()) > 1000 {
		t.Errorf("%d bytes: %.300s", len(err.Error()), err)
	}
}

// TestIngestNoFramesRow: a row that shows no frames (keyframes on an N = 0
// control, as an older tracegrid wrote it) is stored as not applicable —
// its reply kept, never scored — as eval records that condition; and a
// dataset and predictions saved with a byte order mark and CRLF line ends
// ingest as the plain ones do.
func TestIngestNoFramesRow(t *testing.T) {
	manifest := grid(t)
	out := t.TempDir()
	run(t, Options{Manifest: manifest, Out: out, Policies: policies(t, "fps:2"), Clips: []string{"blinking_N00_F1.0_s00"},
		Dataset: &DatasetOptions{}})
	rows, err := ReadDataset(filepath.Join(out, DatasetName))
	if err != nil || len(rows) != 1 {
		t.Fatalf("%v %v", rows, err)
	}
	kf := rows[0]
	kf.Index, kf.ID, kf.Policy, kf.Labels = 1, "keyframes_0.1/blinking_N00_F1.0_s00/structured_trace", "keyframes:0.1", "position"
	kf.Frames, kf.FrameTimes, kf.FrameLabels, kf.Bytes = nil, nil, nil, 0
	var lines []string
	for _, r := range []Row{rows[0], kf} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	preds := `{"id": "` + rows[0].ID + `", "response": "\\boxed{0}"}` + "\n" + `{"id": "` + kf.ID + `", "response": "\\boxed{0}"}` + "\n"
	for _, c := range []struct{ name, bom, eol string }{{"plain", "", "\n"}, {"bom crlf", "\ufeff", "\r\n"}} {
		t.Run(c.name, func(t *testing.T) {
			ds := filepath.Join(out, "legacy.jsonl")
			if err := os.WriteFile(ds, []byte(c.bom+strings.Join(lines, c.eol)+c.eol), 0o644); err != nil {
				t.Fatal(err)
			}
			p := writePredictions(t, "m.jsonl", c.bom+strings.ReplaceAll(preds, "\n", c.eol))
			db := filepath.Join(t.TempDir(), "r.db")
			sum, err := Ingest(context.Background(), IngestOptions{Dataset: ds, Predictions: p, DB: db, Study: "s", Model: "m"})
			if err != nil || sum.Stored != 2 || sum.NotApplicable != 1 {
				t.Fatalf("%+v %v", sum, err)
			}
			rdb, err := results.OpenReadOnly(db)
			if err != nil {
				t.Fatal(err)
			}
			defer rdb.Close()
			trials, err := rdb.Trials(context.Background(), results.Filter{Study: "s"})
			if err != nil || len(trials) != 2 {
				t.Fatalf("%d trials %v", len(trials), err)
			}
			for _, tr := range trials {
				_, scored := tr.Correct()
				switch tr.Policy {
				case "fps:2":
					if !scored || tr.Count == nil || *tr.Count != 0 || tr.ErrorKind != "" {
						t.Errorf("fps:2: %+v", tr)
					}
				case "keyframes:0.1":
					if scored || tr.ErrorKind != results.KindNotApplicable || tr.Count != nil || len(tr.Responses) != 1 || tr.Responses[0] != `\boxed{0}` {
						t.Errorf("keyframes on N=0 scored: kind %q count %v responses %q", tr.ErrorKind, tr.Count, tr.Responses)
					}
				}
			}
		})
	}
}
