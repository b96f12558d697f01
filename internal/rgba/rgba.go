// Package rgba is the project's one in-memory picture: an RGBA8 frame that
// package gpu renders into, package encode encodes and decodes, and the
// frame sources, sinks and the reference perceiver pass along. gpu.Image
// and encode.Image are aliases of Image, so a rendered frame goes to the
// encoder as it is. Pure Go without cgo: any package may import it.
package rgba

import "image"

// Image is an RGBA8 pixel buffer, top row first: pixel (x, y) is the four
// bytes R, G, B, A at Pix[y*Stride+4*x]. Stride may exceed 4*Width (padded
// rows, as in video frames); the project's writers into a caller's Image
// (gpu.Renderer.Render, encode.Video.FrameAt) write only the first
// 4*Width bytes of each row.
type Image struct {
	Width, Height, Stride int
	Pix                   []byte
}

// New returns a zeroed w×h image with unpadded rows (Stride 4*w).
func New(w, h int) Image {
	return Image{Width: w, Height: h, Stride: 4 * w, Pix: make([]byte, 4*w*h)}
}

// RGBA returns img as the standard library's *image.RGBA over the same
// pixels (no copy). image.RGBA's colours are alpha-premultiplied; for the
// opaque frames the project renders and decodes the two readings agree.
func (img Image) RGBA() *image.RGBA {
	return &image.RGBA{Pix: img.Pix, Stride: img.Stride, Rect: image.Rect(0, 0, img.Width, img.Height)}
}
