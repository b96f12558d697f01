package sampling

import (
	"fmt"
	"math"
	"sort"
	"strconv"
)

// adaptive spends a budget of B frames where the picture changes. It is
// the proposal of low-frequency-trap-summary-and-proposals (sample densely
// around changes, sparsely in static spans) built from pixels alone:
//
//  1. a cheap pass reads a low-resolution greyscale view of every frame of
//     the clip (its own frame rate) and measures change
//     d_k = mean |frame_k − frame_{k−1}| (d_0 = 0);
//  2. every frame gets weight w_k = d_k + β with β = StaticShare·mean(d)
//     (or 1 when nothing changes at all), so static spans keep a thin,
//     even coverage instead of none;
//  3. the B frames are the weight quantiles: frame k_j is the first k whose
//     cumulative weight reaches (j + ½)/B of the total, j = 0…B−1; frames
//     picked twice move to the nearest unpicked frame.
//
// It never reads the trace.
type adaptive struct{ budget int }

// StaticShare sets the baseline weight of a frame relative to the mean
// change: 0.1 keeps roughly a tenth of the budget's density in static
// spans.
const StaticShare = 0.1

func (a adaptive) String() string { return "adaptive:" + strconv.Itoa(a.budget) }

func (a adaptive) Plan(c Clip) (Plan, error) {
	if err := c.check(); err != nil {
		return Plan{}, err
	}
	if c.Pixels == nil {
		return Plan{}, fmt.Errorf("sampling: %s needs the clip's pixels (a low-resolution pass), none given", a)
	}
	if f := math.Ceil(c.Duration*c.FPS - 1e-9); f > MaxAdaptivePass {
		return Plan{}, planError(a, c, "its low-resolution pass would read %s clip frames, more than the limit of %d", fmtCount(f), MaxAdaptivePass)
	}
	n := c.frameCount()
	change := make([]float64, n)
	var prev []byte
	for k := range n {
		px, err := c.Pixels.LowRes(float64(k) / c.FPS)
		if err != nil {
			return Plan{}, fmt.Errorf("sampling: %s: low-resolution frame %d: %w", a, k, err)
		}
		if prev != nil {
			if len(px) != len(prev) || len(px) == 0 {
				return Plan{}, fmt.Errorf("sampling: %s: low-resolution frames differ in size", a)
			}
			var sum int
			for i := range px {
				d := int(px[i]) - int(prev[i])
				if d < 0 {
					d = -d
				}
				sum += d
			}
			change[k] = float64(sum) / float64(len(px))
		}
		prev = append(prev[:0], px...)
	}
	budget := a.budget
	note := ""
	if budget > n {
		budget = n
		note = fmt.Sprintf("budget %d exceeds the clip's %d frames: every frame taken", a.budget, n)
	}
	picks := quantilePicks(change, budget)
	ts := make([]float64, len(picks))
	for i, k := range picks {
		ts[i] = float64(k) / c.FPS
	}
	p := inOrder(a.String(), ts)
	p.Note = note
	return p, nil
}

// quantilePicks chooses b distinct frame indices at the quantiles of the
// weights change_k + β, in increasing order.
func quantilePicks(change []float64, b int) []int {
	n := len(change)
	var mean float64
	for _, d := range change {
		mean += d
	}
	mean /= float64(n)
	beta := StaticShare * mean
	if mean == 0 {
		beta = 1 // nothing changes: uniform
	}
	cum := make([]float64, n)
	total := 0.0
	for k, d := range change {
		total += d + beta
		cum[k] = total
	}
	taken := make([]bool, n)
	picks := make([]int, 0, b)
	for j := range b {
		q := (float64(j) + 0.5) / float64(b) * total
		k := sort.SearchFloat64s(cum, q)
		if k >= n {
			k = n - 1
		}
		// Move a repeated pick to the nearest free frame.
		for off := 0; taken[k]; off++ {
			if k+off < n && !taken[k+off] {
				k += off
				break
			}
			if k-off >= 0 && !taken[k-off] {
				k -= off
				break
			}
		}
		taken[k] = true
		picks = append(picks, k)
	}
	sort.Ints(picks)
	return picks
}
