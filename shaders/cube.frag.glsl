#version 330 core
// Cubes drawn without a depth buffer (see impostor.vert.glsl), fragment
// stage. Each edge of a visible face gives a one-pixel ramp of coverage
// across it. The cube's coverage of the pixel (its alpha) is the product
// of the ramps of the silhouette edges, the edges whose other face is
// hidden: the silhouette is convex, and the product is exact along an
// edge and close at a corner. Where faces meet, their shades mix in
// proportion to the product of the ramps of each face's creases (its edges
// to other visible faces), which share out the pixel between them. So the
// silhouette is anti-aliased against what lies behind, and the creases by
// mixing the faces. The surface noise (noise.glsl, inserted by package gpu
// before this file) is taken where the ray enters the cube, as on a mesh.
// Flat cubes get exactly their colour.

noperspective in vec3 vRay;
flat in vec3 vEye;
flat in vec4 vColor;
flat in vec3 vNoiseOff;
flat in vec2 vNoiseFlat;
flat in vec4 vEdgeX[3];
flat in vec4 vEdgeY[3];
flat in vec4 vEdgeC[3];
flat in vec4 vCrease[3];
flat in vec3 vShade;
flat in vec3 vPlane;

out vec4 fragColor;

void main() {
    vec2 p = gl_FragCoord.xy;
    float cover = 1.0;
    vec3 weight;
    for (int a = 0; a < 3; a++) {
        vec4 r = clamp(0.5 - (vEdgeX[a] * p.x + vEdgeY[a] * p.y + vEdgeC[a]), 0.0, 1.0);
        vec4 sil = mix(r, vec4(1.0), vCrease[a]);
        vec4 cre = mix(vec4(1.0), r, vCrease[a]);
        cover *= sil.x * sil.y * sil.z * sil.w;
        weight[a] = cre.x * cre.y * cre.z * cre.w;
    }
    if (cover <= 0.0) {
        discard;
    }
    vec3 rgb = vColor.rgb;
    if (vNoiseFlat.y < 0.5) {
        // Slots that do not show have shade 0 and count for nothing.
        weight *= vec3(notEqual(vPlane, vec3(0.0)));
        float k = dot(weight, vShade) / max(weight.x + weight.y + weight.z, 1e-6);
        if (vNoiseFlat.x != 0.0) {
            // The ray enters the cube through the last face plane it
            // crosses; slots that do not show never count.
            vec3 t = (vPlane - vEye) / vRay;
            float te = max(max(vPlane.x != 0.0 ? t.x : -1e30, vPlane.y != 0.0 ? t.y : -1e30),
                           vPlane.z != 0.0 ? t.z : -1e30);
            k *= 1.0 + vNoiseFlat.x * valueNoise((vEye + te * vRay) * NOISE_FREQ + vNoiseOff);
        }
        rgb = clamp(rgb * k, 0.0, 1.0);
    }
    fragColor = vec4(rgb, vColor.a * cover);
}
