package scene

// This file is the contract between scenes and the GPU renderer: a scene
// describes a frame as a DrawList in pixel coordinates of its own canvas
// (origin top-left, y down), and package gpu turns that list into pixels.
// Nothing here knows about GL.

// RGBA is a straight (not premultiplied) colour with components in [0, 1].
type RGBA struct{ R, G, B, A float32 }

// Kind names a primitive.
type Kind uint8

const (
	// FillCircle: centre (X0, Y0), radius R.
	FillCircle Kind = iota
	// StrokeCircle: centre (X0, Y0), radius R; a band of Width centred on the radius.
	StrokeCircle
	// FillRect: corners (X0, Y0)–(X1, Y1), X0<X1, Y0<Y1; corner radius R (0 = sharp).
	FillRect
	// StrokeRect: as FillRect; a band of Width centred on the rectangle's edge.
	StrokeRect
	// Line: segment (X0, Y0)–(X1, Y1) of Width, butt caps.
	Line
	// Arrow: shaft (X0, Y0)–(X1, Y1) of Width, with a filled triangular head of
	// length Head (and base width Head) whose tip is exactly at (X1, Y1).
	Arrow
	// Text: the string Text, Size pixels tall (cap height plus descender),
	// centred horizontally and vertically on (X0, Y0).
	Text
)

// String returns the primitive's name, for error messages and debugging.
func (k Kind) String() string {
	switch k {
	case FillCircle:
		return "fill-circle"
	case StrokeCircle:
		return "stroke-circle"
	case FillRect:
		return "fill-rect"
	case StrokeRect:
		return "stroke-rect"
	case Line:
		return "line"
	case Arrow:
		return "arrow"
	case Text:
		return "text"
	}
	return "unknown"
}

// Item is one primitive. Items are drawn in list order with source-over
// blending, so later items cover earlier ones. Item is comparable, so two
// draw lists can be tested for equality (static frames need no re-render).
type Item struct {
	Kind           Kind
	X0, Y0, X1, Y1 float64
	R              float64 // circle radius or rectangle corner radius
	Width          float64 // stroke, line or shaft width
	Head           float64 // arrow head length
	Size           float64 // text height in pixels
	Text           string
	Color          RGBA
}

// DrawList is everything one frame shows. Width and Height give the canvas
// the coordinates refer to; a renderer may draw it at another output size by
// scaling uniformly.
type DrawList struct {
	Width, Height int
	Background    RGBA
	// World, when set, is a 3D scene (world.go) drawn over the background
	// and under the Items.
	World *World
	Items []Item
}

// Equal reports whether two draw lists produce the same picture.
func (d *DrawList) Equal(o *DrawList) bool {
	if d == nil || o == nil {
		return d == o
	}
	if d.Width != o.Width || d.Height != o.Height || d.Background != o.Background || len(d.Items) != len(o.Items) {
		return false
	}
	if !d.World.Equal(o.World) {
		return false
	}
	for i := range d.Items {
		if d.Items[i] != o.Items[i] {
			return false
		}
	}
	return true
}
