package shard

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestPartitionHandWorked(t *testing.T) {
	for _, tc := range []struct {
		name  string
		costs []float64
		n     int
		want  [][]int
	}{
		// Order 0(5) 1(3) 2(3) 3(2) 4(2) 5(2). Loads: 0→A 5; 1→B 3; 2→B 6;
		// 3→A 7; 4→B 8; 5→A 9. A = {0,3,5} = 9, B = {1,2,4} = 8.
		{"mixed", []float64{5, 3, 3, 2, 2, 2}, 2, [][]int{{0, 3, 5}, {1, 2, 4}}},
		// Cost, not count: the big item alone balances ten small ones.
		{"one big", []float64{10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 2, [][]int{{0}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}},
		// The big item last in plan order is still placed first.
		{"big last", []float64{1, 1, 1, 1, 4}, 2, [][]int{{4}, {0, 1, 2, 3}}},
		// Equal costs: round robin in plan order.
		{"equal", []float64{7, 7, 7, 7, 7}, 2, [][]int{{0, 2, 4}, {1, 3}}},
		{"equal 3", []float64{1, 1, 1, 1, 1, 1, 1}, 3, [][]int{{0, 3, 6}, {1, 4}, {2, 5}}},
		// Zero costs spread by count (fewest items first on equal load).
		{"zeros", []float64{0, 0, 0}, 2, [][]int{{0, 2}, {1}}},
		// 0(4)→A 4; 2(3)→B 3; 1(2)→C 2; 3(2)→C 4; then 4(1): B has 3 < 4 → B 4.
		{"three parts", []float64{4, 2, 3, 2, 1}, 3, [][]int{{0}, {2, 4}, {1, 3}}},
		// Fewer items than parts: the rest are empty.
		{"fewer items", []float64{1, 2}, 4, [][]int{{1}, {0}, {}, {}}},
		{"no items", nil, 3, [][]int{{}, {}, {}}},
		{"one part", []float64{3, 1, 2}, 1, [][]int{{0, 1, 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Partition(tc.costs, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Partition(%v, %d) = %v, want %v", tc.costs, tc.n, got, tc.want)
			}
		})
	}
}

// plans are the plan shapes the properties are checked on.
func plans() map[string][]float64 {
	r := rand.New(rand.NewPCG(17, 4))
	p := map[string][]float64{
		"empty":  nil,
		"single": {RenderCost(720, 854, 480)},
		"few":    {3, 1, 2, 5},
	}
	equal := make([]float64, 100)
	for i := range equal {
		equal[i] = RenderCost(720, 854, 480)
	}
	p["equal-100"] = equal
	// Skewed: a geometric spread over four orders of magnitude.
	skewed := make([]float64, 150)
	for i := range skewed {
		skewed[i] = math.Floor(math.Pow(10, 4*float64(i%37)/36))
	}
	p["skewed-150"] = skewed
	// Heavy tail: a few huge clips among many small ones.
	tail := make([]float64, 200)
	for i := range tail {
		tail[i] = RenderCost(150, 320, 180)
		if i%50 == 7 {
			tail[i] = RenderCost(1500, 1920, 1080)
		}
	}
	p["heavy-tail-200"] = tail
	// A render grid: the paper's 24 s clips at 854x480 beside 5 s
	// CountVideoBench clips at 1920x1080, interleaved in plan order.
	grid := make([]float64, 0, 300)
	for i := 0; i < 300; i++ {
		if i%3 == 0 {
			grid = append(grid, RenderCost(150, 1920, 1080))
		} else {
			grid = append(grid, RenderCost(720, 854, 480))
		}
	}
	p["render-grid-300"] = grid
	// Eval: trials of 1 to 96 images, one or two requests.
	ev := make([]float64, 240)
	for i := range ev {
		ev[i] = EvalCost(1+i%2, r.IntN(97))
	}
	p["eval-240"] = ev
	// Random integers with many ties, and some zeros.
	ties := make([]float64, 90)
	for i := range ties {
		ties[i] = float64(r.IntN(4))
	}
	p["ties-90"] = ties
	// Fewer items than most n below.
	p["seven"] = []float64{9, 8, 7, 6, 5, 4, 3}
	return p
}

func TestPartitionProperties(t *testing.T) {
	for name, costs := range plans() {
		orig := slices.Clone(costs)
		for n := 1; n <= 64; n++ {
			parts, err := Partition(costs, n)
			if err != nil {
				t.Fatalf("%s n=%d: %v", name, n, err)
			}
			if !slices.Equal(costs, orig) {
				t.Fatalf("%s n=%d: Partition modified its input", name, n)
			}
			checkExactCover(t, fmt.Sprintf("%s n=%d", name, n), parts, len(costs), n)
			checkBalance(t, fmt.Sprintf("%s n=%d", name, n), parts, costs, n)

			// Deterministic: the same input gives the same parts, and
			// Select agrees with Partition shard by shard.
			again, _ := Partition(slices.Clone(costs), n)
			if !reflect.DeepEqual(parts, again) {
				t.Fatalf("%s n=%d: two calls differ:\n%v\n%v", name, n, parts, again)
			}
			for k := 1; k <= n; k++ {
				sel, err := Select(costs, Shard{Index: k, Count: n})
				if err != nil || !slices.Equal(sel, parts[k-1]) {
					t.Fatalf("%s: Select(%d/%d) = %v, %v; want %v", name, k, n, sel, err, parts[k-1])
				}
			}
		}
	}
}

// checkExactCover: every index 0…items−1 in exactly one part, n parts,
// each in increasing order.
func checkExactCover(t *testing.T, what string, parts [][]int, items, n int) {
	t.Helper()
	if len(parts) != n {
		t.Fatalf("%s: %d parts, want %d", what, len(parts), n)
	}
	seen := make([]int, items)
	for k, p := range parts {
		if p == nil {
			t.Fatalf("%s: part %d is nil, want an empty slice", what, k)
		}
		if !slices.IsSorted(p) {
			t.Fatalf("%s: part %d not in plan order: %v", what, k, p)
		}
		for _, i := range p {
			if i < 0 || i >= items {
				t.Fatalf("%s: part %d holds index %d outside the plan of %d", what, k, i, items)
			}
			seen[i]++
		}
	}
	for i, c := range seen {
		if c != 1 {
			t.Fatalf("%s: item %d is in %d parts, want 1", what, i, c)
		}
	}
}

// checkBalance: the list-scheduling bound, max part ≤ mean + max item.
func checkBalance(t *testing.T, what string, parts [][]int, costs []float64, n int) {
	t.Helper()
	var total, maxItem, maxPart float64
	for _, c := range costs {
		total += c
		maxItem = max(maxItem, c)
	}
	for _, p := range parts {
		var load float64
		for _, i := range p {
			load += costs[i]
		}
		maxPart = max(maxPart, load)
	}
	bound := total/float64(n) + maxItem
	if maxPart > bound*(1+1e-12) {
		t.Fatalf("%s: largest part costs %g > mean %g + largest item %g", what, maxPart, total/float64(n), maxItem)
	}
}

// TestPartitionNearOptimal compares with the best split found by trying
// every assignment of small plans: LPT is within (4/3 − 1/(3n)) of it.
func TestPartitionNearOptimal(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for trial := 0; trial < 200; trial++ {
		n := 2 + trial%2
		costs := make([]float64, 4+r.IntN(5))
		for i := range costs {
			costs[i] = float64(1 + r.IntN(20))
		}
		parts, err := Partition(costs, n)
		if err != nil {
			t.Fatal(err)
		}
		got := 0.0
		for _, p := range parts {
			load := 0.0
			for _, i := range p {
				load += costs[i]
			}
			got = max(got, load)
		}
		best := bruteForceMakespan(costs, n)
		if limit := (4.0/3 - 1/(3*float64(n))) * best; got > limit+1e-9 {
			t.Errorf("costs %v n=%d: largest part %g, optimum %g, LPT bound %g", costs, n, got, best, limit)
		}
	}
}

func bruteForceMakespan(costs []float64, n int) float64 {
	loads := make([]float64, n)
	best := math.Inf(1)
	var rec func(i int)
	rec = func(i int) {
		if i == len(costs) {
			m := slices.Max(loads)
			best = min(best, m)
			return
		}
		for k := range loads {
			loads[k] += costs[i]
			if loads[k] < best {
				rec(i + 1)
			}
			loads[k] -= costs[i]
		}
	}
	rec(0)
	return best
}

func TestPartitionErrors(t *testing.T) {
	for _, tc := range []struct {
		costs []float64
		n     int
		want  string
	}{
		{[]float64{1}, 0, "partition into 0 parts: want 1 to 1000000"},
		{[]float64{1}, -3, "partition into -3 parts"},
		{[]float64{1}, MaxCount + 1, "partition into 1000001 parts"},
		{[]float64{1, -1}, 2, "partition: item 1 has cost -1: costs must be finite and ≥ 0"},
		{[]float64{math.NaN()}, 2, "item 0 has cost NaN"},
		{[]float64{0, math.Inf(1)}, 2, "item 1 has cost +Inf"},
	} {
		if got, err := Partition(tc.costs, tc.n); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Partition(%v, %d) = %v, %v; want error %q", tc.costs, tc.n, got, err, tc.want)
		}
	}
	if _, err := Select([]float64{1, 2}, Shard{Index: 3, Count: 2}); err == nil || !strings.Contains(err.Error(), "shard 3 does not exist") {
		t.Errorf("Select(3/2): err = %v", err)
	}
	if _, err := Select([]float64{1, -2}, Shard{Index: 1, Count: 2}); err == nil {
		t.Error("Select with a negative cost: no error")
	}
}

func TestCosts(t *testing.T) {
	if got, want := RenderCost(720, 854, 480), 295142400.0; got != want {
		t.Errorf("RenderCost(720, 854, 480) = %v, want %v", got, want)
	}
	// The largest plausible clip stays an exact integer in a float64.
	if got, want := RenderCost(7200, 4096, 4096), 120795955200.0; got != want {
		t.Errorf("RenderCost(7200, 4096, 4096) = %v, want %v", got, want)
	}
	for _, tc := range []struct {
		requests, images int
		want             float64
	}{
		{1, 96, 96}, {2, 16, 32}, {1, 0, 1}, {2, 0, 2}, {0, 5, 0},
	} {
		if got := EvalCost(tc.requests, tc.images); got != tc.want {
			t.Errorf("EvalCost(%d, %d) = %v, want %v", tc.requests, tc.images, got, tc.want)
		}
	}
}
