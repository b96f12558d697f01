package report

import (
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/score"
	"github.com/tracegrid/tracegrid/trace"
)

// input is what the section builders read: the study's trials, scored
// once by collect and grouped.
type input struct {
	tol score.Tolerance
	tau float64
	// groups are the scored answers and failed the failed requests, by
	// model × condition × domain; notApplicable the trials never asked.
	groups        map[rowKey][]*scored
	failed        map[rowKey][]*results.Trial
	notApplicable map[rowKey][]*results.Trial
	// all are every asked trial (answers and failures) by model ×
	// condition, for the cost table.
	all map[rowKey][]*results.Trial
	// views maps each evaluated clip of a domain with view statistics
	// (domain.Spec.ViewStats) to its trace.
	views map[string]*trace.Trace
	// naturalBins are the Natural videos section's bins (Options).
	naturalBins []int
}

// group is one model × condition × domain with trials.
type group struct {
	key    rowKey
	scored []*scored
	failed []*results.Trial
}

// groupsOf lists one model × condition's domains that have trials (scored
// or failed), in the model's domain order.
func (in *input) groupsOf(mi ModelInfo, c Condition) []group {
	var out []group
	for _, d := range mi.Domains {
		k := rowKey{mi.Model, c, d}
		g, f := in.groups[k], in.failed[k]
		if len(g) == 0 && len(f) == 0 {
			continue
		}
		out = append(out, group{k, g, f})
	}
	return out
}

