package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/tracegrid/tracegrid/domain"
	"github.com/tracegrid/tracegrid/eval/parse"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/score"
	"github.com/tracegrid/tracegrid/trace"
)

// Schema names the layout of summary.json.
const Schema = "tracegrid/report/v1"

// Sentinel errors; Build's errors wrap one of them or the score package's.
var (
	// ErrNoTrials: the study (or the whole database) holds no trial.
	ErrNoTrials = errors.New("no trials")
	// ErrOptions: a tolerance or τ that cannot be used.
	ErrOptions = errors.New("report: invalid options")
	// ErrTrial: a stored trial that cannot be scored (no or undecodable
	// trace, a count that disagrees with its trace).
	ErrTrial = errors.New("report: invalid trial")
)

// Options configure Build.
type Options struct {
	// Study names the report (shown in the title and summary.json); when
	// empty, the trials' study if they share one.
	Study string
	// Tolerance is the timestamp-matching window δ; the zero value is the
	// paper's rate-relative δ(F) = 1/(2F).
	Tolerance score.Tolerance
	// Tau is the reliability target τ of the boundaries; 0 means
	// score.Tau (0.80).
	Tau float64
	// NaturalBins are the lower edges of the Natural videos section's
	// count bins (ParseNaturalBins); nil means DefaultNaturalBins.
	NaturalBins []int
}

// Condition is one evaluation condition: a sampling policy, the label
// mode of its frames (chat.Labels: time, position or none) and a prompt.
type Condition struct {
	Policy string `json:"policy"`
	Labels string `json:"labels"`
	Prompt string `json:"prompt"`
}

// Label is the condition as the report prints it: the label mode next to
// the policy, e.g. "keyframes (position labels) · structured_trace".
func (c Condition) Label() string {
	return c.Policy + " (" + c.labels() + " labels) · " + c.Prompt
}

// labels is the label mode, "time" for trials recorded before label modes
// existed (every frame was labelled with its time then).
func (c Condition) labels() string {
	if c.Labels == "" {
		return "time"
	}
	return c.Labels
}

func condLess(a, b Condition) bool {
	if a.Policy != b.Policy {
		return a.Policy < b.Policy
	}
	if a.labels() != b.labels() {
		return a.labels() < b.labels()
	}
	return a.Prompt < b.Prompt
}

// ModelInfo lists what one model was evaluated on.
type ModelInfo struct {
	Model string `json:"model"`
	// Baseline is the condition Table 1 Parts A–B, Table 8 and Table 9 show
	// in the page: native sampling with the structured_trace prompt when the
	// model has it (the paper's baseline), else its condition with the most
	// scored trials.
	Baseline Condition `json:"baseline"`
	// Conditions lists the baseline first, then the others by policy and
	// prompt.
	Conditions []Condition `json:"conditions"`
	Domains    []string    `json:"domains"`
}

// Totals counts the trials the report read.
type Totals struct {
	Trials      int `json:"trials"`
	Scored      int `json:"scored"`
	Failed      int `json:"failed"`
	Unparseable int `json:"unparseable"`
	// NotApplicable counts the trials whose condition supplies no frames
	// for their clip (keyframes on an N = 0 control or an objects clip):
	// never asked, in no denominator, shown as n/a.
	NotApplicable int `json:"not_applicable"`
}

// SurfaceCell is one (N, F) cell of a capability surface (Eq. 1) for one
// model × condition × domain.
type SurfaceCell struct {
	Model    string  `json:"model"`
	Policy   string  `json:"policy"`
	Labels   string  `json:"labels"`
	Prompt   string  `json:"prompt"`
	Domain   string  `json:"domain"`
	N        int     `json:"n"`
	F        float64 `json:"f"`
	Trials   int     `json:"trials"`
	Correct  int     `json:"correct"`
	Accuracy float64 `json:"accuracy"`
	WilsonLo float64 `json:"wilson_lo"`
	WilsonHi float64 `json:"wilson_hi"`
	Reliable bool    `json:"reliable"` // accuracy ≥ τ
	// NotApplicable marks a cell whose condition supplies no frames for
	// its clips (keyframes on the N = 0 controls): no trial, shown as n/a,
	// in no boundary or average.
	NotApplicable bool `json:"not_applicable,omitempty"`
}

// Metrics are Table 1's columns (fractions, not percent). VOR, P, R, F1,
// ACR and RFR are over the eligible (N > 0) trials and nil (JSON null, an
// empty CSV cell, "–" on the page) when there is none (score.Summary): 0
// would read as measured, and for ACR and RFR as perfect.
type Metrics struct {
	Trials    int      `json:"trials"`
	Correct   int      `json:"correct"`
	EM        float64  `json:"em"`
	EMLo      float64  `json:"em_lo"`
	EMHi      float64  `json:"em_hi"`
	Eligible  int      `json:"eligible"`
	VOR       *float64 `json:"vor"`
	Precision *float64 `json:"precision"`
	Recall    *float64 `json:"recall"`
	F1        *float64 `json:"f1"`
	ACR       *float64 `json:"acr"`
	RFR       *float64 `json:"rfr"`
}

func metricsOf(s score.Summary) Metrics {
	return Metrics{Trials: s.Trials, Correct: s.Correct, EM: s.EM, EMLo: s.EMInterval.Lo, EMHi: s.EMInterval.Hi,
		Eligible: s.Eligible, VOR: s.VOR, Precision: s.Precision, Recall: s.Recall, F1: s.F1, ACR: s.ACR, RFR: s.RFR}
}

