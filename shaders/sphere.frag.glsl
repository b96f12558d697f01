#version 330 core
// Spheres drawn without a depth buffer (see impostor.vert.glsl), fragment
// stage. The ray o + t·d meets the sphere |p| = 1/2 where
// f = |d|²·(|o|² − 1/4) − (o·d)² ≤ 0; f is a quadratic in the pixel, zero on
// the silhouette (an ellipse), so f / |∇f| is the pixel's signed distance
// from it to first order, turned into coverage with a one-pixel ramp. The
// point shaded is where the ray enters the sphere, or for a ray that just
// misses it the silhouette point it passes, with the lighting of
// scene.Light and the surface noise of noise.glsl (inserted by package gpu
// before this file). Flat spheres get exactly their colour.

noperspective in vec3 vRay;
flat in vec3 vEye;
flat in vec4 vColor;
flat in vec3 vNoiseOff;
flat in vec2 vNoiseFlat;
flat in vec3 vRayX, vRayY;
flat in vec3 vLightDir;
flat in vec3 vSphere; // |o|² − 1/4, o·rayX, o·rayY

uniform vec2 uLight; // ambient, diffuse

out vec4 fragColor;

void main() {
    vec3 d = vRay;
    float od = dot(vEye, d), dd = dot(d, d);
    float f = dd * vSphere.x - od * od;
    vec2 g = 2.0 * (vSphere.x * vec2(dot(d, vRayX), dot(d, vRayY)) - od * vSphere.yz);
    float cover = clamp(0.5 - f * inversesqrt(max(dot(g, g), 1e-30)), 0.0, 1.0);
    if (cover <= 0.0) {
        discard;
    }
    vec3 rgb = vColor.rgb;
    if (vNoiseFlat.y < 0.5) {
        float t = (-od - sqrt(max(-f, 0.0))) / dd;
        vec3 p = normalize(vEye + t * d) * 0.5;
        float k = uLight.x + uLight.y * max(0.0, 2.0 * dot(p, vLightDir));
        if (vNoiseFlat.x != 0.0) {
            k *= 1.0 + vNoiseFlat.x * valueNoise(p * NOISE_FREQ + vNoiseOff);
        }
        rgb = clamp(rgb * k, 0.0, 1.0);
    }
    fragColor = vec4(rgb, vColor.a * cover);
}
