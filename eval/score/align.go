package score

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Sentinel errors; every error this package returns wraps one of them.
var (
	ErrTrace     = errors.New("score: invalid trace")
	ErrReport    = errors.New("score: invalid report")
	ErrTolerance = errors.New("score: invalid tolerance")
)

// timeSlack absorbs float64 rounding when a deviation is compared with δ
// (a report exactly on the rate-relative midpoint t_i + 1/(2F) must match)
// and when two total deviations are compared for a tie. One nanosecond is
// far below any timestamp a model or parser produces.
const timeSlack = 1e-9

// Tolerance is the timestamp-matching window δ: a fixed number of seconds,
// or the rate-relative δ(F) = 1/(2F) of low-frequency-trap §3.2.
type Tolerance struct {
	Seconds      float64 `json:"seconds,omitempty"`
	RateRelative bool    `json:"rate_relative,omitempty"`
}

// RateTolerance is the paper's default window δ(F) = 1/(2F) (§3.2, C.15).
var RateTolerance = Tolerance{RateRelative: true}

// PaperTolerances returns the four windows of Table 9 (C.15): fixed 1.0,
// 0.5 and 0.25 s, then rate-relative. A fresh slice each call, so callers
// may modify it.
func PaperTolerances() []Tolerance {
	return []Tolerance{{Seconds: 1.0}, {Seconds: 0.5}, {Seconds: 0.25}, RateTolerance}
}

// Delta returns δ in seconds for a clip of event frequency f (Hz). A
// rate-relative tolerance needs f > 0; for any other f it returns 0, which
// matches nothing. RateRelative takes precedence over Seconds.
func (t Tolerance) Delta(f float64) float64 {
	if t.RateRelative {
		if !(f > 0) || math.IsInf(f, 0) {
			return 0
		}
		return 1 / (2 * f)
	}
	return t.Seconds
}

// String is the form ParseTolerance reads back: "rate" or seconds ("0.5s").
func (t Tolerance) String() string {
	if t.RateRelative {
		return "rate"
	}
	return strconv.FormatFloat(t.Seconds, 'f', -1, 64) + "s"
}

// Label names the window as Table 9 does, e.g. "fixed δ=1.0 s".
func (t Tolerance) Label() string {
	if t.RateRelative {
		return "rate-relative δ=1/(2F)"
	}
	return "fixed δ=" + formatDecimal(t.Seconds) + " s"
}

func (t Tolerance) validate() error {
	if t.RateRelative {
		return nil
	}
	if !(t.Seconds > 0) || math.IsInf(t.Seconds, 0) {
		return fmt.Errorf("%w: %v s: a fixed window must be a positive, finite number of seconds", ErrTolerance, t.Seconds)
	}
	return nil
}

// ParseTolerance reads "rate" (δ = 1/(2F)) or a positive number of seconds,
// with an optional "s" suffix ("0.5", "0.25s").
func ParseTolerance(s string) (Tolerance, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	if v == "rate" {
		return RateTolerance, nil
	}
	num := strings.TrimSpace(strings.TrimSuffix(v, "s"))
	sec, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return Tolerance{}, fmt.Errorf("%w %q: want \"rate\" or a positive number of seconds such as 0.5", ErrTolerance, s)
	}
	t := Tolerance{Seconds: sec}
	if err := t.validate(); err != nil {
		return Tolerance{}, fmt.Errorf("%w %q: want \"rate\" or a positive number of seconds such as 0.5", ErrTolerance, s)
	}
	return t, nil
}

// Pair is one aligned (true event, reported event) pair. Truth and Report
// index the slices given to Align (the caller's order, not sorted order);
// Deviation is ReportT − TruthT, so a late report has a positive deviation.
type Pair struct {
	Truth     int     `json:"truth"`
	Report    int     `json:"report"`
	TruthT    float64 `json:"truth_t"`
	ReportT   float64 `json:"report_t"`
	Deviation float64 `json:"deviation"`
}

// Align returns the one-to-one matching of low-frequency-trap C.15: pairs
// with |report − truth| ≤ δ, the largest possible number of pairs K, and
// among matchings with that K the least total |deviation|. It is exact, not
// greedy; see alignSorted for the algorithm and its proof. Neither slice has
// to be sorted. Non-finite times never match; a NaN or negative δ matches
// nothing; δ = +Inf pairs purely by order and distance.
//
// Ties (equal K and equal total deviation within 1 ns) resolve toward the
// earlier events: the DP leaves the latest report, then the latest truth,
// unmatched whenever that costs nothing, so one truth equidistant from two
// reports takes the earlier report, and one report equidistant from two
// truths goes to the earlier truth; exact duplicates keep the lower index.
// Pairs come back sorted by truth time.
func Align(truth, reported []float64, delta float64) []Pair {
	if math.IsNaN(delta) || delta < 0 {
		return []Pair{}
	}
	ti := sortedFinite(truth)
	ri := sortedFinite(reported)
	ts := make([]float64, len(ti))
	for k, i := range ti {
		ts[k] = truth[i]
	}
	rs := make([]float64, len(ri))
	for k, i := range ri {
		rs[k] = reported[i]
	}
	sp := alignSorted(ts, rs, delta)
	pairs := make([]Pair, len(sp))
	for k, p := range sp {
		i, j := ti[p[0]], ri[p[1]]
		pairs[k] = Pair{Truth: i, Report: j, TruthT: truth[i], ReportT: reported[j], Deviation: reported[j] - truth[i]}
	}
	return pairs
}

