package variants

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tracegrid/tracegrid/eval/chat"
	"github.com/tracegrid/tracegrid/eval/parse"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/internal/textin"
	"github.com/tracegrid/tracegrid/trace"
)

// IngestOptions say which answers go where.
type IngestOptions struct {
	// Dataset is the dataset.jsonl the other harness ran.
	Dataset string
	// Predictions is its output (formats: ReadPredictions).
	Predictions string
	// DB is the results database (created when missing).
	DB string
	// Study and Model name the trials (results.Key).
	Study, Model string
	// Replace lets a prediction replace a stored trial whose answer
	// differs; without it that is an error.
	Replace bool
}

// IngestSummary says what Ingest stored.
type IngestSummary struct {
	Stored    int // trials written
	Unchanged int // already stored with the same answer
	// NotApplicable counts the answered rows that are not applicable:
	// rows without frames or a video, which an older tracegrid wrote for
	// keyframes on an N = 0 control (eval never sends that condition).
	NotApplicable int
	Missing       int // dataset rows without a prediction
	Rows          int // rows in the dataset
}

// Limits on ingest input.
const (
	// MaxDatasetLine bounds one dataset row (a row lists its frame files
	// and labels: a 10,000-frame plan is about 1.5 MB).
	MaxDatasetLine = 8 << 20
	// MaxPredictionsBytes bounds the predictions file.
	MaxPredictionsBytes = 1 << 30
)

// Prediction is one answer read from a predictions file.
type Prediction struct {
	Row      int    // the dataset row (Row.Index)
	Response string // the model's reply, raw
	Where    string // file and line or record, for messages
	// Target is the answer the harness recorded for the row ("" when it
	// recorded none); it must equal the row's.
	Target string
}

// ReadDataset reads dataset.jsonl: every line a Row, indexes 0, 1, … in
// order, ids unique. A byte order mark and CRLF line ends (a file another
// tool saved again) read the same as without.
func ReadDataset(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: dataset: %w", ErrInput, err)
	}
	defer f.Close()
	sc := textin.Lines(f, MaxDatasetLine)
	var rows []Row
	ids := map[string]int{}
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var r Row
		dec := json.NewDecoder(bytes.NewReader(line))
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("%w: %s line %d is not a dataset row: %v", ErrInput, path, n, err)
		}
		switch {
		case r.ID == "" || r.Clip == "" || r.Policy == "" || r.Prompt == "" || r.Trace == "":
			return nil, fmt.Errorf("%w: %s line %d: a row needs id, clip, policy, prompt and trace", ErrInput, path, n)
		case r.Index != len(rows):
			return nil, fmt.Errorf("%w: %s line %d: index %d, want %d (rows are numbered in order from 0)", ErrInput, path, n, r.Index, len(rows))
		}
		if prev, dup := ids[r.ID]; dup {
			return nil, fmt.Errorf("%w: %s line %d: id %s already on row %d", ErrInput, path, n, textin.Quote(r.ID), prev)
		}
		ids[r.ID] = r.Index
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%w: %s: a line is longer than %d bytes", ErrInput, path, MaxDatasetLine)
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrInput, path, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%w: %s holds no rows", ErrInput, path)
	}
	return rows, nil
}

