package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tracegrid/tracegrid/eval/client"
	"github.com/tracegrid/tracegrid/eval/prompts"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/study"
)

// Batch files (tracegrid eval --batch-out / --batch-in).
//
// WriteBatch writes the trials of a study that have no answer as OpenAI
// Batch API input files — one JSON object per line,
// {"custom_id": <the trial's key>, "method": "POST", "url":
// "/v1/chat/completions", "body": <the request Chat would send>} — which
// vLLM's run-batch also reads. The provider's documented limits apply to
// each file: one model per file, at most MaxBatchLines lines and
// MaxBatchBytes bytes. ReadBatch records a batch output file ({"custom_id",
// "response": {"status_code", "request_id", "body"}, "error"} per line) as
// trials. Submitting the files, waiting and downloading the output are the
// user's steps (docs/study.md, "Batch").
const (
	// MaxBatchLines is the most requests in one batch input file (OpenAI:
	// "up to 50,000 requests").
	MaxBatchLines = 50_000
	// MaxBatchBytes is the largest batch input file (OpenAI: "up to 200
	// MB"; 200,000,000 bytes, the smaller reading).
	MaxBatchBytes = 200_000_000
	// MaxBatchOutputLine is the longest line ReadBatch reads from an output
	// file: a reply body is capped at client.DefaultMaxResponseBytes online,
	// and the batch envelope adds little.
	MaxBatchOutputLine = 2 * client.DefaultMaxResponseBytes
	batchEndpoint      = "/v1/chat/completions"
)

// The limits WriteBatch splits at (tests lower them).
var (
	batchLineLimit       = MaxBatchLines
	batchByteLimit int64 = MaxBatchBytes
)

// batchSummary is what a trial records of its request, kept in the
// database (results.BatchRequest.Request) from WriteBatch to ReadBatch.
type batchSummary struct {
	FrameTimes   []float64 `json:"frame_times"`
	Images       int       `json:"images"`
	ImageBytes   int64     `json:"image_bytes"`
	PromptHash   string    `json:"prompt_hash"`
	TemplateHash string    `json:"template_hash"`
	MaxTokens    int       `json:"max_tokens"`
}

// BatchOut says what WriteBatch did.
type BatchOut struct {
	// Files written, in order (paths in the output directory), and their
	// lines in all.
	Files []string
	Lines int
	// Removed are files an earlier WriteBatch of the same study and model
	// left beyond the new ones (their trials are answered, or in the new
	// files): submitting them would pay twice.
	Removed []string
	// Skipped counts the trials without an answer that were not written,
	// by reason.
	Skipped map[string]int
	// Stored counts trials stored without a request, as a run stores them
	// (not applicable, or refused above max_images).
	Stored int
	// EstimatedUSD is the dry-run cost of the written lines at the models'
	// batch prices (study.Prices.Batch).
	EstimatedUSD float64
}

