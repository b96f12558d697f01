package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/eval/parse"
	"github.com/tracegrid/tracegrid/eval/score"
	"github.com/tracegrid/tracegrid/trace"
)

// scoreOutput is what `tracegrid score` prints: everything needed to see
// why one trial scored as it did (docs/scoring.md).
type scoreOutput struct {
	ID          string `json:"id"`
	Domain      string `json:"domain"`
	Count       *int   `json:"count"`
	CountSource string `json:"count_source"`
	// Alternatives are the counts of an ambiguous final answer ("12 or
	// 13"), which then gives no count.
	Alternatives []int         `json:"alternatives,omitempty"`
	Correct      bool          `json:"correct"`
	Flags        []string      `json:"flags"`
	Events       []parse.Event `json:"events"` // every parsed line; those with "excluded" are not events of the domain
	// Frames is the number of shown frames read from --frames (0 without):
	// with them, "frame k" in the reply is the k-th frame's time.
	Frames          int                  `json:"frames,omitempty"`
	N               int                  `json:"n"`
	M               int                  `json:"m"` // reported events of the domain
	K               int                  `json:"k"`
	Excluded        int                  `json:"excluded"` // parsed lines that are not events of the domain
	Precision       float64              `json:"precision"`
	Recall          float64              `json:"recall"`
	F1              float64              `json:"f1"`
	VOR             float64              `json:"vor"`
	Eligible        bool                 `json:"eligible"`
	Tolerance       float64              `json:"tolerance"`
	ToleranceIs     string               `json:"tolerance_rule"`
	DisplacedWithin float64              `json:"displaced_within"`
	DisplacedRule   string               `json:"displaced_rule"`
	Pairs           []scorePair          `json:"pairs"`
	Displaced       []scorePair          `json:"displaced"`
	Alignment       []score.AlignmentRow `json:"alignment"` // true time, reported time, deviation, class
	Classes         score.Classes        `json:"classes"`
	Outcome         score.Outcome        `json:"outcome"`
	OutcomeIs       string               `json:"outcome_definition"`
	Consistency     score.Consistency    `json:"consistency"`
	TrueEvents      []trace.Event        `json:"true_events"`
}

type scorePair struct {
	Truth     float64 `json:"truth"`
	Report    float64 `json:"report"`
	Deviation float64 `json:"deviation"`
}

