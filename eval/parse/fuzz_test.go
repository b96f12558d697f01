package parse

import (
	"math"
	"reflect"
	"sort"
	"strings"
	"testing"
)

var fuzzDomains = []string{"bounce_ball", "blinking", "state_machine", "", "objects"}

// FuzzParse checks that Parse never panics and that its result keeps its
// invariants on any input: events sorted, finite and more than
// DedupWindow apart, a count within [0, MaxCount] exactly when it has a
// source, sorted unique flags, and the same result twice.
func FuzzParse(f *testing.F) {
	for i, tc := range replyCases {
		f.Add(tc.reply, uint8(i))
	}
	for _, s := range []string{
		"", "0", "-", ":", "00:", "00:6", "99:99:99.9", "\\boxed{", "\\boxed{}", "\\boxed{{{{}}}}",
		"{\"t\": }", "{{{{{{", "}}}}", "| | |\n|---|\n| |", "at .5 s", "t=", "1e400 s",
		strings.Repeat("9", 400) + " s", "0:00-0:00-0:00", "from 3 to 2 s", "between and",
		"final answer: final answer: final answer:", "<think></think>", "</think>", "−3", "—",
		"A→B→C→D at 1.0 s", "at 1.5, 2.5, and 3.5 s", "1m05s 1 min 5 s 2 mins", "3.5-second",
		"\xff\xfe 3.5 s \xff", "ÅÄÖ 00:01.0 — ΩΩ", "00:01.0\r\n00:01.05\r00:01.1",
		"frame 3", "frames 2-99", "frames 0, 1 and 12", "between frames 4 and 4", "frame 3 of 8 at t = 1.0 s",
		"t=1.00 off\nt=1.05 on\nt=1.08 off", "12 or 13", "\\boxed{12 or 13}", "between 3 and 4",
		"00:01.0 — B → B (count 1)", "| Frame | Count |\n|---|---|\n| 2 | 1 |",
	} {
		f.Add(s, uint8(len(s)))
	}
	f.Fuzz(func(t *testing.T, reply string, dom uint8) {
		domain := fuzzDomains[int(dom)%len(fuzzDomains)]
		r := Parse(reply, domain)
		checkInvariants(t, r, domain)
		if r2 := Parse(reply, domain); !reflect.DeepEqual(r, r2) {
			t.Fatalf("Parse is not deterministic:\n%+v\n%+v", r, r2)
		}
		// With frames known (dom's high bit picks a shuffled order).
		ft := []float64{0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5}
		if dom&0x80 != 0 {
			ft = []float64{3.5, 0.5, 2, 1, 0, 3, 1.5, 2.5}
		}
		rf := ParseWith(reply, Options{Domain: domain, FrameTimes: ft})
		checkInvariants(t, rf, domain)
		for _, e := range rf.Events {
			if e.Frame != 0 && (e.Frame > len(ft) || ft[e.Frame-1] != e.T) {
				t.Fatalf("event at %v names frame %d of %v", e.T, e.Frame, ft)
			}
		}
	})
}

// checkInvariants: Count within [0, MaxCount] exactly when it has a
// source; nil Count flagged; events sorted, finite, and, among counted and
// among excluded events, more than DedupWindow apart; Excluded is the
// domain rule on the event's attributes (so package score can re-derive
// it); the ledger fields agree with the events; alternatives only for an
// ambiguous answer; sorted unique flags.
func checkInvariants(t *testing.T, r Result, domain string) {
	t.Helper()
	if (r.Count == nil) != (r.CountSource == "") {
		t.Fatalf("Count %v with source %q", r.Count, r.CountSource)
	}
	if r.Count != nil && (*r.Count < 0 || *r.Count > MaxCount) {
		t.Fatalf("Count %d out of range", *r.Count)
	}
	if r.Count == nil && !contains(r.Flags, FlagUnparseableCount) {
		t.Fatalf("nil Count without %s: %v", FlagUnparseableCount, r.Flags)
	}
	last := [2]float64{math.Inf(-1), math.Inf(-1)}
	counted := 0
	for i, e := range r.Events {
		if math.IsNaN(e.T) || math.IsInf(e.T, 0) || e.T < 0 {
			t.Fatalf("event %d at %v", i, e.T)
		}
		if i > 0 && e.T < r.Events[i-1].T {
			t.Fatalf("events %d and %d at %v and %v are not sorted", i-1, i, r.Events[i-1].T, e.T)
		}
		kind := 0
		if !e.Counted() {
			kind = 1
		} else {
			counted++
		}
		if e.T-last[kind] <= DedupWindow+dedupEps {
			t.Fatalf("events at %v and %v are not deduplicated", last[kind], e.T)
		}
		last[kind] = e.T
		if e.Attrs != nil && len(e.Attrs) == 0 {
			t.Fatalf("event %d has an empty non-nil Attrs", i)
		}
		if want := ExclusionReason(domain, e.Attrs); e.Excluded != want {
			t.Fatalf("event %d (%v, %q) excluded %q, the rule says %q", i, e.Attrs, e.Text, e.Excluded, want)
		}
	}
	if r.LedgerEvents != counted || r.HasLedger != (len(r.Events) > 0 || r.LastRunningCount != nil) {
		t.Fatalf("ledger %d (counted %d), has %v", r.LedgerEvents, counted, r.HasLedger)
	}
	if (r.Alternatives != nil) != contains(r.Flags, FlagAmbiguousCount) || (r.Alternatives != nil && (r.Count != nil || len(r.Alternatives) < 2)) {
		t.Fatalf("alternatives %v, count %v, flags %v", r.Alternatives, r.Count, r.Flags)
	}
	if !sort.StringsAreSorted(r.Flags) {
		t.Fatalf("flags not sorted: %v", r.Flags)
	}
	for i := 1; i < len(r.Flags); i++ {
		if r.Flags[i] == r.Flags[i-1] {
			t.Fatalf("duplicate flag %q", r.Flags[i])
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
