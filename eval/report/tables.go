package report

import (
	"encoding/csv"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/tracegrid/tracegrid/eval/score"
)

// Table is one CSV table: tidy, one record per line, fractions not
// percentages, full float precision.
type Table struct {
	Name   string // file name under tables/
	Header []string
	Rows   [][]string
}

// WriteCSV writes the table with its header.
func (t Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.Header); err != nil {
		return err
	}
	if err := cw.WriteAll(t.Rows); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

func f64(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
func itoa(n int) string    { return strconv.Itoa(n) }
func btoa(b bool) string   { return strconv.FormatBool(b) }

// f64p is an optional measure's cell: empty when it is undefined (nil),
// never 0.
func f64p(x *float64) string {
	if x == nil {
		return ""
	}
	return f64(*x)
}

var metricHeader = []string{"trials", "correct", "em", "em_lo", "em_hi", "eligible", "vor", "precision", "recall", "f1", "acr", "rfr"}

func (m Metrics) cells() []string {
	return []string{itoa(m.Trials), itoa(m.Correct), f64(m.EM), f64(m.EMLo), f64(m.EMHi), itoa(m.Eligible),
		f64p(m.VOR), f64p(m.Precision), f64p(m.Recall), f64p(m.F1), f64p(m.ACR), f64p(m.RFR)}
}

func cat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// Tables returns every CSV table of the report.
func (r *Report) Tables() []Table {
	mc := []string{"model", "policy", "labels", "prompt"}
	mcd := []string{"model", "policy", "labels", "prompt", "domain"}
	var ts []Table

	t := Table{Name: "surfaces.csv", Header: cat(mcd, []string{"n", "f", "trials", "correct", "accuracy", "wilson_lo", "wilson_hi", "reliable", "not_applicable"})}
	for _, c := range r.Surfaces {
		if c.NotApplicable {
			// No trial: every measure is empty, not 0.
			t.Rows = append(t.Rows, []string{c.Model, c.Policy, c.Labels, c.Prompt, c.Domain, itoa(c.N), f64(c.F), "0", "", "", "", "", "", "true"})
			continue
		}
		t.Rows = append(t.Rows, []string{c.Model, c.Policy, c.Labels, c.Prompt, c.Domain, itoa(c.N), f64(c.F), itoa(c.Trials), itoa(c.Correct),
			f64(c.Accuracy), f64(c.WilsonLo), f64(c.WilsonHi), btoa(c.Reliable), "false"})
	}
	ts = append(ts, t)

	t = Table{Name: "table1_domains.csv", Header: cat(mcd, metricHeader, []string{"unparseable", "failed"})}
	for _, d := range r.Domains {
		t.Rows = append(t.Rows, cat([]string{d.Model, d.Policy, d.Labels, d.Prompt, d.Domain}, d.Metrics.cells(), []string{itoa(d.Unparseable), itoa(d.Failed)}))
	}
	ts = append(ts, t)

	t = Table{Name: "table1_macro.csv", Header: cat(mc, []string{"domains", "em", "vor", "precision", "recall", "f1", "acr", "rfr"})}
	for _, m := range r.Macro {
		t.Rows = append(t.Rows, []string{m.Model, m.Policy, m.Labels, m.Prompt, itoa(m.Domains), f64(m.EM), f64p(m.VOR), f64p(m.Precision),
			f64p(m.Recall), f64p(m.F1), f64p(m.ACR), f64p(m.RFR)})
	}
	ts = append(ts, t)

	t = Table{Name: "table1_regions.csv", Header: cat(mc, []string{"region"}, metricHeader)}
	for _, g := range r.Regions {
		t.Rows = append(t.Rows, cat([]string{g.Model, g.Policy, g.Labels, g.Prompt, g.Region}, g.Metrics.cells()))
	}
	ts = append(ts, t)

	t = Table{Name: "table4_wilson.csv", Header: cat(mcd, []string{"correct", "trials", "accuracy", "lo", "hi"})}
	for _, w := range r.Wilson {
		t.Rows = append(t.Rows, []string{w.Model, w.Policy, w.Labels, w.Prompt, w.Domain, itoa(w.Correct), itoa(w.Trials), f64(w.Accuracy), f64(w.Lo), f64(w.Hi)})
	}
	ts = append(ts, t)

	t = Table{Name: "table8_taxonomy.csv", Header: cat(mcd, []string{"true_events", "reported", "matched", "missed", "merged", "hallucinated",
		"displaced", "misidentified", "wrong_accumulation", "videos"})}
	for _, x := range r.Taxonomy {
		t.Rows = append(t.Rows, []string{x.Model, x.Policy, x.Labels, x.Prompt, x.Domain, itoa(x.TrueEvents), itoa(x.Reported), itoa(x.Matched),
			itoa(x.Missed), itoa(x.Merged), itoa(x.Hallucinated), itoa(x.Displaced), itoa(x.Misidentified), itoa(x.WrongAccumulation), itoa(x.Videos)})
	}
	ts = append(ts, t)

	t = Table{Name: "table9_sensitivity.csv", Header: cat(mc, []string{"tolerance", "label", "selected"}, metricHeader)}
	for _, s := range r.Sensitivity {
		t.Rows = append(t.Rows, cat([]string{s.Model, s.Policy, s.Labels, s.Prompt, s.Tolerance, s.Label, btoa(s.Selected)}, s.Metrics.cells()))
	}
	ts = append(ts, t)

	cb := Table{Name: "boundaries_count.csv", Header: cat(mcd, []string{"tau", "f", "value", "below", "label"})}
	fb := Table{Name: "boundaries_frequency.csv", Header: cat(mcd, []string{"tau", "n", "value", "below", "label"})}
	bs := Table{Name: "boundaries_summary.csv", Header: cat(mcd, []string{"tau", "max_count_value", "max_count_below", "max_count_label",
		"control_trials", "control_correct", "control_accuracy"})}
	for _, b := range r.Boundaries {
		key := []string{b.Model, b.Policy, b.Labels, b.Prompt, b.Domain, f64(b.Tau)}
		for _, c := range b.Count {
			cb.Rows = append(cb.Rows, cat(key, []string{f64(c.F), f64(c.Value), btoa(c.Below), c.Label}))
		}
		for _, c := range b.Frequency {
			fb.Rows = append(fb.Rows, cat(key, []string{itoa(c.N), f64(c.Value), btoa(c.Below), c.Label}))
		}
		ctl := []string{"0", "0", ""}
		if b.Control != nil {
			ctl = []string{itoa(b.Control.Trials), itoa(b.Control.Correct), f64(b.Control.Accuracy)}
		}
		bs.Rows = append(bs.Rows, cat(key, []string{f64(b.MaxCount.Value), btoa(b.MaxCount.Below), b.MaxCount.Label}, ctl))
	}
	ts = append(ts, cb, fb, bs)

	t = Table{Name: "curves.csv", Header: cat(mcd, []string{"n", "cells", "trials", "correct", "accuracy"})}
	for _, p := range r.Curves {
		t.Rows = append(t.Rows, []string{p.Model, p.Policy, p.Labels, p.Prompt, p.Domain, itoa(p.N), itoa(p.Cells), itoa(p.Trials), itoa(p.Correct), f64(p.Accuracy)})
	}
	ts = append(ts, t)

	// Count distributions: the event domains pooled (count_*), and the
	// objects trials (cvb_*), in the same layout.
	ts = append(ts, countTables("count", r.CountDistributions)...)
	ts = append(ts, countTables("cvb", r.CountVideoBench.Rows)...)
	v := r.CountVideoBench.Views
	ts = append(ts, Table{Name: "cvb_views.csv", Header: []string{"clips", "with_leaving", "share", "mean_leaving", "paper_share", "paper_mean_leaving"},
		Rows: [][]string{{itoa(v.Clips), itoa(v.WithLeaving), f64(v.Share), f64(v.MeanLeaving),
			f64(r.CountVideoBench.PaperShareLeaving), f64(r.CountVideoBench.PaperMeanLeaving)}}})
	t = Table{Name: "cvb_reference.csv", Header: []string{"who", "videos", "em_percent", "acc10_percent", "support", "perplexity",
		"excess_value", "excess_amount", "deficit_value", "deficit_amount", "source"}}
	for _, p := range r.CountVideoBench.Reference {
		optF := func(v *float64) string {
			if v == nil {
				return ""
			}
			return f64(*v)
		}
		support := ""
		if p.Support != nil {
			support = itoa(*p.Support)
		}
		optE := func(e *score.LocalExtreme) []string {
			if e == nil {
				return []string{"", ""}
			}
			return extremeCells(*e)
		}
		t.Rows = append(t.Rows, cat([]string{p.Who, itoa(p.Videos), optF(p.EMPercent), optF(p.Acc10), support, optF(p.Perplexity)},
			optE(p.Excess), optE(p.Deficit), []string{p.Source}))
	}
	ts = append(ts, t)

	t = Table{Name: "frame_principles.csv", Header: []string{"model", "labels", "prompt", "domain", "measure", "symbol", "m", "clips",
		"from_policy", "from_trials", "from_correct", "from_accuracy", "to_policy", "to_trials", "to_correct", "to_accuracy", "value", "defined"}}
	for _, f := range r.FramePrinciples {
		t.Rows = append(t.Rows, []string{f.Model, f.Labels, f.Prompt, f.Domain, f.Measure, f.Symbol, itoa(f.M), itoa(f.Clips),
			f.From.Policy, itoa(f.From.Trials), itoa(f.From.Correct), f64(f.From.Accuracy),
			f.To.Policy, itoa(f.To.Trials), itoa(f.To.Correct), f64(f.To.Accuracy), f64(f.Value), btoa(f.Defined)})
	}
	ts = append(ts, t)

	t = Table{Name: "failures.csv", Header: cat(mcd, []string{"failed", "total", "by_kind"})}
	for _, f := range r.Failures {
		t.Rows = append(t.Rows, []string{f.Model, f.Policy, f.Labels, f.Prompt, f.Domain, itoa(f.Failed), itoa(f.Total), kinds(f.ByKind)})
	}
	ts = append(ts, t)

	t = Table{Name: "failed_trials.csv", Header: cat(mcd, []string{"clip", "repeat", "kind", "attempts", "error"})}
	for _, f := range r.FailedTrials {
		t.Rows = append(t.Rows, []string{f.Model, f.Policy, f.Labels, f.Prompt, f.Domain, f.Clip, itoa(f.Repeat), f.Kind, itoa(f.Attempts), f.Error})
	}
	ts = append(ts, t)

	t = Table{Name: "cost.csv", Header: cat(mc, []string{"trials", "images", "prompt_tokens", "completion_tokens", "total_tokens", "cost_usd", "mean_latency_ms"})}
	for _, c := range r.Cost {
		t.Rows = append(t.Rows, []string{c.Model, c.Policy, c.Labels, c.Prompt, itoa(c.Trials), itoa(c.Images), itoa(c.PromptTokens), itoa(c.CompletionTokens),
			itoa(c.TotalTokens), f64(c.CostUSD), f64(c.MeanLatencyMS)})
	}
	ts = append(ts, t)

	t = Table{Name: "consistency.csv", Header: cat(mcd, []string{"trials", "accuracy",
		"running_agree", "running_disagree", "running_no_ledger", "running_unparseable", "running_disagree_rate", "running_lo", "running_hi",
		"listed_agree", "listed_disagree", "listed_no_ledger", "listed_unparseable", "listed_disagree_rate", "listed_lo", "listed_hi"})}
	for _, c := range r.Consistency {
		check := func(k score.CheckStats) []string {
			return []string{itoa(k.Agree), itoa(k.Disagree), itoa(k.NoLedger), itoa(k.Unparseable), f64(k.DisagreeRate), f64(k.Interval.Lo), f64(k.Interval.Hi)}
		}
		t.Rows = append(t.Rows, cat([]string{c.Model, c.Policy, c.Labels, c.Prompt, c.Domain, itoa(c.Trials), f64(c.Accuracy)}, check(c.Running), check(c.Listed)))
	}
	ts = append(ts, t)

	t = Table{Name: "cases.csv", Header: []string{"class", "model", "policy", "labels", "prompt", "clip", "repeat", "sheet"}}
	for _, c := range r.Cases {
		t.Rows = append(t.Rows, []string{string(c.Class), c.Model, c.Policy, c.Labels, c.Prompt, c.Clip, itoa(c.Repeat), c.Sheet})
	}
	ts = append(ts, t)

	t = Table{Name: "reliability.csv", Header: []string{"model", "text"}}
	for _, e := range r.Reliability {
		t.Rows = append(t.Rows, []string{e.Model, e.Text})
	}
	ts = append(ts, t)
	// The Natural videos section's tables, only when it has rows.
	ts = append(ts, r.naturalTables()...)
	return ts
}

// extremeCells are a local excess or deficit as value, amount; empty when
// undefined (nothing answered).
func extremeCells(e score.LocalExtreme) []string {
	if !e.Defined {
		return []string{"", ""}
	}
	return []string{itoa(e.Value), itoa(e.Amount)}
}

// countTables are the CSV tables of count-distribution rows:
// <prefix>_distribution.csv (one line per model × condition),
// <prefix>_histogram.csv and <prefix>_by_cardinality.csv.
func countTables(prefix string, rows []CountRow) []Table {
	mc := []string{"model", "policy", "labels", "prompt"}
	cd := Table{Name: prefix + "_distribution.csv", Header: cat(mc, []string{"trials", "answered", "abstentions", "em", "acc10", "coverage", "mae", "rmse",
		"support", "perplexity", "perplexity_answered", "excess_value", "excess_amount", "deficit_value", "deficit_amount", "top3_share"})}
	ch := Table{Name: prefix + "_histogram.csv", Header: cat(mc, []string{"value", "count"})}
	cc := Table{Name: prefix + "_by_cardinality.csv", Header: cat(mc, []string{"n", "trials", "answered", "correct", "em", "coverage"})}
	for _, c := range rows {
		key := []string{c.Model, c.Policy, c.Labels, c.Prompt}
		cd.Rows = append(cd.Rows, cat(key, []string{itoa(c.Trials), itoa(c.Answered), itoa(c.Abstentions), f64(c.EM), f64(c.Acc10), f64(c.Coverage),
			f64p(c.MAE), f64p(c.RMSE), itoa(c.Support), f64(c.Perplexity), f64p(c.PerplexityAnswered)},
			extremeCells(c.Excess), extremeCells(c.Deficit), []string{f64(c.Top3Share)}))
		for _, b := range c.Histogram {
			ch.Rows = append(ch.Rows, cat(key, []string{itoa(b.Value), itoa(b.Count)}))
		}
		for _, b := range c.ByCardinality {
			cc.Rows = append(cc.Rows, cat(key, []string{itoa(b.N), itoa(b.Trials), itoa(b.Answered), itoa(b.Correct), f64(b.EM), f64(b.Coverage)}))
		}
	}
	return []Table{cd, ch, cc}
}

// kinds formats a by-kind count map as "kind=n; kind=n", sorted by kind.
func kinds(m map[string]int) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for i, k := range ks {
		ks[i] = k + "=" + itoa(m[k])
	}
	return strings.Join(ks, "; ")
}
