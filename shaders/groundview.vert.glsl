#version 330 core
// The ground on the painter path where it is not drawn as grid lines (see
// package gpu): one quad over the whole output (the scissor keeps it to
// the canvas), from gl_VertexID alone. The fragment stage casts each
// pixel's eye ray at the ground plane.

void main() {
    vec2 corner = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1)) * 2.0 - 1.0;
    gl_Position = vec4(corner, 0.0, 1.0);
}
