package rgba

import (
	"image/color"
	"testing"
)

func TestNew(t *testing.T) {
	img := New(3, 2)
	if img.Width != 3 || img.Height != 2 || img.Stride != 12 || len(img.Pix) != 24 {
		t.Fatalf("New(3, 2) = %dx%d stride %d, %d bytes; want 3x2 stride 12, 24 bytes", img.Width, img.Height, img.Stride, len(img.Pix))
	}
	for i, b := range img.Pix {
		if b != 0 {
			t.Fatalf("byte %d is %d, want 0", i, b)
		}
	}
}

// TestRGBA: the standard-library view shares the pixels and reads pixel
// (x, y) at Pix[y*Stride+4*x], padding included in the stride.
func TestRGBA(t *testing.T) {
	img := Image{Width: 2, Height: 2, Stride: 12, Pix: make([]byte, 24)} // 4 bytes of padding a row
	copy(img.Pix[12+4:], []byte{10, 20, 30, 255})                        // pixel (1, 1)
	std := img.RGBA()
	if b := std.Bounds(); b.Dx() != 2 || b.Dy() != 2 || b.Min.X != 0 || b.Min.Y != 0 {
		t.Fatalf("bounds %v, want (0,0)-(2,2)", b)
	}
	if got, want := std.RGBAAt(1, 1), (color.RGBA{10, 20, 30, 255}); got != want {
		t.Errorf("pixel (1, 1) = %v, want %v", got, want)
	}
	std.SetRGBA(0, 1, color.RGBA{1, 2, 3, 4})
	if got := img.Pix[12:16]; got[0] != 1 || got[1] != 2 || got[2] != 3 || got[3] != 4 {
		t.Errorf("a write through the view left Pix[12:16] = %v, want [1 2 3 4]", got)
	}
}
