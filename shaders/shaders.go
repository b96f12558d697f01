// Package shaders holds the GLSL sources of package gpu, embedded so the
// binary needs no files at run time.
//
// The sources start with "#version 330 core". The 2D ones use KIND_*
// without defining them: package gpu inserts those #defines after the
// version line from its Go constants, so the shaders and the Go side cannot
// disagree on the primitive numbering.
package shaders

import _ "embed" // for //go:embed

// QuadVertex is the vertex shader of the instanced quad pipeline, shared by
// both programs: it places one unit quad per instance and hands the
// instance's geometry, converted to output pixels, to the fragment shader.
//
//go:embed quad.vert.glsl
var QuadVertex string

// ShapeFragment is the fragment shader for circles, rectangles, lines and
// arrows: it evaluates the instance's analytic signed distance and turns it
// into anti-aliased coverage.
//
//go:embed shape.frag.glsl
var ShapeFragment string

// GlyphFragment is the fragment shader for text: it samples the glyph
// atlas.
//
//go:embed glyph.frag.glsl
var GlyphFragment string

// ObjectVertex is the vertex shader of 3D objects drawn as meshes (the
// depth path): it places one instance of a unit mesh (cube or sphere) per
// object, scaled, turned about +y and projected by the camera.
//
//go:embed object.vert.glsl
var ObjectVertex string

// ObjectFragment lights 3D objects drawn as meshes (ambient plus one
// directional light) and modulates their brightness with the value noise
// of Noise, which package gpu inserts after its #version line; flat
// objects get their colour unchanged.
//
//go:embed object.frag.glsl
var ObjectFragment string

// GroundVertex draws the ground square on y = 0 from gl_VertexID alone.
//
//go:embed ground.vert.glsl
var GroundVertex string

// GroundFragment colours the ground and its grid lines, box-filtered over
// each pixel's footprint so distant lines fade to their average colour.
//
//go:embed ground.frag.glsl
var GroundFragment string

// Grid is the ground's grid line coverage: GLSL functions, without a
// #version line, that package gpu inserts after the #version line of both
// ground fragment shaders (GroundFragment, GroundViewFragment).
//
//go:embed grid.glsl
var Grid string

// Noise is the objects' surface noise: GLSL functions, without a #version
// line, that package gpu inserts after the #version line of every object
// fragment shader (ObjectFragment, CubeFragment, SphereFragment), so all
// of them draw the same pattern.
//
//go:embed noise.glsl
var Noise string

// ImpostorVertex is the vertex shader of 3D objects drawn without a depth
// buffer (the painter path): one screen-aligned rectangle per object and
// the object-space eye ray through each pixel. With CUBE #defined (by
// package gpu) it also works out the cube's visible faces' edges.
//
//go:embed impostor.vert.glsl
var ImpostorVertex string

// CubeFragment shades a cube's rectangle: coverage of each visible face
// from its edges, lighting and noise.
//
//go:embed cube.frag.glsl
var CubeFragment string

// SphereFragment shades a sphere's rectangle: coverage from the ray's
// distance to the silhouette, lighting and noise.
//
//go:embed sphere.frag.glsl
var SphereFragment string

// GroundViewVertex covers the output with one quad, for GroundViewFragment.
//
//go:embed groundview.vert.glsl
var GroundViewVertex string

// GroundViewFragment draws the ground on the painter path where its lines
// are not drawn one by one: each pixel's eye ray meets the ground plane,
// the lines are box-filtered as in GroundFragment, and the ground's edges
// get analytic coverage.
//
//go:embed groundview.frag.glsl
var GroundViewFragment string
