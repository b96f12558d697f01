package perceiver

import (
	"testing"

	"github.com/tracegrid/tracegrid/gpu"
)

// TestReadLabels: every node's label is read from the frame where the node
// is highlighted, at the smallest test size and at the paper's, for clips
// with the three label sets (A…, S1…, P…). Rendered frames, no JPEG: the
// JPEG path is covered by TestAccuracyWithDenseFrames.
func TestReadLabels(t *testing.T) {
	for _, sz := range [][2]int{{testW, testH}, {854, 480}} {
		sets := map[string]bool{} // A…, S1…, P…
		good, all := 0, 0
		for seed := range 8 {
			c := newClip(t, "state_machine", 12, 0.5, seed, sz[0], sz[1])
			tr := c.Trace()
			img := gpu.Image{Width: sz[0], Height: sz[1], Stride: 4 * sz[0], Pix: make([]byte, 4*sz[0]*sz[1])}
			st := &stateTracker{}
			var ras raster
			want := map[int]string{}
			for i, tt := range append([]float64{0}, c.Times()...) {
				if err := testRenderer.Render(c.State(tt), img); err != nil {
					t.Fatal(err)
				}
				ras.loadRGBA(sz[0], sz[1], img.Stride, img.Pix)
				if i == 0 {
					if err := st.setup(&ras); err != nil {
						t.Fatal(err)
					}
				}
				st.observe(tt, &ras, false)
				label := tr.InitialState
				if i > 0 {
					label = tr.Events[i-1].After
				}
				if node := st.obs[len(st.obs)-1].node; node < 0 {
					t.Fatalf("%s at %.3f s: no highlight found", c.P.ID(), tt)
				} else {
					want[node] = label
				}
			}
			for i := range st.nodes {
				all++
				switch l := want[i]; {
				case len(l) > 1:
					sets["S1…"] = true
				case l < "P":
					sets["A…"] = true
				default:
					sets["P…"] = true
				}
				if got := st.label(i); got == want[i] {
					good++
				} else {
					t.Errorf("%dx%d %s: node %d read %q, want %q", sz[0], sz[1], c.P.ID(), i, got, want[i])
				}
			}
		}
		t.Logf("%dx%d: %d of %d labels read, label sets %v", sz[0], sz[1], good, all, sets)
		if len(sets) != 3 {
			t.Errorf("the seeds cover label sets %v, want all three", sets)
		}
	}
}
