package score

import (
	"errors"
	"math"
	"math/rand"
	"strings"
	"testing"
)

// totalDev is the objective Align minimises at fixed K.
func totalDev(ps []Pair) float64 {
	s := 0.0
	for _, p := range ps {
		s += math.Abs(p.Deviation)
	}
	return s
}

// pairIdx reduces pairs to (truth, report) index pairs for comparison.
func pairIdx(ps []Pair) [][2]int {
	out := make([][2]int, len(ps))
	for i, p := range ps {
		out[i] = [2]int{p.Truth, p.Report}
	}
	return out
}

func samePairs(got []Pair, want [][2]int) bool {
	g := pairIdx(got)
	if len(g) != len(want) {
		return false
	}
	for i := range g {
		if g[i] != want[i] {
			return false
		}
	}
	return true
}

func TestAlignHandWorked(t *testing.T) {
	cases := []struct {
		name        string
		truth, rep  []float64
		delta       float64
		want        [][2]int
		wantCost    float64
		explanation string
	}{
		{
			name:  "overlapping fixed 1.0 s windows at 4 Hz",
			truth: []float64{5.0, 5.25, 5.5, 5.75}, rep: []float64{5.1, 5.3, 5.6}, delta: 1.0,
			// Every report is within 1 s of every truth; the exact optimum
			// pairs in order: 0.1 + 0.05 + 0.1.
			want: [][2]int{{0, 0}, {1, 1}, {2, 2}}, wantCost: 0.25,
		},
		{
			name:  "overlapping windows, crossing alternative of equal cost",
			truth: []float64{5.0, 5.25, 5.5, 5.75}, rep: []float64{5.3, 5.55, 5.8, 6.05}, delta: 1.0,
			// In order, every report is +0.3 late: total 1.2. Nearest-first
			// pairs three reports 0.05 late and 5.0 with 6.05 (1.05): also
			// 1.2, but crossing; the DP returns the monotone optimum.
			want: [][2]int{{0, 0}, {1, 1}, {2, 2}, {3, 3}}, wantCost: 1.2,
		},
		{
			name:  "max K first, then least total deviation",
			truth: []float64{1, 2}, rep: []float64{1.2, 1.9, 2.8}, delta: 1.0,
			want: [][2]int{{0, 0}, {1, 1}}, wantCost: 0.3,
		},
		{
			name:  "greedy smallest-deviation-first gets K=1, exact gets K=2",
			truth: []float64{1, 2}, rep: []float64{1.7, 2.75}, delta: 1.0,
			want: [][2]int{{0, 0}, {1, 1}}, wantCost: 1.45,
		},
		{
			name:  "one truth equidistant from two reports takes the earlier report",
			truth: []float64{1}, rep: []float64{0.5, 1.5}, delta: 1.0,
			want: [][2]int{{0, 0}}, wantCost: 0.5,
		},
		{
			name:  "one report equidistant from two truths goes to the earlier truth",
			truth: []float64{1, 2}, rep: []float64{1.5}, delta: 1.0,
			want: [][2]int{{0, 0}}, wantCost: 0.5,
		},
		{
			name:  "near-duplicate reported twice: the closer one matches",
			truth: []float64{1, 2, 3}, rep: []float64{1.05, 1.0, 2.0, 3.0}, delta: 0.5,
			want: [][2]int{{0, 1}, {1, 2}, {2, 3}}, wantCost: 0,
		},
		{
			name:  "exact duplicate: the lower index matches",
			truth: []float64{1, 2}, rep: []float64{2.0, 2.0, 1.0}, delta: 0.5,
			want: [][2]int{{0, 2}, {1, 0}}, wantCost: 0,
		},
		{
			name:  "unsorted reports keep their indices",
			truth: []float64{1, 2, 3}, rep: []float64{3.1, 1.1, 2.1}, delta: 0.5,
			want: [][2]int{{0, 1}, {1, 2}, {2, 0}}, wantCost: 0.3,
		},
		{
			name:  "outside every window",
			truth: []float64{1, 2}, rep: []float64{3.5}, delta: 0.5,
			want: [][2]int{},
		},
		{name: "M = 0", truth: []float64{1, 2, 3}, rep: nil, delta: 0.5, want: [][2]int{}},
		{name: "N = 0", truth: nil, rep: []float64{1, 2}, delta: 0.5, want: [][2]int{}},
		{name: "NaN report never matches", truth: []float64{1}, rep: []float64{math.NaN(), 1.1}, delta: 0.5, want: [][2]int{{0, 1}}, wantCost: 0.1},
		{name: "NaN delta matches nothing", truth: []float64{1}, rep: []float64{1}, delta: math.NaN(), want: [][2]int{}},
		{name: "negative delta matches nothing", truth: []float64{1}, rep: []float64{1}, delta: -1, want: [][2]int{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Align(c.truth, c.rep, c.delta)
			if !samePairs(got, c.want) {
				t.Fatalf("pairs %v, want %v", pairIdx(got), c.want)
			}
			if d := totalDev(got); math.Abs(d-c.wantCost) > 1e-9 {
				t.Errorf("total deviation %v, want %v", d, c.wantCost)
			}
			for _, p := range got {
				if p.TruthT != c.truth[p.Truth] || p.ReportT != c.rep[p.Report] || p.Deviation != p.ReportT-p.TruthT {
					t.Errorf("pair %+v does not echo its inputs", p)
				}
			}
		})
	}
}

