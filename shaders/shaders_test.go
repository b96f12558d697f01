package shaders

import (
	"strings"
	"testing"
)

// The sources are compiled by package gpu's tests; here only what gpu
// relies on before compiling: a #version line first (gpu inserts its
// #defines after it) and no definitions of the names gpu defines.
func TestSources(t *testing.T) {
	for name, src := range map[string]string{
		"QuadVertex": QuadVertex, "ShapeFragment": ShapeFragment, "GlyphFragment": GlyphFragment,
		"ObjectVertex": ObjectVertex, "ObjectFragment": ObjectFragment,
		"GroundVertex": GroundVertex, "GroundFragment": GroundFragment,
		"ImpostorVertex": ImpostorVertex, "CubeFragment": CubeFragment, "SphereFragment": SphereFragment,
		"GroundViewVertex": GroundViewVertex, "GroundViewFragment": GroundViewFragment,
	} {
		if !strings.HasPrefix(src, "#version 330 core\n") {
			t.Errorf("%s does not start with #version 330 core", name)
		}
		if strings.Contains(src, "#define KIND_") {
			t.Errorf("%s defines a name package gpu injects", name)
		}
	}
}

// Noise is inserted after another source's #version line: it has none of
// its own, and defines what the object fragment shaders call.
func TestNoiseSnippet(t *testing.T) {
	if strings.HasPrefix(Noise, "#version") || strings.Contains(Noise, "\n#version") {
		t.Error("Noise has a #version line")
	}
	for _, name := range []string{"float valueNoise(vec3 p)", "const float NOISE_FREQ"} {
		if !strings.Contains(Noise, name) {
			t.Errorf("Noise lacks %s", name)
		}
	}
	for name, src := range map[string]string{"ObjectFragment": ObjectFragment, "CubeFragment": CubeFragment, "SphereFragment": SphereFragment} {
		if !strings.Contains(src, "valueNoise(") || strings.Contains(src, "float valueNoise(") {
			t.Errorf("%s should call valueNoise without defining it", name)
		}
	}
}

// Grid is inserted after the ground fragment shaders' #version line: it has
// none of its own, and they call gridCover without defining it.
func TestGridSnippet(t *testing.T) {
	if strings.HasPrefix(Grid, "#version") || strings.Contains(Grid, "\n#version") {
		t.Error("Grid has a #version line")
	}
	if !strings.Contains(Grid, "float gridCover(vec2 xz, vec2 lines)") {
		t.Error("Grid lacks gridCover")
	}
	for name, src := range map[string]string{"GroundFragment": GroundFragment, "GroundViewFragment": GroundViewFragment} {
		if !strings.Contains(src, "gridCover(") || strings.Contains(src, "float gridCover(") || strings.Contains(src, "lineIntegral") {
			t.Errorf("%s should call gridCover without defining the grid functions", name)
		}
	}
}
