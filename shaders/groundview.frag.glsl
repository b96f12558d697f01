#version 330 core
// The ground on the painter path, fragment stage: the pixel's eye ray
// eye + t·d, with d = uRay0 + x·uRayX + y·uRayY for output point (x, y)
// (gl_FragCoord; d has unit view depth, so t is the view depth), meets the
// plane y = 0 at t = −eye.y / d.y. The grid lines there are box-filtered
// over the pixel's footprint by gridCover (grid.glsl). The ground's own
// edges — the square's four sides and the lines where its points reach the
// near and far clip distances — are straight lines in the output, given
// as signed distances in pixels (positive outside), each giving a
// one-pixel ramp of coverage: so the ground is anti-aliased against the
// background without multisampling, and a ray that misses the ground (above
// the horizon, or past an edge) has coverage 0.

uniform vec3 uEye;
uniform vec3 uRay0, uRayX, uRayY;
uniform vec3 uEdge[6]; // a, b, c: distance a·x + b·y + c from each edge
uniform vec4 uColor;
uniform vec4 uLineColor;
uniform vec2 uLines; // 1 / spacing, line width / spacing (in [0, 1])

out vec4 fragColor;

void main() {
    vec3 p = vec3(gl_FragCoord.xy, 1.0);
    float cover = 1.0;
    for (int i = 0; i < 6; i++) {
        cover *= clamp(0.5 - dot(uEdge[i], p), 0.0, 1.0);
    }
    if (cover <= 0.0) {
        discard;
    }
    vec3 d = uRay0 + p.x * uRayX + p.y * uRayY;
    vec2 xz = uEye.xz - uEye.y / d.y * d.xz;
    vec4 col = mix(uColor, uLineColor, gridCover(xz, uLines));
    fragColor = vec4(col.rgb, col.a * cover);
}
