#version 330 core
// Instanced quad pipeline, fragment stage for glyphs: coverage comes from
// the glyph atlas (R8, mipmapped), tinted with the item's colour.

flat in vec4 vColor;
in vec2 vUV;

uniform sampler2D uAtlas;

out vec4 fragColor;

void main() {
    // Gradients scaled by 0.7 bias the mip level by -0.5: trilinear
    // minification alone leaves small text soft.
    float c = textureGrad(uAtlas, vUV, dFdx(vUV) * 0.7, dFdy(vUV) * 0.7).r;
    if (c <= 0.0) {
        discard;
    }
    fragColor = vec4(vColor.rgb, vColor.a * c);
}
