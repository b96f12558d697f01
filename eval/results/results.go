// Package results is the evaluation's results store: an embedded SQLite
// database (the pure-Go modernc.org/sqlite driver, no cgo) with one row per
// trial. A trial is one request to one model about one clip under one
// sampling policy and one prompt, repeated Repeat times; its row holds the
// clip's truth (so scoring needs no manifest), the request summary, the raw
// replies, the parsed answer, token usage, latency, cost and error.
//
// Rows are keyed by Key, so a rerun asks Done for the finished keys and skips
// them: a killed run resumes with nothing lost and nothing paid twice. Put
// commits each trial in its own transaction, durably (WAL with
// synchronous=FULL: the commit is on disk when Put returns, even across a
// power loss), and a SIGKILL at any moment leaves only whole rows.
//
// The store never holds credentials: a Trial has no field for an API key or
// a request header, and none may be added. Keys come from the environment
// and stay in the client.
//
// Schema (version SchemaVersion, kept in PRAGMA user_version and in the meta
// table):
//
//	meta(key TEXT PRIMARY KEY, value TEXT)   -- format = tracegrid-results, schema_version, created_at
//	trials(study, model, clip, policy, labels, prompt, repeat,   -- PRIMARY KEY, in this order
//	       domain, n, f, seed, trace,                    -- the clip's truth; trace is its JSON
//	       frame_times, images, image_bytes, prompt_hash, -- the request
//	       responses, count, count_source, events, parse_flags,
//	       prompt_tokens, completion_tokens, total_tokens,
//	       latency_ms, cost_usd, error, error_kind, attempts, finished_at,
//	       finish_reasons, served_model, reasoning, request_ids,  -- what the provider said (version 3)
//	       reasoning_tokens, template_hash, batch_file,
//	       input_audit, expected_prompt_tokens, audit_note)      -- the input audit (version 4)
//	study_snapshots(study, taken_at, snapshot)   -- the study as each run found it (version 3)
//	batch_requests(custom_id PRIMARY KEY, study, model, clip, policy, labels, prompt, repeat,
//	               file, written_at, request)     -- trials written to batch files (version 3)
//	input_rules(study, model, modality PRIMARY KEY, per_frame, text_base, ref_bytes, source, measured_at)
//	                                              -- tokens per frame a probe measured (version 4)
//
// Lists and events are JSON text (events as {"t","attrs","text","frame","running","excluded"} objects, the last three when set);
// count is NULL when no answer was parsed; finished_at is RFC 3339 UTC text.
// The primary key's index starts with study, so it serves lookups by study
// and the export order without a second index. Other programs may read the
// file with any SQLite client; while a run writes, read with OpenReadOnly.
package results

import (
	"encoding/json"
	"errors"
	"math"
	"time"

	"github.com/tracegrid/tracegrid/eval/parse"
)

// SchemaVersion is the layout of the tables this package writes and reads.
// An older results store is upgraded in place when it is opened (see
// migrations; the upgrade is one transaction, so a kill leaves the old
// version whole); a newer one is refused with ErrSchema.
const SchemaVersion = 4

// format is the meta table's mark that a database is a results store.
const format = "tracegrid-results"

// Errors a caller may test for with errors.Is.
var (
	// ErrSchema: the file is an SQLite database, but from another schema
	// version of this package or not a results store at all. The message
	// names both versions.
	ErrSchema = errors.New("results: unsupported database schema")
	// ErrNotDatabase: the file is not an SQLite database (a text file, a
	// truncated copy).
	ErrNotDatabase = errors.New("results: not an SQLite database")
)

