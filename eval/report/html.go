package report

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/tracegrid/tracegrid/eval/score"
)

// The page is one html/template with every figure embedded as a base64
// data URI and the style sheet inline: no network is needed to view it.

type htmlRow struct {
	Section string   // when set, a row spanning the table that heads a part
	Cells   []string // the first cell is the row label
	Class   string
}

type htmlTable struct {
	ID      string
	Caption string
	Head    []string
	Rows    []htmlRow
	Note    string
}

type htmlHead struct {
	Text string
	Left bool
}

// HeadCells are the column heads, each aligned as its column's first cell
// is (text left, numbers right).
func (t htmlTable) HeadCells() []htmlHead {
	out := make([]htmlHead, len(t.Head))
	for i, h := range t.Head {
		out[i] = htmlHead{Text: h, Left: i == 0}
		for _, r := range t.Rows {
			if r.Section == "" && i < len(r.Cells) {
				out[i].Left = out[i].Left || !numeric(r.Cells[i]) || i == 6 && t.ID == "failed"
				break
			}
		}
	}
	return out
}

type htmlImage struct {
	Src   template.URL
	Title string
	File  string
}

type htmlDomainFigures struct {
	Title  string
	Images []htmlImage
}

type htmlModel struct {
	Name   string
	Anchor string
	// Events is false for a model evaluated on objects clips only: its
	// event-domain sections are left out.
	Events       bool
	Objects      bool // it has scored objects trials (the CountVideoBench section)
	Envelope     string
	Baseline     string
	Heatmaps     []htmlDomainFigures
	Curves       []htmlImage
	Table1       htmlTable
	Table4       htmlTable
	CountBounds  htmlTable
	FreqBounds   htmlTable
	Table9       htmlTable
	Counts       htmlTable
	Histograms   []htmlImage
	Frames       *htmlTable
	FrameFormula []string
	Consistency  *htmlTable

	// Natural: it has natural-video trials (the Natural videos section);
	// NaturalOnly: and no event-domain or objects trials.
	Natural, NaturalOnly bool
}

// htmlCVB is the CountVideoBench section.
type htmlCVB struct {
	Table       htmlTable
	Cardinality htmlTable
	Views       htmlTable
	Curves      []htmlImage
	Histograms  []htmlImage
}

type htmlPage struct {
	Title     string
	Meta      []string
	Models    []htmlModel
	CVB       *htmlCVB
	Natural   *htmlNatural
	Table2    htmlTable
	Table8    htmlTable
	Failures  htmlTable
	Failed    htmlTable
	Audit     htmlTable
	Cost      htmlTable
	Paper1    htmlTable
	PaperB    htmlTable
	Cases     []htmlCaseGroup
	CaseCount int
	Notes     []string
}

// htmlCaseGroup is the Cases section's cards of one model × condition.
type htmlCaseGroup struct {
	Title string
	Cards []htmlCase
}

type htmlCase struct {
	Class      string
	Definition string
	Title      string
	Facts      string
	Sheet      string // relative path of the sheet PNG; "" when none
	SheetNote  string
	Reply      []replySegment
	Alignment  htmlTable
}

func pct1(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) }

// pct1p is pct1 of an optional measure, "–" when it is undefined (nil).
func pct1p(x *float64) string {
	if x == nil {
		return "–"
	}
	return pct1(*x)
}
func fix2(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

// fix2p prints an optional measure as fix2 does, "–" when it is undefined
// (nil): a measure over no answer is shown as missing, never as 0.00.
func fix2p(x *float64) string {
	if x == nil {
		return "–"
	}
	return fix2(*x)
}

func anchor(s string) string { return "m-" + fileSafe(s) }

// table1Columns are Table 1's column names.
var table1Columns = []string{"Evaluation Domain / Region", "Final EM (%)", "VOR", "Trace P (%)", "Trace R (%)", "Trace F1 (%)", "ACR (%)", "RFR (%)"}

func metricCells(label string, m Metrics) []string {
	return []string{label, pct1(m.EM), fix2p(m.VOR), pct1p(m.Precision), pct1p(m.Recall), pct1p(m.F1), pct1p(m.ACR), pct1p(m.RFR)}
}

var regionTitles = map[string]string{
	"low_count_low_freq":   "Low Count, Low Freq",
	"high_count_low_freq":  "High Count, Low Freq",
	"low_count_high_freq":  "Low Count, High Freq",
	"high_count_high_freq": "High Count, High Freq",
}

func (r *Report) page(images map[string][]byte) htmlPage {
	title := "tracegrid report"
	if r.Study != "" {
		title += " — " + r.Study
	}
	pg := htmlPage{Title: title}
	pg.Meta = []string{
		fmt.Sprintf("%d trials: %d scored, %d failed (excluded), %d answered but unparseable (scored incorrect)",
			r.Totals.Trials, r.Totals.Scored, r.Totals.Failed, r.Totals.Unparseable) + naNote(r.Totals.NotApplicable),
		fmt.Sprintf("matching window δ: %s · reliability target τ = %s", r.ToleranceLabel, num(r.Tau)),
	}
	if !r.LastFinished.IsZero() {
		pg.Meta = append(pg.Meta, "last trial finished "+r.LastFinished.UTC().Format("2006-01-02 15:04 UTC"))
	}
	img := func(f Figure) htmlImage {
		return htmlImage{Src: template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(images[f.File])), Title: f.Title, File: f.File}
	}
	for _, mi := range r.Models {
		hm := htmlModel{Name: mi.Model, Anchor: anchor(mi.Model), Baseline: mi.Baseline.Label(), Events: len(eventDomains(mi.Domains)) > 0}
		for _, c := range r.CountVideoBench.Rows {
			hm.Objects = hm.Objects || c.Model == mi.Model
		}
		others := false
		for _, d := range mi.Domains {
			hm.Natural = hm.Natural || naturalDomain(d)
			others = others || !naturalDomain(d)
		}
		hm.NaturalOnly = hm.Natural && !others
		for _, e := range r.Reliability {
			if e.Model == mi.Model {
				hm.Envelope = e.Text
			}
		}
		for _, d := range mi.Domains {
			df := htmlDomainFigures{Title: DomainTitle(d)}
			for _, c := range mi.Conditions {
				for _, f := range r.Figures {
					if f.Kind == KindHeatmap && f.key() == (rowKey{mi.Model, c, d}) {
						im := img(f)
						im.Title = c.Label()
						df.Images = append(df.Images, im)
					}
				}
			}
			if len(df.Images) > 0 {
				hm.Heatmaps = append(hm.Heatmaps, df)
			}
		}
		for _, f := range r.Figures {
			if f.Model != mi.Model {
				continue
			}
			switch {
			case f.Kind == KindCurves:
				hm.Curves = append(hm.Curves, img(f))
			case f.Kind == KindHistogram && !countOnly(f.Domain):
				hm.Histograms = append(hm.Histograms, img(f))
			}
		}
		hm.Table1 = r.table1(mi)
		hm.Table4 = r.table4(mi)
		hm.CountBounds, hm.FreqBounds = r.boundaryTables(mi)
		hm.Table9 = r.table9(mi)
		hm.Counts = r.countTable(mi)
		hm.Frames = r.frameTable(mi)
		hm.Consistency = r.consistencyTable(mi)
		if hm.Frames != nil {
			hm.FrameFormula = []string{FormulaMultiFrameGain, FormulaOrderSensitivity, FormulaInfoDisparity}
		}
		pg.Models = append(pg.Models, hm)
	}
	if len(r.CountVideoBench.Rows) > 0 {
		cvb := &htmlCVB{Table: r.cvbTable(), Cardinality: r.cardinalityTable(), Views: r.viewsTable()}
		for _, f := range r.Figures {
			switch {
			case f.Kind == KindCardinalityEM || f.Kind == KindCardinalityCoverage:
				cvb.Curves = append(cvb.Curves, img(f))
			case f.Kind == KindHistogram && countOnly(f.Domain):
				cvb.Histograms = append(cvb.Histograms, img(f))
			}
		}
		pg.CVB = cvb
	}
	pg.Natural = r.naturalHTML()
	pg.Table2 = r.table2()
	pg.Table8 = r.table8()
	pg.Failures, pg.Failed = r.failureTables()
	pg.Audit = r.auditTable()
	pg.Cost = r.costTable()
	pg.Paper1, pg.PaperB = r.paperTables()
	pg.Cases = r.caseGroups()
	pg.CaseCount = len(r.Cases)
	pg.Notes = r.notes()
	if pg.Natural != nil {
		pg.Notes = append(pg.Notes, naturalNote)
	}
	return pg
}