func newScoreCmd() *cobra.Command {
	var tracePath, responsePath, tolerance, framesPath string
	cmd := &cobra.Command{
		Use:   "score --trace T.json --response R.txt [--tolerance rate|SECONDS] [--frames frames.json]",
		Short: "Score one model reply against a trace and print why, as one JSON object",
		Long: `score parses a reply (final count; explicit timestamps with their attributes), aligns the
reported times one-to-one with the true events within the tolerance (rate: 1/(2F); or fixed
seconds), and prints count, correct, events, n, m, k, precision, recall, f1, vor, tolerance,
pairs (truth, report, deviation), the displaced pairs (order-aligned, beyond the tolerance but
within twice it), the alignment table (truth_t, report_t, deviation, class for every true and
reported event), the taxonomy classes, the trial's outcome class and its self-consistency.
Parsed lines that are not events of the domain (a blinking lamp turning off, a state machine
staying put) are listed with "excluded" and left out of m and the alignment. A final answer
naming several counts ("12 or 13") gives no count.

--frames takes the frames.json that tracegrid frames writes for the trial's condition: then
"frame k" in the reply means the time of the k-th frame shown (its position, 1-based). The
same parser and scorer serve tracegrid eval and report; the rules are in docs/scoring.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tol, err := score.ParseTolerance(tolerance)
			if err != nil {
				return usageError{err}
			}
			tr, err := trace.Load(tracePath)
			if err != nil {
				return err
			}
			reply, err := os.ReadFile(responsePath)
			if err != nil {
				return err
			}
			var frameTimes []float64
			if framesPath != "" {
				if frameTimes, err = loadFrameTimes(framesPath, tr.ID); err != nil {
					return err
				}
			}
			res := parse.ParseWith(string(reply), parse.Options{Domain: tr.Domain, FrameTimes: frameTimes})
			reports := score.FromParsed(res.Events)
			s, err := score.ScoreTrial(tr, res.Count, reports, tol)
			if err != nil {
				return err
			}
			out := scoreOutput{
				ID: tr.ID, Domain: tr.Domain, Count: res.Count, CountSource: res.CountSource, Alternatives: res.Alternatives,
				Correct: s.Correct, Flags: nonNil(res.Flags), Events: res.Events, Frames: len(frameTimes),
				N: s.N, M: s.M, K: s.K, Excluded: s.Excluded,
				Precision: s.Precision, Recall: s.Recall, F1: s.F1, VOR: s.VOR, Eligible: s.Eligible,
				Tolerance: s.Tolerance, ToleranceIs: tol.Label(), DisplacedWithin: s.DisplacedWithin, DisplacedRule: score.DisplacedRule,
				Classes: s.Classes, TrueEvents: tr.Events,
				Pairs: pairsOf(s.Pairs), Displaced: pairsOf(s.Displaced), Alignment: score.AlignmentTable(tr, reports, s),
				Outcome: s.Outcome(), Consistency: score.ConsistencyOf(res),
			}
			out.OutcomeIs = out.Outcome.Definition()
			if out.Events == nil {
				out.Events = []parse.Event{}
			}
			if out.Alignment == nil {
				out.Alignment = []score.AlignmentRow{}
			}
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(out); err != nil {
				return fmt.Errorf("score: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&tracePath, "trace", "", "the clip's trace JSON")
	cmd.Flags().StringVar(&responsePath, "response", "", "the model's reply as text")
	cmd.Flags().StringVar(&tolerance, "tolerance", "rate", "alignment window: rate (1/(2F)) or a number of seconds")
	cmd.Flags().StringVar(&framesPath, "frames", "", `frames.json of the frames shown (tracegrid frames): "frame k" becomes the k-th shown frame's time`)
	_ = cmd.MarkFlagRequired("trace")
	_ = cmd.MarkFlagRequired("response")
	return cmd
}

// framesIndex is the part of frames.json (tracegrid frames) that score
// reads.
type framesIndex struct {
	Clip   string `json:"clip"`
	Frames []struct {
		Position *int     `json:"position"`
		T        *float64 `json:"t"`
	} `json:"frames"`
}

// loadFrameTimes reads frames.json and returns the frames' times in the
// order shown: element k-1 is the time of the frame at position k-1
// (labelled "Frame k"). Positions must be 0…n-1, each once, and times
// finite and not negative; a file written for another clip than traceID is
// refused. Every problem is a usage error (exit 2).
func loadFrameTimes(path, traceID string) ([]float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var idx framesIndex
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, usageError{fmt.Errorf("--frames %s: not a frames.json: %w", path, err)}
	}
	if idx.Clip != "" && traceID != "" && idx.Clip != traceID {
		return nil, usageError{fmt.Errorf("--frames %s: the frames are of clip %s, the trace is %s", path, idx.Clip, traceID)}
	}
	if len(idx.Frames) == 0 {
		return nil, usageError{fmt.Errorf("--frames %s: no frames", path)}
	}
	times := make([]float64, len(idx.Frames))
	seen := make([]bool, len(idx.Frames))
	for i, f := range idx.Frames {
		if f.Position == nil || f.T == nil {
			return nil, usageError{fmt.Errorf("--frames %s: frame %d has no position or t", path, i)}
		}
		p, t := *f.Position, *f.T
		if p < 0 || p >= len(times) || seen[p] {
			return nil, usageError{fmt.Errorf("--frames %s: frame %d: position %d is not one of 0…%d exactly once", path, i, p, len(times)-1)}
		}
		if math.IsNaN(t) || math.IsInf(t, 0) || t < 0 {
			return nil, usageError{fmt.Errorf("--frames %s: frame %d: time %v is not a finite, non-negative number of seconds", path, i, t)}
		}
		seen[p], times[p] = true, t
	}
	return times, nil
}

func pairsOf(ps []score.Pair) []scorePair {
	out := make([]scorePair, len(ps))
	for i, p := range ps {
		out[i] = scorePair{Truth: p.TruthT, Report: p.ReportT, Deviation: p.Deviation}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
