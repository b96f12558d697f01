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
	} {
		f.Add(s, uint8(len(s)))
	}
	f.Fuzz(func(t *testing.T, reply string, dom uint8) {
		domain := fuzzDomains[int(dom)%len(fuzzDomains)]
		r := Parse(reply, domain)
		checkInvariants(t, r)
		if r2 := Parse(reply, domain); !reflect.DeepEqual(r, r2) {
			t.Fatalf("Parse is not deterministic:\n%+v\n%+v", r, r2)
		}
	})
}

func checkInvariants(t *testing.T, r Result) {
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
	for i, e := range r.Events {
		if math.IsNaN(e.T) || math.IsInf(e.T, 0) || e.T < 0 {
			t.Fatalf("event %d at %v", i, e.T)
		}
		if i > 0 && e.T-r.Events[i-1].T <= DedupWindow+dedupEps {
			t.Fatalf("events %d and %d at %v and %v are not deduplicated", i-1, i, r.Events[i-1].T, e.T)
		}
		if e.Attrs != nil && len(e.Attrs) == 0 {
			t.Fatalf("event %d has an empty non-nil Attrs", i)
		}
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