// consistencyTable is a model's self-consistency per condition × domain
// beside its exact match.
func (r *Report) consistencyTable(mi ModelInfo) *htmlTable {
	t := htmlTable{ID: anchor(mi.Model) + "-consistency",
		Head: []string{"Condition · Domain", "Trials", "Final EM (%)", "≠ last running count", "Rate (%) [95% CI]", "No running count", "≠ events listed", "Rate (%) [95% CI]", "No events listed"},
		Caption: "Self-consistency: how often the final count disagrees with the reply's own ledger — its last running count, and the number of events it listed (excluded lines not counted). " +
			"Rates are over the replies that can be checked; a reply without a ledger is \"no ledger\", not a disagreement."}
	rate := func(c score.CheckStats) string {
		if c.Checked == 0 {
			return "–"
		}
		return fmt.Sprintf("%s [%s–%s]", pct1(c.DisagreeRate), pct1(c.Interval.Lo), pct1(c.Interval.Hi))
	}
	for _, c := range r.Consistency {
		if c.Model != mi.Model {
			continue
		}
		cond := Condition{c.Policy, c.Labels, c.Prompt}
		t.Rows = append(t.Rows, htmlRow{Cells: []string{cond.Label() + " · " + DomainTitle(c.Domain), itoa(c.Trials), pct1(c.Accuracy),
			fmt.Sprintf("%d of %d", c.Running.Disagree, c.Running.Checked), rate(c.Running), itoa(c.Running.NoLedger),
			fmt.Sprintf("%d of %d", c.Listed.Disagree, c.Listed.Checked), rate(c.Listed), itoa(c.Listed.NoLedger)}})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return &t
}

// caseGroups lays out the Cases section: per model × condition, the cards
// in outcome order.
func (r *Report) caseGroups() []htmlCaseGroup {
	var out []htmlCaseGroup
	for _, c := range r.Cases {
		title := c.Model + " · " + Condition{c.Policy, c.Labels, c.Prompt}.Label()
		if len(out) == 0 || out[len(out)-1].Title != title {
			out = append(out, htmlCaseGroup{Title: title})
		}
		s := c.trial
		sc := s.trial.Score
		count := "no count"
		if s.src.Count != nil {
			count = "count " + itoa(*s.src.Count)
		}
		card := htmlCase{Class: string(c.Class), Definition: c.Class.Definition(),
			Title: fmt.Sprintf("%s · %s · repeat %d", c.Clip, DomainTitle(s.trial.Domain), c.Repeat),
			Facts: fmt.Sprintf("N = %d, F = %s Hz; %s; M = %d reported events, K = %d matched; P %s%%, R %s%%, F1 %s%%; %d frames shown",
				sc.N, num(s.trial.F), count, sc.M, sc.K, pct1(sc.Precision), pct1(sc.Recall), pct1(sc.F1), len(s.src.FrameTimes)),
			Sheet: c.Sheet, Reply: replySegments(s.src),
			Alignment: htmlTable{Head: []string{"True time (s)", "Reported time (s)", "Deviation (s)", "Class"}, Rows: nil}}
		switch {
		case c.SheetError != "":
			card.SheetNote = "No contact sheet: " + c.SheetError
		case c.Sheet == "":
			card.SheetNote = "No contact sheet was drawn for this report."
		}
		for _, row := range alignmentCells(s) {
			card.Alignment.Rows = append(card.Alignment.Rows, htmlRow{Cells: row})
		}
		if len(card.Alignment.Rows) == 0 {
			card.Alignment.Note = "No true and no reported events."
		}
		out[len(out)-1].Cards = append(out[len(out)-1].Cards, card)
	}
	return out
}

// notes are the Definitions section: the fixed definitions, then the
// rules of the scoring package in its own words.
func (r *Report) notes() []string {
	out := append([]string{}, notes...)
	out = append(out,
		"Frame labels: every condition names how each image is introduced — time (\"Frame k of M at t = T s\"), position (\"Frame k of M\") or none. "+
			"keyframes, shuffled:M and single:* default to position, because a time would state the event times, the true order or where the single frame lies; "+
			"fps:K, native:R sent as frames, uniform:M and adaptive:B default to time. Under position or none a ledger names frames (\"frame k\"), which the scorer maps to the time of the k-th shown frame.",
		"Counted events: "+excludedRule,
		"Displaced events: "+score.DisplacedRule,
		"Ambiguous answers: a final answer that names two or more different counts as alternatives (\"12 or 13\", \"between 12 and 15\", \\boxed{12 or 13}) gives no count: it is unparseable (CountVideoBench §5.1), never its last number.",
		"Outcome classes (the Cases section): "+score.OutcomeRule,
		"n/a: a condition that supplies no frames for a clip — keyframes on an N = 0 control (no event, no frame) or on a static-object clip — is not applicable to it: no request is sent, nothing is paid, the trial is in no denominator, and the surface cell shows n/a (a 0 would read as a model that failed every control).",
	)
	for _, o := range score.AllOutcomes() {
		out = append(out, string(o)+": "+o.Definition())
	}
	out = append(out, "Self-consistency: "+score.ConsistencyRule,
		"Cases: up to "+itoa(CasesPerClass)+" trials per outcome class and model × condition, chosen deterministically (ordered by a hash of clip and repetition); each card shows exactly the frames the model was shown (true events outlined in red), the final reply with its parsed events highlighted (struck through: lines kept but not counted as events), and the alignment.")
	return out
}

// naNote is the meta line's part about not-applicable trials.
func naNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d not applicable (the condition gives no frames for the clip: never asked, in no denominator, n/a in the surfaces)", n)
}

