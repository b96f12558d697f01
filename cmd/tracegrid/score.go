package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tracegrid/tracegrid/eval/parse"
	"github.com/tracegrid/tracegrid/eval/score"
	"github.com/tracegrid/tracegrid/trace"
)

// scoreOutput is what `tracegrid score` prints: everything needed to see
// why one trial scored as it did.
type scoreOutput struct {
	ID          string        `json:"id"`
	Domain      string        `json:"domain"`
	Count       *int          `json:"count"`
	CountSource string        `json:"count_source"`
	Correct     bool          `json:"correct"`
	Flags       []string      `json:"flags"`
	Events      []parse.Event `json:"events"`
	N           int           `json:"n"`
	M           int           `json:"m"`
	K           int           `json:"k"`
	Precision   float64       `json:"precision"`
	Recall      float64       `json:"recall"`
	F1          float64       `json:"f1"`
	VOR         float64       `json:"vor"`
	Eligible    bool          `json:"eligible"`
	Tolerance   float64       `json:"tolerance"`
	ToleranceIs string        `json:"tolerance_rule"`
	Pairs       []scorePair   `json:"pairs"`
	Displaced   []scorePair   `json:"displaced"`
	Classes     score.Classes `json:"classes"`
	TrueEvents  []trace.Event `json:"true_events"`
}

type scorePair struct {
	Truth     float64 `json:"truth"`
	Report    float64 `json:"report"`
	Deviation float64 `json:"deviation"`
}

func newScoreCmd() *cobra.Command {
	var tracePath, responsePath, tolerance string
	cmd := &cobra.Command{
		Use:   "score --trace T.json --response R.txt [--tolerance rate|SECONDS]",
		Short: "Score one model reply against a trace and print why, as one JSON object",
		Long: `score parses a reply (final count; explicit timestamps with their attributes), aligns the
reported times one-to-one with the true events within the tolerance (rate: 1/(2F); or fixed
seconds), and prints count, correct, events, n, m, k, precision, recall, f1, vor, tolerance,
pairs (truth, report, deviation) and the taxonomy classes. The same parser serves tracegrid eval.`,
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
			res := parse.Parse(string(reply), tr.Domain)
			s, err := score.ScoreTrial(tr, res.Count, score.FromParsed(res.Events), tol)
			if err != nil {
				return err
			}
			out := scoreOutput{
				ID: tr.ID, Domain: tr.Domain, Count: res.Count, CountSource: res.CountSource, Correct: s.Correct,
				Flags: nonNil(res.Flags), Events: res.Events, N: s.N, M: s.M, K: s.K,
				Precision: s.Precision, Recall: s.Recall, F1: s.F1, VOR: s.VOR, Eligible: s.Eligible,
				Tolerance: s.Tolerance, ToleranceIs: tol.Label(), Classes: s.Classes, TrueEvents: tr.Events,
				Pairs: pairsOf(s.Pairs), Displaced: pairsOf(s.Displaced),
			}
			if out.Events == nil {
				out.Events = []parse.Event{}
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
	_ = cmd.MarkFlagRequired("trace")
	_ = cmd.MarkFlagRequired("response")
	return cmd
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
