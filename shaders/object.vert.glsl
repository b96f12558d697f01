#version 330 core
// 3D objects, vertex stage. One instance is one object: a unit mesh (cube of
// edge 1 or sphere of diameter 1, centred on the origin) scaled by Size,
// turned by Yaw about +y and moved to Center. Everything the fragment stage
// needs per object is passed flat, so it is read once per triangle.

layout(location = 0) in vec3 aPos;    // unit mesh position, object space
layout(location = 1) in vec3 aNormal; // unit mesh normal, object space
layout(location = 2) in vec4 iCenter; // centre x, y, z, size (world units)
layout(location = 3) in vec4 iColor;  // straight-alpha RGBA
layout(location = 4) in vec4 iRot;    // cos yaw, sin yaw, noise amplitude, flat (0 or 1)
layout(location = 5) in vec4 iSeed;   // noise-space offset from NoiseSeed, unused

// Projection · view, then a clip-space scale and offset that puts the
// canvas where package gpu's fit() puts it and flips y (window row 0 is the
// canvas's top row, as in the 2D path). The flip mirrors the image, so
// outward (counter-clockwise) faces arrive clockwise: gpu sets glFrontFace.
uniform mat4 uViewProj;

// Noise cells per unit of the mesh: the mesh is one unit across. The same
// value as NOISE_FREQ in noise.glsl, which the painter path's fragment
// shaders use (noise.glsl is not inserted into vertex shaders).
const float NOISE_FREQ = 3.0;

out vec3 vNormal;   // world space, interpolated (normalized per fragment)
out vec3 vNoisePos; // object-space position in noise cells, offset by the seed
flat out vec4 vColor;
flat out vec2 vNoiseFlat; // noise amplitude, flat

void main() {
    float c = iRot.x, s = iRot.y;
    // Rotation about +y, the same sense as scene.Camera's yaw: a positive
    // angle turns -z toward -x.
    mat3 rot = mat3(c, 0.0, -s,
                    0.0, 1.0, 0.0,
                    s, 0.0, c);
    vec3 world = iCenter.xyz + rot * (aPos * iCenter.w);
    gl_Position = uViewProj * vec4(world, 1.0);
    vNormal = rot * aNormal;
    vNoisePos = aPos * NOISE_FREQ + iSeed.xyz;
    vColor = iColor;
    vNoiseFlat = iRot.zw;
}