// excludedRule says which reported lines are not events of their domain.
const excludedRule = "a reported line is an event of its domain unless it plainly states something that is not one: a blinking line whose phase is off (the counted event is the on-pulse), a state_machine line whose FROM and TO are the same state. Such lines are kept in the parsed reply, flagged and shown, but enter neither M, the alignment, the taxonomy nor ACR/RFR."

func (r *Report) domainRow(model string, c Condition, d string) (DomainRow, bool) {
	for _, row := range r.Domains {
		if row.key() == (rowKey{model, c, d}) {
			return row, true
		}
	}
	return DomainRow{}, false
}

// table1 is Table 1 in the paper's layout: Part A by domain and Part B by
// region for the baseline condition, Part C every condition per domain,
// split into the visual-evidence family (the baseline prompt, policies
// varied) and the prompting family (the baseline policy, prompts varied).
func (r *Report) table1(mi ModelInfo) htmlTable {
	b := mi.Baseline
	t := htmlTable{ID: anchor(mi.Model) + "-t1", Head: table1Columns,
		Caption: fmt.Sprintf("Table 1: Timestamp-recovery evaluation for %s. Trace metrics use δ = %s and positive-event trials. Final EM includes no-event controls. Parts A–B: baseline %s. Part B uses N ≤ 3, N ≥ 5, F ≤ 2.0 and F ≥ 2.5 Hz.", mi.Model, r.ToleranceLabel, b.Label())}
	t.Rows = append(t.Rows, htmlRow{Section: "Part A. Trace Evaluation by Task Domain"})
	for _, d := range eventDomains(mi.Domains) {
		if row, ok := r.domainRow(mi.Model, b, d); ok {
			t.Rows = append(t.Rows, htmlRow{Cells: metricCells(DomainTitle(d), row.Metrics)})
		}
	}
	for _, m := range r.Macro {
		if m.key() == (rowKey{mi.Model, b, ""}) {
			t.Rows = append(t.Rows, htmlRow{Class: "sum", Cells: metricCells("Macro Average", Metrics{EM: m.EM, VOR: m.VOR,
				Precision: m.Precision, Recall: m.Recall, F1: m.F1, ACR: m.ACR, RFR: m.RFR})})
		}
	}
	t.Rows = append(t.Rows, htmlRow{Section: "Part B. Trace Evaluation across (N × F) Capability Regions"})
	for _, g := range r.Regions {
		if g.key() == (rowKey{mi.Model, b, ""}) {
			t.Rows = append(t.Rows, htmlRow{Cells: metricCells(regionTitles[g.Region], g.Metrics)})
		}
	}
	if len(mi.Conditions) < 2 {
		return t
	}
	for _, d := range eventDomains(mi.Domains) {
		t.Rows = append(t.Rows, htmlRow{Section: "Part C. Trace Diagnosis of " + DomainTitle(d) + " Interventions"})
		var visual, prompting, other []Condition
		for _, c := range mi.Conditions {
			if c.Prompt == b.Prompt {
				visual = append(visual, c)
			}
			samePolicy := c.Policy == b.Policy && c.labels() == b.labels()
			if samePolicy {
				prompting = append(prompting, c)
			}
			if c.Prompt != b.Prompt && !samePolicy {
				other = append(other, c)
			}
		}
		family := func(name string, cs []Condition, label func(Condition) string) {
			if len(cs) < 2 && name != "Other Conditions" || len(cs) == 0 {
				return
			}
			t.Rows = append(t.Rows, htmlRow{Section: name, Class: "family"})
			for _, c := range cs {
				if row, ok := r.domainRow(mi.Model, c, d); ok {
					l := label(c)
					if c == b {
						l += " (Baseline)"
					}
					t.Rows = append(t.Rows, htmlRow{Cells: metricCells(l, row.Metrics)})
				}
			}
		}
		family("Visual Evidence Family (prompt "+b.Prompt+")", visual, func(c Condition) string { return c.Policy + " (" + c.labels() + " labels)" })
		family("Prompting and Reasoning Family (policy "+b.Policy+", "+b.labels()+" labels)", prompting, func(c Condition) string { return c.Prompt })
		family("Other Conditions", other, Condition.Label)
	}
	return t
}

