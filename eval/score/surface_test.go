package score

import "testing"

// cellsFrom builds a surface from per-cell correct counts out of 10.
func cellsFrom(f float64, correct map[int]int) []Cell {
	var cs []Cell
	for n, k := range correct {
		cs = append(cs, Cell{N: n, F: f, Trials: 10, Correct: k, Accuracy: float64(k) / 10})
	}
	return cs
}

func TestCountBoundary(t *testing.T) {
	var cells []Cell
	// 0.5 Hz: reliable through 6 (8/10 at N=6 is exactly τ), 8 fails, 10
	// and 12 succeed again in isolation and must be ignored.
	cells = append(cells, cellsFrom(0.5, map[int]int{0: 2, 1: 10, 2: 9, 3: 10, 4: 9, 5: 10, 6: 8, 8: 7, 10: 10, 12: 9})...)
	// 1.0 Hz: fails at N=1, so the boundary is "< 1" even though 2 and 3
	// succeed; the N=0 control is not part of the prefix.
	cells = append(cells, cellsFrom(1.0, map[int]int{0: 10, 1: 7, 2: 10, 3: 10})...)
	// 1.5 Hz: every tested count reliable.
	cells = append(cells, cellsFrom(1.5, map[int]int{1: 10, 2: 8, 3: 9})...)

	cases := []struct {
		f    float64
		want Boundary
	}{
		{0.5, Boundary{Value: 6, Label: "6"}},
		{1.0, Boundary{Value: 1, Below: true, Label: "< 1"}},
		{1.5, Boundary{Value: 3, Label: "3"}},
		{4.0, Boundary{Label: "no data"}},
	}
	for _, c := range cases {
		if got := CountBoundary(cells, c.f, Tau); got != c.want {
			t.Errorf("N*(%v) = %+v, want %+v", c.f, got, c.want)
		}
	}
	if got := MaxCountBoundary(cells, Tau); got != (Boundary{Value: 6, Label: "6"}) {
		t.Errorf("max count boundary %+v", got)
	}
	// With no frequency reliable at N=1 the maximum is "< 1" too (as for
	// Blinking in the paper).
	fail := append(cellsFrom(0.5, map[int]int{1: 5, 2: 10}), cellsFrom(1.0, map[int]int{1: 0})...)
	if got := MaxCountBoundary(fail, Tau); got != (Boundary{Value: 1, Below: true, Label: "< 1"}) {
		t.Errorf("all-fail max count boundary %+v", got)
	}
	// A failing first frequency does not hide a later reliable one.
	late := append(cellsFrom(0.5, map[int]int{1: 5}), cellsFrom(1.0, map[int]int{1: 9, 2: 8, 3: 1})...)
	if got := MaxCountBoundary(late, Tau); got != (Boundary{Value: 2, Label: "2"}) {
		t.Errorf("late max count boundary %+v", got)
	}
	// On a grid that skips N=1 at one frequency, "< 2" is the larger bound.
	skip := append(cellsFrom(0.5, map[int]int{1: 5}), cellsFrom(1.0, map[int]int{2: 1})...)
	if got := MaxCountBoundary(skip, Tau); got != (Boundary{Value: 2, Below: true, Label: "< 2"}) {
		t.Errorf("skipped-count max boundary %+v", got)
	}
	if got := MaxCountBoundary(nil, Tau); got != (Boundary{Label: "no data"}) {
		t.Errorf("empty max boundary %+v", got)
	}
	// A stricter τ moves the boundary.
	if got := CountBoundary(cells, 0.5, 0.9); got.Value != 5 {
		t.Errorf("τ=0.9: %+v", got)
	}
}

func TestFrequencyBoundary(t *testing.T) {
	var cells []Cell
	add := func(n int, byF map[float64]int) {
		for f, k := range byF {
			cells = append(cells, Cell{N: n, F: f, Trials: 10, Correct: k, Accuracy: float64(k) / 10})
		}
	}
	// N=1: reliable through 3.0 Hz; 3.5 fails; 4.0 is an isolated success.
	add(1, map[float64]int{0.5: 10, 1.0: 10, 1.5: 9, 2.0: 9, 2.5: 8, 3.0: 8, 3.5: 6, 4.0: 9})
	// N=2: fails at 0.5 Hz (like Qwen): "< 0.5 Hz" though 1.0 Hz succeeds.
	add(2, map[float64]int{0.5: 7, 1.0: 10, 1.5: 10})
	// N=3: reliable only at 0.5 Hz.
	add(3, map[float64]int{0.5: 8, 1.0: 3})
	cases := []struct {
		n    int
		want Boundary
	}{
		{1, Boundary{Value: 3.0, Label: "3.0 Hz"}},
		{2, Boundary{Value: 0.5, Below: true, Label: "< 0.5 Hz"}},
		{3, Boundary{Value: 0.5, Label: "0.5 Hz"}},
		{12, Boundary{Label: "no data"}},
	}
	for _, c := range cases {
		if got := FrequencyBoundary(cells, c.n, Tau); got != c.want {
			t.Errorf("F*(%d) = %+v, want %+v", c.n, got, c.want)
		}
	}
}

func TestSurface(t *testing.T) {
	mk := func(n int, f float64, correct bool) Trial {
		return Trial{N: n, F: f, Score: TrialScore{Correct: correct}}
	}
	trials := []Trial{
		mk(2, 1.0, true), mk(1, 1.0, true), mk(2, 1.0, false), mk(1, 0.5, true),
		mk(2, 1.0+1e-12, true), // rounding noise joins the 1.0 Hz cell
		mk(0, 1.0, true), mk(0, 1.0, false),
	}
	got := Surface(trials)
	want := []Cell{
		{N: 0, F: 1.0, Trials: 2, Correct: 1, Accuracy: 0.5},
		{N: 1, F: 0.5, Trials: 1, Correct: 1, Accuracy: 1},
		{N: 1, F: 1.0, Trials: 1, Correct: 1, Accuracy: 1},
		{N: 2, F: 1.0, Trials: 3, Correct: 2, Accuracy: 2.0 / 3},
	}
	if len(got) != len(want) {
		t.Fatalf("surface %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("cell %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// Surface feeds the boundaries directly: at 1.0 Hz N=1 is 1/1, N=2 2/3.
	if b := CountBoundary(got, 1.0, Tau); b != (Boundary{Value: 1, Label: "1"}) {
		t.Errorf("boundary from surface %+v", b)
	}
}
