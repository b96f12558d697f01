package frames

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	_ "image/jpeg" // decode the frames we encoded
	"image/png"
	"io"
	"math"

	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// SheetOptions describe a contact sheet.
type SheetOptions struct {
	Title    string
	Duration float64   // clip length, for the timeline
	Events   []float64 // true event times to mark (none for external videos)
	// FrameSpan is how long a shown frame stays on screen (1/fps of the
	// clip); a thumbnail whose span contains a true event is marked.
	FrameSpan float64
}

// Sheet layout constants: thumbnails 240 px wide, up to 6 per row.
const (
	thumbW     = 240
	sheetCols  = 6
	labelH     = 22
	pad        = 8
	timelineH  = 56
	titleH     = 30
	eventColor = 0xe0
)

var (
	sheetBG   = color.RGBA{24, 24, 28, 255}
	labelFG   = color.RGBA{235, 235, 235, 255}
	eventRed  = color.RGBA{eventColor, 60, 60, 255}
	frameTick = color.RGBA{200, 200, 200, 255}
)

// WriteSheet draws the images (in shown order) as a grid of labelled
// thumbnails, marks those that show a true event, adds a timeline with the
// true events (red) and the sampled times (white), and writes a PNG.
func WriteSheet(w io.Writer, imgs []Image, opt SheetOptions) error {
	if len(imgs) == 0 {
		return fmt.Errorf("frames: contact sheet of no frames")
	}
	face, err := sheetFace(14)
	if err != nil {
		return err
	}
	first, _, err := image.Decode(bytes.NewReader(imgs[0].Data))
	if err != nil {
		return fmt.Errorf("frames: decoding frame for the sheet: %w", err)
	}
	b := first.Bounds()
	thumbH := int(math.Round(float64(thumbW) * float64(b.Dy()) / float64(b.Dx())))
	cols := min(sheetCols, len(imgs))
	rows := (len(imgs) + cols - 1) / cols
	cellW, cellH := thumbW+pad, thumbH+labelH+pad
	W := pad + cols*cellW
	H := titleH + pad + rows*cellH + timelineH
	sheet := image.NewRGBA(image.Rect(0, 0, W, H))
	draw.Draw(sheet, sheet.Bounds(), &image.Uniform{sheetBG}, image.Point{}, draw.Src)
	text(sheet, face, pad, 20, opt.Title, labelFG)

	for i, im := range imgs {
		pic, _, err := image.Decode(bytes.NewReader(im.Data))
		if err != nil {
			return fmt.Errorf("frames: decoding frame %d for the sheet: %w", im.Frame.Position, err)
		}
		x0 := pad + (i%cols)*cellW
		y0 := titleH + pad + (i/cols)*cellH
		r := image.Rect(x0, y0, x0+thumbW, y0+thumbH)
		xdraw.ApproxBiLinear.Scale(sheet, r, pic, pic.Bounds(), draw.Src, nil)
		label := fmt.Sprintf("#%d  t=%.3f s", im.Frame.Position, im.Frame.T)
		col := labelFG
		if showsEvent(im.Frame.T, opt) {
			outline(sheet, r.Inset(-3), 3, eventRed)
			label += "  event"
			col = eventRed
		}
		text(sheet, face, x0, y0+thumbH+16, label, col)
	}

	// Timeline: the clip from 0 to Duration, events above, samples below.
	ty := H - timelineH/2
	x := func(t float64) int {
		if opt.Duration <= 0 {
			return pad
		}
		return pad + int(math.Round(t/opt.Duration*float64(W-2*pad)))
	}
	fill(sheet, image.Rect(pad, ty, W-pad, ty+2), frameTick)
	for _, e := range opt.Events {
		fill(sheet, image.Rect(x(e)-1, ty-14, x(e)+2, ty), eventRed)
	}
	for _, im := range imgs {
		fill(sheet, image.Rect(x(im.Frame.T), ty+2, x(im.Frame.T)+1, ty+12), frameTick)
	}
	text(sheet, face, pad, H-6, fmt.Sprintf("0 s        red: true events (%d)   white: sampled frames (%d)        %.1f s", len(opt.Events), len(imgs), opt.Duration), labelFG)
	return png.Encode(w, sheet)
}

// showsEvent reports whether a true event happens while the frame sampled
// at t is on screen.
func showsEvent(t float64, opt SheetOptions) bool {
	span := opt.FrameSpan
	for _, e := range opt.Events {
		if e >= t-1e-9 && e < t+math.Max(span, 1e-9) {
			return true
		}
	}
	return false
}

func sheetFace(size float64) (font.Face, error) {
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return nil, err
	}
	return opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
}

func text(dst draw.Image, face font.Face, x, y int, s string, c color.Color) {
	d := font.Drawer{Dst: dst, Src: image.NewUniform(c), Face: face, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

func fill(dst draw.Image, r image.Rectangle, c color.Color) {
	draw.Draw(dst, r, image.NewUniform(c), image.Point{}, draw.Src)
}

func outline(dst draw.Image, r image.Rectangle, w int, c color.Color) {
	fill(dst, image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+w), c)
	fill(dst, image.Rect(r.Min.X, r.Max.Y-w, r.Max.X, r.Max.Y), c)
	fill(dst, image.Rect(r.Min.X, r.Min.Y, r.Min.X+w, r.Max.Y), c)
	fill(dst, image.Rect(r.Max.X-w, r.Min.Y, r.Max.X, r.Max.Y), c)
}
