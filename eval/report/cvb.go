package report

import (
	"fmt"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/tracegrid/tracegrid/eval/score"
)

// CountVideoBench's published figures, as its text states them. The
// paper's Table 2 is not in the text we quote, so only the numbers the
// prose gives are here, each with its section; a nil field is one the text
// does not give. All models saw ten uniformly sampled frames per video
// with one prompt (§5.1), as the countvideobench prompt with uniform:10
// reproduces.

// CVBReferenceRow is one line of the "against CountVideoBench" block.
// Percentages are as printed (27.6 means 27.6 %).
type CVBReferenceRow struct {
	Who        string              `json:"who"`
	Videos     int                 `json:"videos"`
	EMPercent  *float64            `json:"em_percent,omitempty"`
	Acc10      *float64            `json:"acc10_percent,omitempty"`
	Support    *int                `json:"support,omitempty"`
	Perplexity *float64            `json:"perplexity,omitempty"`
	Excess     *score.LocalExtreme `json:"excess,omitempty"`
	Deficit    *score.LocalExtreme `json:"deficit,omitempty"`
	Source     string              `json:"source"`
}

func fp(v float64) *float64 { return &v }
func ip(v int) *int         { return &v }

// CVBReference are the rows of the block. The benchmark has 2,600 videos
// (§4.2); the humans saw a 104-video subset.
var CVBReference = []CVBReferenceRow{
	{Who: "Gemini-3.1-pro (paper)", Videos: 2600, EMPercent: fp(27.6), Support: ip(55), Perplexity: fp(38.9),
		Excess:  &score.LocalExtreme{Value: 36, Amount: 53, Defined: true},
		Deficit: &score.LocalExtreme{Value: 27, Amount: 57, Defined: true},
		Source:  "CountVideoBench §6.1 (EM), §6.3 (|S|, PP, local excess and deficit)"},
	{Who: "GPT-5.4 (paper)", Videos: 2600, EMPercent: fp(25.7), Acc10: fp(70.5), Support: ip(48), Perplexity: fp(30.6),
		Excess:  &score.LocalExtreme{Value: 39, Amount: 126, Defined: true},
		Deficit: &score.LocalExtreme{Value: 30, Amount: 114, Defined: true},
		Source:  "CountVideoBench §6.1 (EM, Acc@10%), §6.3 (|S|, PP, local excess and deficit)"},
	{Who: "Humans (paper, the same ten frames)", Videos: 104, EMPercent: fp(90.8),
		Source: "CountVideoBench §6.1 (twenty participants, mean EM on a 104-video subset)"},
	{Who: "Oracle (paper, exact everywhere)", Videos: 2600, Support: ip(26), Perplexity: fp(26),
		Source: "CountVideoBench §6.3"},
}

// Figure kinds of the CountVideoBench section: EM and Coverage against the
// true count, one line per model × condition (CVB Figs. 4 and 3).
const (
	KindCardinalityEM       = "cardinality_em"
	KindCardinalityCoverage = "cardinality_coverage"
)

// cvbHead are the columns of the section's main table (CVB Table 2).
var cvbHead = []string{"Model · condition", "Trials", "EM (%)", "Acc@10% (%)", "Coverage (%)", "MAE", "RMSE", "|S|", "PP", "Max. local excess", "Max. local deficit"}

// extreme prints the largest local excess (sign "+") or deficit ("−")
// with its value: "+126 at 39", "−114 at 30". "none" when no predicted
// value stands above all four neighbours (excess ≤ 0) or sits in a valley
// (deficit ≤ 0); "–" when nothing was answered.
func extreme(e score.LocalExtreme, sign string) string {
	switch {
	case !e.Defined:
		return "–"
	case e.Amount <= 0:
		return "none"
	}
	return fmt.Sprintf("%s%d at %d", sign, e.Amount, e.Value)
}

// cvbTable is the study's objects rows, then the paper's figures.
func (r *Report) cvbTable() htmlTable {
	t := htmlTable{ID: "cvb-table2", Head: cvbHead,
		Caption: "CountVideoBench measures (§5.2, Table 2) over the objects trials of each model × condition: EM and Acc@10% over all scored trials (an answer without a number is wrong), Coverage = answered/trials, MAE and RMSE over answered trials (– when none was), |S| distinct predicted values, PP = exp(entropy) with non-responses pooled as one outcome; the largest local excess and deficit of the prediction histogram with the value where they occur.",
		Note:    "Every number of the paper rows is from its text (Table 2 is not quoted); – : not given there. Local deficits are printed as the amount below the flanking peaks (the paper writes −114 for GPT-5.4's)."}
	t.Rows = append(t.Rows, htmlRow{Section: "This study"})
	for _, c := range r.CountVideoBench.Rows {
		t.Rows = append(t.Rows, htmlRow{Cells: []string{c.Model + " · " + Condition{c.Policy, c.Labels, c.Prompt}.Label(), itoa(c.Trials), pct1(c.EM), pct1(c.Acc10),
			pct1(c.Coverage), fix2p(c.MAE), fix2p(c.RMSE), itoa(c.Support), fix2(c.Perplexity), extreme(c.Excess, "+"), extreme(c.Deficit, "−")}})
	}
	t.Rows = append(t.Rows, htmlRow{Section: "Against CountVideoBench (ten uniform frames, one prompt, §5.1)"})
	for _, p := range r.CountVideoBench.Reference {
		opt := func(v *float64, f func(float64) string) string {
			if v == nil {
				return "–"
			}
			return f(*v)
		}
		ext := func(e *score.LocalExtreme, sign string) string {
			if e == nil {
				return "–"
			}
			return extreme(*e, sign)
		}
		support := "–"
		if p.Support != nil {
			support = itoa(*p.Support)
		}
		t.Rows = append(t.Rows, htmlRow{Class: "sel", Cells: []string{p.Who, groupDigits(p.Videos), opt(p.EMPercent, printed), opt(p.Acc10, printed),
			"–", "–", "–", support, opt(p.Perplexity, printed), ext(p.Excess, "+"), ext(p.Deficit, "−")}})
	}
	return t
}

