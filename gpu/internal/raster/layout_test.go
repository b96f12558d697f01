package raster

import (
	"testing"
	"unsafe"
)

// Line is passed to C as tg_line: same size, same field offsets.
func TestLineLayout(t *testing.T) {
	var l Line
	if unsafe.Sizeof(l) != cLineSize {
		t.Fatalf("Line is %d bytes, tg_line %d", unsafe.Sizeof(l), cLineSize)
	}
	if unsafe.Offsetof(l.E2) != 24 || unsafe.Offsetof(l.Y0) != 48 || unsafe.Offsetof(l.Y1) != 52 {
		t.Fatalf("Line's offsets %d %d %d, want 24 48 52", unsafe.Offsetof(l.E2), unsafe.Offsetof(l.Y0), unsafe.Offsetof(l.Y1))
	}
}