// table4 is Table 4: Wilson intervals per condition and domain.
func (r *Report) table4(mi ModelInfo) htmlTable {
	t := htmlTable{ID: anchor(mi.Model) + "-t4",
		Head:    []string{"Condition", "Correct Runs", "Total Runs", "Accuracy (%)", "Lower Interval (%)", "Upper Interval (%)"},
		Caption: fmt.Sprintf("Table 4: %s seed-level variation. Intervals are two-sided 95%% Wilson score intervals for final-answer exact match.", mi.Model)}
	for _, d := range append(eventDomains(mi.Domains), "all") {
		t.Rows = append(t.Rows, htmlRow{Section: DomainTitle(d)})
		for _, c := range mi.Conditions {
			for _, w := range r.Wilson {
				if w.key() == (rowKey{mi.Model, c, d}) {
					t.Rows = append(t.Rows, htmlRow{Cells: []string{c.Label(), itoa(w.Correct), itoa(w.Trials), pct1(w.Accuracy), pct1(w.Lo), pct1(w.Hi)}})
				}
			}
		}
	}
	return t
}

// boundaryTables summarise the boundaries: N*τ(F) per tested frequency and
// F*τ(N) per tested count, one row per condition × domain.
func (r *Report) boundaryTables(mi ModelInfo) (htmlTable, htmlTable) {
	var fs []float64
	var ns []int
	var rows []BoundaryRow
	for _, b := range r.Boundaries {
		if b.Model != mi.Model {
			continue
		}
		rows = append(rows, b)
		for _, c := range b.Count {
			fs = appendFreq(fs, c.F)
		}
		for _, c := range b.Frequency {
			found := false
			for _, n := range ns {
				found = found || n == c.N
			}
			if !found {
				ns = append(ns, c.N)
			}
		}
	}
	sort.Float64s(fs)
	sort.Ints(ns)
	cbt := htmlTable{ID: anchor(mi.Model) + "-nb",
		Caption: fmt.Sprintf("Count boundary N*τ(F) (Eq. 5, τ = %s): the largest tested positive count reliable at that count and every smaller one; “< 1” when N = 1 already fails. N = 0: no-event control accuracy.", num(r.Tau)),
		Head:    []string{"Domain / Condition", "N = 0 control (%)", "Max. count boundary"}}
	for _, f := range fs {
		cbt.Head = append(cbt.Head, hz(f)+" Hz")
	}
	fbt := htmlTable{ID: anchor(mi.Model) + "-fb",
		Caption: fmt.Sprintf("Frequency boundary F*τ(N) in Hz (Eq. 6, τ = %s): the highest tested frequency reliable there and at every lower one; “< 0.5 Hz” when the lowest already fails.", num(r.Tau)),
		Head:    []string{"Domain / Condition"}}
	for _, n := range ns {
		fbt.Head = append(fbt.Head, "N = "+itoa(n))
	}
	for _, b := range rows {
		label := DomainTitle(b.Domain) + " · " + Condition{b.Policy, b.Labels, b.Prompt}.Label()
		ctl := "–"
		if b.Control != nil {
			ctl = pct1(b.Control.Accuracy)
		}
		cr := []string{label, ctl, b.MaxCount.Label}
		for _, f := range fs {
			cell := "–"
			for _, c := range b.Count {
				if c.F == f {
					cell = c.Label
				}
			}
			cr = append(cr, cell)
		}
		cbt.Rows = append(cbt.Rows, htmlRow{Cells: cr})
		fr := []string{label}
		for _, n := range ns {
			cell := "–"
			for _, c := range b.Frequency {
				if c.N == n {
					cell = c.Label
				}
			}
			fr = append(fr, cell)
		}
		fbt.Rows = append(fbt.Rows, htmlRow{Cells: fr})
	}
	return cbt, fbt
}

// table9 is Table 9 for the baseline condition.
func (r *Report) table9(mi ModelInfo) htmlTable {
	b := mi.Baseline
	t := htmlTable{ID: anchor(mi.Model) + "-t9",
		Head:    []string{"Matching Tolerance Strategy", "Acc (%)", "VOR", "Precision (%)", "Recall (%)", "Trace F1 (%)", "ACR (%)"},
		Caption: fmt.Sprintf("Table 9: Trace-metric sensitivity to timestamp tolerance for %s, %s. Final EM averages the full grid; VOR, precision, recall, trace F1 and ACR average positive-event trials only.", mi.Model, b.Label()),
		Note:    "Other conditions: tables/table9_sensitivity.csv."}
	for _, s := range r.Sensitivity {
		if s.key() == (rowKey{mi.Model, b, ""}) {
			label := s.Label
			cls := ""
			if s.Selected {
				cls = "sel"
				label += " (used)"
			}
			t.Rows = append(t.Rows, htmlRow{Class: cls, Cells: []string{label, pct1(s.EM), fix2p(s.VOR), pct1p(s.Precision), pct1p(s.Recall), pct1p(s.F1), pct1p(s.ACR)}})
		}
	}
	return t
}

