package gpu

import (
	"github.com/go-gl/gl/v3.3-core/gl"
	"golang.org/x/image/font/sfnt"

	"github.com/tracegrid/tracegrid/scene"
	"github.com/tracegrid/tracegrid/shaders"
)

// RenderNoReadback draws dl at w×h and waits with glFinish, without reading
// pixels back (BenchmarkRenderOnly).
func RenderNoReadback(r *Renderer, dl *scene.DrawList, w, h int) error {
	return r.renderNoReadback(dl, Image{Width: w, Height: h})
}

// MeasureText is the width a Text item of s at size is centred on.
func MeasureText(s string, size float64) float64 {
	a, err := sharedAtlas()
	if err != nil {
		return 0
	}
	var buf sfnt.Buffer
	return a.measureText(&buf, s, size)
}

// TextBaseline is how far below the top of a Text item's box the baseline
// lies, for text size pixels tall.
func TextBaseline(size float64) float64 {
	a, err := sharedAtlas()
	if err != nil {
		return 0
	}
	return a.capHeight * a.scale(size)
}

// BuildProgram compiles and links a program on r's GL thread, then deletes
// it: for testing how shader errors are reported. Both stages get the 2D
// #defines; the fragment stage also the objects' noise functions and the
// ground's grid functions, and the vertex stage vdefines.
func BuildProgram(r *Renderer, vertex, vdefines, fragment string) error {
	return r.th.Call(func() error {
		id, err := buildProgramStages("test", vertex, shaderDefines()+vdefines, fragment, shaderDefines()+shaders.Noise+shaders.Grid)
		if id != 0 {
			gl.DeleteProgram(id)
		}
		return err
	})
}

// WorldAllocated reports whether r has created its 3D objects (it should
// only after its first frame with a world).
func WorldAllocated(r *Renderer) bool {
	var ok bool
	_ = r.th.Call(func() error {
		ok = r.world != nil
		return nil
	})
	return ok
}

// ForcePaths makes every world frame r renders take the depth path
// (depth), or the painter path draw its ground with the ground shader
// (groundShader), so tests can compare the ways of drawing one scene.
func ForcePaths(r *Renderer, depth, groundShader bool) {
	r.forceDepth.Store(depth)
	r.forceGroundShader.Store(groundShader)
}

// ForceWholeUpload makes a painted ground go up to GL and come back whole,
// not only in the rectangles its objects may draw in.
func ForceWholeUpload(r *Renderer, on bool) { r.forceWholeUpload.Store(on) }

// WorldPath lays dl out for a w×h output as Render would and says how its
// world would be drawn: on the painter path (else the depth path), and
// there with the ground painted on the CPU (rasterGround) or else shaded;
// objects is the number of objects drawn (those in view).
func WorldPath(r *Renderer, dl *scene.DrawList, w, h int) (painter, rasterGround bool, objects int, err error) {
	f := r.frames.get()
	if f == nil {
		f = r.newFrame()
	}
	defer r.frames.put(f)
	f.forceDepth, f.forceGroundShader = r.forceDepth.Load(), r.forceGroundShader.Load()
	if err := f.layout(dl, Image{Width: w, Height: h}, false, r.atlas); err != nil {
		return false, false, 0, err
	}
	if f.world.painter {
		return true, f.world.rasterGround, len(f.impostors) / floatsPerImpostor, nil
	}
	return false, false, f.world.cubes + f.world.spheres, nil
}

// PretendNoMSAA makes r's 3D path take its no-multisampling fall back, as
// on a driver whose GL_MAX_SAMPLES is below 2. Call it on a renderer no
// other goroutine uses, before its first world frame.
func PretendNoMSAA(r *Renderer) {
	_ = r.th.Call(func() error {
		r.info.MaxSamples = 1
		return nil
	})
}

// Layout lays dl out for a w×h output as Render would, without drawing
// (BenchmarkLayout: the CPU work Render does outside the GL thread).
func Layout(r *Renderer, dl *scene.DrawList, w, h int) error {
	f := r.frames.get()
	if f == nil {
		f = r.newFrame()
	}
	defer r.frames.put(f)
	return f.layout(dl, Image{Width: w, Height: h}, false, r.atlas)
}
