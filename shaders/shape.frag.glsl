#version 330 core
// Instanced quad pipeline, fragment stage for shapes. Each primitive is an
// analytic signed distance d in output pixels (negative inside); coverage is
// clamp(0.5 - d, 0, 1), a one-pixel ramp centred on the edge, which
// approximates the covered area of the pixel. Glyphs have their own fragment
// shader (glyph.frag.glsl): on llvmpipe every branch of a shader runs for
// every fragment, and a texture lookup here would triple the cost of a
// full-frame rectangle.
//
// KIND_* are #defined by package gpu (see package shaders).

flat in int vKind;
flat in vec4 vGeom;  // output px (circles: centre in xy; others: x0, y0, x1, y1)
flat in vec4 vParam; // radius, width, head length (output px)
flat in vec4 vColor;

out vec4 fragColor;

float coverage(float d) {
    return clamp(0.5 - d, 0.0, 1.0);
}

// sdBox: distance to an axis-aligned box of half-size h centred at the
// origin, with corner radius r. With r = 0 it uses the Chebyshev form
// max(qx, qy), which keeps sharp corners sharp for both fills and strokes
// (|d| - w/2 then gives a mitred band instead of a rounded one).
float sdBox(vec2 p, vec2 h, float r) {
    if (r <= 0.0) {
        vec2 q = abs(p) - h;
        return max(q.x, q.y);
    }
    r = min(r, min(h.x, h.y));
    vec2 q = abs(p) - h + r;
    return length(max(q, 0.0)) + min(max(q.x, q.y), 0.0) - r;
}

// sdSegmentBox: distance to the rectangle swept by a segment a-b of width w
// with butt caps (flat ends exactly at a and b).
float sdSegmentBox(vec2 p, vec2 a, vec2 b, float w) {
    vec2 ab = b - a;
    float len = length(ab);
    vec2 u = ab / len;
    vec2 q = p - (a + b) * 0.5;
    vec2 local = vec2(dot(q, u), dot(q, vec2(-u.y, u.x)));
    vec2 e = abs(local) - vec2(len * 0.5, w * 0.5);
    return max(e.x, e.y);
}

// sdTriangle: exact signed distance to triangle p0 p1 p2 (Inigo Quilez,
// https://iquilezles.org/articles/distfunctions2d/).
float sdTriangle(vec2 p, vec2 p0, vec2 p1, vec2 p2) {
    vec2 e0 = p1 - p0, e1 = p2 - p1, e2 = p0 - p2;
    vec2 v0 = p - p0, v1 = p - p1, v2 = p - p2;
    vec2 pq0 = v0 - e0 * clamp(dot(v0, e0) / dot(e0, e0), 0.0, 1.0);
    vec2 pq1 = v1 - e1 * clamp(dot(v1, e1) / dot(e1, e1), 0.0, 1.0);
    vec2 pq2 = v2 - e2 * clamp(dot(v2, e2) / dot(e2, e2), 0.0, 1.0);
    float s = sign(e0.x * e2.y - e0.y * e2.x);
    vec2 d = min(min(vec2(dot(pq0, pq0), s * (v0.x * e0.y - v0.y * e0.x)),
                     vec2(dot(pq1, pq1), s * (v1.x * e1.y - v1.y * e1.x))),
                 vec2(dot(pq2, pq2), s * (v2.x * e2.y - v2.y * e2.x)));
    return -sqrt(d.x) * sign(d.y);
}

// arrowCoverage: the shaft ends exactly at the base of the head, so shaft and
// head are disjoint and their coverages add (a min() of the two distances
// would leave a half-covered seam where they meet).
float arrowCoverage(vec2 p, vec2 a, vec2 tip, float w, float head) {
    vec2 ab = tip - a;
    float len = length(ab);
    vec2 u = ab / len;
    vec2 n = vec2(-u.y, u.x);
    float c = 0.0;
    if (head > 0.0) {
        vec2 base = tip - u * head;
        c += coverage(sdTriangle(p, tip, base + n * (head * 0.5), base - n * (head * 0.5)));
    }
    float shaft = len - head;
    if (shaft > 0.0 && w > 0.0) {
        c += coverage(sdSegmentBox(p, a, a + u * shaft, w));
    }
    return min(c, 1.0);
}

void main() {
    vec2 p = gl_FragCoord.xy; // pixel centres at (i + 0.5, j + 0.5), y down

    float r = vParam.x, w = vParam.y;
    vec2 half_size = (vGeom.zw - vGeom.xy) * 0.5;
    vec2 mid = (vGeom.xy + vGeom.zw) * 0.5;
    float c;
    if (vKind == KIND_FILL_CIRCLE) {
        c = coverage(length(p - vGeom.xy) - r);
    } else if (vKind == KIND_STROKE_CIRCLE) {
        c = coverage(abs(length(p - vGeom.xy) - r) - w * 0.5);
    } else if (vKind == KIND_FILL_RECT) {
        c = coverage(sdBox(p - mid, half_size, r));
    } else if (vKind == KIND_STROKE_RECT) {
        c = coverage(abs(sdBox(p - mid, half_size, r)) - w * 0.5);
    } else if (vKind == KIND_LINE) {
        c = coverage(sdSegmentBox(p, vGeom.xy, vGeom.zw, w));
    } else if (vKind == KIND_ARROW) {
        c = arrowCoverage(p, vGeom.xy, vGeom.zw, w, vParam.z);
    } else {
        c = 0.0;
    }
    if (c <= 0.0) {
        discard;
    }
    // Straight alpha; the blend stage does source-over.
    fragColor = vec4(vColor.rgb, vColor.a * c);
}
