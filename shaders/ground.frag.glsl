#version 330 core
// The ground, fragment stage: the grid lines of Grid (grid.glsl, inserted
// by package gpu) over the ground colour. Unlit.

in vec2 vXZ;

uniform vec4 uColor;
uniform vec4 uLineColor;
uniform vec2 uLines; // 1 / spacing, line width / spacing (in [0, 1])

out vec4 fragColor;

void main() {
    fragColor = mix(uColor, uLineColor, gridCover(vXZ, uLines));
}
