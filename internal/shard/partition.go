package shard

import (
	"container/heap"
	"fmt"
	"math"
	"sort"
)

// RenderCost is the estimated work of one clip for render and variants:
// frames × width × height, the pixels rendered, read back, converted and
// encoded.
func RenderCost(frames, width, height int) float64 {
	return float64(frames) * float64(width) * float64(height)
}

// EvalCost is the estimated work of one evaluation item: requests ×
// images, with images counted as at least 1 so that a request sending a
// video or text only still weighs something (a zero cost would let any
// number of such items pile onto one shard).
func EvalCost(requests, images int) float64 {
	return float64(requests) * float64(max(images, 1))
}

// Partition splits the items 0…len(costs)−1 into n parts balanced by cost,
// longest-processing-time first: items by decreasing cost (ties: lower
// index first) each go to the part with the least cost so far (ties: fewer
// items, then lower part number). Part k (0-based) is shard k+1 of n; its
// indices are in increasing (plan) order. Every index is in exactly one
// part; parts beyond the number of items are empty (non-nil). Costs must be
// finite and ≥ 0; costs is not modified.
func Partition(costs []float64, n int) ([][]int, error) {
	if n < 1 || n > MaxCount {
		return nil, fmt.Errorf("partition into %d parts: want 1 to %d", n, MaxCount)
	}
	for i, c := range costs {
		if math.IsNaN(c) || math.IsInf(c, 0) || c < 0 {
			return nil, fmt.Errorf("partition: item %d has cost %v: costs must be finite and ≥ 0", i, c)
		}
	}
	order := make([]int, len(costs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return costs[order[a]] > costs[order[b]] })

	parts := make([][]int, n)
	for k := range parts {
		parts[k] = []int{}
	}
	h := make(bins, n)
	for k := range h {
		h[k] = bin{part: k}
	}
	// All loads are 0 and counts 0: already a heap ordered by part number.
	for _, i := range order {
		b := &h[0]
		parts[b.part] = append(parts[b.part], i)
		b.load += costs[i]
		b.items++
		heap.Fix(&h, 0)
	}
	for _, p := range parts {
		sort.Ints(p)
	}
	return parts, nil
}

// Select returns the plan indices of shard s: part s.Index of
// Partition(costs, s.Count), in plan order.
func Select(costs []float64, s Shard) ([]int, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	parts, err := Partition(costs, s.Count)
	if err != nil {
		return nil, err
	}
	return parts[s.Index-1], nil
}

// bin is one part while partitioning.
type bin struct {
	load  float64
	items int
	part  int
}

// bins is a min-heap: least load, then fewest items, then lowest part.
type bins []bin

func (h bins) Len() int { return len(h) }
func (h bins) Less(a, b int) bool {
	if h[a].load != h[b].load {
		return h[a].load < h[b].load
	}
	if h[a].items != h[b].items {
		return h[a].items < h[b].items
	}
	return h[a].part < h[b].part
}
func (h bins) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *bins) Push(x any)   { *h = append(*h, x.(bin)) }
func (h *bins) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
