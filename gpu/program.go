package gpu

import (
	"fmt"

	"github.com/go-gl/gl/v3.3-core/gl"
)

// program is a linked shader program. Each pass keeps the uniform
// locations it sets beside it.
type program struct {
	id   uint32
	name string // for errors: "shape", "glyph", "object", "ground", "cube", …
}

// newProgram compiles and links a vertex and a fragment shader with
// defines inserted after their #version lines; compile and link logs go
// into the error.
func newProgram(name, vertex, fragment, defines string) (*program, error) {
	id, err := buildProgram(name, vertex, fragment, defines)
	if err != nil {
		return nil, err
	}
	return &program{id: id, name: name}, nil
}

// newProgramStages is newProgram with each stage's own text inserted after
// its #version line (shared GLSL functions, #defines).
func newProgramStages(name, vertex, vdefines, fragment, fdefines string) (*program, error) {
	id, err := buildProgramStages(name, vertex, vdefines, fragment, fdefines)
	if err != nil {
		return nil, err
	}
	return &program{id: id, name: name}, nil
}

// uniform returns the location of a uniform the program must have.
func (p *program) uniform(name string) (int32, error) {
	loc := gl.GetUniformLocation(p.id, gl.Str(name+"\x00"))
	if loc < 0 {
		return -1, fmt.Errorf("gpu: %s shader program lacks %s", p.name, name)
	}
	return loc, nil
}

func (p *program) use() { gl.UseProgram(p.id) }

// release deletes the program; nil-safe and idempotent.
func (p *program) release() {
	if p == nil || p.id == 0 {
		return
	}
	gl.DeleteProgram(p.id)
	p.id = 0
}