func (r *Report) countTable(mi ModelInfo) htmlTable {
	t := htmlTable{ID: anchor(mi.Model) + "-cvb",
		Head: []string{"Condition", "EM (%)", "Acc@10% (%)", "Coverage (%)", "MAE", "RMSE", "|S|", "PP", "Max. local excess", "Max. local deficit", "Top-3 share of N (%)"},
		Caption: "Count distribution (CountVideoBench §5.2) over the event domains (objects trials: CountVideoBench section): EM and Acc@10% over all scored trials (an unparseable answer is wrong), Coverage = answered/trials, MAE and RMSE over answered trials (– when none was), " +
			"|S| distinct predicted values, PP = exp(entropy) with abstentions pooled as one outcome. Local excess at k: N_k − max(L_k, R_k); deficit: min(L_k, R_k) − N_k, with L_k = max(N_{k−1}, N_{k−2}), R_k = max(N_{k+1}, N_{k+2})."}
	for _, c := range r.CountDistributions {
		if c.Model != mi.Model {
			continue
		}
		t.Rows = append(t.Rows, htmlRow{Cells: []string{Condition{c.Policy, c.Labels, c.Prompt}.Label(), pct1(c.EM), pct1(c.Acc10), pct1(c.Coverage),
			fix2p(c.MAE), fix2p(c.RMSE), itoa(c.Support), fix2(c.Perplexity),
			extreme(c.Excess, "+"), extreme(c.Deficit, "−"), pct1(c.Top3Share)}})
	}
	return t
}

