package rgba

import (
	"math"
	"testing"
)

// Hand-worked: one colour channel of two pixels off by 10 → MSE 100/6,
// PSNR 10·log10(65025·6/100) = 35.9123 dB; alpha never counts.
func TestPSNR(t *testing.T) {
	a := []byte{0, 0, 0, 255, 0, 0, 0, 255}
	b := []byte{10, 0, 0, 0, 0, 0, 0, 7}
	if got, want := PSNR(a, b), 10*math.Log10(65025*6.0/100); math.Abs(got-want) > 1e-12 || math.Abs(got-35.9123) > 1e-4 {
		t.Errorf("PSNR %v, want %v", got, want)
	}
	if got := PSNR(a, a); !math.IsInf(got, 1) {
		t.Errorf("equal buffers: %v", got)
	}
	if got := PSNR(a, a[:4]); got != 0 {
		t.Errorf("different lengths: %v", got)
	}
}
