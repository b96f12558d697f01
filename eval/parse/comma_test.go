package parse

import (
	"slices"
	"testing"
)

// TestDecimalCommas: a comma between digits is read as a decimal separator
// only where it clearly is one (a time unit follows, one or two digits
// after it); where it could as well separate a list ("at 8,9 and 10 s") or
// thousands ("1,500 ms") the number gives no time and the reply is flagged
// ambiguous_time. A list written with spaces is still a list. Never a time
// the model did not state (LFT App. C.15).
func TestDecimalCommas(t *testing.T) {
	cases := []struct {
		reply     string
		want      []float64
		ambiguous bool // FlagAmbiguousTime set
	}{
		// Issue 31 item 5: was read as 0, 7 and 8 s.
		{"Contact at 8,0 s (right wall), contact at 8,7 s (bottom wall)", []float64{8.0, 8.7}, false},
		{"bounce at 3,5 seconds", []float64{3.5}, false},
		{"bounce at 3,25s", []float64{3.25}, false},
		{"bounce at 0,5 sec and at 12,75 s", []float64{0.5, 12.75}, false},
		{"bounce at 2500,5 ms", []float64{2.5005}, false},
		{"bounce from 2,5 to 3,0 s", []float64{2.5}, false},
		{"bounce at 2,5–3,0 s", []float64{2.5}, false},
		{"bounce between 2,5 and 3,0 seconds", []float64{2.5}, false},
		// Lists still parse as lists.
		{"bounces at 8, 9 and 10 s", []float64{8, 9, 10}, false},
		{"bounces at 8, 9, 10 s", []float64{8, 9, 10}, false},
		{"bounces at 2,4,6 and 8 s", []float64{2, 4, 6, 8}, false},
		{"bounces at 1.5, 3.0 and 4.5 s", []float64{1.5, 3, 4.5}, false},
		{"bounces at 8 s, 9 s and 10 s", []float64{8, 9, 10}, false},
		{`{"timestamps": [1,2]} bounces`, []float64{1, 2}, false},
		{`{"timestamps": [0.5,2,5]} bounces`, []float64{0.5, 2, 5}, false},
		{"bounce at 00:00:03,500", []float64{3.5}, false},
		// Doubt: no time.
		{"bounces at 8,9 and 10 s", []float64{10}, true},
		{"bounce at 1,500 ms", nil, true},
		{"bounce at 8,0", nil, false},
	}
	for _, c := range cases {
		r := Parse(c.reply, "bounce_ball")
		if got := times(r); !sameTimes(got, c.want) {
			t.Errorf("%q: times %v, want %v", c.reply, got, c.want)
		}
		if got := slices.Contains(r.Flags, FlagAmbiguousTime); got != c.ambiguous {
			t.Errorf("%q: ambiguous_time %v, want %v (flags %q)", c.reply, got, c.ambiguous, r.Flags)
		}
	}
	// A decimal comma is no count; the final answer stands.
	r := Parse("Contact at 8,0 s (right wall), contact at 8,7 s (bottom wall). Total: 2", "bounce_ball")
	if r.Count == nil || *r.Count != 2 {
		t.Errorf("count %v, want 2", r.Count)
	}
}