func (r *Report) frameTable(mi ModelInfo) *htmlTable {
	t := htmlTable{ID: anchor(mi.Model) + "-tomato",
		Head:    []string{"Prompt · Labels · Domain", "Measure", "From (accuracy)", "To (accuracy)", "Clips", "Value"},
		Caption: "TOMATO frame principles (§3): relative gains between matched frame conditions with the same prompt and the same frame label mode, on the clips both conditions ran on (a time label states the order shuffling hides, so τ needs uniform:M and shuffled:M under one label mode, e.g. both with position labels)."}
	names := map[string]string{"multi_frame_gain_random": "κ multi-frame gain (random)", "multi_frame_gain_best": "κ multi-frame gain (hand-picked)",
		"order_sensitivity": "τ frame order sensitivity", "information_disparity": "ρ frame information disparity"}
	for _, f := range r.FramePrinciples {
		if f.Model != mi.Model {
			continue
		}
		v := "undefined (zero baseline)"
		if f.Defined {
			v = pct1(f.Value) + "%"
		}
		t.Rows = append(t.Rows, htmlRow{Cells: []string{f.Prompt + " · " + f.Labels + " labels · " + DomainTitle(f.Domain), names[f.Measure],
			fmt.Sprintf("%s (%s%%)", f.From.Policy, pct1(f.From.Accuracy)), fmt.Sprintf("%s (%s%%)", f.To.Policy, pct1(f.To.Accuracy)), itoa(f.Clips), v}})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return &t
}

// table2 is the cross-model summary of Table 2: EM per domain and the
// maximum count boundary, per model × condition.
func (r *Report) table2() htmlTable {
	t := htmlTable{ID: "t2", Head: []string{"Model", "Condition"},
		Caption: "Cross-model temporal-profile summary (Table 2): exact match per domain; the maximum count boundary is the largest reliable contiguous positive-count prefix at any tested frequency and domain."}
	domains := eventDomains(r.DomainNames)
	for _, d := range domains {
		t.Head = append(t.Head, DomainTitle(d)+" EM (%)")
	}
	t.Head = append(t.Head, "Max. count boundary")
	for _, mi := range r.Models {
		for _, c := range mi.Conditions {
			row := []string{mi.Model, c.Label()}
			found := false
			for _, d := range domains {
				cell := "–"
				if dr, ok := r.domainRow(mi.Model, c, d); ok {
					cell = pct1(dr.EM)
					found = true
				}
				row = append(row, cell)
			}
			if !found {
				continue // an objects-only condition: CountVideoBench section
			}
			cell := "–"
			for _, m := range r.Macro {
				if m.key() == (rowKey{mi.Model, c, ""}) {
					cell = m.MaxCountBoundary.Label
				}
			}
			row = append(row, cell)
			t.Rows = append(t.Rows, htmlRow{Cells: row})
		}
	}
	return t
}

// table8 is Table 8: event-level taxonomy counts, one column per model
// (its baseline condition), over all domains.
func (r *Report) table8() htmlTable {
	t := htmlTable{ID: "t8", Head: []string{"Error type"},
		Caption: "Table 8: Aggregate trace-error counts by model (baseline condition, all positive-count videos). Matched, missed, hallucinated, displaced and misidentified rows count events; wrong accumulation counts videos with an incorrect final answer and trace F1 ≥ 0.80. Merged events are never inferred.",
		Note:    "Every condition and domain: tables/table8_taxonomy.csv."}
	var cols []TaxonomyRow
	for _, mi := range r.Models {
		for _, x := range r.Taxonomy {
			if x.key() == (rowKey{mi.Model, mi.Baseline, "all"}) {
				cols = append(cols, x)
				t.Head = append(t.Head, mi.Model+" ("+mi.Baseline.Label()+")")
			}
		}
	}
	line := func(name string, v func(TaxonomyRow) int) {
		row := []string{name}
		for _, c := range cols {
			row = append(row, groupDigits(v(c)))
		}
		t.Rows = append(t.Rows, htmlRow{Cells: row})
	}
	line("True events", func(x TaxonomyRow) int { return x.TrueEvents })
	line("Matched events", func(x TaxonomyRow) int { return x.Matched })
	line("Missed events", func(x TaxonomyRow) int { return x.Missed })
	line("Merged events", func(x TaxonomyRow) int { return x.Merged })
	line("Hallucinated events", func(x TaxonomyRow) int { return x.Hallucinated })
	line("Displaced events", func(x TaxonomyRow) int { return x.Displaced })
	line("Misidentified events", func(x TaxonomyRow) int { return x.Misidentified })
	line("Wrong accumulation", func(x TaxonomyRow) int { return x.WrongAccumulation })
	line("Videos", func(x TaxonomyRow) int { return x.Videos })
	return t
}

func (r *Report) failureTables() (htmlTable, htmlTable) {
	sum := htmlTable{ID: "failures", Head: []string{"Model", "Condition", "Domain", "Failed", "Requests", "Kinds"},
		Caption: "Failed requests (a stored error other than a reply that could not be parsed: no answer to score). They are excluded from every accuracy; an answer whose count could not be parsed is not a failure and is scored incorrect."}
	for _, f := range r.Failures {
		sum.Rows = append(sum.Rows, htmlRow{Cells: []string{f.Model, Condition{f.Policy, f.Labels, f.Prompt}.Label(), DomainTitle(f.Domain), itoa(f.Failed), itoa(f.Total), kinds(f.ByKind)}})
	}
	const show = 20
	list := htmlTable{ID: "failed", Head: []string{"Model", "Condition", "Clip", "Repeat", "Kind", "Attempts", "Error"}}
	for i, f := range r.FailedTrials {
		if i == show {
			list.Note = fmt.Sprintf("%d more in tables/failed_trials.csv.", len(r.FailedTrials)-show)
			break
		}
		list.Rows = append(list.Rows, htmlRow{Cells: []string{f.Model, Condition{f.Policy, f.Labels, f.Prompt}.Label(), f.Clip, itoa(f.Repeat), f.Kind, itoa(f.Attempts), f.Error}})
	}
	return sum, list
}

func (r *Report) costTable() htmlTable {
	t := htmlTable{ID: "cost", Head: []string{"Model", "Condition", "Trials", "Images", "Input Tokens", "Output Tokens", "Total Tokens", "Cost ($USD)", "Mean latency (s)"},
		Caption: "Token usage and cost (Table 10), failed requests included."}
	for _, c := range r.Cost {
		t.Rows = append(t.Rows, htmlRow{Cells: []string{c.Model, Condition{c.Policy, c.Labels, c.Prompt}.Label(), itoa(c.Trials), groupDigits(c.Images),
			groupDigits(c.PromptTokens), groupDigits(c.CompletionTokens), groupDigits(c.TotalTokens), "$" + fix2(c.CostUSD), fix2(c.MeanLatencyMS / 1000)}})
	}
	return t
}

// groupDigits writes n with thousands separators (12240 → "12,240"), as the
// paper's tables do.
func groupDigits(n int) string { return thousands.Sprintf("%d", n) }

// thousands formats numbers the English way.
var thousands = message.NewPrinter(language.English)

// notes are the definitions and choices printed at the foot of the page.
var notes = []string{
	"Acc = I[ŷ = N]; P = K/M (0 when M = 0); R = K/N; F1 = 2PR/(P+R); VOR = M/N; reported events align one-to-one with true events within δ, maximising K, ties by least total deviation (low-frequency-trap §3.2, C.15).",
	"ACR = share of positive-event trials with a correct count and trace F1 < 0.80; RFR = share with a wrong count and F1 ≥ 0.80 (Eq. 4). Trace metrics average positive-event (N > 0) trials; final EM includes the N = 0 controls.",
	"Failed requests (a stored error, except a reply that arrived but could not be parsed) are counted and listed but excluded from every accuracy. An answer without a parseable count is scored incorrect; its timestamps still enter the trace metrics.",
	"Macro Average is the unweighted mean of the domain rows. Part B regions pool domains: low count N ≤ 3, high count N ≥ 5 (N = 4 is in no region), low frequency F ≤ 2.0 Hz, high F ≥ 2.5 Hz; the N = 0 controls fall in low count, low frequency.",
	"Boundaries use the contiguous-prefix rule (Eqs. 5–6): an isolated success after a failure never extends a boundary. Intervention curves average the cell accuracies over the tested frequencies at each N.",
	"Wilson intervals are two-sided 95% score intervals (B.4). Every number on this page is in summary.json; tidy CSV tables are in tables/, figures in figures/.",
	"Objects clips (CountVideoBench: N static objects of one class, a turning camera, no events) are scored on the count alone and appear only in the CountVideoBench section and the failure and cost tables: they have no events, so no trace metric, surface, boundary, region, taxonomy or tolerance applies to them. CountVideoBench's own metrics (§5.2) are defined in that section's caption.",
}

func (r *Report) writeHTML(w io.Writer, images map[string][]byte) error {
	return pageTemplate.Execute(w, r.page(images))
}

// writeCasesHTML writes cases.html, the Cases section's cards: a page of
// its own beside index.html, because its contact sheets are files
// (cases/*.png) rather than embedded images, and many.
func (r *Report) writeCasesHTML(w io.Writer) error {
	pg := r.page(nil)
	pg.Title += " — cases"
	return casesTemplate.Execute(w, pg)
}

// numeric tells whether a cell reads as a number (right-aligned): "12",
// "47.9", "< 1", "−134 at 3", "$0.12", "–".
func numeric(s string) bool {
	for _, p := range []string{"<", "+", "−", "-", "$", "–"} {
		s = strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(s, p)), p)
	}
	return s == "" || s[0] >= '0' && s[0] <= '9'
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{"numeric": numeric}).Parse(`{{define "head"}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
` + pageCSS + `</style>
</head>
<body>
<main>
{{end}}{{template "head" .}}<h1>{{.Title}}</h1>
{{range .Meta}}<p class="meta">{{.}}</p>
{{end}}
<nav>{{range .Models}}<a href="#{{.Anchor}}">{{.Name}}</a>{{end}}{{if .CVB}}<a href="#cvb">CountVideoBench (objects)</a>{{end}}{{if .Natural}}<a href="#natural">Natural videos</a>{{end}}<a href="#cross">Cross-model and paper</a><a href="#cases">Cases</a><a href="#notes">Definitions</a></nav>

<h3>Reliability envelopes</h3>
{{range .Models}}<p class="envelope" id="env-{{.Anchor}}">{{.Envelope}}</p>
{{end}}
{{define "table"}}<table{{if .ID}} id="{{.ID}}"{{end}}>{{if .Caption}}<caption>{{.Caption}}</caption>{{end}}
<thead><tr>{{range .HeadCells}}<th{{if .Left}} class="t"{{end}}>{{.Text}}</th>{{end}}</tr></thead>
<tbody>{{$n := len .Head}}{{range .Rows}}{{if .Section}}<tr class="section{{if .Class}} {{.Class}}{{end}}"><td colspan="{{$n}}">{{.Section}}</td></tr>{{else}}<tr{{if .Class}} class="{{.Class}}"{{end}}>{{range .Cells}}<td{{if not (numeric .)}} class="t"{{end}}>{{.}}</td>{{end}}</tr>{{end}}
{{end}}</tbody></table>
{{if .Note}}<p class="note">{{.Note}}</p>{{end}}{{end}}
{{define "errtable"}}<table{{if .ID}} id="{{.ID}}"{{end}}>{{if .Caption}}<caption>{{.Caption}}</caption>{{end}}
<thead><tr>{{range .HeadCells}}<th{{if .Left}} class="t"{{end}}>{{.Text}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range $i, $c := .Cells}}<td class="{{if eq $i 6}}err{{else if not (numeric $c)}}t{{end}}">{{$c}}</td>{{end}}</tr>
{{end}}</tbody></table>
{{if .Note}}<p class="note">{{.Note}}</p>{{end}}{{end}}
{{range .Models}}
<h2 id="{{.Anchor}}">{{.Name}}</h2>
{{if .Events}}<p class="meta">Baseline condition: {{.Baseline}} · reliability envelope: <a href="#env-{{.Anchor}}">above</a>{{if .Objects}} · objects trials: <a href="#cvb">CountVideoBench section</a>{{end}}{{if .Natural}} · natural videos: <a href="#natural">Natural videos section</a>{{end}}</p>

<h3>Capability surfaces</h3>
<p class="note">Final-answer exact match per (N, F) cell; N = 0 is the no-event control (frequency does not apply). Outlined cells lie inside the count boundary.</p>
{{range .Heatmaps}}<h4>{{.Title}}</h4>
<div class="figs">{{range .Images}}<figure class="heat"><img src="{{.Src}}" alt="{{.File}}"><figcaption>{{.Title}}</figcaption></figure>{{end}}</div>
{{end}}
<h3>Intervention curves</h3>
<div class="figs">{{range .Curves}}<figure class="wide"><img src="{{.Src}}" alt="{{.File}}"><figcaption>{{.Title}}</figcaption></figure>{{end}}</div>

<h3>Table 1</h3>
{{template "table" .Table1}}
<h3>Boundary summaries</h3>
{{template "table" .CountBounds}}
{{template "table" .FreqBounds}}
<h3>Table 4</h3>
{{template "table" .Table4}}
<h3>Table 9</h3>
{{template "table" .Table9}}
<h3>Count distribution</h3>
{{template "table" .Counts}}
<div class="figs">{{range .Histograms}}<figure class="wide"><img src="{{.Src}}" alt="{{.File}}"><figcaption>{{.Title}}</figcaption></figure>{{end}}</div>
{{else if .NaturalOnly}}<p class="meta">Evaluated on natural videos only: see the <a href="#natural">Natural videos section</a>.</p>
{{else}}<p class="meta">Evaluated on objects clips only: see the <a href="#cvb">CountVideoBench section</a>.</p>
{{end}}{{with .Consistency}}<h3>Self-consistency</h3>
{{template "table" .}}{{end}}{{if .Frames}}<h3>Frame principles (TOMATO)</h3>
{{range .FrameFormula}}<p class="formula">{{.}}</p>
{{end}}{{template "table" .Frames}}{{end}}
{{end}}
{{with .CVB}}
<h2 id="cvb">CountVideoBench (objects)</h2>
<p class="note">Static objects of one class under a turning camera (CountVideoBench §4): the answer is the number of objects N, scored on the count alone. The paper's protocol is ten uniformly sampled frames with the bare question (uniform:10 · countvideobench).</p>
{{template "table" .Table}}
<div class="figs">{{range .Curves}}<figure class="wide"><img src="{{.Src}}" alt="{{.File}}"><figcaption>{{.Title}}</figcaption></figure>{{end}}</div>
{{template "table" .Cardinality}}
<h3>Prediction histograms</h3>
<p class="note">How often each integer was predicted (bars; the largest local excess in red, the largest local deficit marked ▲) against the true-count design (dots), as CountVideoBench Fig. 5.</p>
<div class="figs">{{range .Histograms}}<figure class="wide"><img src="{{.Src}}" alt="{{.File}}"><figcaption>{{.Title}}</figcaption></figure>{{end}}</div>
<h3>Objects leaving the view</h3>
{{template "table" .Views}}
{{end}}{{with .Natural}}
<h2 id="natural">Natural videos</h2>
<p class="note">{{.Intro}}</p>
{{template "table" .Bins}}
<p class="note">{{.BinRule}}</p>
<h3>Count measures and trace measures</h3>
{{template "table" .Measures}}
<p class="note">{{.TraceNote}}</p>
<h3>True counts</h3>
{{template "table" .Counts}}
{{end}}

<h2 id="cross">Cross-model</h2>
<h3>Against the paper</h3>
<p class="note">The published Gemini 3.6 Flash results (low-frequency-trap, Table 1 Part A and the count boundaries of §4) beside this study. Where the reference perceiver is in the study, its rows are what the sampled frames allow a frame-by-frame observer; a model below them falls short of its evidence, not of its frames.</p>
{{template "table" .Paper1}}
{{template "table" .PaperB}}
<h3>Table 2</h3>
{{template "table" .Table2}}
<h3>Table 8</h3>
{{template "table" .Table8}}
<h3>Failures</h3>
{{if .Failures.Rows}}{{template "table" .Failures}}{{template "errtable" .Failed}}{{else}}<p class="note">No failed requests.</p>{{end}}{{if .Audit.Rows}}
<h3>Input audit</h3>
{{template "table" .Audit}}{{end}}
<h3>Cost</h3>
{{template "table" .Cost}}

<h2 id="cases">Cases</h2>
{{if .Cases}}<p class="note">Example trials of every outcome class (low-frequency-trap Appendix F), up to three per model × condition, chosen deterministically: {{.CaseCount}} cards on <a href="cases.html">cases.html</a>, each with a contact sheet of exactly the frames the model was shown, its reply with the parsed events marked, and the alignment. Class definitions are in the Definitions section.</p>
{{else}}<p class="note">No scored trial with events.</p>{{end}}

<h2 id="notes">Definitions</h2>
<ul class="notes">{{range .Notes}}<li>{{.}}</li>
{{end}}</ul>
</main>
</body>
</html>
`))