// eventGroupsOf lists, in domain order, one model × condition's event
// domains (not count-only) with scored trials: the rows of
// low-frequency-trap's per-domain tables.
func (in *input) eventGroupsOf(mi ModelInfo, c Condition) []group {
	var out []group
	for _, g := range in.groupsOf(mi, c) {
		if !countOnly(g.key.domain) && len(g.scored) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// pooled is one model × condition's scored event-domain trials, pooled in
// domain order, with their inputs (for re-scoring).
func (in *input) pooled(mi ModelInfo, c Condition) ([]score.Trial, []score.TrialInput) {
	var ts []score.Trial
	var inputs []score.TrialInput
	for _, g := range in.eventGroupsOf(mi, c) {
		ts = append(ts, trialsOf(g.scored)...)
		for _, s := range g.scored {
			inputs = append(inputs, s.input)
		}
	}
	return ts, inputs
}

// eachCondition calls f for every model × condition in the report's
// order: models by name, each model's baseline first, then its other
// conditions.
func (r *Report) eachCondition(f func(mi ModelInfo, c Condition)) {
	for _, mi := range r.Models {
		for _, c := range mi.Conditions {
			f(mi, c)
		}
	}
}

// A section builder fills its part of the Report from the scored trials.
// The builders run in order; one may read what an earlier one filled
// (Macro reads Boundaries; the envelope, the figures and the paper
// comparison read the tables).
type section func(r *Report, in *input) error

// sections are Build's section builders, in order.
var sections = []section{
	buildModels,
	buildSurfaces,
	buildDomains,
	buildWilson,
	buildTaxonomy,
	buildConsistency,
	buildMacro,
	buildRegions,
	buildSensitivity,
	buildCountDistributions,
	buildNatural,
	buildCountVideoBench,
	buildFailures,
	buildCases,
	buildCost,
	buildFramePrinciples,
	buildReliability,
	buildFailedTrials,
	buildInputAudit,
	buildFigures,
	buildPaperReference,
}

// buildModels fills Models (each model's conditions, baseline and
// domains) and DomainNames.
func buildModels(r *Report, in *input) error {
	r.index(in.groups, in.failed)
	return nil
}

// buildSurfaces fills Surfaces (with the n/a cells), Boundaries and Curves
// per model × condition × event domain.
func buildSurfaces(r *Report, in *input) error {
	r.eachCondition(func(mi ModelInfo, c Condition) {
		for _, g := range in.eventGroupsOf(mi, c) {
			ts := trialsOf(g.scored)
			r.addSurface(g.key, ts, in.tau)
			r.addNotApplicable(g.key, ts, in.notApplicable[g.key])
		}
	})
	return nil
}

// buildDomains fills Domains: Table 1 Part A and C rows.
func buildDomains(r *Report, in *input) error {
	r.eachCondition(func(mi ModelInfo, c Condition) {
		for _, g := range in.eventGroupsOf(mi, c) {
			m := metricsOf(score.Summarize(trialsOf(g.scored)))
			row := DomainRow{Model: mi.Model, Policy: c.Policy, Labels: c.Labels, Prompt: c.Prompt, Domain: g.key.domain, Metrics: m, Failed: len(g.failed)}
			for _, s := range g.scored {
				if s.src.Count == nil {
					row.Unparseable++
				}
			}
			r.Domains = append(r.Domains, row)
		}
	})
	return nil
}

// buildWilson fills Wilson (Table 4): per event domain, then "all".
func buildWilson(r *Report, in *input) error {
	add := func(mi ModelInfo, c Condition, d string, ts []score.Trial) {
		m := metricsOf(score.Summarize(ts))
		r.Wilson = append(r.Wilson, WilsonRow{Model: mi.Model, Policy: c.Policy, Labels: c.Labels, Prompt: c.Prompt, Domain: d,
			Correct: m.Correct, Trials: m.Trials, Accuracy: m.EM, Lo: m.EMLo, Hi: m.EMHi})
	}
	r.eachCondition(func(mi ModelInfo, c Condition) {
		for _, g := range in.eventGroupsOf(mi, c) {
			add(mi, c, g.key.domain, trialsOf(g.scored))
		}
		if pooled, _ := in.pooled(mi, c); len(pooled) > 0 {
			add(mi, c, "all", pooled)
		}
	})
	return nil
}

// buildTaxonomy fills Taxonomy (Table 8): per event domain, then "all".
func buildTaxonomy(r *Report, in *input) error {
	r.eachCondition(func(mi ModelInfo, c Condition) {
		for _, g := range in.eventGroupsOf(mi, c) {
			r.Taxonomy = append(r.Taxonomy, taxonomyRow(g.key, score.Summarize(trialsOf(g.scored)).Totals))
		}
		if pooled, _ := in.pooled(mi, c); len(pooled) > 0 {
			r.Taxonomy = append(r.Taxonomy, taxonomyRow(rowKey{mi.Model, c, "all"}, score.Summarize(pooled).Totals))
		}
	})
	return nil
}

// buildConsistency fills Consistency per model × condition × event domain.
func buildConsistency(r *Report, in *input) error {
	r.eachCondition(func(mi ModelInfo, c Condition) {
		for _, g := range in.eventGroupsOf(mi, c) {
			ts := trialsOf(g.scored)
			r.Consistency = append(r.Consistency, consistencyRow(g.key, ts, score.Summarize(ts).EM))
		}
	})
	return nil
}

// buildMacro fills Macro (Table 1 Part A's macro average and Table 2's
// maximum count boundary, read from Boundaries).
func buildMacro(r *Report, in *input) error {
	r.eachCondition(func(mi ModelInfo, c Condition) {
		if pooled, _ := in.pooled(mi, c); len(pooled) == 0 {
			return
		}
		var ms []Metrics
		for _, g := range in.eventGroupsOf(mi, c) {
			ms = append(ms, metricsOf(score.Summarize(trialsOf(g.scored))))
		}
		mr := macroRow(rowKey{mi.Model, c, ""}, ms)
		mr.MaxCountBoundary = maxBoundary(r.boundaryRows(mi.Model, c))
		r.Macro = append(r.Macro, mr)
	})
	return nil
}

// buildRegions fills Regions (Table 1 Part B), pooled over event domains.
func buildRegions(r *Report, in *input) error {
	r.eachCondition(func(mi ModelInfo, c Condition) {
		pooled, _ := in.pooled(mi, c)
		if len(pooled) == 0 {
			return
		}
		for _, g := range score.SummarizeRegions(pooled) {
			r.Regions = append(r.Regions, RegionRow{Model: mi.Model, Policy: c.Policy, Labels: c.Labels, Prompt: c.Prompt, Region: g.Key, Metrics: metricsOf(g.Summary)})
		}
	})
	return nil
}

// buildSensitivity fills Sensitivity (Table 9) by re-scoring each model ×
// condition's event-domain trials under the paper's windows.
func buildSensitivity(r *Report, in *input) error {
	for _, mi := range r.Models {
		for _, c := range mi.Conditions {
			pooled, inputs := in.pooled(mi, c)
			if len(pooled) == 0 {
				continue
			}
			if err := r.addSensitivity(rowKey{mi.Model, c, ""}, inputs, in.tol); err != nil {
				return err
			}
		}
	}
	return nil
}

// buildCountDistributions fills CountDistributions, pooled over the event
// domains.
func buildCountDistributions(r *Report, in *input) error {
	r.eachCondition(func(mi ModelInfo, c Condition) {
		if pooled, _ := in.pooled(mi, c); len(pooled) > 0 {
			r.CountDistributions = append(r.CountDistributions, countRow(rowKey{mi.Model, c, ""}, pooled))
		}
	})
	return nil
}

// buildCountVideoBench fills the CountVideoBench section: the measures of
// each model × condition over its count-only trials, the view statistics
// of the evaluated clips (trace.SummarizeViews, each clip once) and the
// paper's reference figures.
func buildCountVideoBench(r *Report, in *input) error {
	cvb := &r.CountVideoBench
	r.eachCondition(func(mi ModelInfo, c Condition) {
		for _, g := range in.groupsOf(mi, c) {
			// Natural videos have a section of their own (buildNatural).
			if countOnly(g.key.domain) && !naturalDomain(g.key.domain) && len(g.scored) > 0 {
				cvb.Rows = append(cvb.Rows, countRow(rowKey{mi.Model, c, ""}, trialsOf(g.scored)))
			}
		}
	})
	if cvb.Rows == nil {
		cvb.Rows = []CountRow{}
	}
	trs := make([]*trace.Trace, 0, len(in.views))
	for _, id := range sortedStrings(in.views) {
		trs = append(trs, in.views[id])
	}
	cvb.Views = trace.SummarizeViews(trs)
	cvb.PaperShareLeaving, cvb.PaperMeanLeaving = trace.PaperShareLeaving, trace.PaperMeanLeaving
	cvb.Reference = CVBReference
	return nil
}

// buildFailures fills Failures per model × condition × domain (count-only
// domains too).
func buildFailures(r *Report, in *input) error {
	r.eachCondition(func(mi ModelInfo, c Condition) {
		for _, g := range in.groupsOf(mi, c) {
			if len(g.failed) > 0 {
				r.Failures = append(r.Failures, failureRow(g.key, g.failed, len(g.scored)))
			}
		}
	})
	return nil
}

// buildCases fills Cases: example event-domain trials of every outcome
// class per model × condition.
func buildCases(r *Report, in *input) error {
	r.eachCondition(func(mi ModelInfo, c Condition) {
		var events []*scored
		for _, g := range in.eventGroupsOf(mi, c) {
			events = append(events, g.scored...)
		}
		r.addCases(rowKey{mi.Model, c, ""}, events)
	})
	return nil
}

// buildCost fills Cost per model × condition, failed trials included.
func buildCost(r *Report, in *input) error {
	r.eachCondition(func(mi ModelInfo, c Condition) {
		mc := rowKey{mi.Model, c, ""}
		r.Cost = append(r.Cost, costRow(mc, in.all[mc]))
	})
	return nil
}

// buildFramePrinciples fills FramePrinciples (TOMATO) per model.
func buildFramePrinciples(r *Report, in *input) error {
	for _, mi := range r.Models {
		r.addFramePrinciples(mi, in.groups)
	}
	return nil
}

// buildReliability fills Reliability: each model's envelope, read from the
// tables above.
func buildReliability(r *Report, _ *input) error {
	for _, mi := range r.Models {
		r.Reliability = append(r.Reliability, Envelope{Model: mi.Model, Text: r.envelope(mi)})
	}
	return nil
}

// buildFailedTrials fills FailedTrials, one per failed request.
func buildFailedTrials(r *Report, in *input) error {
	for _, k := range sortedKeys(in.failed) {
		for _, t := range in.failed[k] {
			r.FailedTrials = append(r.FailedTrials, FailedTrial{Model: t.Model, Policy: t.Policy, Labels: trialLabels(t), Prompt: t.Prompt, Domain: t.Domain,
				Clip: t.Clip, Repeat: t.Repeat, Kind: t.ErrorKind, Error: t.Error, Attempts: t.Attempts})
		}
	}
	return nil
}

// buildFigures names every figure (planFigures); Write draws them.
func buildFigures(r *Report, _ *input) error {
	r.planFigures()
	return nil
}

// buildPaperReference fills PaperReference: the published numbers beside
// the study's.
func buildPaperReference(r *Report, _ *input) error {
	r.PaperReference = r.paperComparison()
	return nil
}