// Error kinds, the values of Trial.ErrorKind. A client may use others; any
// kind not listed as permanent here is retried by a rerun.
const (
	KindInvalidRequest = "invalid_request" // the API refused the request (4xx other than 429): permanent
	KindParse          = "parse"           // a reply arrived but could not be used: permanent, scored incorrect
	KindRateLimited    = "rate_limited"    // 429: retried
	KindServer         = "server"          // 5xx or a broken connection: retried
	KindTimeout        = "timeout"         // no reply in time: retried
	KindBadUsage       = "bad_usage"       // the server reported impossible token usage (negative, above max_tokens or a ceiling): retried
	// KindNotApplicable: the condition supplies no frames for this clip
	// (keyframes on an N = 0 control or a static-object clip), so there
	// was no request and nothing to answer: permanent, never sent, and
	// kept out of every denominator of a report.
	KindNotApplicable = "not_applicable"
	// KindInputMismatch: the server reported fewer prompt tokens than the
	// frames sent cost — it saw fewer frames than the trial claims (the
	// input audit, docs/study.md). The reply is kept, not scored; retried
	// by a rerun (once the server is fixed).
	KindInputMismatch = "input_mismatch"
)

// Input audit verdicts, the values of Trial.InputAudit; "" for a trial
// stored before audits (schema version 4) or never sent.
const (
	AuditOK        = "ok"        // the reported prompt tokens cover every frame sent
	AuditUnaudited = "unaudited" // no rule for the model's tokens per frame yet: not checked
	AuditMismatch  = "mismatch"  // fewer tokens than the frames cost: stored as KindInputMismatch
	// AuditAccepted: a mismatch kept as an answered trial
	// (--accept-input-mismatch), marked.
	AuditAccepted = "accepted"
)

// Key identifies a trial. Every string is non-empty and Repeat ≥ 0.
type Key struct {
	Study  string // the evaluation run's name, e.g. "lft-main"
	Model  string // the model as the API names it
	Clip   string // the clip ID (trace.Trace.ID)
	Policy string // the sampling policy's name, e.g. "fps4", "keyframes"
	// Labels is the frame label mode the images were shown with
	// (chat.Labels: "time", "position" or "none"); trials of a version-1
	// database, made before label modes, read back as "time".
	Labels string
	Prompt string // the prompt template's name, e.g. "direct"
	Repeat int    // 0-based repetition of the same request
}

// Usage is the token usage the API reported, summed over a trial's turns.
// ReasoningTokens are the part of CompletionTokens the model spent
// thinking (Gemini's thoughtsTokenCount, OpenAI's reasoning_tokens): they
// are billed as output and already counted in CompletionTokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
}

// Trial is one row: a key, the clip's truth, the request summary and the
// outcome.
type Trial struct {
	Key

	// The clip's truth, so scoring needs no manifest.
	Domain string
	N      int
	F      float64
	Seed   int
	Trace  json.RawMessage // the clip's trace JSON (tracegrid/trace/v1) as written by the generator; stored byte for byte

	// The request summary.
	FrameTimes []float64 // seconds, in the order sent
	Images     int
	ImageBytes int64
	PromptHash string // hash of the rendered prompt text(s)

	// The outcome.
	Responses   []string      // raw reply text per turn (multi-turn verification has 2)
	Count       *int          // parsed final count; nil when none was parsed
	CountSource string        // parse.Result.CountSource
	Events      []parse.Event // parsed timestamped events; an empty Attrs map reads back as nil
	ParseFlags  []string
	Usage       Usage
	LatencyMS   int64
	CostUSD     float64
	Error       string // the last error's message; "" when answered
	ErrorKind   string // "" when answered; one of the Kind constants otherwise
	Attempts    int    // requests sent for this trial, retries included
	FinishedAt  time.Time

	// What the provider said (schema version 3; empty for older trials).
	// FinishReasons, Reasoning and RequestIDs have one entry per reply, in
	// turn order, like Responses.
	FinishReasons []string // the provider's finish reason ("stop", "length", "STOP", "SAFETY", "prompt_blocked:SAFETY", …)
	ServedModel   string   // the model id the server said answered the last (scored) reply
	Reasoning     []string // reasoning text the provider returned beside the answer; stored, never parsed
	RequestIDs    []string // the provider's id of each exchange (x-request-id, the completion's id, Gemini's responseId)
	// TemplateHash identifies the wording the trial was asked with
	// (study.TemplateHash); "" for a trial never sent.
	TemplateHash string
	// BatchFile is the name of the batch output file the trial was
	// recorded from (tracegrid eval --batch-in); "" for a trial asked
	// online.
	BatchFile string

	// The input audit (schema version 4): InputAudit is its verdict (an
	// Audit constant); ExpectedPromptTokens the prompt tokens the frames
	// sent should have cost (0 when unaudited); AuditNote both figures
	// and what they mean, in words.
	InputAudit           string
	ExpectedPromptTokens int
	AuditNote            string
}

