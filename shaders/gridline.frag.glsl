#version 330 core
// Ground grid lines, fragment stage: the band's coverage of the pixel with
// a one-pixel ramp across each edge, combined as the sum of the two minus
// one (exact for a band thinner than a pixel too), blended over the
// ground. Where two lines cross, blending gives 1 − (1 − c₁)(1 − c₂), the
// union ground.frag.glsl computes.

flat in vec3 vEdge1, vEdge2;

uniform vec4 uLineColor;

out vec4 fragColor;

void main() {
    vec3 p = vec3(gl_FragCoord.xy, 1.0);
    float c = clamp(clamp(0.5 - dot(vEdge1, p), 0.0, 1.0) + clamp(0.5 - dot(vEdge2, p), 0.0, 1.0) - 1.0, 0.0, 1.0);
    if (c <= 0.0) {
        discard;
    }
    fragColor = vec4(uLineColor.rgb, uLineColor.a * c);
}