// ReadPredictions reads another harness's answers to the rows of a
// dataset. Formats, told by the file's first bytes:
//
//   - JSON Lines, one object per line: tracegrid's own {"id", "response"};
//     lmms-eval's --log_samples file (*_samples_<task>.jsonl), whose
//     "tracegrid_id" (from the recipe's process_results) or "doc_id" (the
//     row's index) names the row and "resps"/"filtered_resps" hold the
//     reply;
//   - a JSON array of such objects (VLMEvalKit with PRED_FORMAT=json);
//   - a TSV or CSV table with a header (VLMEvalKit with PRED_FORMAT=tsv,
//     or its .xlsx saved as TSV): column "id" (or "index") names the row,
//     "prediction" (or "response") holds the reply.
//
// A record's row is named by "id" or "tracegrid_id" (the row id), else by
// "doc_id" or "index" (the row's index). Its reply is the first of
// "response", "prediction", "resps", "filtered_resps" present (a list
// gives its first string). A "target" or "answer" the harness carried must
// equal the row's answer. Unknown rows, two answers to one row and records
// without a reply are errors; an .xlsx file is refused with how to get a
// TSV.
func ReadPredictions(path string, rows []Row) ([]Prediction, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: predictions: %w", ErrInput, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%w: predictions %s is a directory", ErrInput, path)
	}
	if fi.Size() > MaxPredictionsBytes {
		return nil, fmt.Errorf("%w: predictions %s is %d bytes, above the %d MiB limit", ErrInput, path, fi.Size(), MaxPredictionsBytes>>20)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: predictions: %w", ErrInput, err)
	}
	byID := map[string]int{}
	for _, r := range rows {
		byID[r.ID] = r.Index
	}
	b = textin.TrimBOM(b) // CRLF: JSON and CSV read "\r" as space or line end
	trimmed := bytes.TrimLeft(b, " \t\r\n")
	var recs []record
	switch {
	case bytes.HasPrefix(b, []byte("PK\x03\x04")):
		return nil, fmt.Errorf("%w: predictions %s is a spreadsheet (.xlsx); run VLMEvalKit with PRED_FORMAT=tsv, or save the sheet as TSV (pandas: pd.read_excel(f).to_csv(out, sep='\\t', index=False))", ErrInput, path)
	case len(trimmed) == 0:
		return nil, fmt.Errorf("%w: predictions %s is empty", ErrInput, path)
	case trimmed[0] == '[':
		var objs []map[string]any
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.UseNumber()
		if err := dec.Decode(&objs); err != nil {
			return nil, fmt.Errorf("%w: predictions %s: not a JSON array of objects: %v", ErrInput, path, err)
		}
		for i, o := range objs {
			recs = append(recs, record{fields: o, where: fmt.Sprintf("%s record %d", path, i+1)})
		}
	case trimmed[0] == '{':
		for n, line := range bytes.Split(b, []byte("\n")) {
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			var o map[string]any
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.UseNumber()
			if err := dec.Decode(&o); err != nil {
				return nil, fmt.Errorf("%w: predictions %s line %d: not a JSON object: %v", ErrInput, path, n+1, err)
			}
			recs = append(recs, record{fields: o, where: fmt.Sprintf("%s line %d", path, n+1)})
		}
	default:
		var err error
		if recs, err = readTable(path, b); err != nil {
			return nil, err
		}
	}
	var out []Prediction
	seen := map[int]string{}
	for _, r := range recs {
		p, err := r.prediction(byID, len(rows))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInput, r.where, err)
		}
		if prev, dup := seen[p.Row]; dup {
			return nil, fmt.Errorf("%w: %s answers row %s again (first at %s)", ErrInput, r.where, textin.Quote(rows[p.Row].ID), prev)
		}
		if p.Target != "" && p.Target != strconv.Itoa(rows[p.Row].Answer) {
			return nil, fmt.Errorf("%w: %s: the harness recorded answer %s for row %s, the dataset says %d: the predictions are of another dataset or in another order",
				ErrInput, r.where, textin.Quote(p.Target), textin.Quote(rows[p.Row].ID), rows[p.Row].Answer)
		}
		seen[p.Row] = r.where
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: predictions %s hold no answers", ErrInput, path)
	}
	return out, nil
}

// record is one prediction record before its row is resolved.
type record struct {
	fields map[string]any
	where  string
}