// WriteBatch writes every trial of opt.Study without an answer to batch
// input files in dir (created if missing): per model, files named
// "<study>.<model>.NNNN.jsonl" (NNNN from 0001), each line the exact body
// Chat would send. A trial is written whatever earlier WriteBatch wrote
// it, so a rerun rewrites the same files (atomically: temporary file, then
// rename) and removes the higher-numbered ones a larger earlier run left.
// Not written, and counted in BatchOut.Skipped: trials of models without
// a batch format (provider gemini) and of two-turn templates (the second
// turn needs the first reply). The written trials are recorded in the
// database as pending (Run leaves them alone unless
// Options.ResendBatched). It holds the study's lock, checks templates as
// Run does, and sends nothing.
func WriteBatch(ctx context.Context, opt Options, dir string) (BatchOut, error) {
	out := BatchOut{Skipped: map[string]int{}}
	log := opt.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	clips, err := loadClips(opt.Study)
	if err != nil {
		return out, err
	}
	if err := checkVideoConditions(opt.Study, clips); err != nil {
		return out, err
	}
	models, err := batchModels(opt, log)
	if err != nil {
		return out, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return out, fmt.Errorf("batch: %w", err)
	}
	lock, err := opt.DB.LockStudy(opt.Study.Name)
	if err != nil {
		return out, err
	}
	defer lock.Unlock()
	hashes, err := prepareStudy(ctx, &opt)
	if err != nil {
		return out, err
	}
	st := opt.Study
	stored, err := opt.DB.Outcomes(ctx, st.Name)
	if err != nil {
		return out, err
	}
	var todo []trial
	for _, c := range clips {
		for _, cond := range st.Conditions {
			for mi, m := range st.Models {
				for rep := range st.Repetitions {
					k := trialKey(st, m, c.entry.ID, cond, rep)
					if o, ok := stored[k]; ok && o.Done() {
						continue
					}
					todo = append(todo, trial{key: k, model: mi, clip: c, cond: cond})
				}
			}
		}
	}
	est := estimates(st, clips, opt.Prompts, log)
	opt.Progress = nil // no run to report on
	r := &run{opt: opt, log: log, sum: &Summary{}, drain: context.Background(), hashes: hashes}
	writers := make([]*batchWriter, len(st.Models))
	defer func() {
		for _, w := range writers {
			w.abort()
		}
	}()
	var written []results.BatchRequest
	now := time.Now().UTC()
	for _, g := range groups(todo) {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		m := st.Models[g[0].model]
		bm, ok := models[g[0].model].(BatchModel)
		if !ok {
			out.Skipped[fmt.Sprintf("provider %s has no batch file format here; run it online", m.ProviderName())] += len(g)
			continue
		}
		tmpl, err := opt.Prompts.Get(g[0].cond.Prompt)
		if err != nil {
			return out, err
		}
		var p prepared
		p.in, p.plan, p.bytes, p.err = r.input(ctx, g[0], m)
		if p.err != nil {
			var ne notSentError
			var na notApplicableError
			if !errors.As(p.err, &ne) && !errors.As(p.err, &na) {
				return out, p.err
			}
			for _, t := range g {
				if _, _, err := r.do(ctx, t, p); err != nil {
					return out, err
				}
				out.Stored++
			}
			continue
		}
		if tmpl.Turns() > 1 {
			out.Skipped["two-turn template (its second turn needs the first reply); run it online"] += len(g)
			continue
		}
		msgs, err := tmpl.Build(p.in)
		if err != nil {
			return out, err
		}
		req := requestFor(st, m, g[0].cond, msgs)
		videoRequest(&req, m, g[0].cond, p.plan, g[0].clip.clip.Duration)
		body, err := bm.BatchBody(req)
		if err != nil {
			return out, fmt.Errorf("batch: %s: %w", g[0].key, err)
		}
		sum, err := json.Marshal(batchSummary{FrameTimes: p.plan.Times(), Images: len(p.plan.Frames), ImageBytes: p.bytes,
			PromptHash: prompts.Hash(msgs), TemplateHash: hashes[g[0].cond.Prompt], MaxTokens: req.MaxTokens})
		if err != nil {
			return out, fmt.Errorf("batch: %w", err)
		}
		if writers[g[0].model] == nil {
			writers[g[0].model] = &batchWriter{dir: dir, prefix: st.Name + "." + m.Name}
		}
		w := writers[g[0].model]
		for _, t := range g {
			line, err := json.Marshal(struct {
				CustomID string          `json:"custom_id"`
				Method   string          `json:"method"`
				URL      string          `json:"url"`
				Body     json.RawMessage `json:"body"`
			}{t.key.String(), "POST", batchEndpoint, body})
			if err != nil {
				return out, fmt.Errorf("batch: %s: %w", t.key, err)
			}
			if int64(len(line))+1 > batchByteLimit {
				out.Skipped[fmt.Sprintf("request larger than a batch file may be (%d bytes)", batchByteLimit)]++
				continue
			}
			file, err := w.add(line)
			if err != nil {
				return out, err
			}
			written = append(written, results.BatchRequest{CustomID: t.key.String(), Key: t.key, File: file, WrittenAt: now, Request: sum})
			out.EstimatedUSD += est[condKey(t.key)] * m.Prices.Batch()
		}
	}
	for i, m := range st.Models {
		w := writers[i]
		if w == nil {
			w = &batchWriter{dir: dir, prefix: st.Name + "." + m.Name}
		}
		files, err := w.finish()
		if err != nil {
			return out, err
		}
		out.Files = append(out.Files, files...)
		removed, err := w.removeStale()
		if err != nil {
			return out, err
		}
		out.Removed = append(out.Removed, removed...)
	}
	out.Lines = len(written)
	if err := opt.DB.PutBatchRequests(ctx, written); err != nil {
		return out, err
	}
	return out, nil
}

// batchModels makes the models' clients for batch files: the study's
// Client when given, else for provider openai a client without a key (a
// batch body never carries one; nothing is sent), and nil for providers
// without a batch format.
func batchModels(opt Options, log *slog.Logger) ([]Model, error) {
	if opt.Client != nil {
		return makeModels(opt, log)
	}
	out := make([]Model, len(opt.Study.Models))
	for i, m := range opt.Study.Models {
		if m.ProviderName() != study.ProviderOpenAI {
			continue
		}
		md, err := newModel(m, "", log)
		if err != nil {
			return nil, err
		}
		out[i] = md
	}
	return out, nil
}