// sortedFinite returns the indices of the finite values of xs, ordered by
// value, equal values by index (so the order is deterministic).
func sortedFinite(xs []float64) []int {
	idx := make([]int, 0, len(xs))
	for i, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	return idx
}

// dpCell is the best (K, total |deviation|) over a prefix pair.
type dpCell struct {
	k    int
	cost float64
}

// better reports whether a beats b: more pairs, or as many pairs with a
// total deviation smaller by more than the slack.
func (a dpCell) better(b dpCell) bool {
	return a.k > b.k || (a.k == b.k && a.cost < b.cost-timeSlack)
}

// Back-pointers of the DP.
const (
	skipReport = iota
	skipTruth
	takePair
)

// alignSorted solves the matching on sorted t (truths) and r (reports) and
// returns (truth index, report index) pairs in increasing order of both.
//
// Why an O(N·M) sequence DP is exact. Call two pairs (a1,b2), (a2,b1) with
// a1 ≤ a2 and b1 ≤ b2 crossed. Replacing them by (a1,b1), (a2,b2):
//   - stays feasible: a1−b1 ≤ a2−b1 ≤ δ and b1−a1 ≤ b2−a1 ≤ δ, and the same
//     for (a2,b2), so both new pairs are inside the window;
//   - keeps K and never raises the cost, since on a line
//     |a1−b1| + |a2−b2| ≤ |a1−b2| + |a2−b1| (the classic uncrossing
//     inequality; check the orderings of the four points).
//
// Take any optimal matching (max K, then min cost) and view it as a
// permutation between its matched truths and matched reports, both sorted.
// A crossed pair is an inversion, and swapping the two partners of an
// inversion strictly lowers the inversion count, so finitely many swaps
// reach the sorted (non-crossing) pairing of the same two sets: still
// feasible, same K, cost no higher. Hence some optimal matching is monotone
// in both sorted sequences.
// Monotone matchings are exactly what the LCS-style recurrence
//
//	D[i][j] = best{ D[i][j−1], D[i−1][j], D[i−1][j−1] + pair(i,j) if |t_i − r_j| ≤ δ }
//
// enumerates, with "best" the lexicographic order (K up, cost down), so
// D[N][M] is the optimum. The window makes the candidate graph an interval
// graph, but the DP does not need that; N ≤ 12 truths per clip keeps the
// table tiny even for hundreds of reports.
func alignSorted(t, r []float64, delta float64) [][2]int {
	n, m := len(t), len(r)
	if n == 0 || m == 0 {
		return nil
	}
	w := m + 1
	d := make([]dpCell, (n+1)*w)
	from := make([]uint8, (n+1)*w)
	for i := 1; i <= n; i++ {
		from[i*w] = skipTruth
	}
	for i := 1; i <= n; i++ {
		for j := 1; j <= m; j++ {
			// Candidates in tie-break order: a later candidate replaces the
			// current best only when strictly better, so ties leave the
			// latest report (then the latest truth) unmatched.
			best, how := d[i*w+j-1], uint8(skipReport)
			if c := d[(i-1)*w+j]; c.better(best) {
				best, how = c, skipTruth
			}
			if dev := math.Abs(r[j-1] - t[i-1]); dev <= delta+timeSlack {
				c := d[(i-1)*w+j-1]
				c = dpCell{k: c.k + 1, cost: c.cost + dev}
				if c.better(best) {
					best, how = c, takePair
				}
			}
			d[i*w+j], from[i*w+j] = best, how
		}
	}
	pairs := make([][2]int, 0, d[n*w+m].k)
	for i, j := n, m; i > 0 && j > 0; {
		switch from[i*w+j] {
		case skipReport:
			j--
		case skipTruth:
			i--
		default:
			pairs = append(pairs, [2]int{i - 1, j - 1})
			i--
			j--
		}
	}
	for a, b := 0, len(pairs)-1; a < b; a, b = a+1, b-1 {
		pairs[a], pairs[b] = pairs[b], pairs[a]
	}
	return pairs
}

// formatDecimal prints v the shortest way but always with a decimal point,
// as the paper writes frequencies and windows ("1.0", "0.25").
func formatDecimal(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") && !math.IsInf(v, 0) && !math.IsNaN(v) {
		s += ".0"
	}
	return s
}
