package scene

import (
	"fmt"
	"math/rand/v2"
)

// Palettes are small and hand-picked so every seed keeps strong contrast
// between the objects that carry events and the background: nuisance varies
// appearance, never visibility.
var (
	backgrounds = []RGBA{
		hex(0x101418), hex(0x1b1f2a), hex(0x202020), hex(0x0f1d1a), hex(0x231a24),
	}
	brights = []RGBA{
		hex(0xf2c14e), hex(0x5bc0eb), hex(0xff6b6b), hex(0x9bc53d), hex(0xc77dff), hex(0xf78c2a), hex(0x4ecdc4),
	}
	lines = []RGBA{
		hex(0xd9d9d9), hex(0xb8c4d6), hex(0xe8dcc2),
	}
)

func hex(v uint32) RGBA {
	return RGBA{float32(v>>16&0xff) / 255, float32(v>>8&0xff) / 255, float32(v&0xff) / 255, 1}
}

func hexColor(c RGBA) string {
	return fmt.Sprintf("#%02x%02x%02x", uint8(c.R*255+0.5), uint8(c.G*255+0.5), uint8(c.B*255+0.5))
}

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// dim mixes c toward the background so "off" shapes stay visible but dark.
func dim(c, bg RGBA, k float32) RGBA {
	return RGBA{bg.R + (c.R-bg.R)*k, bg.G + (c.G-bg.G)*k, bg.B + (c.B-bg.B)*k, 1}
}

// uniform draws from [lo, hi).
func uniform(rng *rand.Rand, lo, hi float64) float64 { return lo + (hi-lo)*rng.Float64() }
