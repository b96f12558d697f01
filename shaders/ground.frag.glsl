#version 330 core
// The ground, fragment stage: lines along x and z, anti-aliased by
// box-filtering the line pattern over the pixel's footprint on the ground
// (its size from fwidth). The integral of a periodic pattern has a closed
// form, so the filter costs the same at any distance, and where many lines
// fall in one pixel the result converges to their average colour instead
// of aliasing into moiré. Unlit.

in vec2 vXZ;

uniform vec4 uColor;
uniform vec4 uLineColor;
uniform vec2 uLines; // 1 / spacing, line width / spacing (in [0, 1])

out vec4 fragColor;

// lineIntegral: the integral over [0, t] of a period-1 pattern that is 1 on
// [0, r) and 0 elsewhere.
vec2 lineIntegral(vec2 t, float r) {
    return floor(t) * r + min(fract(t), vec2(r));
}

void main() {
    float r = uLines.y;
    // In units of the spacing, shifted so that the lines, centred on
    // multiples of the spacing, start at integers.
    vec2 u = vXZ * uLines.x + r * 0.5;
    vec2 h = max(fwidth(u), vec2(1e-6)) * 0.5; // half the footprint
    u -= floor(u); // the pattern is periodic; small numbers keep precision
    vec2 cover = (lineIntegral(u + h, r) - lineIntegral(u - h, r)) / (2.0 * h);
    cover = clamp(cover, 0.0, 1.0);
    // Crossing lines: the union of the two coverages.
    float c = 1.0 - (1.0 - cover.x) * (1.0 - cover.y);
    fragColor = mix(uColor, uLineColor, c);
}
