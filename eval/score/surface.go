package score

import (
	"math"
	"sort"
	"strconv"
)

// Tau is the paper's operational reliability target τ = 0.80 (§3.3): a cell
// must be correct on at least 8 of 10 renderings.
const Tau = 0.80

// freqEps is how close two frequencies must be to be the same grid value;
// grid frequencies are multiples of 0.5 Hz, so any rounding noise is far
// smaller.
const freqEps = 1e-9

// Cell is one (N, F) cell of a capability surface: Eq. 1's observed
// exact-match accuracy Correct/Trials.
type Cell struct {
	N        int     `json:"n"`
	F        float64 `json:"f"`
	Trials   int     `json:"trials"`
	Correct  int     `json:"correct"`
	Accuracy float64 `json:"accuracy"`
}

// Surface groups trials into (N, F) cells sorted by N, then F. Frequencies
// are keyed rounded to the nearest 1e-9 Hz, so float noise from parsing
// does not split a cell; trials with a non-finite F are skipped. It pools whatever it is given, so pass one model × domain ×
// condition at a time.
func Surface(trials []Trial) []Cell {
	type key struct {
		n int
		f int64
	}
	idx := map[key]int{}
	var cells []Cell
	for _, t := range trials {
		if math.IsNaN(t.F) || math.IsInf(t.F, 0) {
			continue
		}
		k := key{t.N, int64(math.Round(t.F / freqEps))}
		i, ok := idx[k]
		if !ok {
			i = len(cells)
			idx[k] = i
			cells = append(cells, Cell{N: t.N, F: t.F})
		}
		cells[i].Trials++
		if t.Score.Correct {
			cells[i].Correct++
		}
	}
	for i := range cells {
		cells[i].Accuracy = float64(cells[i].Correct) / float64(cells[i].Trials)
	}
	sort.Slice(cells, func(a, b int) bool {
		if cells[a].N != cells[b].N {
			return cells[a].N < cells[b].N
		}
		return cells[a].F < cells[b].F
	})
	return cells
}

// Boundary is an operational boundary (§3.3 Eqs. 5–6). When even the
// smallest tested value fails, Below is true, Value is that smallest value
// and Label reads "< 1" or "< 0.5 Hz" as the paper reports it. With no
// tested cell at all, Value is 0 and Label is "no data".
type Boundary struct {
	Value float64 `json:"value"`
	Below bool    `json:"below"`
	Label string  `json:"label"`
}

// reliable is the per-cell test acc ≥ τ; the slack only absorbs rounding
// (8/10 against 0.8).
func reliable(c Cell, tau float64) bool { return c.Accuracy >= tau-1e-12 }

// prefixBoundary applies the contiguous-prefix rule to cells already sorted
// along the swept axis: the last cell of the longest prefix whose every
// cell is reliable. Isolated successes after a failure are ignored. It
// returns the index of that cell, or −1 if the first cell fails.
func prefixBoundary(cells []Cell, tau float64) int {
	last := -1
	for i, c := range cells {
		if !reliable(c, tau) {
			break
		}
		last = i
	}
	return last
}

// CountBoundary is N*τ(F) (Eq. 5): the largest tested positive count n at
// frequency f such that every tested positive count ≤ n is reliable. N = 0
// and cells without trials are not part of the prefix.
func CountBoundary(cells []Cell, f float64, tau float64) Boundary {
	var row []Cell
	for _, c := range cells {
		if c.N > 0 && c.Trials > 0 && math.Abs(c.F-f) <= freqEps {
			row = append(row, c)
		}
	}
	sort.SliceStable(row, func(a, b int) bool { return row[a].N < row[b].N })
	return countBoundary(row, tau)
}

func countBoundary(row []Cell, tau float64) Boundary {
	if len(row) == 0 {
		return Boundary{Label: "no data"}
	}
	i := prefixBoundary(row, tau)
	if i < 0 {
		return Boundary{Value: float64(row[0].N), Below: true, Label: "< " + strconv.Itoa(row[0].N)}
	}
	return Boundary{Value: float64(row[i].N), Label: strconv.Itoa(row[i].N)}
}

// FrequencyBoundary is F*τ(N) (Eq. 6): the highest tested frequency f at
// count n such that every tested frequency ≤ f is reliable; "< 0.5 Hz" when
// the lowest tested frequency already fails.
func FrequencyBoundary(cells []Cell, n int, tau float64) Boundary {
	var col []Cell
	for _, c := range cells {
		if c.N == n && c.Trials > 0 && !math.IsNaN(c.F) {
			col = append(col, c)
		}
	}
	if len(col) == 0 {
		return Boundary{Label: "no data"}
	}
	sort.SliceStable(col, func(a, b int) bool { return col[a].F < col[b].F })
	i := prefixBoundary(col, tau)
	if i < 0 {
		return Boundary{Value: col[0].F, Below: true, Label: "< " + formatDecimal(col[0].F) + " Hz"}
	}
	return Boundary{Value: col[i].F, Label: formatDecimal(col[i].F) + " Hz"}
}

// MaxCountBoundary is Table 2's "maximum count boundary": the largest
// N*τ(F) over every tested frequency. Any reliable boundary beats any
// "< n"; if every frequency fails at its first tested count the result is
// the largest such "< n" (normally "< 1"; larger only on grids that skip 1).
func MaxCountBoundary(cells []Cell, tau float64) Boundary {
	best := Boundary{Label: "no data"}
	for _, f := range Frequencies(cells) {
		b := CountBoundary(cells, f, tau)
		switch {
		case b.Label == "no data":
		case best.Label == "no data":
			best = b
		case best.Below && !b.Below:
			best = b
		case best.Below == b.Below && b.Value > best.Value:
			best = b
		}
	}
	return best
}

// Frequencies lists the distinct frequencies of the positive-count cells,
// in increasing order (values within 1e-9 Hz are one frequency).
func Frequencies(cells []Cell) []float64 {
	var fs []float64
	for _, c := range cells {
		if c.N <= 0 || c.Trials == 0 || math.IsNaN(c.F) {
			continue
		}
		seen := false
		for _, f := range fs {
			if math.Abs(f-c.F) <= freqEps {
				seen = true
				break
			}
		}
		if !seen {
			fs = append(fs, c.F)
		}
	}
	sort.Float64s(fs)
	return fs
}
