// Package score is trace-grounded scoring: it aligns the events a model
// reported with the executable trace of a clip, scores the final answer and
// the trace, classifies errors, and aggregates trials into the summaries,
// capability surfaces, boundaries and sensitivity tables of
// low-frequency-trap ("LFT" below); it also holds the count-distribution
// metrics of CountVideoBench ("CVB") and the frame principles of TOMATO.
// It is pure Go over packages trace and domain (and parse's exclusion
// rule) and imports nothing else of the project: callers convert parsed
// responses into Report values. What a clip's domain supports (count-only
// scoring) is asked of package domain, never read from its name.
//
// # Alignment (LFT §3.2, C.15)
//
// Reported events are matched one-to-one with true events when
// |t_report − t_true| ≤ δ, choosing the matching with the most pairs K and,
// among those, the least total |deviation| — exactly, by an O(N·M) DP whose
// proof is on alignSorted. δ is fixed seconds or rate-relative
// δ(F) = 1/(2F) (Tolerance). Comparisons carry a 1 ns slack so that a report
// exactly on a rate-relative midpoint matches despite float rounding, and
// totals within 1 ns tie. Ties resolve toward earlier events (see Align).
//
// # Reported events (issue 11)
//
// Only reports that are events of the clip's domain are reported events.
// A report is excluded when Report.Excluded is set (the parser's
// parse.Event.Excluded, carried by FromParsed) or, for reports stored
// without that field, when its attributes say so (Exclusion, the parser's
// rule parse.ExclusionReason): blinking "after" = off (the lamp turning
// off is not an on-pulse) and state_machine from = to (no transition).
// Excluded reports are left out of M, the alignment, P, R, F1, VOR, the
// taxonomy, ACR, RFR and the outcome; TrialScore.Excluded and
// ExcludedReports list them and Totals.Excluded sums them. Pair.Report
// still indexes the reports as given.
//
// # Per-trial metrics (LFT §3.2 Eq. 3)
//
//	Acc = I[ŷ = N]     (an unparseable answer, Count == nil, is incorrect; §3.3)
//	P   = K/M          (0 when M = 0)
//	R   = K/N
//	F1  = 2PR/(P+R) = 2K/(M+N)   (0 when M = 0 or K = 0)
//	VOR = M/N
//
// A trial is Eligible when N > 0. N = 0 controls enter only final-answer
// accuracy; their R, F1 and VOR are set to 0 (undefined in the paper) and
// never averaged.
//
// # Static-object clips (CVB §4–§5)
//
// A trace of a count-only domain (domain.Spec.CountOnly; today domain
// objects: N static objects, F = 0, no events) is scored on the count
// alone: Correct = I[ŷ = N], CountOnly is set, M is the number of
// reported events (a ledger of objects, if the prompt asked for one), and
// K, P, R, F1, VOR, the pairs and the taxonomy are 0. A trace has an
// objects section exactly when its domain's truth is objects
// (domain.TruthObjects); otherwise ScoreTrial returns ErrTrace. It is never Eligible, so it enters EM but no trace ratio, ACR,
// RFR or Totals, and the tolerance (validated, but rate-relative δ needs
// F > 0) is not applied. An unparseable answer (Count nil) is incorrect
// and, in CountDistribution, a non-response (Coverage).
//
// # Taxonomy (LFT Table 7, C.16)
//
// Matched = K, Missed = N − K, Hallucinated = M − K: a misidentified event
// still counts as matched, because Table 8's Gemini column has
// matched + missed = true events (3,907 + 8,333 = 12,240) and its recall
// (~31%) matches matched/true, not (matched − misidentified)/true.
// Misidentified: a matched pair whose report states an attribute that the
// true event makes available with a different value. Available attributes
// are the event's Attrs ("wall" for bounce_ball; "from", "to" for
// state_machine) plus "before" and "after" (s⁻, s⁺: for blinking after is
// "on", the blink phase). Keys and values compare case-insensitively after
// trimming; a report that states nothing, or only keys the truth lacks, is
// never misidentified. Since an "off" report is excluded (above), a blink
// can no longer be misidentified by its phase.
//
// Displaced (DisplacedRule; Table 7/8 define it as an order-aligned report
// whose timestamp is outside the tolerance, without an algorithm): the
// matched pairs, which are monotone in time, cut both sequences into gaps;
// inside each gap the unmatched truths and unmatched reports are paired in
// order by the same exact matcher (most pairs, then least total deviation)
// with the window 2δ — one event period 1/F under δ = 1/(2F), 2T under a
// fixed T (TrialScore.DisplacedWithin). Each such pair is a displaced event:
// δ < |deviation| ≤ 2δ (more than δ, or K would not be maximal). Farther
// reports stay hallucinated and farther truths stay missed: a hallucination
// 10 s from a miss is not "displaced". A displaced event is also counted as
// one miss and one hallucination, as in Table 8 where the categories
// overlap. Wrong accumulation: eligible, F1 ≥ 0.80, wrong count. Merged
// events are never inferred (the paper reports none). AlignmentTable lists
// one trial's true and reported events with their classes (matched,
// misidentified, displaced, missed, hallucinated, excluded).
//
// # Outcome classes (issue 11 point 7, LFT Appendix F)
//
// TrialScore.Outcome puts every trial in exactly one class, the first rule
// that holds (OutcomeRule): a static-object clip is count_only and an N = 0
// control is control (not eligible); then, for eligible trials, no parsed
// count → unparseable; correct with F1 ≥ 0.80 → faithful_correct; correct
// → accidental_correct (exactly ACR's indicator, M = 0 included); F1 ≥
// 0.80 → wrong_accumulation (RFR's indicator for parsed counts); M = 0 →
// no_evidence; M > N → hallucinated_extra; otherwise (0 < M ≤ N, F1 <
// 0.80, wrong count) → missed_events. Outcome.Definition has one sentence
// per class; CountOutcomes counts them.
//
// # Self-consistency (issue 11 point 8)
//
// SelfConsistency compares the final count with the reply's last running
// count (running check) and with the number of counted events it listed
// (listed check); each is no_ledger when there is nothing to compare (not
// a disagreement; decided first), unparseable when the count is nil, else
// agree or disagree. SummarizeConsistency and GroupConsistency count them
// per group with the disagreement rate Disagree/(Agree + Disagree) and its
// 95% Wilson interval (ConsistencyRule).
//
// # Aggregates (LFT §3.2 Eq. 4, Table 1, B.4)
//
// Summarize: EM = correct/trials over all trials including N = 0 controls,
// with a two-sided 95% Wilson interval (z = 1.959963985). VOR, P, R, F1 are
// means of per-trial values over eligible trials (macro over videos), and
//
//	ACR = (1/|E|) Σ_E I[ŷ = N]·I[F1 < 0.80],  RFR = (1/|E|) Σ_E I[ŷ ≠ N]·I[F1 ≥ 0.80].
//
// With E empty (only N = 0 controls) all six are nil, not 0.
//
// Totals sums Table 8's event counts over eligible trials. Region follows
// Table 1 Part B: low count N ≤ 3, high count N ≥ 5, low frequency
// F ≤ 2.0 Hz, high frequency F ≥ 2.5 Hz; N = 4 belongs to no region (the
// paper skips it). N = 0 controls (F = 1.0) fall in low_count_low_freq, so
// that region's EM includes them, as the caption says final EM does; they
// never enter its trace ratios.
//
// # Surfaces and boundaries (LFT Eq. 1, §3.3 Eqs. 5–6, B.3, B.5)
//
// A cell's accuracy is correct/trials at one (N, F). A cell is reliable when
// accuracy ≥ τ (τ = 0.80: 8 of 10). The count boundary N*τ(F) is the largest
// tested positive N whose whole prefix of tested positive counts is
// reliable; the frequency boundary F*τ(N) is the highest tested F whose whole
// prefix of tested lower frequencies is reliable. An isolated success after
// a failure never extends a boundary. When the smallest tested value fails
// the boundary is reported as "< 1" / "< 0.5 Hz" (Below, with Value the
// smallest tested value). Prefixes run over the cells present: an untested
// count is skipped, not a failure. MaxCountBoundary is the largest count
// boundary over all tested frequencies (Table 2).
//
// # Sensitivity (LFT Table 9, C.15)
//
// Sensitivity re-scores the same inputs (trace, parsed count, parsed
// reports) under δ = 1.0, 0.5, 0.25 s and 1/(2F) and summarizes each; EM
// and VOR cannot change, P, R, F1, ACR, RFR do.
//
// # Count distributions (CVB §3, §5.2, §6)
//
// Over (true n, predicted ŷ or none) pairs, with T trials and A answered:
//
//	EM       = #(ŷ = n)/T                  (an abstention is wrong)
//	Acc@10%  = #(|ŷ − n| ≤ 0.1·n)/T       (inclusive; computed as 10|ŷ−n| ≤ n)
//	Coverage = A/T
//	MAE      = Σ|ŷ − n|/A, RMSE = √(Σ(ŷ − n)²/A)   (answered only, §6.1; nil when A = 0)
//	|S|      = number of distinct predicted integers
//	PP       = exp(−Σ_k p_k ln p_k)
//
// The paper gives no formula for PP or for how abstentions enter it.
// Perplexity pools all abstentions into one extra outcome; this is the
// reading consistent with Table 2's VideoLLaMA2-7B (1.2% Coverage, |S| = 5,
// PP = 1.1), since over its ~31 answered predictions alone five values give
// PP > 1.75, while pooling gives ≈ 1.08 for any split of them. PerplexityAnswered is the answered-only version (nil when A = 0); both equal 26
// for the Oracle. Local excess and deficit follow §5.2 exactly:
// L_k = max(N_{k−1}, N_{k−2}), R_k = max(N_{k+1}, N_{k+2}),
// excess_k = N_k − max(L_k, R_k), deficit_k = min(L_k, R_k) − N_k, each
// maximised over the support; ties go to the smaller value, and the deficit
// is returned as that positive amount (the paper's "−114" is its magnitude
// written as "below"). TopShare(truths, 3) is the Top-3 share of §3
// (3/k on a uniform design over k counts). Per-cardinality EM and Coverage
// use the same definitions within one true count.
//
// # Frame principles (TOMATO §3)
//
// The summary defines each principle only in words, as the "relative
// performance gain" from one condition to another, with ρ = 0 ideal; the
// package takes that literally as (to − from)/from between accuracies of
// matched conditions:
//
//	multi-frame gain       κ = (A_m − A_1)/A_1, A_1 a random or a hand-picked single frame
//	frame order sensitivity τ = (A_m − A_shuffled)/A_shuffled, same m frames
//	frame info disparity   ρ = (A_best − A_random)/A_random
//
// with A_m the accuracy on m uniformly sampled frames in order. A gain with
// a zero (or invalid) baseline is reported as undefined.
package score