// pageCSS is the style sheet of index.html and cases.html, inline in both.
const pageCSS = `body { font: 14px/1.45 "DejaVu Sans", "Liberation Sans", Arial, sans-serif; color: #1b1f24; margin: 0; background: #fafafa; }
main { max-width: 1320px; margin: 0 auto; padding: 12px 28px 48px; background: #fff; }
h1 { font-size: 24px; margin: 12px 0 4px; }
h2 { font-size: 20px; margin: 36px 0 8px; padding-top: 8px; border-top: 3px solid #253494; }
h3 { font-size: 16px; margin: 22px 0 6px; color: #253494; }
h4 { font-size: 14px; margin: 12px 0 4px; }
.meta { color: #555; margin: 0; }
nav { margin: 10px 0; font-size: 13px; }
nav a { margin-right: 14px; color: #1d5fa8; }
p.envelope { background: #eef4fb; border-left: 4px solid #1d91c0; padding: 10px 14px; margin: 8px 0; max-width: 1100px; }
.figs { display: flex; flex-wrap: wrap; gap: 14px; align-items: flex-start; }
figure { margin: 0; }
figure img { display: block; max-width: 100%; border: 1px solid #ddd; }
figure.heat img { width: 408px; }
figure.wide img { width: 620px; }
figcaption { font-size: 12px; color: #444; margin-top: 2px; }
table { border-collapse: collapse; margin: 6px 0 4px; font-size: 13px; }
caption { caption-side: top; text-align: left; font-size: 12.5px; color: #333; padding-bottom: 4px; max-width: 1100px; }
th, td { padding: 3px 9px; border-bottom: 1px solid #e3e3e3; text-align: right; white-space: nowrap; }
th { background: #f1f3f6; border-bottom: 2px solid #bbb; font-weight: 600; }
th:first-child, td:first-child, td.t, th.t { text-align: left; }
tr.section td { background: #e8ecf3; font-weight: 600; text-align: left; }
tr.family td { background: #f6f7fa; font-style: italic; font-weight: 500; }
tr.sum td { border-top: 1px solid #999; font-weight: 600; }
tr.sel td { background: #fff8e0; }
td.err { white-space: normal; text-align: left; max-width: 520px; }
#cvb-cardinality th { white-space: normal; max-width: 150px; vertical-align: bottom; }
.note { font-size: 12px; color: #666; margin: 0 0 10px; }
.formula { font-family: "DejaVu Sans Mono", monospace; font-size: 12.5px; margin: 2px 0; }
ul.notes { font-size: 12.5px; color: #333; max-width: 1100px; }
div.case { border: 1px solid #ddd; padding: 6px 12px 10px; margin: 10px 0; }
div.case h4 .cls { background: #253494; color: #fff; padding: 1px 6px; border-radius: 3px; font-size: 12px; margin-right: 6px; }
img.sheet { display: block; max-width: 100%; border: 1px solid #ccc; margin: 4px 0; }
div.casebody { display: flex; flex-wrap: wrap; gap: 18px; align-items: flex-start; }
pre.reply { white-space: pre-wrap; font-size: 12px; max-width: 700px; background: #f7f7f9; padding: 8px; margin: 4px 0; }
pre.reply mark { background: #ffe58a; }
pre.reply del { color: #999; }
`