func (r record) prediction(byID map[string]int, nrows int) (Prediction, error) {
	p := Prediction{Where: r.where}
	row := -1
	for _, k := range []string{"id", "tracegrid_id"} {
		if v, ok := r.fields[k]; ok && v != nil {
			s, ok := v.(string)
			if !ok {
				return p, fmt.Errorf("%q is not a string", k)
			}
			i, known := byID[s]
			if !known {
				return p, fmt.Errorf("id %s is not a row of the dataset", textin.Quote(s))
			}
			row = i
			break
		}
	}
	if row < 0 {
		for _, k := range []string{"doc_id", "index"} {
			v, ok := r.fields[k]
			if !ok || v == nil {
				continue
			}
			i, err := wholeNumber(v)
			if err != nil {
				return p, fmt.Errorf("%q: %w", k, err)
			}
			if i < 0 || i >= nrows {
				return p, fmt.Errorf("%s %d is not a row of the dataset (0…%d)", k, i, nrows-1)
			}
			row = i
			break
		}
	}
	if row < 0 {
		return p, errors.New(`no "id", "tracegrid_id", "doc_id" or "index" names the dataset row`)
	}
	p.Row = row
	found := false
	for _, k := range []string{"response", "prediction", "resps", "filtered_resps"} {
		if v, ok := r.fields[k]; ok {
			s, ok := firstString(v)
			if !ok {
				return p, fmt.Errorf("%q holds no text", k)
			}
			p.Response, found = s, true
			break
		}
	}
	if !found {
		return p, errors.New(`no reply ("response", "prediction", "resps" or "filtered_resps")`)
	}
	for _, k := range []string{"target", "answer"} {
		if v, ok := r.fields[k]; ok && v != nil {
			switch t := v.(type) {
			case string:
				p.Target = strings.TrimSpace(t)
			case json.Number:
				p.Target = t.String()
			}
			if f, err := strconv.ParseFloat(p.Target, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1e9 {
				p.Target = strconv.Itoa(int(f)) // "6.0" from a spreadsheet
			}
			break
		}
	}
	return p, nil
}

// wholeNumber reads a row index from JSON or a table cell.
func wholeNumber(v any) (int, error) {
	var s string
	switch t := v.(type) {
	case json.Number:
		s = t.String()
	case string:
		s = strings.TrimSpace(t)
	default:
		return 0, fmt.Errorf("%s is not a whole number", textin.Quote(fmt.Sprint(v)))
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1e9 {
		return 0, fmt.Errorf("%s is not a whole number", textin.Quote(s))
	}
	return int(f), nil
}

// firstString is a reply: a string, or the first string in nested lists
// (lmms-eval's resps are [[text]] or [text]).
func firstString(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case []any:
		if len(t) == 0 {
			return "", false
		}
		return firstString(t[0])
	}
	return "", false
}

// readTable reads a TSV or CSV table with a header into records.
func readTable(path string, b []byte) ([]record, error) {
	head, _, _ := bytes.Cut(b, []byte("\n"))
	cr := csv.NewReader(bytes.NewReader(b))
	if bytes.Contains(head, []byte("\t")) {
		cr.Comma = '\t'
	}
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%w: predictions %s: not a JSON, JSON Lines, TSV or CSV file: %v", ErrInput, path, err)
	}
	for i := range header {
		header[i] = strings.TrimSpace(header[i])
	}
	if !slices.Contains(header, "prediction") && !slices.Contains(header, "response") {
		return nil, fmt.Errorf(`%w: predictions %s: the table has no "prediction" or "response" column (columns: %s)`, ErrInput, path, textin.Quote(strings.Join(header, ", ")))
	}
	var recs []record
	for {
		row, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: predictions %s: %v", ErrInput, path, err)
		}
		ln, _ := cr.FieldPos(0)
		if len(row) != len(header) {
			return nil, fmt.Errorf("%w: predictions %s line %d: %d fields, the header has %d", ErrInput, path, ln, len(row), len(header))
		}
		o := map[string]any{}
		for i, h := range header {
			if h == "id" || h == "tracegrid_id" {
				if row[i] == "" {
					continue
				}
			}
			o[h] = row[i]
		}
		recs = append(recs, record{fields: o, where: fmt.Sprintf("%s line %d", path, ln)})
	}
	return recs, nil
}

