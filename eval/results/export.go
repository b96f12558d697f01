package results

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// column is one field of an exported row: its key (JSONL) or header (CSV)
// and its value.
type column struct {
	name  string
	value func(t *Trial) any
}

// exportColumns are the exported fields in order. Values are the Go values
// JSON encodes; nil is null (an empty CSV cell). Lists are never null: an
// empty list is [].
var exportColumns = []column{
	{"study", func(t *Trial) any { return t.Study }},
	{"model", func(t *Trial) any { return t.Model }},
	{"clip", func(t *Trial) any { return t.Clip }},
	{"policy", func(t *Trial) any { return t.Policy }},
	{"labels", func(t *Trial) any { return t.Labels }},
	{"prompt", func(t *Trial) any { return t.Prompt }},
	{"repeat", func(t *Trial) any { return t.Repeat }},
	{"domain", func(t *Trial) any { return t.Domain }},
	{"n", func(t *Trial) any { return t.N }},
	{"f", func(t *Trial) any { return t.F }},
	{"seed", func(t *Trial) any { return t.Seed }},
	{"count", func(t *Trial) any { return t.Count }},
	{"correct", func(t *Trial) any {
		if c, ok := t.Correct(); ok {
			return c
		}
		return nil
	}},
	{"count_source", func(t *Trial) any { return t.CountSource }},
	{"events", func(t *Trial) any { return nonNil(toEvents(t.Events)) }},
	{"parse_flags", func(t *Trial) any { return nonNil(t.ParseFlags) }},
	{"usage", func(t *Trial) any { return t.Usage }},
	{"cost", func(t *Trial) any { return t.CostUSD }},
	{"latency_ms", func(t *Trial) any { return t.LatencyMS }},
	{"attempts", func(t *Trial) any { return t.Attempts }},
	{"error", func(t *Trial) any { return t.Error }},
	{"error_kind", func(t *Trial) any { return t.ErrorKind }},
	{"done", func(t *Trial) any { return t.Done() }},
	{"finished_at", func(t *Trial) any {
		if t.FinishedAt.IsZero() {
			return nil
		}
		return t.FinishedAt.UTC().Format(time.RFC3339Nano)
	}},
	{"frame_times", func(t *Trial) any { return nonNil(t.FrameTimes) }},
	{"images", func(t *Trial) any { return t.Images }},
	{"image_bytes", func(t *Trial) any { return t.ImageBytes }},
	{"prompt_hash", func(t *Trial) any { return t.PromptHash }},
	{"responses", func(t *Trial) any { return nonNil(t.Responses) }},
	{"trace", func(t *Trial) any {
		if len(t.Trace) == 0 {
			return nil
		}
		return t.Trace
	}},
	{"finish_reasons", func(t *Trial) any { return nonNil(t.FinishReasons) }},
	{"served_model", func(t *Trial) any { return t.ServedModel }},
	{"request_ids", func(t *Trial) any { return nonNil(t.RequestIDs) }},
	{"reasoning", func(t *Trial) any { return nonNil(t.Reasoning) }},
	{"template_hash", func(t *Trial) any { return t.TemplateHash }},
	{"batch_file", func(t *Trial) any { return t.BatchFile }},
	{"input_audit", func(t *Trial) any { return t.InputAudit }},
	{"expected_prompt_tokens", func(t *Trial) any { return t.ExpectedPromptTokens }},
	{"audit_note", func(t *Trial) any { return t.AuditNote }},
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// ExportColumns returns the keys of an exported row in order: the JSONL
// object keys and the CSV header.
func ExportColumns() []string {
	names := make([]string, len(exportColumns))
	for i, c := range exportColumns {
		names[i] = c.name
	}
	return names
}

// encode is v's JSON, without HTML escaping (replies hold "<" and "&") and
// without the trailing newline.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// WriteJSONL writes one JSON object per trial and line, with the keys of
// ExportColumns in that order: the key, the truth (domain, n, f, seed),
// count and correct (count == n; null when the trial failed without a usable
// reply, false when no count was parsed), count_source, events
// ([{"t","attrs","text"}]), parse_flags, usage ({"prompt_tokens",
// "completion_tokens","total_tokens"}), cost (USD), latency_ms, attempts,
// error, error_kind, done (Trial.Done), finished_at (RFC 3339 UTC, null when
// unset), the request summary (frame_times, images, image_bytes,
// prompt_hash), responses, trace (the clip's trace object, null when not
// stored), and what the provider said: finish_reasons, served_model,
// request_ids and reasoning (lists per reply), template_hash and
// batch_file (the batch output file the trial came from, "" online).
// usage carries reasoning_tokens when the provider reported any.
func WriteJSONL(w io.Writer, trials []Trial) error {
	bw := bufio.NewWriter(w)
	for i := range trials {
		t := &trials[i]
		bw.WriteByte('{')
		for j, c := range exportColumns {
			if j > 0 {
				bw.WriteByte(',')
			}
			v, err := encode(c.value(t))
			if err != nil {
				return fmt.Errorf("results: export %s: %s: %w", t.Key, c.name, err)
			}
			name, _ := encode(c.name)
			bw.Write(name)
			bw.WriteByte(':')
			bw.Write(v)
		}
		bw.WriteString("}\n")
	}
	return bw.Flush()
}

// WriteCSV writes a header (ExportColumns) and one row per trial. Strings
// are written as they are; numbers and booleans as in JSON; null is an
// empty cell; lists, usage and trace are JSON text in one cell.
func WriteCSV(w io.Writer, trials []Trial) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(ExportColumns()); err != nil {
		return fmt.Errorf("results: export csv: %w", err)
	}
	row := make([]string, len(exportColumns))
	for i := range trials {
		t := &trials[i]
		for j, c := range exportColumns {
			v := c.value(t)
			if s, ok := v.(string); ok {
				row[j] = s
				continue
			}
			b, err := encode(v)
			if err != nil {
				return fmt.Errorf("results: export %s: %s: %w", t.Key, c.name, err)
			}
			if string(b) == "null" {
				b = nil
			}
			row[j] = string(b)
		}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("results: export csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("results: export csv: %w", err)
	}
	return nil
}
