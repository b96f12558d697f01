package gpu

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-gl/gl/v3.3-core/gl"
)

// glString returns a glGetString value, "" if GL returns NULL.
func glString(name uint32) string {
	p := gl.GetString(name)
	if p == nil {
		return ""
	}
	return gl.GoStr(p)
}

// glCheck drains glGetError (several flags may be set) and returns them,
// with what was being done, as one error.
func glCheck(doing string) error {
	var codes []string
	for i := 0; i < 16; i++ {
		code := gl.GetError()
		if code == gl.NO_ERROR {
			break
		}
		codes = append(codes, fmt.Sprintf("%s (0x%04x)", glErrorName(code), code))
	}
	if len(codes) == 0 {
		return nil
	}
	return fmt.Errorf("gpu: %s: GL error %s", doing, strings.Join(codes, ", "))
}

func glErrorName(code uint32) string {
	switch code {
	case gl.INVALID_ENUM:
		return "GL_INVALID_ENUM"
	case gl.INVALID_VALUE:
		return "GL_INVALID_VALUE"
	case gl.INVALID_OPERATION:
		return "GL_INVALID_OPERATION"
	case gl.INVALID_FRAMEBUFFER_OPERATION:
		return "GL_INVALID_FRAMEBUFFER_OPERATION"
	case gl.OUT_OF_MEMORY:
		return "GL_OUT_OF_MEMORY"
	}
	return "unknown GL error"
}

// withDefines inserts defines after the #version line, which must stay
// first in a GLSL source, then a #line directive so that compiler messages
// give line numbers of the .glsl file.
func withDefines(src, defines string) string {
	if i := strings.IndexByte(src, '\n'); i >= 0 && strings.HasPrefix(src, "#version") {
		return src[:i+1] + defines + "#line 2\n" + src[i+1:]
	}
	return defines + "#line 1\n" + src
}

// buildProgram compiles and links a vertex and a fragment shader, both
// with defines; the compiler's or linker's log goes into the error.
func buildProgram(name, vertex, fragment, defines string) (uint32, error) {
	return buildProgramStages(name, vertex, defines, fragment, defines)
}

// buildProgramStages is buildProgram with each stage's own text inserted
// after its #version line.
func buildProgramStages(name, vertex, vdefines, fragment, fdefines string) (uint32, error) {
	vs, err := compileShader(gl.VERTEX_SHADER, withDefines(vertex, vdefines))
	if err != nil {
		return 0, fmt.Errorf("gpu: %s program: compiling the vertex shader: %w", name, err)
	}
	defer gl.DeleteShader(vs) // flagged now, freed with the program
	fs, err := compileShader(gl.FRAGMENT_SHADER, withDefines(fragment, fdefines))
	if err != nil {
		return 0, fmt.Errorf("gpu: %s program: compiling the fragment shader: %w", name, err)
	}
	defer gl.DeleteShader(fs)
	prog := gl.CreateProgram()
	if prog == 0 {
		return 0, fmt.Errorf("gpu: %s program: glCreateProgram failed", name)
	}
	gl.AttachShader(prog, vs)
	gl.AttachShader(prog, fs)
	gl.LinkProgram(prog)
	var ok int32
	gl.GetProgramiv(prog, gl.LINK_STATUS, &ok)
	if ok == gl.FALSE {
		var n int32
		gl.GetProgramiv(prog, gl.INFO_LOG_LENGTH, &n)
		log := infoLog(n, func(buf *uint8) { gl.GetProgramInfoLog(prog, n, nil, buf) })
		gl.DeleteProgram(prog)
		return 0, fmt.Errorf("gpu: %s program: linking: %s", name, log)
	}
	gl.DetachShader(prog, vs)
	gl.DetachShader(prog, fs)
	return prog, nil
}

// compileShader returns the compiler's log as the error.
func compileShader(kind uint32, src string) (uint32, error) {
	sh := gl.CreateShader(kind)
	if sh == 0 {
		return 0, errors.New("glCreateShader failed")
	}
	csrc, free := gl.Strs(src + "\x00")
	gl.ShaderSource(sh, 1, csrc, nil)
	free()
	gl.CompileShader(sh)
	var ok int32
	gl.GetShaderiv(sh, gl.COMPILE_STATUS, &ok)
	if ok == gl.FALSE {
		var n int32
		gl.GetShaderiv(sh, gl.INFO_LOG_LENGTH, &n)
		log := infoLog(n, func(buf *uint8) { gl.GetShaderInfoLog(sh, n, nil, buf) })
		gl.DeleteShader(sh)
		return 0, errors.New(log)
	}
	return sh, nil
}

func infoLog(n int32, get func(*uint8)) string {
	if n <= 1 {
		return "(no log)"
	}
	buf := make([]uint8, n)
	get(&buf[0])
	return strings.TrimSpace(strings.TrimRight(string(buf), "\x00"))
}
