package rgba

import "math"

// PSNR is the peak signal-to-noise ratio of two RGBA8 buffers of the same
// layout over their colour channels (alpha left out), in dB: +Inf when
// they are equal, 0 when their lengths differ. Tests use it to say how
// close an encoded and decoded frame is to the rendered one.
func PSNR(a, b []byte) float64 {
	if len(a) != len(b) {
		return 0
	}
	var se float64
	n := 0
	for i := range a {
		if i%4 == 3 {
			continue
		}
		d := float64(a[i]) - float64(b[i])
		se += d * d
		n++
	}
	if se == 0 {
		return math.Inf(1)
	}
	return 10 * math.Log10(255*255/(se/float64(n)))
}