// Ingest records another harness's answers to a dataset's rows as trials
// of a study in a results database, so `tracegrid report` and `export`
// treat them like eval's: each reply is parsed as eval parses it (with
// the frame times of the row, so "frame k" is a time) and stored with the
// clip's truth from the row's trace. A stored trial with the same key is
// left alone when its reply is the same, and is an error when it differs
// (another request or another answer) unless Replace is set.
func Ingest(ctx context.Context, opt IngestOptions) (IngestSummary, error) {
	var sum IngestSummary
	if opt.Study == "" || opt.Model == "" {
		return sum, fmt.Errorf("%w: ingest needs a study and a model name", ErrInput)
	}
	if opt.DB == "" {
		return sum, fmt.Errorf("%w: ingest needs a results database", ErrInput)
	}
	rows, err := ReadDataset(opt.Dataset)
	if err != nil {
		return sum, err
	}
	sum.Rows = len(rows)
	preds, err := ReadPredictions(opt.Predictions, rows)
	if err != nil {
		return sum, err
	}
	sum.Missing = len(rows) - len(preds)
	base := filepath.Dir(opt.Dataset)
	traces := map[string][]byte{}
	trials := make([]results.Trial, 0, len(preds))
	now := time.Now().UTC()
	for _, p := range preds {
		r := rows[p.Row]
		raw, ok := traces[r.Trace]
		if !ok {
			path := filepath.Join(base, filepath.FromSlash(r.Trace))
			tr, err := trace.Load(path)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return sum, fmt.Errorf("%w: row %s: trace %s is missing: %w", ErrInput, textin.Quote(r.ID), textin.Quote(r.Trace), err)
				}
				return sum, fmt.Errorf("%w: row %s: trace %s: %w", ErrInput, textin.Quote(r.ID), textin.Quote(r.Trace), err)
			}
			if tr.ID != r.Clip || tr.N != r.Answer || tr.Domain != r.Domain {
				return sum, fmt.Errorf("%w: row %s: trace %s is of clip %s (N=%d), the row of %s (N=%d)", ErrInput, textin.Quote(r.ID), textin.Quote(r.Trace), textin.Quote(tr.ID), tr.N, textin.Quote(r.Clip), r.Answer)
			}
			if raw, err = os.ReadFile(path); err != nil {
				return sum, fmt.Errorf("%w: row %s: %w", ErrInput, textin.Quote(r.ID), err)
			}
			traces[r.Trace] = raw
		}
		// A video is introduced by its start time and length, as eval's
		// native videos are: label mode time.
		labels := r.Labels
		if labels == "" {
			labels = string(chat.LabelsTime)
		}
		t := results.Trial{
			Key:    results.Key{Study: opt.Study, Model: opt.Model, Clip: r.Clip, Policy: r.Policy, Labels: labels, Prompt: r.Prompt},
			Domain: r.Domain, N: r.N, F: r.F, Seed: r.Seed, Trace: raw,
			FrameTimes: r.FrameTimes, Images: len(r.Frames), ImageBytes: r.Bytes, PromptHash: r.PromptHash,
			Responses: []string{p.Response}, Attempts: 1, FinishedAt: now,
		}
		if len(r.Frames) == 0 && r.Video == "" {
			// A row that shows nothing (keyframes on an N = 0 control,
			// from an older tracegrid): eval marks the condition not
			// applicable and never asks, so the reply is kept but never
			// scored, and the report leaves it out as it does eval's.
			t.Error, t.ErrorKind = fmt.Sprintf("not applicable: row %s shows no frames (policy %s on clip %s); eval never sends this condition", textin.Quote(r.ID), textin.Quote(r.Policy), textin.Quote(r.Clip)), results.KindNotApplicable
			sum.NotApplicable++
			trials = append(trials, t)
			continue
		}
		res := parse.ParseWith(p.Response, parse.Options{Domain: r.Domain, FrameTimes: r.FrameTimes})
		t.Count, t.CountSource, t.Events, t.ParseFlags = res.Count, res.CountSource, res.Events, res.Flags
		trials = append(trials, t)
	}
	if dir := filepath.Dir(opt.DB); dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return sum, fmt.Errorf("%w: results database %s: directory %s does not exist", ErrInput, opt.DB, dir)
		}
	}
	db, err := results.Open(opt.DB)
	if err != nil {
		return sum, err
	}
	defer db.Close()
	lock, err := db.LockStudy(opt.Study)
	if err != nil {
		return sum, err
	}
	defer lock.Unlock()
	// Check every key before writing any, so a conflict stores nothing.
	put := make([]bool, len(trials))
	for i, t := range trials {
		old, ok, err := db.Get(ctx, t.Key)
		if err != nil {
			return sum, err
		}
		switch {
		case !ok:
			put[i] = true
		case old.PromptHash != t.PromptHash && !opt.Replace:
			return sum, fmt.Errorf("%w: study %s already holds trial %s for another request (prompt hash %.12s…, this row %.12s…, e.g. frames against a video variant): ingest into another --study; nothing was stored",
				ErrInput, opt.Study, textin.Quote(t.Key.String()), old.PromptHash, t.PromptHash)
		case slices.Equal(old.Responses, t.Responses) && old.PromptHash == t.PromptHash:
			sum.Unchanged++
		case !opt.Replace:
			return sum, fmt.Errorf("%w: study %s already holds trial %s with another answer; give --replace to replace it, or ingest into another --study; nothing was stored",
				ErrInput, opt.Study, textin.Quote(t.Key.String()))
		default:
			put[i] = true
		}
	}
	for i, t := range trials {
		if !put[i] {
			continue
		}
		if err := db.Put(ctx, t); err != nil {
			return sum, err
		}
		sum.Stored++
	}
	return sum, nil
}
