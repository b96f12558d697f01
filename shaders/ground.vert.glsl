#version 330 core
// The ground: one square on y = 0, from -uHalf to uHalf in x and z, drawn as
// a four-vertex triangle strip with no vertex attributes (the corners come
// from gl_VertexID).

uniform mat4 uViewProj; // as in object.vert.glsl
uniform float uHalf;

out vec2 vXZ; // world x, z

void main() {
    vec2 corner = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1)) * 2.0 - 1.0;
    vXZ = corner * uHalf;
    gl_Position = uViewProj * vec4(vXZ.x, 0.0, vXZ.y, 1.0);
}
