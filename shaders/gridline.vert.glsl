#version 330 core
// Ground grid lines drawn one by one (the painter path's line mode, see
// package gpu): one instance is one line, a band of the ground between two
// parallel lines, whose image is the band between two straight lines in
// the output. package gpu gives a triangle that holds the band and its
// half-pixel fringe over the canvas, and the two edges as lines in output
// pixels.

layout(location = 0) in vec4 iTriA;  // corners 0 and 1 (x, y), output px
layout(location = 1) in vec4 iTriB;  // corner 2; edge 1: a, b
layout(location = 2) in vec4 iEdges; // edge 1: c; edge 2: a, b, c

uniform vec2 uViewport; // output size in pixels

flat out vec3 vEdge1, vEdge2; // signed distance a·x + b·y + c, positive outside the band

void main() {
    vec2 p = gl_VertexID == 0 ? iTriA.xy : gl_VertexID == 1 ? iTriA.zw : iTriB.xy;
    gl_Position = vec4(p / uViewport * 2.0 - 1.0, 0.0, 1.0);
    vEdge1 = vec3(iTriB.zw, iEdges.x);
    vEdge2 = iEdges.yzw;
}
