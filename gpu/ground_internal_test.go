package gpu

import (
	"slices"
	"testing"
)

func TestDirtyRects(t *testing.T) {
	const w, h = 100, 80
	full := [][4]int32{{0, 0, w, h}}
	for _, c := range []struct {
		name  string
		objs  [][4]int32
		whole bool
		want  [][4]int32
	}{
		{"none", nil, false, nil},
		{"apart", [][4]int32{{0, 0, 10, 10}, {20, 0, 30, 10}}, false, [][4]int32{{0, 0, 10, 10}, {20, 0, 30, 10}}},
		// Touching is not overlapping: each stays as it is.
		{"touching", [][4]int32{{0, 0, 10, 10}, {10, 0, 20, 10}}, false, [][4]int32{{0, 0, 10, 10}, {10, 0, 20, 10}}},
		{"overlapping", [][4]int32{{0, 0, 10, 10}, {5, 5, 15, 15}}, false, [][4]int32{{0, 0, 15, 15}}},
		// The fourth reaches the second only through its box merged with the
		// first and third.
		{"chain", [][4]int32{{0, 0, 10, 10}, {20, 20, 30, 30}, {8, 8, 22, 12}, {15, 11, 16, 21}}, false, [][4]int32{{0, 0, 30, 30}}},
		{"clamped", [][4]int32{{-5, -5, 10, 10}, {95, 70, 120, 90}}, false, [][4]int32{{0, 0, 10, 10}, {95, 70, 100, 80}}},
		{"off the output", [][4]int32{{-20, 0, -1, 10}, {0, 90, 10, 99}}, false, nil},
		{"whole", [][4]int32{{0, 0, 10, 10}}, true, full},
		{"whole, no objects", nil, true, full},
		// 70×70 = 4,900 of 8,000 pixels is over maxDirtyShare.
		{"most of the output", [][4]int32{{0, 0, 70, 70}}, false, full},
	} {
		got := dirtyRects(nil, c.objs, c.whole, w, h)
		slices.SortFunc(got, func(a, b [4]int32) int { return int(a[0]-b[0])*1000 + int(a[1]-b[1]) })
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Appends after what dst holds, leaving it be.
	dst := [][4]int32{{1, 2, 3, 4}}
	if got := dirtyRects(dst, [][4]int32{{0, 0, 5, 5}}, false, w, h); !slices.Equal(got, [][4]int32{{1, 2, 3, 4}, {0, 0, 5, 5}}) {
		t.Errorf("appending: %v", got)
	}
}

func TestUnorm8(t *testing.T) {
	for _, c := range []struct {
		in   float32
		want byte
	}{{0, 0}, {1, 255}, {0.5, 128}, {-1, 0}, {2, 255}, {0.35, 89}, {0.55, 140}, {0.7, 178}, {1.0 / 255, 1}, {254.0 / 255, 254}} {
		if got := unorm8(c.in); got != c.want {
			t.Errorf("unorm8(%g) = %d, want %d", c.in, got, c.want)
		}
	}
}
