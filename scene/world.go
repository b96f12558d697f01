package scene

// This file extends the draw contract (draw.go) with a 3D world: a
// perspective camera, a lined ground plane and static lit objects. A
// DrawList whose World is set is drawn as the world first (package gpu
// chooses how: far to near with analytic anti-aliasing, or depth-tested
// and multisampled), then its 2D Items on top. The camera math lives here, not
// in package gpu, so the trace's "which objects are in view" and the pixels
// come from the same matrices.

import "math"

// Vec3 is a point or direction in world units. The world is right-handed
// with y up; the ground is the plane y = 0.
type Vec3 [3]float64

// Camera is a pinhole camera at Eye. Yaw turns about +y (0 looks along −z,
// positive turns toward −x, i.e. to the left); Pitch tilts about the
// camera's right axis (negative looks down). FovY is the vertical field of
// view; the horizontal one follows from the canvas aspect ratio.
type Camera struct {
	Eye        Vec3
	Yaw, Pitch float64 // radians
	FovY       float64 // radians, in (0, π)
	Near, Far  float64 // clip distances, 0 < Near < Far
}

// Ground is a square on y = 0 centred at the origin, of half side Half,
// Color with lines of LineColor along x and z every LineSpacing, each
// LineWidth wide (world units). Beyond it the DrawList's Background shows.
type Ground struct {
	Half                   float64
	Color, LineColor       RGBA
	LineSpacing, LineWidth float64
}

// Shape is a 3D object's mesh.
type Shape uint8

const (
	// Cube: edge Size, axis-aligned up to a rotation Yaw about +y.
	Cube Shape = iota
	// Sphere: diameter Size.
	Sphere
)

func (s Shape) String() string {
	switch s {
	case Cube:
		return "cube"
	case Sphere:
		return "sphere"
	}
	return "unknown"
}

// Object is one static instance. Its surface colour is Color modulated by
// the light and by a low-amplitude value noise: brightness × (1 + Noise·n),
// n ∈ [−1, 1] a smooth function of the object-space position and NoiseSeed,
// so neighbours of one class are told apart without changing their hue.
type Object struct {
	Shape     Shape
	Center    Vec3
	Size      float64
	Yaw       float64 // radians about +y (cubes)
	Color     RGBA
	Noise     float32
	NoiseSeed uint32
	// Flat draws Color exactly, unlit and without noise (ids in tests).
	Flat bool
}

// Light is a directional light plus ambient: a surface with normal n gets
// Color × (Ambient + Diffuse·max(0, n·Dir)), Dir a unit vector pointing
// toward the light. The ground is unlit (its colours are drawn as given).
type Light struct {
	Dir              Vec3
	Ambient, Diffuse float32
}

// World is a 3D scene. It fills the DrawList's whole canvas: a world point
// whose normalized device coordinates (see Camera.Project) are (x, y) is
// drawn at canvas pixel ((x+1)/2·Width, (1−y)/2·Height), y down.
type World struct {
	Camera  Camera
	Ground  Ground
	Light   Light
	Objects []Object
}

// Equal reports whether two worlds draw the same picture.
func (w *World) Equal(o *World) bool {
	if w == nil || o == nil {
		return w == o
	}
	if w.Camera != o.Camera || w.Ground != o.Ground || w.Light != o.Light || len(w.Objects) != len(o.Objects) {
		return false
	}
	for i := range w.Objects {
		if w.Objects[i] != o.Objects[i] {
			return false
		}
	}
	return true
}

// Mat4 is a 4×4 matrix in column-major order, as OpenGL takes it:
// element (row r, column c) is m[c*4+r].
type Mat4 [16]float64

// Mul returns a·b.
func (a Mat4) Mul(b Mat4) Mat4 {
	var m Mat4
	for c := range 4 {
		for r := range 4 {
			var s float64
			for k := range 4 {
				s += a[k*4+r] * b[c*4+k]
			}
			m[c*4+r] = s
		}
	}
	return m
}

// Apply returns m·(p, 1) as homogeneous coordinates.
func (m Mat4) Apply(p Vec3) [4]float64 {
	var out [4]float64
	for r := range 4 {
		out[r] = m[r]*p[0] + m[4+r]*p[1] + m[8+r]*p[2] + m[12+r]
	}
	return out
}

// Forward is the unit viewing direction.
func (c Camera) Forward() Vec3 {
	cp := math.Cos(c.Pitch)
	return Vec3{-math.Sin(c.Yaw) * cp, math.Sin(c.Pitch), -math.Cos(c.Yaw) * cp}
}

// View is the world-to-camera matrix (camera looks along its −z, y up).
func (c Camera) View() Mat4 {
	f := c.Forward()
	// right = normalize(f × up), up' = right × f; pitch stays inside
	// (−π/2, π/2) so f is never parallel to +y... except a top-down view,
	// handled by taking the yaw's own right vector, which is exact for any
	// pitch.
	right := Vec3{math.Cos(c.Yaw), 0, -math.Sin(c.Yaw)}
	up := cross(right, f)
	e := c.Eye
	return Mat4{
		right[0], up[0], -f[0], 0,
		right[1], up[1], -f[1], 0,
		right[2], up[2], -f[2], 0,
		-dot(right, e), -dot(up, e), dot(f, e), 1,
	}
}

// Projection is the OpenGL perspective matrix for an aspect ratio
// (width/height): clip-space z in [−w, w] between Near and Far.
func (c Camera) Projection(aspect float64) Mat4 {
	t := 1 / math.Tan(c.FovY/2)
	n, f := c.Near, c.Far
	return Mat4{
		t / aspect, 0, 0, 0,
		0, t, 0, 0,
		0, 0, (f + n) / (n - f), -1,
		0, 0, 2 * f * n / (n - f), 0,
	}
}

// ViewProjection is Projection(aspect)·View().
func (c Camera) ViewProjection(aspect float64) Mat4 {
	return c.Projection(aspect).Mul(c.View())
}

// Project maps a world point to normalized device coordinates: x and y in
// [−1, 1] are inside the view (y up), depth in [−1, 1] between Near and Far.
// front is false for a point at or behind the camera plane.
func (c Camera) Project(p Vec3, aspect float64) (x, y, depth float64, front bool) {
	return c.ViewProjection(aspect).project(p)
}

// project is Project with the matrix made once, for many points.
func (m Mat4) project(p Vec3) (x, y, depth float64, front bool) {
	h := m.Apply(p)
	if h[3] <= 1e-12 {
		return 0, 0, 0, false
	}
	return h[0] / h[3], h[1] / h[3], h[2] / h[3], true
}

func dot(a, b Vec3) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

func cross(a, b Vec3) Vec3 {
	return Vec3{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}
