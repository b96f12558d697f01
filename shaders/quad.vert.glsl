#version 330 core
// Instanced quad pipeline, vertex stage. One instance is one quad: a whole
// primitive, a piece of one (a stroked rectangle's bands) or one glyph. The
// quad is given in canvas pixels as a centre and two half-axes, so lines and
// arrows get a tight, rotated quad instead of an axis-aligned box; package
// gpu already grew it to include the anti-aliased fringe. Everything is
// converted to output pixels here so the fragment stage can measure
// distances in the pixels it antialiases.
//
// KIND_* are #defined by package gpu (see package shaders).

layout(location = 0) in vec2 aCorner; // unit quad corner, in [-1, 1]^2
layout(location = 1) in vec4 iQuad;   // centre.xy, half-axis A.xy (canvas px)
layout(location = 2) in vec4 iQuadB;  // half-axis B.xy, kind, unused
layout(location = 3) in vec4 iGeom;   // kind-specific points (canvas px), or glyph uv rect
layout(location = 4) in vec4 iParam;  // radius, width, head length, unused (canvas px)
layout(location = 5) in vec4 iColor;  // straight-alpha RGBA

uniform vec2 uViewport;  // output size in pixels
uniform vec3 uTransform; // canvas -> output: scale, offset x, offset y

flat out int vKind;
flat out vec4 vGeom;
flat out vec4 vParam;
flat out vec4 vColor;
out vec2 vUV;

void main() {
    float s = uTransform.x;
    vec2 off = uTransform.yz;
    int kind = int(iQuadB.z + 0.5);

    vec2 p = (iQuad.xy + aCorner.x * iQuad.zw + aCorner.y * iQuadB.xy) * s + off;
    // No y flip: canvas y = 0 lands on window row 0, which glReadPixels
    // returns first, so the read-back image has its top row first. It also
    // makes gl_FragCoord.xy equal to output pixel coordinates, y down.
    gl_Position = vec4(p / uViewport * 2.0 - 1.0, 0.0, 1.0);

    vKind = kind;
    vGeom = kind == KIND_GLYPH ? iGeom : iGeom * s + off.xyxy;
    vParam = iParam * s;
    vColor = iColor;
    vUV = mix(iGeom.xy, iGeom.zw, aCorner * 0.5 + 0.5);
}