// DomainRow is Table 1 Part A (and Part C) for one model × condition ×
// domain. Failed trials are not in Trials; Unparseable ones are (scored
// incorrect).
type DomainRow struct {
	Model  string `json:"model"`
	Policy string `json:"policy"`
	Labels string `json:"labels"`
	Prompt string `json:"prompt"`
	Domain string `json:"domain"`
	Metrics
	Unparseable int `json:"unparseable"`
	Failed      int `json:"failed"`
}

// MacroRow is Table 1 Part A's "Macro Average": the unweighted mean of the
// domain rows of one model × condition (the paper's row is the mean of its
// three domain rows). Each of VOR, P, R, F1, ACR and RFR averages only the
// domain rows where it is defined, and is nil when none is (macroRow).
type MacroRow struct {
	Model     string   `json:"model"`
	Policy    string   `json:"policy"`
	Labels    string   `json:"labels"`
	Prompt    string   `json:"prompt"`
	Domains   int      `json:"domains"`
	EM        float64  `json:"em"`
	VOR       *float64 `json:"vor"`
	Precision *float64 `json:"precision"`
	Recall    *float64 `json:"recall"`
	F1        *float64 `json:"f1"`
	ACR       *float64 `json:"acr"`
	RFR       *float64 `json:"rfr"`
	// MaxCountBoundary is Table 2's maximum count boundary: the largest
	// reliable contiguous positive-count prefix at any tested frequency and
	// domain of this model × condition.
	MaxCountBoundary score.Boundary `json:"max_count_boundary"`
}

// RegionRow is Table 1 Part B: one region of the N × F grid, pooled over
// the domains of one model × condition.
type RegionRow struct {
	Model  string `json:"model"`
	Policy string `json:"policy"`
	Labels string `json:"labels"`
	Prompt string `json:"prompt"`
	Region string `json:"region"`
	Metrics
}

