#version 330 core
// 3D objects drawn as meshes (the depth-buffered path, see package gpu),
// fragment stage: the lighting of scene.Light and the surface noise of
// noise.glsl, which package gpu inserts before this file. Flat objects get
// exactly their colour (tests identify objects by it).

in vec3 vNormal;
in vec3 vNoisePos;
flat in vec4 vColor;
flat in vec2 vNoiseFlat;

uniform vec3 uLightDir; // unit vector toward the light
uniform vec2 uLight;    // ambient, diffuse

out vec4 fragColor;

void main() {
    if (vNoiseFlat.y > 0.5) {
        fragColor = vColor;
        return;
    }
    vec3 n = normalize(vNormal);
    float k = uLight.x + uLight.y * max(0.0, dot(n, uLightDir));
    if (vNoiseFlat.x != 0.0) {
        k *= 1.0 + vNoiseFlat.x * valueNoise(vNoisePos);
    }
    fragColor = vec4(clamp(vColor.rgb * k, 0.0, 1.0), vColor.a);
}