// casesTemplate is cases.html: the Cases section's cards.
var casesTemplate = template.Must(template.Must(pageTemplate.Clone()).New("cases").Parse(`{{template "head" .}}<h1 id="cases">{{.Title}}</h1>
<p class="meta"><a href="index.html">← the report</a> · definitions of the classes: <a href="index.html#notes">Definitions</a></p>
<p class="note">Example trials of every outcome class (low-frequency-trap Appendix F), up to three per model × condition, chosen deterministically (ordered by a hash of clip and repetition). Each card shows exactly the frames the model was shown (true events outlined in red), the final reply with its parsed events marked (struck through: lines kept but not counted as events) and the alignment.</p>
{{range .Cases}}<h2>{{.Title}}</h2>
{{range .Cards}}<div class="case"><h4><span class="cls">{{.Class}}</span> {{.Title}}</h4>
<p class="note">{{.Definition}} {{.Facts}}</p>
{{if .Sheet}}<img class="sheet" src="{{.Sheet}}" alt="{{.Sheet}}">{{else}}<p class="note">{{.SheetNote}}</p>{{end}}
<div class="casebody"><pre class="reply">{{range .Reply}}{{if .Mark}}<mark>{{.Text}}</mark>{{else if .Excluded}}<del>{{.Text}}</del>{{else}}{{.Text}}{{end}}{{end}}</pre>
{{template "table" .Alignment}}</div></div>
{{end}}{{else}}<p class="note">No scored trial with events.</p>{{end}}
</main>
</body>
</html>
`))
