package score

// Outcome is the class of one scored trial for the report's case cards
// (issue 11 point 7, low-frequency-trap Appendix F). Every trial gets
// exactly one: the rules of TrialScore.Outcome are applied in order and the
// first that holds wins.
type Outcome string

// The outcomes. The first seven partition the eligible trials (event
// clips with N > 0); N = 0 controls and static-object clips get their own.
const (
	OutcomeUnparseable       Outcome = "unparseable"
	OutcomeFaithfulCorrect   Outcome = "faithful_correct"
	OutcomeAccidentalCorrect Outcome = "accidental_correct"
	OutcomeWrongAccumulation Outcome = "wrong_accumulation"
	OutcomeNoEvidence        Outcome = "no_evidence"
	OutcomeHallucinatedExtra Outcome = "hallucinated_extra"
	OutcomeMissedEvents      Outcome = "missed_events"
	OutcomeControl           Outcome = "control"
	OutcomeCountOnly         Outcome = "count_only"
)

var outcomeDefs = map[Outcome]string{
	OutcomeUnparseable:       "No final count could be parsed (a refusal, no number, an invalid or ambiguous answer); scored incorrect.",
	OutcomeFaithfulCorrect:   "Correct count and a faithful trace (F1 ≥ 0.80).",
	OutcomeAccidentalCorrect: "Correct count but an unfaithful trace (F1 < 0.80, including no trace at all): the ACR indicator.",
	OutcomeWrongAccumulation: "Wrong count despite a faithful trace (F1 ≥ 0.80): the paper's wrong accumulation, RFR's indicator for parsed counts.",
	OutcomeNoEvidence:        "Wrong count and no reported events (M = 0).",
	OutcomeHallucinatedExtra: "Wrong count, unfaithful trace (F1 < 0.80) with more reported events than true ones (M > N).",
	OutcomeMissedEvents:      "Wrong count, unfaithful trace (F1 < 0.80) with 0 < M ≤ N: events missed or reported away from their times.",
	OutcomeControl:           "A no-event control (N = 0): judged on the count alone, outside the event classes.",
	OutcomeCountOnly:         "A static-object clip (CountVideoBench): judged on the count alone, outside the event classes.",
}

// Outcomes returns the classes of eligible trials in the order the rules
// apply, for tables and the Cases section: unparseable, faithful and
// correct, accidental correctness, wrong accumulation, no evidence,
// hallucinated extra events, missed events.
func Outcomes() []Outcome {
	return []Outcome{OutcomeUnparseable, OutcomeFaithfulCorrect, OutcomeAccidentalCorrect, OutcomeWrongAccumulation,
		OutcomeNoEvidence, OutcomeHallucinatedExtra, OutcomeMissedEvents}
}

// AllOutcomes is Outcomes followed by the two classes of trials that are
// not eligible (control, count_only).
func AllOutcomes() []Outcome { return append(Outcomes(), OutcomeControl, OutcomeCountOnly) }

// Definition is the class's one-sentence definition, for the report's
// Definitions section; "" for an unknown class.
func (o Outcome) Definition() string { return outcomeDefs[o] }

// OutcomeRule states the order of the rules in words, for the report.
const OutcomeRule = "Each trial is in exactly one class; the first rule that holds wins. " +
	"Not eligible: a static-object clip is count_only, an N = 0 control is control. " +
	"Eligible (N > 0): no parsed count → unparseable; correct and F1 ≥ 0.80 → faithful_correct; correct → accidental_correct; " +
	"F1 ≥ 0.80 → wrong_accumulation; M = 0 → no_evidence; M > N → hallucinated_extra; otherwise → missed_events. " +
	"M counts reported events of the domain only (excluded lines such as a lamp turning off are not events)."

// Outcome classifies the trial (OutcomeRule):
//
//  1. CountOnly → count_only; N = 0 → control (neither is eligible);
//  2. Count == nil → unparseable;
//  3. Correct, F1 ≥ 0.80 → faithful_correct;
//  4. Correct (F1 < 0.80, M = 0 included) → accidental_correct;
//  5. F1 ≥ 0.80 → wrong_accumulation;
//  6. M = 0 → no_evidence;
//  7. M > N → hallucinated_extra;
//  8. otherwise (0 < M ≤ N, F1 < 0.80, wrong count) → missed_events.
//
// So accidental_correct is exactly Accidental(), and wrong_accumulation
// is ReasoningFailure() for parsed counts (an unparseable reply with a
// faithful trace enters RFR but is classed unparseable).
func (s TrialScore) Outcome() Outcome {
	switch {
	case s.CountOnly:
		return OutcomeCountOnly
	case !s.Eligible:
		return OutcomeControl
	case s.Count == nil:
		return OutcomeUnparseable
	case s.Correct && s.Faithful():
		return OutcomeFaithfulCorrect
	case s.Correct:
		return OutcomeAccidentalCorrect
	case s.Faithful():
		return OutcomeWrongAccumulation
	case s.M == 0:
		return OutcomeNoEvidence
	case s.M > s.N:
		return OutcomeHallucinatedExtra
	}
	return OutcomeMissedEvents
}

// CountOutcomes counts trials per outcome; every class of AllOutcomes is
// present, with 0 when no trial has it.
func CountOutcomes(trials []Trial) map[Outcome]int {
	out := map[Outcome]int{}
	for _, o := range AllOutcomes() {
		out[o] = 0
	}
	for _, t := range trials {
		out[t.Score.Outcome()]++
	}
	return out
}
