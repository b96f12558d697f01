// Package report turns the trials of one study in the results store into
// the evaluation report: Build scores every trial once and then runs a
// list of section builders (sections.go), each a small function over the
// scored trials that fills its part of the Report (all the arithmetic is
// package score's); Write renders
//
//	index.html    self-contained: inline CSS, figures as base64 data URIs,
//	              no script and no external reference, so it opens offline
//	summary.json  every number the page shows (Report marshalled)
//	tables/*.csv  tidy tables, one record per line, fractions not percent
//	figures/*.png the figures, drawn with gonum.org/v1/plot
//
// every file written atomically (internal/fsutil.WriteFileAtomic).
//
// # What the report holds
//
//   - Capability surfaces (low-frequency-trap Eq. 1, Figure 3): one heatmap
//     per model × condition × domain, positive N across and F up, the
//     accuracy printed in each cell, the N = 0 no-event control as a
//     separate column (frequency does not apply to it), and the region
//     inside the count boundary N*τ(F) outlined.
//   - Intervention curves (Figure 4): exact match against N, averaged over
//     the tested frequencies (the unweighted mean of the cell accuracies at
//     each N), one line per condition, per model × domain.
//   - Table 1 in the paper's layout: Part A by domain with the macro
//     average (the unweighted mean of the domain rows, as the paper's row
//     is), Part B by N × F region pooled over domains, for the model's
//     baseline condition; Part C every condition per domain, in a
//     visual-evidence family (the baseline prompt, policies varied) and a
//     prompting family (the baseline policy, prompts varied). The baseline
//     is native sampling with the structured_trace prompt when the model has
//     it, else its condition with the most scored trials.
//   - Table 4 (Wilson 95% intervals) per condition × domain and pooled;
//     Table 8 (taxonomy, event counts; merged is always 0); Table 9
//     (tolerance sensitivity: δ = 1.0, 0.5, 0.25 s, 1/(2F), plus the
//     selected window if it is another); Table 2's cross-model summary.
//   - Boundary summaries: N*τ(F) per tested frequency, F*τ(N) per tested
//     count, the maximum count boundary and the N = 0 control, per model ×
//     condition × domain (contiguous-prefix rule, §3.3).
//   - Count distributions (CountVideoBench §5.2) per model × condition,
//     pooled over the event domains, with the histogram of predicted counts
//     and its largest local excess and deficit marked.
//   - CountVideoBench (objects domain, summary.json "countvideobench"):
//     per model × condition over the objects trials, EM, Acc@10%,
//     Coverage, MAE, RMSE, |S|, PP and the largest local excess and
//     deficit (Table 2's measures; a measure over no answered trial is
//     null, "–", never 0), the prediction histogram (Fig. 5), EM
//     and Coverage per true count as a table and two figures (Figs. 3–4);
//     the share of the evaluated clips in which some object leaves the view
//     and the mean number that do (trace.SummarizeViews, each clip once,
//     failed trials' clips included) beside the paper's 83.0 % and 3.29;
//     and the figures the paper's text gives for Gemini-3.1-pro, GPT-5.4,
//     its human subjects and the Oracle, each with its section.
//   - Natural videos (low-frequency-trap §7; natural.go, summary.json
//     "natural" and "natural_section"): exact match by count bin per model
//     × condition with Wilson intervals (default bins 0…6, 7–9, 10–14,
//     15–19, 20–29, 30+; Options.NaturalBins), the share exactly one
//     away, RepCount-A's OBO (|ĉ − c| ≤ 1) and normalised MAE (|ĉ − c|/c,
//     clips with c = 0 left out and counted), the absolute MAE, the
//     predicted and true count histograms, trace measures (P, R, F1,
//     VOR) under a fixed window (0.5 s, or a fixed Options.Tolerance)
//     where a clip has a trace of its repetitions, and each model's
//     synthetic exact match in the same bins. Only studies with natural
//     trials have it; the others' output is unchanged.
//   - TOMATO's frame principles (§3) when the matching conditions exist
//     with the same prompt (single:random, single:best, uniform:M,
//     shuffled:M): κ = (A_m − A_1)/A_1, τ = (A_m − A_shuffled)/A_shuffled,
//     ρ = (A_best − A_random)/A_random, each on the clips both of its
//     conditions ran on, per domain and pooled.
//   - A reliability envelope per model: one paragraph stating where its
//     count boundaries let it count reliably under its baseline, where it
//     has no reliable region, its overall exact match and controls, every
//     other condition's maximum count boundary, and its failed requests.
//   - Failures and cost (tokens, USD, latency) per model × condition.
//
// # Objects trials
//
// The report asks package domain what a trial's domain supports, never
// its name. A trial of a count-only domain (domain.Spec.CountOnly: the
// objects clips, static objects and no events; the trace's objects
// section must agree with its domain's truth) is scored on the count
// alone (score.TrialScore.CountOnly). It enters only its own section
// (CountVideoBench for objects, Natural videos for imported natural
// clips, which adds their trace measures), the failure and cost tables,
// the envelope's last sentence (objects) and
// TOMATO's per-domain rows (whose "all" pools the event domains): never a
// surface, boundary, Table 1, 2, 4, 8 or 9 row, region, event count
// distribution or the low-frequency-trap comparison. A model's baseline
// is chosen among its conditions with event-domain trials. The view
// statistics cover the clips of the domains that declare them
// (domain.Spec.ViewStats).
//
// # Failures and unparseable answers
//
// A trial whose Error is set is a failed request unless its ErrorKind is
// results.KindParse (a reply arrived but could not be used): failed
// requests are counted, listed and excluded from every accuracy, since the
// model never answered. Every other trial is an answer, and an answer
// without a parseable count (Count nil) is scored incorrect, the paper's
// rule (§3.3, C.8); its timestamped events, if any, still enter the trace
// metrics. This is results.Trial.Correct's rule.
//
// Parsed events become score reports as they are, except that the
// parser's blink "phase" attribute is the trace's state after the event
// ("after"), so a blink reported "off" is misidentified.
package report