// WilsonRow is Table 4: exact-match accuracy with its two-sided 95% Wilson
// interval, per model × condition × domain and over all domains ("all").
type WilsonRow struct {
	Model    string  `json:"model"`
	Policy   string  `json:"policy"`
	Labels   string  `json:"labels"`
	Prompt   string  `json:"prompt"`
	Domain   string  `json:"domain"`
	Correct  int     `json:"correct"`
	Trials   int     `json:"trials"`
	Accuracy float64 `json:"accuracy"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
}

// CountBoundary is N*τ(F) at one tested frequency (Eq. 5).
type CountBoundary struct {
	F float64 `json:"f"`
	score.Boundary
}

// FrequencyBoundary is F*τ(N) at one tested positive count (Eq. 6).
type FrequencyBoundary struct {
	N int `json:"n"`
	score.Boundary
}

// Control is the N = 0 no-event control of one surface.
type Control struct {
	Trials   int     `json:"trials"`
	Correct  int     `json:"correct"`
	Accuracy float64 `json:"accuracy"`
}

// BoundaryRow holds the operational boundaries of one model × condition ×
// domain surface (§3.3, B.3, B.5).
type BoundaryRow struct {
	Model     string              `json:"model"`
	Policy    string              `json:"policy"`
	Labels    string              `json:"labels"`
	Prompt    string              `json:"prompt"`
	Domain    string              `json:"domain"`
	Tau       float64             `json:"tau"`
	Count     []CountBoundary     `json:"count"`
	Frequency []FrequencyBoundary `json:"frequency"`
	MaxCount  score.Boundary      `json:"max_count"`
	Control   *Control            `json:"control,omitempty"`
}

// CurvePoint is one point of an intervention curve (Figure 4): accuracy at
// count N averaged over the tested frequencies (the unweighted mean of the
// cell accuracies at N).
type CurvePoint struct {
	Model    string  `json:"model"`
	Policy   string  `json:"policy"`
	Labels   string  `json:"labels"`
	Prompt   string  `json:"prompt"`
	Domain   string  `json:"domain"`
	N        int     `json:"n"`
	Cells    int     `json:"cells"`
	Trials   int     `json:"trials"`
	Correct  int     `json:"correct"`
	Accuracy float64 `json:"accuracy"`
}

// TaxonomyRow is Table 8 for one model × condition, per domain and over
// all domains ("all"); Merged is always 0 (never inferred, C.16).
type TaxonomyRow struct {
	Model  string `json:"model"`
	Policy string `json:"policy"`
	Labels string `json:"labels"`
	Prompt string `json:"prompt"`
	Domain string `json:"domain"`
	score.Totals
	Merged int `json:"merged"`
}

// SensitivityRow is Table 9 for one model × condition under one window.
type SensitivityRow struct {
	Model     string `json:"model"`
	Policy    string `json:"policy"`
	Labels    string `json:"labels"`
	Prompt    string `json:"prompt"`
	Tolerance string `json:"tolerance"` // as --tolerance reads it: "rate", "0.5s"
	Label     string `json:"label"`
	Selected  bool   `json:"selected"` // the window the rest of the report uses
	Metrics
}

// ObjectsDomain is CountVideoBench's static-object domain (domain.Objects):
// the domain of the CountVideoBench section, whose figures carry it.
const ObjectsDomain = domain.Objects

// countOnly reports whether a domain's trials are scored on the count
// alone (domain.Spec.CountOnly): they are reported in the CountVideoBench
// section, never in low-frequency-trap's event tables.
func countOnly(d string) bool { return domain.Of(d).CountOnly }

// eventDomains drops the count-only domains from a domain list: what the
// tables of low-frequency-trap (surfaces, Table 1, 2, 4, 8, 9, boundaries,
// the paper comparison) read.
func eventDomains(ds []string) []string {
	out := make([]string, 0, len(ds))
	for _, d := range ds {
		if !countOnly(d) {
			out = append(out, d)
		}
	}
	return out
}

// HistogramBin is how often one integer was predicted.
type HistogramBin struct {
	Value int `json:"value"`
	Count int `json:"count"`
}

// CountRow holds CountVideoBench's count-distribution measures (§5.2, §6)
// for one model × condition, plus the histogram of predicted counts the
// measures are read from: in Report.CountDistributions pooled over the
// event domains, in Report.CountVideoBench.Rows over the objects trials.
type CountRow struct {
	Model  string `json:"model"`
	Policy string `json:"policy"`
	Labels string `json:"labels"`
	Prompt string `json:"prompt"`
	score.CountStats
	// Top3Share is the Top-3 share of the true counts (CVB §3): how
	// balanced the evaluated design is.
	Top3Share   float64        `json:"top3_share"`
	Abstentions int            `json:"abstentions"`
	Histogram   []HistogramBin `json:"histogram"`
}

// CVBSection is the objects domain (CountVideoBench §4–§6): its metrics
// per model × condition, the view statistics of the evaluated clips, and
// the figures the paper's text gives, for reference.
type CVBSection struct {
	// Rows are Table 2's measures and the per-cardinality EM and Coverage
	// (ByCardinality, Figs. 3–4) over the scored objects trials of one
	// model × condition.
	Rows []CountRow `json:"rows"`
	// Views summarise the distinct objects clips of the study (failed
	// trials' clips too): the share in which some object leaves the view
	// in some frame and the mean number that do, beside the paper's 83.0 %
	// and 3.29 (§4.3).
	Views             trace.ViewStats `json:"views"`
	PaperShareLeaving float64         `json:"paper_share_leaving"`
	PaperMeanLeaving  float64         `json:"paper_mean_leaving"`
	// Reference is what the paper's text states of its models, humans and
	// the Oracle (CVBReference).
	Reference []CVBReferenceRow `json:"reference"`
}

// FrameSide is one of the two conditions a TOMATO measure compares,
// restricted to the clips both conditions share.
type FrameSide struct {
	Policy   string  `json:"policy"`
	Labels   string  `json:"labels"`
	Trials   int     `json:"trials"`
	Correct  int     `json:"correct"`
	Accuracy float64 `json:"accuracy"`
}

// FrameRow is one TOMATO frame principle (§3) for one model × prompt ×
// domain ("all" pools domains): the relative gain from From to To,
// computed on the clips both conditions ran on.
type FrameRow struct {
	Model string `json:"model"`
	// Labels is the label mode both sides were shown with: a measure
	// compares conditions under one label mode only (a time label states
	// the order that shuffling hides).
	Labels  string    `json:"labels"`
	Prompt  string    `json:"prompt"`
	Domain  string    `json:"domain"`
	Measure string    `json:"measure"` // multi_frame_gain_random, multi_frame_gain_best, order_sensitivity, information_disparity
	Symbol  string    `json:"symbol"`
	Formula string    `json:"formula"`
	M       int       `json:"m,omitempty"` // frames of the uniform/shuffled condition; 0 for ρ
	Clips   int       `json:"clips"`
	From    FrameSide `json:"from"`
	To      FrameSide `json:"to"`
	Value   float64   `json:"value"`
	Defined bool      `json:"defined"`
}

// Envelope is a model's reliability envelope: one paragraph stating where
// it counts reliably.
type Envelope struct {
	Model string `json:"model"`
	Text  string `json:"text"`
}

// FailureRow counts the failed trials (a non-empty Error other than
// results.KindParse: no reply arrived, so there is no answer to score) of
// one model × condition × domain. They are excluded from every accuracy.
type FailureRow struct {
	Model  string         `json:"model"`
	Policy string         `json:"policy"`
	Labels string         `json:"labels"`
	Prompt string         `json:"prompt"`
	Domain string         `json:"domain"`
	Failed int            `json:"failed"`
	Total  int            `json:"total"` // failed + scored
	ByKind map[string]int `json:"by_kind"`
}

// FailedTrial is one failed trial as stored.
type FailedTrial struct {
	Model    string `json:"model"`
	Policy   string `json:"policy"`
	Labels   string `json:"labels"`
	Prompt   string `json:"prompt"`
	Domain   string `json:"domain"`
	Clip     string `json:"clip"`
	Repeat   int    `json:"repeat"`
	Kind     string `json:"kind"`
	Error    string `json:"error"`
	Attempts int    `json:"attempts"`
}

// CostRow sums token usage, cost and latency of one model × condition,
// failed trials included.
type CostRow struct {
	Model            string  `json:"model"`
	Policy           string  `json:"policy"`
	Labels           string  `json:"labels"`
	Prompt           string  `json:"prompt"`
	Trials           int     `json:"trials"`
	Images           int     `json:"images"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	TotalTokens      int     `json:"total_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	MeanLatencyMS    float64 `json:"mean_latency_ms"`
}

// Figure names one PNG of the report; Write renders it from the report's
// numbers.
type Figure struct {
	File   string `json:"file"` // relative to the output directory
	Kind   string `json:"kind"` // heatmap, curves, histogram
	Title  string `json:"title"`
	Model  string `json:"model"`
	Policy string `json:"policy,omitempty"`
	Labels string `json:"labels,omitempty"`
	Prompt string `json:"prompt,omitempty"`
	Domain string `json:"domain,omitempty"`
}

// Report is everything the report shows; it marshals to summary.json.
type Report struct {
	Schema         string    `json:"schema"`
	Study          string    `json:"study"`
	Tolerance      string    `json:"tolerance"`
	ToleranceLabel string    `json:"tolerance_label"`
	Tau            float64   `json:"tau"`
	LastFinished   time.Time `json:"last_finished,omitzero"`

	Totals      Totals      `json:"totals"`
	Models      []ModelInfo `json:"models"`
	DomainNames []string    `json:"domain_names"`

	Surfaces    []SurfaceCell    `json:"surfaces"`
	Domains     []DomainRow      `json:"domains"`
	Macro       []MacroRow       `json:"macro"`
	Regions     []RegionRow      `json:"regions"`
	Wilson      []WilsonRow      `json:"wilson"`
	Boundaries  []BoundaryRow    `json:"boundaries"`
	Curves      []CurvePoint     `json:"curves"`
	Taxonomy    []TaxonomyRow    `json:"taxonomy"`
	Sensitivity []SensitivityRow `json:"sensitivity"`
	// CountDistributions are pooled over the event domains; the objects
	// trials are in CountVideoBench.
	CountDistributions []CountRow    `json:"count_distributions"`
	CountVideoBench    CVBSection    `json:"countvideobench"`
	FramePrinciples    []FrameRow    `json:"frame_principles"`
	Reliability        []Envelope    `json:"reliability"`
	Failures           []FailureRow  `json:"failures"`
	FailedTrials       []FailedTrial `json:"failed_trials"`
	// InputAudit counts trials by input audit verdict per model ×
	// condition (audit.go); absent when no trial was audited.
	InputAudit []AuditRow `json:"input_audit,omitempty"`
	Cost       []CostRow  `json:"cost"`
	Figures    []Figure   `json:"figures"`
	// PaperReference is the published Gemini 3.6 Flash numbers the
	// study is shown beside (Table 1 Part A, the boundaries of §4).
	PaperReference PaperComparison `json:"paper_reference"`
	// Consistency is the self-consistency of the replies (score.
	// ConsistencyRule) per model × condition × event domain.
	Consistency []ConsistencyRow `json:"consistency"`
	// Cases are the example trials of every outcome class (Appendix F).
	Cases []Case `json:"cases"`
	// Natural is exact match by count bin on natural videos per model ×
	// condition (natural.go); NaturalSection the rest of that section.
	// Both are left out of summary.json when the study has no natural
	// video.
	Natural        []NaturalRow    `json:"natural,omitempty"`
	NaturalSection *NaturalSection `json:"natural_section,omitempty"`
}

// ConsistencyRow is one model × condition × domain's self-consistency:
// how often the final count disagrees with the reply's last running count
// and with the number of events it listed, next to its accuracy.
type ConsistencyRow struct {
	Model    string  `json:"model"`
	Policy   string  `json:"policy"`
	Labels   string  `json:"labels"`
	Prompt   string  `json:"prompt"`
	Domain   string  `json:"domain"`
	Accuracy float64 `json:"accuracy"`
	score.ConsistencySummary
}

// scored is one successfully scored trial with its source.
type scored struct {
	src   *results.Trial
	input score.TrialInput
	trial score.Trial
}

// rowKey identifies one model × condition × domain. It is comparable:
// report code groups trials by it and finds a table's rows by comparing
// keys (row.key() == k), never field by field. domain is "" for a whole
// model × condition (all its domains) and "all" for the rows that pool
// them.
type rowKey struct {
	model  string
	cond   Condition
	domain string
}

// condition is the key of k's whole model × condition (domain "").
func (k rowKey) condition() rowKey {
	k.domain = ""
	return k
}

func keyOf(model, policy, labels, prompt, domain string) rowKey {
	return rowKey{model, Condition{policy, labels, prompt}, domain}
}

func (c SurfaceCell) key() rowKey    { return keyOf(c.Model, c.Policy, c.Labels, c.Prompt, c.Domain) }
func (d DomainRow) key() rowKey      { return keyOf(d.Model, d.Policy, d.Labels, d.Prompt, d.Domain) }
func (m MacroRow) key() rowKey       { return keyOf(m.Model, m.Policy, m.Labels, m.Prompt, "") }
func (g RegionRow) key() rowKey      { return keyOf(g.Model, g.Policy, g.Labels, g.Prompt, "") }
func (w WilsonRow) key() rowKey      { return keyOf(w.Model, w.Policy, w.Labels, w.Prompt, w.Domain) }
func (b BoundaryRow) key() rowKey    { return keyOf(b.Model, b.Policy, b.Labels, b.Prompt, b.Domain) }
func (x TaxonomyRow) key() rowKey    { return keyOf(x.Model, x.Policy, x.Labels, x.Prompt, x.Domain) }
func (s SensitivityRow) key() rowKey { return keyOf(s.Model, s.Policy, s.Labels, s.Prompt, "") }
func (c CountRow) key() rowKey       { return keyOf(c.Model, c.Policy, c.Labels, c.Prompt, "") }
func (f FailureRow) key() rowKey     { return keyOf(f.Model, f.Policy, f.Labels, f.Prompt, f.Domain) }
func (f Figure) key() rowKey         { return keyOf(f.Model, f.Policy, f.Labels, f.Prompt, f.Domain) }

// Build scores the trials of one study under opt and aggregates them into
// the report. It is pure. A trial with a non-empty Error is a failure
// (counted and listed, never scored) unless its ErrorKind is
// results.KindParse: then a reply arrived, and like a trial without Error
// it is an answer. An answer with a nil Count (unparseable) is scored
// incorrect, as the paper does (§3.3); this is results.Trial.Correct's rule.
// Errors: ErrNoTrials for no trials, ErrOptions for a bad τ or tolerance,
// ErrTrial for a trial without a decodable trace, and the score package's
// error (naming the clip) for a trace it cannot score, such as one whose
// events are not sorted by time.
//
// Build scores every trial once (collect), then runs the section builders
// (sections.go) in order, each filling its part of the Report.
func Build(trials []results.Trial, opt Options) (*Report, error) {
	tol, tau, err := checkOptions(opt)
	if err != nil {
		return nil, err
	}
	if len(trials) == 0 {
		if opt.Study != "" {
			return nil, fmt.Errorf("study %q: %w", opt.Study, ErrNoTrials)
		}
		return nil, ErrNoTrials
	}
	if opt.Study == "" {
		opt.Study = trials[0].Study
		for _, t := range trials {
			if t.Study != opt.Study {
				opt.Study = ""
				break
			}
		}
	}
	r := &Report{Schema: Schema, Study: opt.Study, Tolerance: tol.String(), ToleranceLabel: tol.Label(), Tau: tau}
	in, err := r.collect(trials, tol, tau)
	if err != nil {
		return nil, err
	}
	in.naturalBins = opt.NaturalBins
	for _, build := range sections {
		if err := build(r, in); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// collect scores every answered trial and groups the trials by model ×
// condition × domain for the section builders; it fills r.Totals and
// r.LastFinished.
func (r *Report) collect(trials []results.Trial, tol score.Tolerance, tau float64) (*input, error) {
	in := &input{tol: tol, tau: tau, groups: map[rowKey][]*scored{}, failed: map[rowKey][]*results.Trial{},
		notApplicable: map[rowKey][]*results.Trial{}, all: map[rowKey][]*results.Trial{}, views: map[string]*trace.Trace{}}
	for i := range trials {
		t := &trials[i]
		cond := Condition{t.Policy, trialLabels(t), t.Prompt}
		r.Totals.Trials++
		if t.FinishedAt.After(r.LastFinished) {
			r.LastFinished = t.FinishedAt
		}
		if t.ErrorKind == results.KindNotApplicable {
			// Nothing was asked: out of every denominator, n/a in the
			// surfaces.
			r.Totals.NotApplicable++
			k := rowKey{t.Model, cond, t.Domain}
			in.notApplicable[k] = append(in.notApplicable[k], t)
			continue
		}
		in.all[rowKey{t.Model, cond, ""}] = append(in.all[rowKey{t.Model, cond, ""}], t)
		if _, ok := t.Correct(); !ok {
			r.Totals.Failed++
			k := rowKey{t.Model, cond, t.Domain}
			in.failed[k] = append(in.failed[k], t)
			if domain.Of(t.Domain).ViewStats && in.views[t.Clip] == nil {
				// The clip was evaluated even if this request failed.
				tr, err := decodeTrace(t)
				if err != nil {
					return nil, err
				}
				in.views[t.Clip] = tr
			}
			continue
		}
		s, err := scoreOne(t, tol)
		if err != nil {
			return nil, err
		}
		if domain.Of(s.trial.Domain).ViewStats {
			in.views[t.Clip] = s.input.Trace
		}
		r.Totals.Scored++
		if t.Count == nil {
			r.Totals.Unparseable++
		}
		k := rowKey{t.Model, cond, s.trial.Domain}
		in.groups[k] = append(in.groups[k], s)
	}
	return in, nil
}

func checkOptions(opt Options) (score.Tolerance, float64, error) {
	tol := opt.Tolerance
	if tol == (score.Tolerance{}) {
		tol = score.RateTolerance
	}
	if !tol.RateRelative && !(tol.Seconds > 0 && !math.IsInf(tol.Seconds, 0)) {
		return tol, 0, fmt.Errorf("%w: tolerance must be rate-relative or a positive number of seconds, got %v", ErrOptions, tol.Seconds)
	}
	tau := opt.Tau
	if tau == 0 {
		tau = score.Tau
	}
	if !(tau > 0 && tau <= 1) {
		return tol, 0, fmt.Errorf("%w: tau must be in (0, 1], got %v", ErrOptions, opt.Tau)
	}
	return tol, tau, nil
}

func where(t *results.Trial) string {
	return fmt.Sprintf("clip %s (model %s, %s, repeat %d)", t.Clip, t.Model, Condition{t.Policy, trialLabels(t), t.Prompt}.Label(), t.Repeat)
}

// decodeTrace decodes a trial's stored trace and checks that it agrees
// with the row: the same n, and an objects section exactly when the
// domain's truth is objects (domain.TruthObjects), so the report's split
// and the scorer's agree. It is not
// validated further: the score package checks what scoring needs.
func decodeTrace(t *results.Trial) (*trace.Trace, error) {
	if len(t.Trace) == 0 {
		return nil, fmt.Errorf("%s: %w: no trace stored", where(t), ErrTrial)
	}
	var tr trace.Trace
	if err := json.Unmarshal(t.Trace, &tr); err != nil {
		return nil, fmt.Errorf("%s: %w: trace: %v", where(t), ErrTrial, err)
	}
	if tr.ID == "" {
		tr.ID = t.Clip
	}
	if tr.N != t.N {
		return nil, fmt.Errorf("%s: %w: stored n=%d but its trace %s has n=%d", where(t), ErrTrial, t.N, tr.ID, tr.N)
	}
	objects := domain.Of(tr.Domain).Truth == domain.TruthObjects
	if objects && tr.Objects == nil {
		return nil, fmt.Errorf("%s: %w: trace %s of domain %s has no objects section", where(t), ErrTrial, tr.ID, tr.Domain)
	}
	if !objects && tr.Objects != nil {
		return nil, fmt.Errorf("%s: %w: trace %s of domain %s has an objects section", where(t), ErrTrial, tr.ID, tr.Domain)
	}
	return &tr, nil
}

// scoreOne decodes a trial's trace and scores its parsed answer; errors
// name the clip.
func scoreOne(t *results.Trial, tol score.Tolerance) (*scored, error) {
	tr, err := decodeTrace(t)
	if err != nil {
		return nil, err
	}
	in := score.TrialInput{Model: t.Model, Policy: t.Policy, Prompt: t.Prompt, Trace: tr, Count: t.Count, Reports: score.FromParsed(t.Events)}
	if len(t.Responses) > 0 {
		// Self-consistency compares the reply with itself, so its three
		// numbers come from one parse of the final reply under today's
		// rules (frame references resolved with the trial's frames).
		p := parse.ParseWith(t.Responses[len(t.Responses)-1], parse.Options{Domain: tr.Domain, FrameTimes: t.FrameTimes})
		c := score.ConsistencyOf(p)
		in.Consistency = &c
	}
	sc, err := score.ScoreTrial(tr, t.Count, in.Reports, tol)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where(t), err)
	}
	return &scored{src: t, input: in, trial: score.Trial{Model: t.Model, Policy: t.Policy, Prompt: t.Prompt,
		Domain: tr.Domain, N: tr.N, F: tr.F, Seed: tr.Seed, Score: sc, Consistency: in.Consistency}}, nil
}

// consistencyRow summarizes the self-consistency of one model ×
// condition × domain's replies.
func consistencyRow(k rowKey, ts []score.Trial, accuracy float64) ConsistencyRow {
	var cs []score.Consistency
	for _, t := range ts {
		if t.Consistency != nil {
			cs = append(cs, *t.Consistency)
		}
	}
	return ConsistencyRow{Model: k.model, Policy: k.cond.Policy, Labels: k.cond.labels(), Prompt: k.cond.Prompt, Domain: k.domain,
		Accuracy: accuracy, ConsistencySummary: score.SummarizeConsistency(cs)}
}

func trialsOf(g []*scored) []score.Trial {
	out := make([]score.Trial, len(g))
	for i, s := range g {
		out[i] = s.trial
	}
	return out
}

// domainLess orders domains as the papers do (domain.Rank); domains that
// are not registered follow by name.
func domainLess(a, b string) bool {
	ra, oka := domain.Rank(a)
	rb, okb := domain.Rank(b)
	switch {
	case oka && okb:
		return ra < rb
	case oka != okb:
		return oka
	}
	return a < b
}

// DomainTitle is a domain's name as the paper prints it (domain.Spec.Title);
// "all" is "All domains", and another name is title-cased.
func DomainTitle(d string) string {
	if s, ok := domain.Lookup(d); ok {
		return s.Title
	}
	if d == "all" {
		return "All domains"
	}
	words := strings.Fields(strings.ReplaceAll(d, "_", " "))
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, " ")
}

// index fills Models and DomainNames.
func (r *Report) index(groups map[rowKey][]*scored, failed map[rowKey][]*results.Trial) {
	type info struct {
		conds   map[Condition]int  // scored event-domain trials
		events  map[Condition]bool // conditions with event-domain trials
		domains map[string]bool
	}
	models := map[string]*info{}
	domains := map[string]bool{}
	add := func(k rowKey, n int) {
		mi := models[k.model]
		if mi == nil {
			mi = &info{conds: map[Condition]int{}, events: map[Condition]bool{}, domains: map[string]bool{}}
			models[k.model] = mi
		}
		if countOnly(k.domain) {
			// Listed, but the baseline is read from event-domain trials:
			// Table 1 has no count-only (objects) row.
			if _, ok := mi.conds[k.cond]; !ok {
				mi.conds[k.cond] = 0
			}
		} else {
			mi.conds[k.cond] += n
			mi.events[k.cond] = true
		}
		mi.domains[k.domain] = true
		domains[k.domain] = true
	}
	for k, g := range groups {
		add(k, len(g))
	}
	for k := range failed {
		add(k, 0)
	}
	for _, m := range sortedStrings(models) {
		mi := models[m]
		out := ModelInfo{Model: m}
		for c := range mi.conds {
			out.Conditions = append(out.Conditions, c)
		}
		sort.Slice(out.Conditions, func(a, b int) bool { return condLess(out.Conditions[a], out.Conditions[b]) })
		out.Baseline = out.Conditions[0]
		best := -1
		for _, c := range out.Conditions {
			if len(mi.events) > 0 && !mi.events[c] {
				continue // objects only: no Table 1 to show
			}
			paper := strings.HasPrefix(c.Policy, "native") && c.Prompt == "structured_trace"
			if paper {
				out.Baseline = c
				break
			}
			if mi.conds[c] > best {
				best, out.Baseline = mi.conds[c], c
			}
		}
		// Baseline first, the rest by name.
		for i, c := range out.Conditions {
			if c == out.Baseline {
				copy(out.Conditions[1:i+1], out.Conditions[:i])
				out.Conditions[0] = c
				break
			}
		}
		for d := range mi.domains {
			out.Domains = append(out.Domains, d)
		}
		sort.Slice(out.Domains, func(a, b int) bool { return domainLess(out.Domains[a], out.Domains[b]) })
		r.Models = append(r.Models, out)
	}
	for d := range domains {
		r.DomainNames = append(r.DomainNames, d)
	}
	sort.Slice(r.DomainNames, func(a, b int) bool { return domainLess(r.DomainNames[a], r.DomainNames[b]) })
}

func sortedStrings[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedKeys[V any](m map[rowKey]V) []rowKey {
	out := make([]rowKey, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(a, b int) bool {
		x, y := out[a], out[b]
		if x.model != y.model {
			return x.model < y.model
		}
		if x.cond != y.cond {
			return condLess(x.cond, y.cond)
		}
		return domainLess(x.domain, y.domain)
	})
	return out
}

// addNotApplicable adds an n/a cell to a surface for every (N, F) whose
// trials were all not applicable (keyframes on the N = 0 controls): the
// heatmap shows "n/a" there instead of a blank or a 0.
func (r *Report) addNotApplicable(k rowKey, scored []score.Trial, na []*results.Trial) {
	type nf struct {
		n int
		f float64
	}
	has := map[nf]bool{}
	for _, t := range scored {
		has[nf{t.N, t.F}] = true
	}
	added := map[nf]bool{}
	for _, t := range na {
		c := nf{t.N, t.F}
		if has[c] || added[c] {
			continue
		}
		added[c] = true
		r.Surfaces = append(r.Surfaces, SurfaceCell{Model: k.model, Policy: k.cond.Policy, Labels: k.cond.labels(), Prompt: k.cond.Prompt, Domain: k.domain,
			N: t.N, F: t.F, NotApplicable: true})
	}
}

func (r *Report) addSurface(k rowKey, ts []score.Trial, tau float64) {
	cells := score.Surface(ts)
	var positive []score.Cell
	var control *Control
	for _, c := range cells {
		w := score.WilsonInterval(c.Correct, c.Trials, score.Z95)
		r.Surfaces = append(r.Surfaces, SurfaceCell{Model: k.model, Policy: k.cond.Policy, Labels: k.cond.labels(), Prompt: k.cond.Prompt, Domain: k.domain,
			N: c.N, F: c.F, Trials: c.Trials, Correct: c.Correct, Accuracy: c.Accuracy, WilsonLo: w.Lo, WilsonHi: w.Hi,
			Reliable: c.Accuracy >= tau-1e-12})
		if c.N == 0 {
			if control == nil {
				control = &Control{}
			}
			control.Trials += c.Trials
			control.Correct += c.Correct
			continue
		}
		positive = append(positive, c)
	}
	if control != nil {
		control.Accuracy = float64(control.Correct) / float64(control.Trials)
	}
	b := BoundaryRow{Model: k.model, Policy: k.cond.Policy, Labels: k.cond.labels(), Prompt: k.cond.Prompt, Domain: k.domain, Tau: tau, Control: control,
		MaxCount: score.MaxCountBoundary(positive, tau)}
	for _, f := range score.Frequencies(positive) {
		b.Count = append(b.Count, CountBoundary{F: f, Boundary: score.CountBoundary(positive, f, tau)})
	}
	for _, n := range cellCounts(positive) {
		b.Frequency = append(b.Frequency, FrequencyBoundary{N: n, Boundary: score.FrequencyBoundary(positive, n, tau)})
	}
	r.Boundaries = append(r.Boundaries, b)

	// Intervention curve: mean cell accuracy over the frequencies at each N.
	for _, n := range cellCounts(cells) {
		p := CurvePoint{Model: k.model, Policy: k.cond.Policy, Labels: k.cond.labels(), Prompt: k.cond.Prompt, Domain: k.domain, N: n}
		var sum float64
		for _, c := range cells {
			if c.N == n {
				p.Cells++
				p.Trials += c.Trials
				p.Correct += c.Correct
				sum += c.Accuracy
			}
		}
		p.Accuracy = sum / float64(p.Cells)
		r.Curves = append(r.Curves, p)
	}
}

func cellCounts(cells []score.Cell) []int {
	var ns []int
	for _, c := range cells {
		if len(ns) == 0 || ns[len(ns)-1] != c.N {
			ns = append(ns, c.N)
		}
	}
	return ns
}

func macroRow(k rowKey, ms []Metrics) MacroRow {
	row := MacroRow{Model: k.model, Policy: k.cond.Policy, Labels: k.cond.labels(), Prompt: k.cond.Prompt, Domains: len(ms)}
	if len(ms) == 0 {
		return row
	}
	for _, m := range ms {
		row.EM += m.EM
	}
	row.EM /= float64(len(ms))
	// A domain with no eligible (N > 0) trial has no VOR, P, R, F1, ACR or
	// RFR (nil); counting it as 0 would pull the average towards "no
	// events found" and, for ACR and RFR, towards perfect. So each measure
	// averages the domain rows where it is defined, and is itself undefined
	// when no row defines it. EM is defined on every row.
	macro := func(get func(Metrics) *float64) *float64 {
		var sum float64
		var n int
		for _, m := range ms {
			if v := get(m); v != nil {
				sum += *v
				n++
			}
		}
		if n == 0 {
			return nil
		}
		return ratio(sum, n)
	}
	row.VOR = macro(func(m Metrics) *float64 { return m.VOR })
	row.Precision = macro(func(m Metrics) *float64 { return m.Precision })
	row.Recall = macro(func(m Metrics) *float64 { return m.Recall })
	row.F1 = macro(func(m Metrics) *float64 { return m.F1 })
	row.ACR = macro(func(m Metrics) *float64 { return m.ACR })
	row.RFR = macro(func(m Metrics) *float64 { return m.RFR })
	return row
}

func taxonomyRow(k rowKey, t score.Totals) TaxonomyRow {
	return TaxonomyRow{Model: k.model, Policy: k.cond.Policy, Labels: k.cond.labels(), Prompt: k.cond.Prompt, Domain: k.domain, Totals: t}
}

func failureRow(k rowKey, f []*results.Trial, scoredN int) FailureRow {
	row := FailureRow{Model: k.model, Policy: k.cond.Policy, Labels: k.cond.labels(), Prompt: k.cond.Prompt, Domain: k.domain,
		Failed: len(f), Total: len(f) + scoredN, ByKind: map[string]int{}}
	for _, t := range f {
		kind := t.ErrorKind
		if kind == "" {
			kind = "error"
		}
		row.ByKind[kind]++
	}
	return row
}

func costRow(k rowKey, ts []*results.Trial) CostRow {
	row := CostRow{Model: k.model, Policy: k.cond.Policy, Labels: k.cond.labels(), Prompt: k.cond.Prompt, Trials: len(ts)}
	var lat int64
	for _, t := range ts {
		row.Images += t.Images
		row.PromptTokens += t.Usage.PromptTokens
		row.CompletionTokens += t.Usage.CompletionTokens
		row.TotalTokens += t.Usage.TotalTokens
		row.CostUSD += t.CostUSD
		lat += t.LatencyMS
	}
	if len(ts) > 0 {
		row.MeanLatencyMS = float64(lat) / float64(len(ts))
	}
	return row
}

// addSensitivity is Table 9: the paper's four windows, plus the selected
// one when it is not among them.
func (r *Report) addSensitivity(k rowKey, inputs []score.TrialInput, tol score.Tolerance) error {
	tols := score.PaperTolerances()
	found := false
	for _, t := range tols {
		found = found || t == tol
	}
	if !found {
		tols = append(tols, tol)
	}
	rows, err := score.Sensitivity(inputs, tols)
	if err != nil {
		return fmt.Errorf("model %s, %s: sensitivity: %w", k.model, k.cond.Label(), err)
	}
	for _, row := range rows {
		r.Sensitivity = append(r.Sensitivity, SensitivityRow{Model: k.model, Policy: k.cond.Policy, Labels: k.cond.labels(), Prompt: k.cond.Prompt,
			Tolerance: row.Tolerance.String(), Label: row.Label, Selected: row.Tolerance == tol, Metrics: metricsOf(row.Summary)})
	}
	return nil
}

// countRow computes CountVideoBench's measures over ts.
func countRow(k rowKey, ts []score.Trial) CountRow {
	preds := make([]score.CountPrediction, len(ts))
	truths := make([]int, len(ts))
	hist := map[int]int{}
	abst := 0
	for i, t := range ts {
		preds[i] = score.CountPrediction{Truth: t.N, Pred: t.Score.Count}
		truths[i] = t.N
		if t.Score.Count == nil {
			abst++
		} else {
			hist[*t.Score.Count]++
		}
	}
	row := CountRow{Model: k.model, Policy: k.cond.Policy, Labels: k.cond.labels(), Prompt: k.cond.Prompt, CountStats: score.CountDistribution(preds),
		Top3Share: score.TopShare(truths, 3), Abstentions: abst, Histogram: []HistogramBin{}}
	for v, c := range hist {
		row.Histogram = append(row.Histogram, HistogramBin{Value: v, Count: c})
	}
	sort.Slice(row.Histogram, func(a, b int) bool { return row.Histogram[a].Value < row.Histogram[b].Value })
	return row
}

// maxBoundary combines maximum count boundaries (of several domains) as
// Table 2 does: any reliable boundary beats any "< n", larger beats
// smaller.
func maxBoundary(bs []BoundaryRow) score.Boundary {
	best := score.Boundary{Label: "no data"}
	have := false
	for _, b := range bs {
		m := b.MaxCount
		if m.Label == "no data" {
			continue
		}
		switch {
		case !have:
			best, have = m, true
		case best.Below && !m.Below:
			best = m
		case best.Below == m.Below && m.Value > best.Value:
			best = m
		}
	}
	return best
}

// trialLabels is the label mode a trial's frames were shown with; a trial
// stored before label modes existed had every frame labelled with its
// time.
func trialLabels(t *results.Trial) string {
	if t.Labels == "" {
		return "time"
	}
	return t.Labels
}