// TestAlignRateMidpoint: a report exactly δ(F) = 1/(2F) after a truth is
// inside the window even though t + 1/(2F) − t rounds above 1/(2F).
func TestAlignRateMidpoint(t *testing.T) {
	for _, f := range []float64{0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4} {
		d := RateTolerance.Delta(f)
		t0 := 7.3
		truth := []float64{t0, t0 + 1/f}
		rep := []float64{t0 + d}
		got := Align(truth, rep, d)
		if !samePairs(got, [][2]int{{0, 0}}) {
			t.Errorf("F=%v: midpoint report gave %v, want it on the earlier truth", f, pairIdx(got))
		}
	}
}

// greedyNearest is the obvious non-exact alternative: take the globally
// smallest deviation first. It exists to show the hand case defeats it.
func greedyNearest(truth, rep []float64, delta float64) int {
	usedT := make([]bool, len(truth))
	usedR := make([]bool, len(rep))
	k := 0
	for {
		bi, bj, bd := -1, -1, math.Inf(1)
		for i, tt := range truth {
			for j, r := range rep {
				if d := math.Abs(r - tt); !usedT[i] && !usedR[j] && d <= delta && d < bd {
					bi, bj, bd = i, j, d
				}
			}
		}
		if bi < 0 {
			return k
		}
		usedT[bi], usedR[bj] = true, true
		k++
	}
}

func TestGreedyFailsWhereAlignSucceeds(t *testing.T) {
	truth, rep := []float64{1, 2}, []float64{1.7, 2.75}
	if g := greedyNearest(truth, rep, 1); g != 1 {
		t.Fatalf("greedy K = %d; the case no longer exercises greedy failure", g)
	}
	if k := len(Align(truth, rep, 1)); k != 2 {
		t.Fatalf("Align K = %d, want 2", k)
	}
}

// bruteForce enumerates every one-to-one matching within δ and returns the
// best (K, cost) in the lexicographic order Align optimises.
func bruteForce(truth, rep []float64, delta float64) (int, float64) {
	bestK, bestC := 0, 0.0
	used := make([]bool, len(rep))
	var rec func(i, k int, c float64)
	rec = func(i, k int, c float64) {
		if i == len(truth) {
			if k > bestK || (k == bestK && c < bestC) {
				bestK, bestC = k, c
			}
			return
		}
		rec(i+1, k, c) // truth i unmatched
		for j, r := range rep {
			if d := math.Abs(r - truth[i]); !used[j] && d <= delta+timeSlack {
				used[j] = true
				rec(i+1, k+1, c+d)
				used[j] = false
			}
		}
	}
	rec(0, 0, 0)
	return bestK, bestC
}

// checkAlignment verifies Align's output against the brute-force optimum
// and the matching's own invariants.
func checkAlignment(t *testing.T, truth, rep []float64, delta float64) {
	t.Helper()
	got := Align(truth, rep, delta)
	usedT, usedR := map[int]bool{}, map[int]bool{}
	for i, p := range got {
		if p.Truth < 0 || p.Truth >= len(truth) || p.Report < 0 || p.Report >= len(rep) {
			t.Fatalf("pair %+v out of range", p)
		}
		if usedT[p.Truth] || usedR[p.Report] {
			t.Fatalf("truth %v, reports %v, δ=%v: not one-to-one: %v", truth, rep, delta, pairIdx(got))
		}
		usedT[p.Truth], usedR[p.Report] = true, true
		if math.Abs(p.Deviation) > delta+timeSlack {
			t.Fatalf("pair %+v outside δ=%v", p, delta)
		}
		if i > 0 && (got[i-1].TruthT > p.TruthT || got[i-1].ReportT > p.ReportT) {
			t.Fatalf("pairs not monotone in time: %v", pairIdx(got))
		}
	}
	k, c := bruteForce(truth, rep, delta)
	if len(got) != k {
		t.Fatalf("truth %v, reports %v, δ=%v: K=%d, brute force %d", truth, rep, delta, len(got), k)
	}
	if d := totalDev(got); d > c+1e-7 {
		t.Fatalf("truth %v, reports %v, δ=%v: total deviation %v, brute force %v", truth, rep, delta, d, c)
	}
}

