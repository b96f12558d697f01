package results_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tracegrid/tracegrid/eval/results"
)

// exportPair stores two trials, one answered and one rate-limited with
// every optional field empty, and reads them back in export order. want
// holds each one's exported fields as JSON.
func exportPair(t *testing.T) (trials []results.Trial, want []map[string]string) {
	t.Helper()
	answered := full()
	answered.Error, answered.ErrorKind = "", ""
	failed := full()
	failed.Model = "gpt-4o"
	failed.Error, failed.ErrorKind = "HTTP 429: slow down", results.KindRateLimited
	failed.Count, failed.CountSource, failed.Responses, failed.Events, failed.ParseFlags = nil, "", nil, nil, nil
	failed.Trace, failed.FinishedAt, failed.Usage, failed.CostUSD, failed.Attempts = nil, time.Time{}, results.Usage{}, 0, 5
	failed.FinishReasons, failed.ServedModel, failed.Reasoning, failed.RequestIDs, failed.TemplateHash, failed.BatchFile = nil, "", nil, nil, "", ""
	failed.InputAudit, failed.ExpectedPromptTokens, failed.AuditNote = "", 0, ""

	db, _ := open(t)
	ctx := context.Background()
	for _, tr := range []results.Trial{answered, failed} {
		if err := db.Put(ctx, tr); err != nil {
			t.Fatal(err)
		}
	}
	trials, err := db.Trials(ctx, results.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	common := map[string]string{
		"study": `"s1"`, "clip": `"bounce_ball-n3-f1.5-s2"`, "policy": `"keyframes"`, "labels": `"time"`,
		"prompt": `"multi_turn_verification"`, "repeat": `2`, "domain": `"bounce_ball"`, "n": `3`, "f": `1.5`, "seed": `2`,
		"latency_ms": `2345`, "frame_times": `[2.4,2.5,2.6,1e-7]`, "images": `4`, "image_bytes": `1099511627776`,
		"prompt_hash": `"sha256:abc"`,
	}
	with := func(m map[string]string) map[string]string {
		for k, v := range common {
			m[k] = v
		}
		return m
	}
	want = []map[string]string{
		with(map[string]string{ // gpt-4o sorts first
			"model": `"gpt-4o"`, "count": `null`, "correct": `null`, "count_source": `""`, "events": `[]`, "parse_flags": `[]`,
			"usage": `{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}`, "cost": `0`, "attempts": `5`,
			"error": `"HTTP 429: slow down"`, "error_kind": `"rate_limited"`, "done": `false`, "finished_at": `null`,
			"responses": `[]`, "trace": `null`,
			"finish_reasons": `[]`, "served_model": `""`, "request_ids": `[]`, "reasoning": `[]`, "template_hash": `""`, "batch_file": `""`,
			"input_audit": `""`, "expected_prompt_tokens": `0`, "audit_note": `""`,
		}),
		with(map[string]string{
			"model": `"qwen2.5-vl"`, "count": `3`, "correct": `true`, "count_source": `"boxed"`,
			"events":      `[{"t":2.5,"attrs":{"phase":"x","wall":"left"},"text":"At 0:02.5"},{"t":7.25,"text":"then at 7.25 s"}]`,
			"parse_flags": `["time_ranges:1","timestamps_out_of_order"]`,
			"usage":       `{"prompt_tokens":1500,"completion_tokens":60,"total_tokens":1560,"reasoning_tokens":12}`, "cost": `0.0123`, "attempts": `3`,
			"error": `""`, "error_kind": `""`, "done": `true`, "finished_at": `"2026-04-05T04:07:08.000000009Z"`,
			"responses":      `["At 0:02.5 it hits <left> & \"bounces\"","Yes.\nFinal answer: \\boxed{3}\u0000é"]`,
			"trace":          `{"schema":"tracegrid/trace/v1","n":3,"events":[{"t":2.5}]}`,
			"finish_reasons": `["stop","length"]`, "served_model": `"Qwen/Qwen2.5-VL-7B-Instruct"`, "request_ids": `["req-1","chatcmpl-2"]`,
			"reasoning": `["","I look at frame 2 <again> & \"count\"\u0000é"]`, "template_hash": `"th-1"`, "batch_file": `"batch_out.jsonl"`,
			"input_audit": `"accepted"`, "expected_prompt_tokens": `1600`, "audit_note": `"reported 1500 < expected 1600"`,
		}),
	}
	return trials, want
}

func TestExportColumns(t *testing.T) {
	cols := results.ExportColumns()
	have := map[string]bool{}
	for _, c := range cols {
		if have[c] {
			t.Errorf("column %s twice", c)
		}
		have[c] = true
	}
	for _, c := range strings.Fields("study model clip policy prompt repeat domain n f seed count correct events usage cost error " +
		"frame_times images image_bytes prompt_hash latency_ms attempts responses parse_flags count_source error_kind finished_at") {
		if !have[c] {
			t.Errorf("column %s missing", c)
		}
	}
}

func TestWriteJSONL(t *testing.T) {
	trials, want := exportPair(t)
	var buf bytes.Buffer
	if err := results.WriteJSONL(&buf, trials); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	for i, line := range lines {
		// Keys in ExportColumns order.
		dec := json.NewDecoder(strings.NewReader(line))
		dec.Token()
		var keys []string
		for dec.More() {
			k, _ := dec.Token()
			keys = append(keys, k.(string))
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				t.Fatal(err)
			}
		}
		if !reflect.DeepEqual(keys, results.ExportColumns()) {
			t.Errorf("line %d keys %v", i, keys)
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want[i]) {
			t.Errorf("line %d has %d fields, want %d", i, len(got), len(want[i]))
		}
		for k, v := range want[i] {
			if string(got[k]) != v {
				t.Errorf("line %d %s = %s, want %s", i, k, got[k], v)
			}
		}
	}
}

func TestWriteCSV(t *testing.T) {
	trials, want := exportPair(t)
	var buf bytes.Buffer
	if err := results.WriteCSV(&buf, trials); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || !reflect.DeepEqual(recs[0], results.ExportColumns()) {
		t.Fatalf("%d records, header %v", len(recs), recs[0])
	}
	for i, rec := range recs[1:] {
		for j, col := range recs[0] {
			// The CSV cell is the JSON value, with strings unquoted and
			// null empty.
			w := want[i][col]
			var s string
			switch {
			case w == "null":
				w = ""
			case json.Unmarshal([]byte(w), &s) == nil:
				w = s
			}
			if rec[j] != w {
				t.Errorf("row %d %s = %q, want %q", i, col, rec[j], w)
			}
		}
	}
	// Empty input: the header alone.
	buf.Reset()
	if err := results.WriteCSV(&buf, nil); err != nil || strings.Count(buf.String(), "\n") != 1 {
		t.Errorf("empty CSV: %q %v", buf.String(), err)
	}
}
