package score

import (
	"sort"

	"github.com/tracegrid/tracegrid/eval/parse"
)

// Check is the result of one self-consistency check of a reply: does its
// final count agree with its own ledger?
type Check string

const (
	// CheckAgree: the final count equals the ledger's number.
	CheckAgree Check = "agree"
	// CheckDisagree: the final count differs from it.
	CheckDisagree Check = "disagree"
	// CheckNoLedger: the reply gives nothing to compare: no running count
	// (running check) or no counted event listed (listed check). It is not
	// a disagreement.
	CheckNoLedger Check = "no_ledger"
	// CheckUnparseable: the reply has a ledger but no parseable final count.
	CheckUnparseable Check = "unparseable"
)

// ConsistencyRule states the checks in words, for the report.
const ConsistencyRule = "Self-consistency compares a reply's final count with its own ledger, two ways: " +
	"with the running count it wrote last (running check) and with the number of events it listed, excluded lines not counted (listed check). " +
	"Each check is agree, disagree, no_ledger (no running count, or no listed event: not a disagreement) or unparseable (a ledger but no parsed final count); " +
	"no_ledger is decided first. Disagreement rates are over the trials that agree or disagree, with 95% Wilson intervals."

// Consistency is one reply's two checks and their inputs.
type Consistency struct {
	// Running compares the final count with the last running count.
	Running Check `json:"running"`
	// Listed compares the final count with the number of counted events.
	Listed           Check `json:"listed"`
	Count            *int  `json:"count"`
	LastRunningCount *int  `json:"last_running_count"`
	LedgerEvents     int   `json:"ledger_events"`
}

// SelfConsistency checks a final count (nil when unparsed) against the
// reply's last running count (nil when it states none) and the number of
// counted events it listed. Each check is, in order: no_ledger when there
// is nothing to compare with, unparseable when the count is nil, else
// agree or disagree.
func SelfConsistency(count, lastRunning *int, ledgerEvents int) Consistency {
	c := Consistency{Count: count, LastRunningCount: lastRunning, LedgerEvents: max(ledgerEvents, 0)}
	check := func(has bool, v int) Check {
		switch {
		case !has:
			return CheckNoLedger
		case count == nil:
			return CheckUnparseable
		case *count == v:
			return CheckAgree
		}
		return CheckDisagree
	}
	lr := 0
	if lastRunning != nil {
		lr = *lastRunning
	}
	c.Running = check(lastRunning != nil, lr)
	c.Listed = check(ledgerEvents > 0, ledgerEvents)
	return c
}

// ConsistencyOf is SelfConsistency of a parsed reply.
func ConsistencyOf(r parse.Result) Consistency {
	return SelfConsistency(r.Count, r.LastRunningCount, r.LedgerEvents)
}

// CheckStats counts one check over a group of trials. Checked =
// Agree + Disagree is the denominator of DisagreeRate and of its Wilson
// interval (95%, Z95); no_ledger and unparseable replies are outside it.
// With Checked = 0 the rate is 0 and the interval [0, 1].
type CheckStats struct {
	Agree        int     `json:"agree"`
	Disagree     int     `json:"disagree"`
	NoLedger     int     `json:"no_ledger"`
	Unparseable  int     `json:"unparseable"`
	Checked      int     `json:"checked"`
	DisagreeRate float64 `json:"disagree_rate"`
	Interval     Wilson  `json:"interval"`
}

func (c *CheckStats) add(k Check) {
	switch k {
	case CheckAgree:
		c.Agree++
	case CheckDisagree:
		c.Disagree++
	case CheckNoLedger:
		c.NoLedger++
	case CheckUnparseable:
		c.Unparseable++
	}
}

func (c *CheckStats) finish() {
	c.Checked = c.Agree + c.Disagree
	if c.Checked > 0 {
		c.DisagreeRate = float64(c.Disagree) / float64(c.Checked)
	}
	c.Interval = WilsonInterval(c.Disagree, c.Checked, Z95)
}

// ConsistencySummary is both checks over a group of trials.
type ConsistencySummary struct {
	Trials  int        `json:"trials"`
	Running CheckStats `json:"running"`
	Listed  CheckStats `json:"listed"`
}

// SummarizeConsistency counts the checks of a group of replies.
func SummarizeConsistency(cs []Consistency) ConsistencySummary {
	var s ConsistencySummary
	for _, c := range cs {
		s.Trials++
		s.Running.add(c.Running)
		s.Listed.add(c.Listed)
	}
	s.Running.finish()
	s.Listed.finish()
	return s
}

// ConsistencyGroup is the ConsistencySummary of the trials sharing one key.
type ConsistencyGroup struct {
	Key     string             `json:"key"`
	Summary ConsistencySummary `json:"summary"`
}

// GroupConsistency summarizes Trial.Consistency per key (e.g. model ×
// condition × domain), sorted by key. Trials with key "" or without a
// Consistency are left out.
func GroupConsistency(trials []Trial, key func(Trial) string) []ConsistencyGroup {
	by := map[string][]Consistency{}
	for _, t := range trials {
		if t.Consistency == nil {
			continue
		}
		if k := key(t); k != "" {
			by[k] = append(by[k], *t.Consistency)
		}
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]ConsistencyGroup, len(keys))
	for i, k := range keys {
		out[i] = ConsistencyGroup{Key: k, Summary: SummarizeConsistency(by[k])}
	}
	return out
}