// Done reports whether a rerun skips the trial: it was answered (no error,
// or a reply that failed to parse, KindParse) or failed permanently
// (KindInvalidRequest). Rate limits, server errors, timeouts and
// unclassified errors are retried.
func (t Trial) Done() bool { return isDone(t.ErrorKind, t.Error != "") }

// isDone is Trial.Done's rule on a trial's error kind and whether it has
// an error message.
func isDone(kind string, failed bool) bool {
	switch kind {
	case "":
		return !failed
	case KindInvalidRequest, KindParse, KindNotApplicable:
		return true
	}
	return false
}

// Correct reports whether the parsed count equals the truth N; ok is false
// when there is nothing to score: the trial failed without a usable reply
// (an error other than KindParse). An unparsed count is incorrect (the
// paper's rule).
func (t Trial) Correct() (correct, ok bool) {
	if t.Error != "" && t.ErrorKind != KindParse {
		return false, false
	}
	return t.Count != nil && *t.Count == t.N, true
}

// Filter selects trials; a zero field matches all.
type Filter struct {
	Study string
	Model string
}

// event is the stored and exported form of a parse.Event, independent of
// how package parse tags its type.
type event struct {
	T        float64           `json:"t"`
	Attrs    map[string]string `json:"attrs,omitempty"`
	Text     string            `json:"text"`
	Frame    int               `json:"frame,omitempty"`
	Running  *int              `json:"running,omitempty"`
	Excluded string            `json:"excluded,omitempty"`
}

func toEvents(evs []parse.Event) []event {
	if evs == nil {
		return nil
	}
	out := make([]event, len(evs))
	for i, e := range evs {
		out[i] = event{T: e.T, Attrs: e.Attrs, Text: e.Text, Frame: e.Frame, Running: e.Running, Excluded: e.Excluded}
	}
	return out
}

func fromEvents(evs []event) []parse.Event {
	if evs == nil {
		return nil
	}
	out := make([]parse.Event, len(evs))
	for i, e := range evs {
		out[i] = parse.Event{T: e.T, Attrs: e.Attrs, Text: e.Text, Frame: e.Frame, Running: e.Running, Excluded: e.Excluded}
	}
	return out
}

// validate checks what the database cannot hold faithfully.
func (t *Trial) validate() error {
	k := t.Key
	for _, f := range []struct{ name, v string }{{"study", k.Study}, {"model", k.Model}, {"clip", k.Clip}, {"policy", k.Policy}, {"labels", k.Labels}, {"prompt", k.Prompt}} {
		if f.v == "" {
			return errors.New("empty " + f.name + " in key")
		}
	}
	if k.Repeat < 0 {
		return errors.New("negative repeat in key")
	}
	if len(t.Trace) > 0 && !json.Valid(t.Trace) {
		return errors.New("trace is not valid JSON")
	}
	if !finite(t.F) || !finite(t.CostUSD) {
		return errors.New("f or cost is not finite")
	}
	for _, ft := range t.FrameTimes {
		if !finite(ft) {
			return errors.New("frame time is not finite")
		}
	}
	for _, e := range t.Events {
		if !finite(e.T) {
			return errors.New("event time is not finite")
		}
	}
	return nil
}

// KindBatchPending is the Summary kind of a trial written to a batch file
// whose output has not been recorded yet (runner: not sent online unless
// asked to).
const KindBatchPending = "batch_pending"

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
