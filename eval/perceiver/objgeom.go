package perceiver

import "math"

// Small 3D geometry for the objects domain: unit viewing directions and
// rotations between camera frames. Camera coordinates are x right, y down
// (image rows), z forward (the optical axis).

// vec3 is a direction or a point.
type vec3 [3]float64

func (a vec3) add(b vec3) vec3      { return vec3{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }
func (a vec3) scale(s float64) vec3 { return vec3{a[0] * s, a[1] * s, a[2] * s} }
func (a vec3) dot(b vec3) float64   { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }
func (a vec3) norm() float64        { return math.Sqrt(a.dot(a)) }
func (a vec3) cross(b vec3) vec3 {
	return vec3{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}
func (a vec3) unit() vec3 {
	n := a.norm()
	if n == 0 {
		return a
	}
	return a.scale(1 / n)
}
func angleBetween(a, b vec3) float64 { return math.Atan2(a.cross(b).norm(), a.dot(b)) }

// mat3 is a 3×3 matrix, row-major.
type mat3 [9]float64

func identity3() mat3 { return mat3{1, 0, 0, 0, 1, 0, 0, 0, 1} }

func (m mat3) apply(v vec3) vec3 {
	return vec3{
		m[0]*v[0] + m[1]*v[1] + m[2]*v[2],
		m[3]*v[0] + m[4]*v[1] + m[5]*v[2],
		m[6]*v[0] + m[7]*v[1] + m[8]*v[2],
	}
}

// applyT applies the transpose (the inverse of a rotation).
func (m mat3) applyT(v vec3) vec3 {
	return vec3{
		m[0]*v[0] + m[3]*v[1] + m[6]*v[2],
		m[1]*v[0] + m[4]*v[1] + m[7]*v[2],
		m[2]*v[0] + m[5]*v[1] + m[8]*v[2],
	}
}

func (a mat3) mul(b mat3) mat3 {
	var m mat3
	for r := range 3 {
		for c := range 3 {
			m[3*r+c] = a[3*r]*b[c] + a[3*r+1]*b[3+c] + a[3*r+2]*b[6+c]
		}
	}
	return m
}

// axisAngle is the rotation by angle (radians, right-handed) about the unit
// axis u.
func axisAngle(u vec3, angle float64) mat3 {
	c, s := math.Cos(angle), math.Sin(angle)
	t := 1 - c
	x, y, z := u[0], u[1], u[2]
	return mat3{
		t*x*x + c, t*x*y - s*z, t*x*z + s*y,
		t*x*y + s*z, t*y*y + c, t*y*z - s*x,
		t*x*z - s*y, t*y*z + s*x, t*z*z + c,
	}
}

// fitRotation returns the rotation R that best maps each a[i] onto b[i]
// (least squares over unit vectors, weights w): Horn's closed form, the
// eigenvector of the largest eigenvalue of a symmetric 4×4 matrix.
func fitRotation(a, b []vec3, w []float64) mat3 {
	var s [3][3]float64
	for i := range a {
		for r := range 3 {
			for c := range 3 {
				s[r][c] += w[i] * a[i][r] * b[i][c]
			}
		}
	}
	sxx, sxy, sxz := s[0][0], s[0][1], s[0][2]
	syx, syy, syz := s[1][0], s[1][1], s[1][2]
	szx, szy, szz := s[2][0], s[2][1], s[2][2]
	n := [4][4]float64{
		{sxx + syy + szz, syz - szy, szx - sxz, sxy - syx},
		{syz - szy, sxx - syy - szz, sxy + syx, szx + sxz},
		{szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy},
		{sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz},
	}
	vals, vecs := jacobi4(n)
	best := 0
	for i := 1; i < 4; i++ {
		if vals[i] > vals[best] {
			best = i
		}
	}
	q0, qx, qy, qz := vecs[0][best], vecs[1][best], vecs[2][best], vecs[3][best]
	return mat3{
		q0*q0 + qx*qx - qy*qy - qz*qz, 2 * (qx*qy - q0*qz), 2 * (qx*qz + q0*qy),
		2 * (qy*qx + q0*qz), q0*q0 - qx*qx + qy*qy - qz*qz, 2 * (qy*qz - q0*qx),
		2 * (qz*qx - q0*qy), 2 * (qz*qy + q0*qx), q0*q0 - qx*qx - qy*qy + qz*qz,
	}
}

// jacobi4 diagonalises a symmetric 4×4 matrix: eigenvalues, and the
// eigenvectors as the columns of vecs.
func jacobi4(a [4][4]float64) (vals [4]float64, vecs [4][4]float64) {
	for i := range 4 {
		vecs[i][i] = 1
	}
	for sweep := 0; sweep < 50; sweep++ {
		off := 0.0
		for p := range 4 {
			for q := p + 1; q < 4; q++ {
				off += a[p][q] * a[p][q]
			}
		}
		if off < 1e-22 {
			break
		}
		for p := range 4 {
			for q := p + 1; q < 4; q++ {
				if math.Abs(a[p][q]) < 1e-300 {
					continue
				}
				theta := (a[q][q] - a[p][p]) / (2 * a[p][q])
				t := 1 / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				if theta < 0 {
					t = -t
				}
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for k := range 4 {
					akp, akq := a[k][p], a[k][q]
					a[k][p] = c*akp - s*akq
					a[k][q] = s*akp + c*akq
				}
				for k := range 4 {
					apk, aqk := a[p][k], a[q][k]
					a[p][k] = c*apk - s*aqk
					a[q][k] = s*apk + c*aqk
				}
				for k := range 4 {
					vkp, vkq := vecs[k][p], vecs[k][q]
					vecs[k][p] = c*vkp - s*vkq
					vecs[k][q] = s*vkp + c*vkq
				}
			}
		}
	}
	for i := range 4 {
		vals[i] = a[i][i]
	}
	return vals, vecs
}
