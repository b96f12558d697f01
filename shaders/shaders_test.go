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
	} {
		if !strings.HasPrefix(src, "#version 330 core\n") {
			t.Errorf("%s does not start with #version 330 core", name)
		}
		if strings.Contains(src, "#define KIND_") {
			t.Errorf("%s defines a name package gpu injects", name)
		}
	}
}