// batchWriter writes one model's batch files, starting a new file before
// a line would pass MaxBatchLines or MaxBatchBytes.
type batchWriter struct {
	dir, prefix string
	files       []string // finished, final names
	tmp         *os.File
	buf         *bufio.Writer
	lines       int
	bytes       int64
}

func (w *batchWriter) name(n int) string {
	return filepath.Join(w.dir, fmt.Sprintf("%s.%04d.jsonl", w.prefix, n))
}

// add writes one line and returns the file it will be in.
func (w *batchWriter) add(line []byte) (string, error) {
	if w.tmp != nil && (w.lines+1 > batchLineLimit || w.bytes+int64(len(line))+1 > batchByteLimit) {
		if err := w.close(); err != nil {
			return "", err
		}
	}
	if w.tmp == nil {
		f, err := os.CreateTemp(w.dir, ".batch-*.tmp")
		if err != nil {
			return "", fmt.Errorf("batch: %w", err)
		}
		w.tmp, w.buf, w.lines, w.bytes = f, bufio.NewWriterSize(f, 1<<20), 0, 0
	}
	if _, err := w.buf.Write(append(line, '\n')); err != nil {
		return "", fmt.Errorf("batch: write %s: %w", w.tmp.Name(), err)
	}
	w.lines++
	w.bytes += int64(len(line)) + 1
	return filepath.Base(w.name(len(w.files) + 1)), nil
}

// close finishes the current file: flushed, synced and renamed to its
// final name.
func (w *batchWriter) close() error {
	if w.tmp == nil {
		return nil
	}
	f := w.tmp
	w.tmp = nil
	final := w.name(len(w.files) + 1)
	err := w.buf.Flush()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), final)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("batch: write %s: %w", final, err)
	}
	w.files = append(w.files, final)
	return nil
}

func (w *batchWriter) finish() ([]string, error) {
	if err := w.close(); err != nil {
		return nil, err
	}
	return w.files, nil
}

// abort removes an unfinished temporary file (nil-safe).
func (w *batchWriter) abort() {
	if w != nil && w.tmp != nil {
		w.tmp.Close()
		os.Remove(w.tmp.Name())
		w.tmp = nil
	}
}

// removeStale removes "<prefix>.NNNN.jsonl" files numbered above the ones
// just written.
func (w *batchWriter) removeStale() ([]string, error) {
	ents, err := os.ReadDir(w.dir)
	if err != nil {
		return nil, fmt.Errorf("batch: %w", err)
	}
	pat := regexp.MustCompile(`^` + regexp.QuoteMeta(w.prefix) + `\.(\d{4,})\.jsonl$`)
	var removed []string
	for _, e := range ents {
		m := pat.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			continue
		}
		if n, err := strconv.Atoi(m[1]); err == nil && n > len(w.files) {
			p := filepath.Join(w.dir, e.Name())
			if err := os.Remove(p); err != nil {
				return removed, fmt.Errorf("batch: remove stale %s: %w", p, err)
			}
			removed = append(removed, p)
		}
	}
	return removed, nil
}

// BatchProblem is a line of a batch output file that was not recorded.
type BatchProblem struct {
	File     string
	Line     int // 1-based
	CustomID string
	// Kind: "failed" (the provider's error or a status other than 200: the
	// trial may be sent again), "unknown" (a custom_id that is no trial of
	// this study), "no_request" (a trial of the study never written by
	// WriteBatch of this database), "malformed" (not a batch output line,
	// or a body that is not a chat completion).
	Kind    string
	Message string
}

// BatchIn says what ReadBatch did.
type BatchIn struct {
	Lines           int
	Recorded        int     // trials stored from this reading
	AlreadyRecorded int     // lines whose trial was already answered (a second reading)
	CostUSD         float64 // of the trials recorded, at batch prices
	Problems        []BatchProblem
}

