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

// ObjectVertex is the vertex shader of 3D objects: it places one instance
// of a unit mesh (cube or sphere) per object, scaled, turned about +y and
// projected by the camera.
//
//go:embed object.vert.glsl
var ObjectVertex string

// ObjectFragment lights 3D objects (ambient plus one directional light) and
// modulates their brightness with a per-object value noise; flat objects get
// their colour unchanged.
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
