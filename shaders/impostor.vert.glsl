#version 330 core
// 3D objects drawn without a depth buffer (the painter path, see package
// gpu), vertex stage. One instance is one object, drawn as an octagon
// around it (a triangle fan of eight vertices); the fragment stage casts the pixel's eye ray at the
// object (a unit cube or a sphere of diameter 1 in object space) and turns
// the ray's distance from the silhouette into coverage, so edges are
// anti-aliased without multisampling.
//
// The eye ray through output point (x, y) (pixels, y down, as
// gl_FragCoord) has, in object space, the direction
// iRay0 + x·iRayX + y·iRayY: affine in (x, y), so it is interpolated
// without perspective. The ray is iEye + t·direction.
//
// CUBE is #defined by package gpu for the cube program.

layout(location = 0) in vec4 iEye;   // eye in object space; noise amplitude
layout(location = 1) in vec4 iRay0;  // ray direction at output (0, 0); flat (0 or 1)
layout(location = 2) in vec4 iRayX;  // its change per output pixel in x; noise offset x
layout(location = 3) in vec4 iRayY;  // its change per output pixel in y; noise offset y
layout(location = 4) in vec4 iColor; // straight-alpha RGBA
layout(location = 5) in vec4 iBox;   // the octagon to shade, output px: bounds x0, y0, x1, y1 of x and y,
layout(location = 6) in vec4 iDiag;  // and s0, d0, s1, d1 of x+y and x−y (every corner on the box)
layout(location = 7) in vec4 iLight; // unit vector toward the light, object space; noise offset z

uniform vec2 uViewport; // output size in pixels
uniform vec2 uLight;    // ambient, diffuse

noperspective out vec3 vRay; // ray direction, object space
flat out vec3 vEye;
flat out vec4 vColor;
flat out vec3 vNoiseOff;  // noise-space offset from NoiseSeed
flat out vec2 vNoiseFlat; // noise amplitude, flat

#ifdef CUBE
// Per face slot a (the face ±a that can face the eye: the one on the eye's
// side of the slab |p_a| ≤ 0.5), its four edges as lines in output pixels:
// edge i's signed distance from pixel centre p, positive outside the face,
// is vEdgeX[a][i]·p.x + vEdgeY[a][i]·p.y + vEdgeC[a][i]. vCrease[a][i] is 1
// where the face across the edge shows too (a crease), 0 where the edge is
// on the silhouette.
flat out vec4 vEdgeX[3];
flat out vec4 vEdgeY[3];
flat out vec4 vEdgeC[3];
flat out vec4 vCrease[3];
flat out vec3 vShade; // each slot's light factor, ambient + diffuse·max(0, n·L); 0 if it does not show
flat out vec3 vPlane; // each slot's face plane, ±0.5, or 0 where it does not show
#else
flat out vec3 vRayX, vRayY;
flat out vec3 vLightDir;
flat out vec3 vSphere; // |eye|² − 0.25, eye·rayX, eye·rayY
#endif

// corner k of the octagon, in order around it (as package gpu's
// octagon.corners).
vec2 corner(int k) {
    float x0 = iBox.x, y0 = iBox.y, x1 = iBox.z, y1 = iBox.w;
    float s0 = iDiag.x, d0 = iDiag.y, s1 = iDiag.z, d1 = iDiag.w;
    switch (k) {
    case 0: return vec2(x1, x1 - d1);
    case 1: return vec2(x1, s1 - x1);
    case 2: return vec2(s1 - y1, y1);
    case 3: return vec2(d0 + y1, y1);
    case 4: return vec2(x0, x0 - d0);
    case 5: return vec2(x0, s0 - x0);
    case 6: return vec2(s0 - y0, y0);
    default: return vec2(d1 + y0, y0);
    }
}

void main() {
    vec2 p = corner(gl_VertexID);
    gl_Position = vec4(p / uViewport * 2.0 - 1.0, 0.0, 1.0);
    vRay = iRay0.xyz + p.x * iRayX.xyz + p.y * iRayY.xyz;
    vEye = iEye.xyz;
    vColor = iColor;
    vNoiseOff = vec3(iRayX.w, iRayY.w, iLight.w);
    vNoiseFlat = vec2(iEye.w, iRay0.w);
#ifdef CUBE
    for (int a = 0; a < 3; a++) {
        float oa = iEye[a];
        if (abs(oa) <= 0.5) {
            // The eye is inside this slab: neither face a shows. Its edges
            // leave the silhouette alone (distance −∞) and it weighs 0.
            vEdgeX[a] = vec4(0.0);
            vEdgeY[a] = vec4(0.0);
            vEdgeC[a] = vec4(-1e4);
            vCrease[a] = vec4(1.0);
            vShade[a] = 0.0;
            vPlane[a] = 0.0;
            continue;
        }
        float s = sign(oa);
        int b = (a + 1) % 3, c = (a + 2) % 3;
        // A ray meets the face plane p_a = s/2 at p_k = o_k + (s/2 − o_a)·d_k/d_a,
        // so p_k = e exactly where h = (o_k − e)·d_a + (s/2 − o_a)·d_k
        // vanishes: a linear function of the direction d, hence affine in
        // the pixel. It has the sign of e·s at the face's centre.
        vec4 ex, ey, ec, crease;
        for (int i = 0; i < 4; i++) {
            int k = i < 2 ? b : c;
            float e = (i % 2 == 0) ? 0.5 : -0.5;
            vec3 w = vec3(0.0);
            w[a] = iEye[k] - e;
            w[k] = 0.5 * s - oa;
            vec3 g = vec3(dot(w, iRayX.xyz), dot(w, iRayY.xyz), dot(w, iRay0.xyz));
            // Outside (positive) is where h has the sign opposite to e·s.
            g *= -sign(e * s) * inversesqrt(max(dot(g.xy, g.xy), 1e-30));
            ex[i] = g.x;
            ey[i] = g.y;
            ec[i] = g.z;
            // Across the edge p_k = e lies the face p_k = e: it shows when
            // the eye is beyond it.
            crease[i] = (iEye[k] * sign(e) > 0.5) ? 1.0 : 0.0;
        }
        vEdgeX[a] = ex;
        vEdgeY[a] = ey;
        vEdgeC[a] = ec;
        vCrease[a] = crease;
        vShade[a] = uLight.x + uLight.y * max(0.0, s * iLight[a]);
        vPlane[a] = 0.5 * s;
    }
#else
    vRayX = iRayX.xyz;
    vRayY = iRayY.xyz;
    vLightDir = iLight.xyz;
    vSphere = vec3(dot(iEye.xyz, iEye.xyz) - 0.25, dot(iEye.xyz, iRayX.xyz), dot(iEye.xyz, iRayY.xyz));
#endif
}