// ReadBatch records batch output files as trials of opt.Study: each
// line's reply is read as Chat reads one (client.Client.ParseCompletion),
// with the request summary WriteBatch kept, its usage checked as online,
// its cost at the model's prices times its batch discount
// (study.Prices.Batch), and its count parsed; the trial records the
// file's name (results.Trial.BatchFile). It is idempotent: a line whose
// trial is already answered (or recorded from the same file and reply)
// changes nothing. Failed, unknown and malformed lines are reported in
// BatchIn.Problems and not stored; a failed line's trial may be sent again
// (online, or by the next WriteBatch). It holds the study's lock.
func ReadBatch(ctx context.Context, opt Options, files []string) (BatchIn, error) {
	var out BatchIn
	log := opt.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	st := opt.Study
	clips, err := loadClips(st)
	if err != nil {
		return out, err
	}
	models, err := batchModels(opt, log)
	if err != nil {
		return out, err
	}
	lock, err := opt.DB.LockStudy(st.Name)
	if err != nil {
		return out, err
	}
	defer lock.Unlock()
	pending, err := opt.DB.BatchRequests(ctx, st.Name)
	if err != nil {
		return out, err
	}
	scope := keysByID(st, clips)
	byClip := map[string]*clipData{}
	for _, c := range clips {
		byClip[c.entry.ID] = c
	}
	byModel := map[string]int{}
	for i, m := range st.Models {
		byModel[m.Name] = i
	}
	opt.Progress = nil
	r := &run{opt: opt, log: log, sum: &Summary{}, drain: context.Background()}
	for _, file := range files {
		if err := readBatchFile(ctx, r, file, pending, scope, byClip, byModel, models, &out); err != nil {
			return out, err
		}
	}
	return out, nil
}

