package gpu

import (
	"math"
	"testing"

	"github.com/tracegrid/tracegrid/scene"
)

// checkMesh verifies that every triangle is counter-clockwise seen from
// outside (back-face culling would otherwise drop the visible faces) and
// that normals are unit length and point outward.
func checkMesh(t *testing.T, name string, m mesh, wantTris int) {
	t.Helper()
	if len(m.verts)%floatsPerVertex != 0 || len(m.index)%3 != 0 {
		t.Fatalf("%s: %d floats, %d indices", name, len(m.verts), len(m.index))
	}
	if got := len(m.index) / 3; got != wantTris {
		t.Errorf("%s: %d triangles, want %d", name, got, wantTris)
	}
	nv := len(m.verts) / floatsPerVertex
	vert := func(i uint16) (p, n [3]float64) {
		if int(i) >= nv {
			t.Fatalf("%s: index %d of %d vertices", name, i, nv)
		}
		v := m.verts[int(i)*floatsPerVertex:]
		return [3]float64{float64(v[0]), float64(v[1]), float64(v[2])}, [3]float64{float64(v[3]), float64(v[4]), float64(v[5])}
	}
	for k := 0; k < len(m.index); k += 3 {
		a, na := vert(m.index[k])
		b, _ := vert(m.index[k+1])
		c, _ := vert(m.index[k+2])
		if l := math.Sqrt(dot3(na, na)); math.Abs(l-1) > 1e-6 {
			t.Fatalf("%s: normal %v has length %v", name, na, l)
		}
		ab, ac := sub3(b, a), sub3(c, a)
		geo := cross3(ab, ac)
		area := math.Sqrt(dot3(geo, geo)) / 2
		if area < 1e-6 {
			t.Fatalf("%s: triangle %d is degenerate", name, k/3)
		}
		centroid := [3]float64{(a[0] + b[0] + c[0]) / 3, (a[1] + b[1] + c[1]) / 3, (a[2] + b[2] + c[2]) / 3}
		if dot3(geo, centroid) <= 0 {
			t.Fatalf("%s: triangle %d (%v %v %v) is clockwise seen from outside", name, k/3, a, b, c)
		}
		if dot3(na, centroid) <= 0 {
			t.Fatalf("%s: normal %v at %v points inward", name, na, a)
		}
	}
}

func dot3(a, b [3]float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }
func sub3(a, b [3]float64) [3]float64 {
	return [3]float64{a[0] - b[0], a[1] - b[1], a[2] - b[2]}
}
func cross3(a, b [3]float64) [3]float64 {
	return [3]float64{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}

func TestCubeMesh(t *testing.T) {
	m := cubeMesh()
	checkMesh(t, "cube", m, 12)
	for i := 0; i < len(m.verts); i += floatsPerVertex {
		for _, c := range m.verts[i : i+3] {
			if math.Abs(float64(c)) != 0.5 {
				t.Fatalf("cube vertex %v not a corner of [-0.5, 0.5]^3", m.verts[i:i+3])
			}
		}
	}
}

func TestSphereMesh(t *testing.T) {
	m := sphereMesh(sphereSlices, sphereStacks)
	checkMesh(t, "sphere", m, 2*sphereSlices*(sphereStacks-1))
	for i := 0; i < len(m.verts); i += floatsPerVertex {
		v := m.verts[i : i+3]
		if r := math.Sqrt(float64(v[0]*v[0] + v[1]*v[1] + v[2]*v[2])); math.Abs(r-0.5) > 1e-6 {
			t.Fatalf("sphere vertex %v at radius %v", v, r)
		}
	}
	if n := len(m.verts) / floatsPerVertex; n > math.MaxUint16 {
		t.Fatalf("%d vertices do not fit 16-bit indices", n)
	}
}

func TestSeedOffset(t *testing.T) {
	seen := map[[3]float32]uint32{}
	for s := uint32(0); s < 1000; s++ {
		o := seedOffset(s)
		for _, c := range o {
			if c < 0 || c >= 1024 || c != float32(math.Trunc(float64(c))) {
				t.Fatalf("seed %d: offset %v not whole cells in [0, 1024)", s, o)
			}
		}
		if prev, ok := seen[o]; ok {
			t.Fatalf("seeds %d and %d share the offset %v", prev, s, o)
		}
		seen[o] = s
	}
}

// TestClipMatrix checks that the matrix the shaders use puts a world point
// where the contract in scene/world.go says, in output pixels, for a
// letterboxed, scaled canvas.
func TestClipMatrix(t *testing.T) {
	cam := scene.Camera{Eye: scene.Vec3{1, 3, 8}, Yaw: 0.3, Pitch: -0.4, FovY: 0.9, Near: 0.1, Far: 100}
	const cw, ch, ow, oh = 160, 90, 401, 300
	tf := fit(cw, ch, ow, oh)
	m := clipMatrix(cam, cw, ch, tf, ow, oh)
	for _, p := range []scene.Vec3{{0, 0, 0}, {1, 2, -3}, {-2, 0.5, 1}} {
		x, y, depth, front := cam.Project(p, float64(cw)/ch)
		if !front {
			t.Fatalf("%v behind the camera", p)
		}
		wantX := (x+1)/2*cw*tf.s + tf.offX
		wantY := (1-y)/2*ch*tf.s + tf.offY
		h := m.Apply(p)
		gotX := (h[0]/h[3] + 1) / 2 * ow // window x
		gotY := (h[1]/h[3] + 1) / 2 * oh // window y = output row (no flip on read back)
		if math.Abs(gotX-wantX) > 1e-9 || math.Abs(gotY-wantY) > 1e-9 || math.Abs(h[2]/h[3]-depth) > 1e-12 {
			t.Errorf("%v: window (%.4f, %.4f, %.4f), want (%.4f, %.4f, %.4f)", p, gotX, gotY, h[2]/h[3], wantX, wantY, depth)
		}
	}
	// s = 401/160, so the canvas is 225.56 rows tall: its rows are rounded
	// to whole pixels for the scissor.
	y0, y1 := int32(math.Round(tf.offY)), int32(math.Round(tf.offY+tf.s*ch))
	if sc := canvasRect(cw, ch, tf, ow, oh); sc != [4]int32{0, y0, ow, y1 - y0} {
		t.Errorf("canvas rect %v, want x 0, y %d, %dx%d", sc, y0, ow, y1-y0)
	}
}