// cvbCardinalities lists the true counts of the section's rows, ascending.
func (r *Report) cvbCardinalities() []int {
	seen := map[int]bool{}
	var ns []int
	for _, c := range r.CountVideoBench.Rows {
		for _, b := range c.ByCardinality {
			if !seen[b.N] {
				seen[b.N] = true
				ns = append(ns, b.N)
			}
		}
	}
	sort.Ints(ns)
	return ns
}

// cardinalityTable is EM and Coverage at every true count (CVB Figs. 3–4
// as numbers), two columns per model × condition.
func (r *Report) cardinalityTable() htmlTable {
	t := htmlTable{ID: "cvb-cardinality", Head: []string{"N"},
		Caption: "EM and Coverage by true count N (CountVideoBench §6.2, Figs. 3–4) over the objects trials; trial counts are in tables/cvb_by_cardinality.csv."}
	for _, c := range r.CountVideoBench.Rows {
		l := c.Model + " · " + Condition{c.Policy, c.Labels, c.Prompt}.Label()
		t.Head = append(t.Head, l+" EM (%)", l+" Coverage (%)")
	}
	for _, n := range r.cvbCardinalities() {
		row := []string{itoa(n)}
		for _, c := range r.CountVideoBench.Rows {
			em, cov := "–", "–"
			for _, b := range c.ByCardinality {
				if b.N == n {
					em, cov = pct1(b.EM), pct1(b.Coverage)
				}
			}
			row = append(row, em, cov)
		}
		t.Rows = append(t.Rows, htmlRow{Cells: row})
	}
	return t
}

// viewsTable is the evaluated clips' view statistics beside the paper's.
func (r *Report) viewsTable() htmlTable {
	v := r.CountVideoBench.Views
	return htmlTable{ID: "cvb-views", Head: []string{"Clips", "Number", "Some object leaves the view (%)", "Mean objects leaving the view"},
		Caption: "Objects that leave the camera's view in some frame (from each clip's trace, every clip once): no single frame need show all N, so counting integrates partial views (CountVideoBench §4.3).",
		Rows: []htmlRow{
			{Cells: []string{"This study's objects clips", groupDigits(v.Clips), pct1(v.Share), fix2(v.MeanLeaving)}},
			{Class: "sel", Cells: []string{"CountVideoBench (§4.3)", groupDigits(2600), printed(100 * r.CountVideoBench.PaperShareLeaving), fix2(r.CountVideoBench.PaperMeanLeaving)}},
		}}
}

// cardinalityPlot draws EM or Coverage against the true count, one line
// per model × condition (CVB Figs. 3–4).
func (r *Report) cardinalityPlot(f Figure) (*plot.Plot, *plot.Legend, vg.Length, vg.Length, error) {
	p := newPlot(f.Title)
	p.X.Label.Text = "true count N"
	p.Y.Label.Text = "exact match"
	if f.Kind == KindCardinalityCoverage {
		p.Y.Label.Text = "coverage (answered share)"
	}
	p.Y.Min, p.Y.Max = 0, 1.02
	p.Add(plotter.NewGrid())
	leg := plot.NewLegend()
	leg.TextStyle.Font.Variant = "Sans"
	leg.TextStyle.Font.Size = vg.Points(9)
	leg.Top = true
	for i, c := range r.CountVideoBench.Rows {
		pts := make(plotter.XYs, len(c.ByCardinality))
		for j, b := range c.ByCardinality {
			y := b.EM
			if f.Kind == KindCardinalityCoverage {
				y = b.Coverage
			}
			pts[j] = plotter.XY{X: float64(b.N), Y: y}
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, nil, 0, 0, err
		}
		l.Color, s.Color = plotutil.Color(i), plotutil.Color(i)
		l.Width = vg.Points(1.4)
		s.Shape = plotutil.Shape(i)
		s.Radius = vg.Points(2.6)
		p.Add(l, s)
		leg.Add(c.Model+" · "+Condition{c.Policy, c.Labels, c.Prompt}.Label(), l, s)
	}
	ns := r.cvbCardinalities()
	var ticks []plot.Tick
	for _, n := range ns {
		// Every cardinality gets a grid position; label the anchors and the
		// ends so the 26 values of the benchmark stay legible.
		label := ""
		if n%5 == 0 || len(ns) <= 12 || n == ns[0] || n == ns[len(ns)-1] {
			label = strconv.Itoa(n)
		}
		ticks = append(ticks, plot.Tick{Value: float64(n), Label: label})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	if len(ns) > 0 {
		p.X.Min, p.X.Max = float64(ns[0])-1, float64(ns[len(ns)-1])+1
	}
	p.Y.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 0.2, Label: "0.2"}, {Value: 0.4, Label: "0.4"},
		{Value: 0.6, Label: "0.6"}, {Value: 0.8, Label: "0.8"}, {Value: 1, Label: "1.0"}})
	return p, &leg, 7.6 * vg.Inch, 3.6 * vg.Inch, nil
}