// batchOutputLine is one line of a batch output file.
type batchOutputLine struct {
	CustomID string `json:"custom_id"`
	Response *struct {
		StatusCode int             `json:"status_code"`
		RequestID  string          `json:"request_id"`
		Body       json.RawMessage `json:"body"`
	} `json:"response"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func readBatchFile(ctx context.Context, r *run, file string, pending map[string]results.BatchRequest, scope map[string]results.Key,
	byClip map[string]*clipData, byModel map[string]int, models []Model, out *BatchIn) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("batch: %w", err)
	}
	defer f.Close()
	base := filepath.Base(file)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), MaxBatchOutputLine)
	n := 0
	var release []string
	for sc.Scan() {
		n++
		if err := ctx.Err(); err != nil {
			return err
		}
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		out.Lines++
		problem := func(kind, id, format string, a ...any) {
			out.Problems = append(out.Problems, BatchProblem{File: file, Line: n, CustomID: id, Kind: kind, Message: fmt.Sprintf(format, a...)})
		}
		var l batchOutputLine
		if err := json.Unmarshal([]byte(text), &l); err != nil || l.CustomID == "" {
			problem("malformed", "", "not a batch output line (want {\"custom_id\", \"response\", \"error\"})")
			continue
		}
		k, known := scope[l.CustomID]
		if p, ok := pending[l.CustomID]; ok {
			k, known = p.Key, true
		}
		switch {
		case l.Error != nil && (l.Error.Code != "" || l.Error.Message != ""):
			problem("failed", l.CustomID, "%s: %s", l.Error.Code, truncateText(l.Error.Message))
		case l.Response == nil:
			problem("failed", l.CustomID, "no response")
		case l.Response.StatusCode != 200:
			problem("failed", l.CustomID, "status %d: %s", l.Response.StatusCode, truncateText(errorMessage(l.Response.Body)))
		case !known:
			problem("unknown", l.CustomID, "no trial of study %s has this custom_id", r.opt.Study.Name)
			continue
		default:
			kind, msg, err := recordLine(ctx, r, base, l, k, pending, byClip, byModel, models, out)
			if err != nil {
				return err
			}
			if kind != "" {
				problem(kind, l.CustomID, "%s", msg)
			}
			continue
		}
		// A failed line: its trial is free to be sent again.
		if _, ok := pending[l.CustomID]; ok {
			release = append(release, l.CustomID)
			delete(pending, l.CustomID)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("batch: read %s (line %d): %w", file, n+1, err)
	}
	return r.opt.DB.DeleteBatchRequests(ctx, release)
}

// recordLine records one successful line; kind and msg describe a line
// that could not be recorded.
func recordLine(ctx context.Context, r *run, base string, l batchOutputLine, k results.Key, pending map[string]results.BatchRequest,
	byClip map[string]*clipData, byModel map[string]int, models []Model, out *BatchIn) (kind, msg string, err error) {
	mi, ok := byModel[k.Model]
	c := byClip[k.Clip]
	if !ok || c == nil {
		return "unknown", fmt.Sprintf("model %s or clip %s is not in the study", k.Model, k.Clip), nil
	}
	existing, found, err := r.opt.DB.Get(ctx, k)
	if err != nil {
		return "", "", err
	}
	if found && existing.Done() {
		out.AlreadyRecorded++
		return "", "", nil
	}
	bm, ok := models[mi].(BatchModel)
	if !ok {
		return "malformed", fmt.Sprintf("model %s has no batch format", k.Model), nil
	}
	resp, err := bm.ParseCompletion(l.Response.Body)
	if err != nil {
		return "malformed", err.Error(), nil
	}
	if l.Response.RequestID != "" {
		resp.RequestID = l.Response.RequestID
	}
	if found && existing.BatchFile == base && slices.Equal(existing.RequestIDs, []string{resp.RequestID}) {
		out.AlreadyRecorded++ // the same reply, recorded (as a failure) by an earlier reading
		return "", "", nil
	}
	p, ok := pending[l.CustomID]
	if !ok {
		return "no_request", "this database has no record of writing the trial to a batch file (tracegrid eval --batch-out)", nil
	}
	var sum batchSummary
	if err := json.Unmarshal(p.Request, &sum); err != nil {
		return "", "", fmt.Errorf("batch: stored request of %s: %w", k, err)
	}
	m := r.opt.Study.Models[mi]
	tr := c.tr
	rec := results.Trial{
		Key: k, Domain: tr.Domain, N: tr.N, F: tr.F, Seed: tr.Seed, Trace: c.raw,
		FrameTimes: sum.FrameTimes, Images: sum.Images, ImageBytes: sum.ImageBytes, PromptHash: sum.PromptHash,
		TemplateHash: sum.TemplateHash, BatchFile: base, Attempts: 1,
	}
	if aerr := r.answer(&rec, resp, sum.MaxTokens, thoughtsApart(m)); aerr != nil {
		rec.Error, rec.ErrorKind = aerr.Error(), results.KindBadUsage
	} else {
		score(&rec, tr.Domain, resp.Blocked)
	}
	rec.CostUSD = m.Prices.Cost(rec.Usage.PromptTokens, rec.Usage.CompletionTokens, m.Prices.Batch())
	rec.FinishedAt = time.Now().UTC()
	stored, err := r.opt.DB.PutUnlessDone(ctx, rec)
	if err != nil {
		return "", "", err
	}
	if !stored {
		out.AlreadyRecorded++
		return "", "", nil
	}
	out.Recorded++
	out.CostUSD += rec.CostUSD
	if rec.Error != "" {
		// Recorded as a failure (impossible usage): the trial may be sent
		// again, so it is no longer held for the batch.
		if err := r.opt.DB.DeleteBatchRequests(ctx, []string{l.CustomID}); err != nil {
			return "", "", err
		}
		delete(pending, l.CustomID)
	}
	return "", "", nil
}

// errorMessage is the message of an error body, or its start.
func errorMessage(body json.RawMessage) string {
	var v struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &v) == nil {
		if v.Error.Message != "" {
			return v.Error.Message
		}
		if v.Message != "" {
			return v.Message
		}
	}
	return string(body)
}

func truncateText(s string) string {
	const most = 300
	if len(s) <= most {
		return s
	}
	cut := most
	for cut > 0 && (s[cut]&0xc0) == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// holdBatched takes out of todo the trials written to a batch file whose
// output has not been read (results.DB.BatchRequests), unless
// opt.ResendBatched: sending them online too would pay twice. It returns
// the remaining trials and the keys held.
func holdBatched(ctx context.Context, opt Options, todo []trial) ([]trial, map[results.Key]bool, error) {
	if opt.ResendBatched {
		return todo, nil, nil
	}
	reqs, err := opt.DB.BatchRequests(ctx, opt.Study.Name)
	if err != nil || len(reqs) == 0 {
		return todo, nil, err
	}
	inBatch := map[results.Key]bool{}
	for _, r := range reqs {
		inBatch[r.Key] = true
	}
	held := map[results.Key]bool{}
	var keep []trial
	for _, t := range todo {
		if inBatch[t.key] {
			held[t.key] = true
			continue
		}
		keep = append(keep, t)
	}
	return keep, held, nil
}

// countPending counts the held trials as results.KindBatchPending in
// sum.Unanswered instead of the kind they had (not run, or an earlier
// failure).
func countPending(sum *Summary, held map[results.Key]bool, stored map[results.Key]results.Outcome) {
	if len(held) == 0 {
		return
	}
	if sum.Unanswered == nil {
		sum.Unanswered = map[string]int{}
	}
	for k := range held {
		kind := NotRun
		if o, ok := stored[k]; ok {
			kind = o.ErrorKind
			if kind == "" {
				kind = "error"
			}
		}
		if sum.Unanswered[kind] > 0 {
			sum.Unanswered[kind]--
			if sum.Unanswered[kind] == 0 {
				delete(sum.Unanswered, kind)
			}
		}
		sum.Unanswered[results.KindBatchPending]++
	}
}
