// The objects' surface noise, shared by every object fragment shader
// (package gpu inserts it after their #version line, so all of them give
// the same pattern): a smooth value noise that tells neighbouring objects
// of one colour apart without changing their hue.

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

// Noise cells per unit of the object's mesh: an object is one unit across
// in object space, so a cube face gets a few blotches whatever its size.
const float NOISE_FREQ = 3.0;
