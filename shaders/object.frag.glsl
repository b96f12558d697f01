#version 330 core
// 3D objects, fragment stage: the lighting of scene.Light and a smooth
// value noise that tells neighbouring objects of one colour apart without
// changing their hue. Flat objects get exactly their colour (tests identify
// objects by it).

in vec3 vNormal;
in vec3 vNoisePos;
flat in vec4 vColor;
flat in vec2 vNoiseFlat;

uniform vec3 uLightDir; // unit vector toward the light
uniform vec2 uLight;    // ambient, diffuse

out vec4 fragColor;

// hash: a uniform value in [0, 1] for a lattice cell; the pcg3d mix of
// Jarzynski and Olano, "Hash Functions for GPU Rendering" (JCGT 2020):
// integer-only, so every driver gives the same bits.
float hash(uvec3 v) {
    v = v * 1664525u + 1013904223u;
    v.x += v.y * v.z; v.y += v.z * v.x; v.z += v.x * v.y;
    v ^= v >> 16u;
    v.x += v.y * v.z; v.y += v.z * v.x; v.z += v.x * v.y;
    return float(v.x) * (1.0 / 4294967295.0);
}

// valueNoise: trilinear interpolation, with a smoothstep fade, of random
// values at the integer lattice; in [-1, 1] and C1-smooth.
float valueNoise(vec3 p) {
    vec3 i = floor(p);
    vec3 f = p - i;
    vec3 u = f * f * (3.0 - 2.0 * f);
    uvec3 c = uvec3(ivec3(i)); // negative cells wrap: fine for a hash
    float n000 = hash(c);
    float n100 = hash(c + uvec3(1u, 0u, 0u));
    float n010 = hash(c + uvec3(0u, 1u, 0u));
    float n110 = hash(c + uvec3(1u, 1u, 0u));
    float n001 = hash(c + uvec3(0u, 0u, 1u));
    float n101 = hash(c + uvec3(1u, 0u, 1u));
    float n011 = hash(c + uvec3(0u, 1u, 1u));
    float n111 = hash(c + uvec3(1u, 1u, 1u));
    float n = mix(mix(mix(n000, n100, u.x), mix(n010, n110, u.x), u.y),
                  mix(mix(n001, n101, u.x), mix(n011, n111, u.x), u.y), u.z);
    return n * 2.0 - 1.0;
}

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