// TestAlignMatchesBruteForce is the exactness property on random small
// inputs. Times sit on a 0.125 s grid half the time to force ties and
// shared window edges, and are continuous otherwise.
func TestAlignMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	deltas := []float64{0.125, 0.25, 0.5, 1.0, 2.0}
	for it := 0; it < 4000; it++ {
		grid := it%2 == 0
		gen := func(n int) []float64 {
			xs := make([]float64, n)
			for i := range xs {
				if grid {
					xs[i] = float64(rng.Intn(33)) * 0.125
				} else {
					xs[i] = rng.Float64() * 4
				}
			}
			return xs
		}
		truth := gen(rng.Intn(7))
		rep := gen(rng.Intn(7))
		checkAlignment(t, truth, rep, deltas[rng.Intn(len(deltas))])
	}
}

// FuzzAlign checks the same property on fuzzer-chosen inputs; the seed
// corpus runs with plain `go test`.
func FuzzAlign(f *testing.F) {
	f.Add([]byte{8, 10, 12, 9, 11, 13}, uint8(3), uint8(4))
	f.Add([]byte{0, 2, 4, 6, 1, 3, 5, 7, 7}, uint8(4), uint8(8))
	f.Add([]byte{10, 10, 10, 10}, uint8(2), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, split uint8, dq uint8) {
		if len(data) > 14 {
			data = data[:14]
		}
		s := int(split)
		if s > len(data) {
			s = len(data)
		}
		if s > 7 || len(data)-s > 7 {
			return // keep the brute force small
		}
		toTimes := func(bs []byte) []float64 {
			xs := make([]float64, len(bs))
			for i, b := range bs {
				xs[i] = float64(b) / 8
			}
			return xs
		}
		checkAlignment(t, toTimes(data[:s]), toTimes(data[s:]), float64(dq%16+1)/8)
	})
}

func TestParseTolerance(t *testing.T) {
	good := map[string]Tolerance{
		"rate": RateTolerance, " RATE ": RateTolerance,
		"0.5": {Seconds: 0.5}, "0.25s": {Seconds: 0.25}, "1": {Seconds: 1}, "1.0 s": {Seconds: 1},
	}
	for in, want := range good {
		got, err := ParseTolerance(in)
		if err != nil || got != want {
			t.Errorf("ParseTolerance(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		back, err := ParseTolerance(got.String())
		if err != nil || back != got {
			t.Errorf("String round trip of %+v: %q → %+v, %v", got, got.String(), back, err)
		}
	}
	for _, in := range []string{"", "s", "0", "-0.5", "abc", "NaN", "Inf", "rate2", "1e400"} {
		_, err := ParseTolerance(in)
		if !errors.Is(err, ErrTolerance) {
			t.Errorf("ParseTolerance(%q) error = %v, want ErrTolerance", in, err)
			continue
		}
		if !strings.Contains(err.Error(), `"rate" or a positive number of seconds`) || !strings.Contains(err.Error(), "\""+in+"\"") {
			t.Errorf("ParseTolerance(%q) error %q does not say what was wrong", in, err)
		}
	}
}

func TestToleranceDelta(t *testing.T) {
	cases := []struct {
		tol  Tolerance
		f    float64
		want float64
	}{
		{RateTolerance, 0.5, 1.0},   // §3.2: 1.0 s at 0.5 Hz …
		{RateTolerance, 4.0, 0.125}, // … to 0.125 s at 4.0 Hz
		{RateTolerance, 0, 0},
		{RateTolerance, math.NaN(), 0},
		{Tolerance{Seconds: 0.25}, 4.0, 0.25},
		{Tolerance{Seconds: 0.25, RateRelative: true}, 1.0, 0.5},
	}
	for _, c := range cases {
		if got := c.tol.Delta(c.f); got != c.want {
			t.Errorf("%+v.Delta(%v) = %v, want %v", c.tol, c.f, got, c.want)
		}
	}
	if l := (Tolerance{Seconds: 1}).Label(); l != "fixed δ=1.0 s" {
		t.Errorf("label %q", l)
	}
}

func BenchmarkAlign(b *testing.B) {
	truth := make([]float64, 12)
	rep := make([]float64, 150) // Qwen-style over-reporting (VOR ≈ 13)
	for i := range truth {
		truth[i] = 2 + float64(i)/4
	}
	for j := range rep {
		rep[j] = float64(j) * 0.16
	}
	b.ReportAllocs()
	for b.Loop() {
		Align(truth, rep, 1.0)
	}
}
