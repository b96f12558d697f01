// The ground's grid lines, shared by both ground fragment shaders (package
// gpu inserts it after their #version line, so the depth path and the
// painter path filter the lines the same way): lines along x and z,
// anti-aliased by box-filtering the line pattern over the pixel's
// footprint on the ground (its size from fwidth). The integral of a
// periodic pattern has a closed form, so the filter costs the same at any
// distance, and where many lines fall in one pixel the result converges to
// their average colour instead of aliasing into moiré.

// lineIntegral: the integral over [0, t] of a period-1 pattern that is 1 on
// [0, r) and 0 elsewhere.
vec2 lineIntegral(vec2 t, float r) {
    return floor(t) * r + min(fract(t), vec2(r));
}

// gridCover is how much of the pixel at ground point xz the grid lines
// cover, in [0, 1]; lines is (1 / spacing, line width / spacing).
float gridCover(vec2 xz, vec2 lines) {
    float r = lines.y;
    // In units of the spacing, shifted so that the lines, centred on
    // multiples of the spacing, start at integers.
    vec2 u = xz * lines.x + r * 0.5;
    vec2 h = max(fwidth(u), vec2(1e-6)) * 0.5; // half the footprint
    u -= floor(u); // the pattern is periodic; small numbers keep precision
    vec2 cover = clamp((lineIntegral(u + h, r) - lineIntegral(u - h, r)) / (2.0 * h), 0.0, 1.0);
    // Crossing lines: the union of the two coverages.
    return 1.0 - (1.0 - cover.x) * (1.0 - cover.y);
}
