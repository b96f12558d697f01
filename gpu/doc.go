// Package gpu renders scene.DrawLists to RGBA images with OpenGL, headless.
//
// A Renderer owns one OpenGL 3.3 core context created through EGL with no
// window or surface (EGL_KHR_surfaceless_context): frames are drawn into a
// framebuffer object and read back with glReadPixels, straight into the
// caller's (possibly padded) rows, top row first.
//
// # Choosing the display
//
// NewRenderer enumerates EGL devices (EGL_EXT_device_enumeration) and tries
// them on EGL_PLATFORM_DEVICE_EXT, real GPUs first (devices without
// EGL_MESA_device_software; NVIDIA's EGL_NV_device_cuda ones before others),
// software devices last; then Mesa's surfaceless platform
// (EGL_PLATFORM_SURFACELESS_MESA); then the default display. On a machine
// without a GPU this ends on Mesa's llvmpipe. Info reports what was chosen;
// the renderer is also logged with log/slog at Debug level.
//
// The environment variable TRACEGRID_EGL_PLATFORM forces one platform:
//
//	TRACEGRID_EGL_PLATFORM=device       only EGL devices
//	TRACEGRID_EGL_PLATFORM=surfaceless  only EGL_PLATFORM_SURFACELESS_MESA
//
// TRACEGRID_EGL_DEVICE=K renders on EGL device K, counted in the driver's
// enumeration order (EGLDevices, `tracegrid info`), and nowhere else: an
// index that does not exist is an error listing the devices, never a
// fallback. It is how a node whose GPUs are not confined to the job picks
// the job's GPU (docs/cluster.md). Empty is unset.
//
// # Threads
//
// A GL context is current on one OS thread, so each Renderer runs one
// goroutine locked to its thread and sends all GL work there. Renderers may
// be used from any goroutine, by several at once: Render lays its frame
// out (item quads, text, the world's camera and objects; a painted ground,
// straight into the caller's image) on the caller's goroutine, into a
// frame of its own taken from the Renderer's free list, with no lock held;
// only the upload, the draws and the read back run on the GL thread, one
// frame after another. (So a Render that fails after layout may have
// written the ground into the image.) So two workers sharing a
// Renderer lay out in parallel, and a steady stream of frames allocates
// nothing.
//
// # Structure
//
// The platform is a four-method context interface (context.go: make
// current, GL function addresses, a description, release); its one
// backend, registered by context_egl.go, is package gpu/internal/egl, which
// holds the EGL cgo; package gpu/internal/raster, the only other cgo, is
// the CPU loop that paints the ground's grid lines. The rest is GL
// objects, one kind a file, each freed by its own nil-safe, idempotent
// release: program (program.go), streamBuffer (buffer.go, the per-frame
// instance buffers), target (target.go, a framebuffer, uploaded to and
// read back from), atlasTexture (texture.go) and meshGL (meshgl.go),
// composed into two passes: itemPass (itempass.go) and worldPass
// (worldpass.go). The CPU side is frame.go (a laid-out frame), instances.go
// and atlas.go (items and text), world.go (worlds, and the depth path),
// painter.go (the painter path) and ground.go (its painted ground).
//
// # Drawing
//
// Every item is drawn as instances of one unit quad, uploaded in one buffer
// per frame: an item (a glyph, for text; a band, for stroked rectangles) is
// an instance, and the fragment shader computes the item's analytic signed
// distance in output pixels and turns it into coverage with a one-pixel
// ramp. Shapes and glyphs use two fragment shaders (llvmpipe runs every
// branch of a shader for every pixel, and the glyph atlas lookup would
// triple the cost of shapes), so a frame is one instanced draw per switch
// between shapes and text in item order: one or two in most frames.
//
// Geometry follows package scene exactly: pixel (i, j) covers
// [i, i+1]×[j, j+1], so a rectangle from x=10 covers column 10 and not
// column 9, and a circle colours (at least half) every pixel whose centre
// lies within its radius, fully those more than half a pixel inside. A
// canvas whose aspect ratio differs from the output's is scaled to fit and
// centred, the margins showing the background. Text uses goregular from a
// glyph atlas built once per process; layout (advances, kerning) is done
// in Go.
//
// # 3D worlds
//
// A DrawList with a World (scene/world.go) is drawn world first, then the
// items on top exactly as without a world, over the canvas rectangle that
// fit gives the items (a scissor; the viewport is the whole output). The
// camera matrices come from package scene, so a point lands where
// scene.Camera.Project says; the clip transform also flips y (row 0 is the
// top row). Objects wholly outside the view are left out. The world takes
// one of two paths (painter.go, worldpass.go), chosen from the scene alone,
// so every driver draws a scene the same way.
//
// The painter path, taken when it can be exact, draws into the output
// framebuffer with no depth buffer and no multisampling: the ground, then
// the objects from the farthest to the nearest, each blended over what is
// already there. An object is an impostor: one octagon around its
// silhouette, in which the fragment shader casts the pixel's eye ray at
// the object (the ray's direction is affine in the pixel, so it is
// interpolated without perspective) and turns the distance to the
// silhouette into coverage with a one-pixel ramp — for a sphere from the
// silhouette's conic, for a cube from the lines its visible faces' edges
// project to, creases mixing the shades of the faces that meet there.
// Lighting and the surface noise (shared with the depth path's shaders)
// are taken where the ray meets the object. The order is exact when the
// objects' vertical bounding cylinders (for objects on a ground, the
// usual case) or bounding balls are pairwise disjoint: disjoint balls are
// separated by their radical plane and the eye sees the one on its side
// first, so sorting by the eye's power distance never draws a hidden
// object over one in front of it. The ground, drawn first, hides nothing
// when the eye and every object are above it. Where the ground fills the
// canvas and its grid lines are at least minLineGap pixels apart everywhere
// in view, it is painted on the CPU (ground.go, package raster): the
// output image is filled with the ground's colour and each line blended
// over it with the band's analytic coverage, row by row, on the caller's
// goroutine. The GL thread then uploads only the rectangles the objects
// (and items) may draw in, draws them over it, and reads those rectangles
// back; every other pixel is final already. On llvmpipe a thin triangle
// costs a 4×4 block of fragments wherever it touches one, so drawing the
// ~70 lines of a 1080p objects frame in GL cost about 6 ms of CPU, three
// times this loop; on a GPU the loop is a millisecond of CPU per frame and
// the uploads and reads shrink with the objects. Otherwise a canvas-wide
// pass casts each pixel's ray at the ground plane, box-filters the lines
// over the pixel's footprint (so lines far away average instead of
// aliasing) and anti-aliases the ground's own edges.
//
// The depth path takes the worlds the painter path cannot order:
// interpenetrating objects, objects crossing the near or far plane or
// below the ground, an eye under the ground. It draws the ground (one
// square, the same box filter) and the objects' meshes (a cube and a
// 32×16 sphere, one instanced draw each) into a multisampled framebuffer
// (min(4, GL_MAX_SAMPLES) samples, with a depth buffer; without
// multisampling where the driver has none), resolved with
// glBlitFramebuffer into the output framebuffer.
//
// On llvmpipe every fragment a triangle touches runs the whole shader (no
// branch is skipped, discarded pixels included), so the painter path's
// cost is the pixels it touches: at 1920×1080 a frame of 50 cubes is about
// a sixth of the depth path's CPU time, one of 50 spheres (whose meshes
// were 48,000 triangles) a tenth; BENCHMARKS.md has the figures. The
// world pass's GL objects are created on the first frame with a world,
// the depth path's multisampled buffers on the first frame that needs
// them.
//
// # Building
//
// Build, vet and test with GOFLAGS=-tags=egl: the tag makes go-gl link
// libEGL instead of libGL and X11. The package needs pkg-config's egl
// (libegl-dev) and, to run without a GPU, Mesa (libegl-mesa0,
// libgl1-mesa-dri).
package gpu
