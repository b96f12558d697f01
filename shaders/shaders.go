// Package shaders holds the GLSL sources of package gpu, embedded so the
// binary needs no files at run time.
//
// The sources start with "#version 330 core" and use KIND_* without
// defining them: package gpu inserts those #defines after the
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
