// The painter path's ground on the CPU; see raster.go for what it draws
// and why it is C.
#include <stdlib.h>
#include <string.h>

// No fused multiply-adds (arm64 compilers fuse by default): every machine
// rounds the same way and gets the same bytes.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "raster.h"

// Below this |a| an edge bounds no columns (it is all but horizontal):
// the per-pixel test alone decides, and stays exact.
#define FLAT 1e-9

// blend8 is round((g·(255−a) + l·a) / 255) for a in [0, 255].
static inline uint8_t blend8(int g, int l, int a) {
	int v = g * (255 - a) + l * a + 128;
	return (uint8_t)((v + (v >> 8)) >> 8);
}

// bound narrows [*lo, *hi) to the columns where the edge a·x + b·y + c
// (at pixel centres x + 0.5, y = py) can be below 0.5, with a pixel to
// spare each side.
static inline void bound(const double e[3], double py, double *lo, double *hi) {
	double a = e[0], r = 0.5 - (e[1] * py + e[2]);
	if (a > FLAT) {
		double t = r / a - 0.5 + 1.0;
		if (t < *hi) *hi = t;
	} else if (a < -FLAT) {
		double t = r / a - 0.5 - 1.0;
		if (t > *lo) *lo = t;
	}
}

void tg_ground(uint8_t *pix, ptrdiff_t stride, int32_t x0, int32_t y0, int32_t x1, int32_t y1,
               uint32_t ground32, uint32_t line32, const tg_line *lines, int32_t n) {
	// The colours come as the four bytes of a pixel in memory order.
	uint32_t g32 = ground32;
	uint8_t line[4];
	memcpy(line, &line32, 4);
	// A row of ground, filled pixel by pixel once, is copied into each
	// row (memcpy is the fastest fill there is) just before its lines, so
	// the row is still in the cache when they are blended into it.
	size_t rowBytes = 4 * (size_t)(x1 - x0);
	uint8_t *tmpl = malloc(rowBytes);
	if (tmpl != NULL) {
		for (size_t i = 0; i < rowBytes; i += 4) {
			memcpy(tmpl + i, &g32, 4);
		}
	}
	for (int32_t y = y0; y < y1; y++) {
		uint8_t *row = pix + (ptrdiff_t)y * stride;
		if (tmpl != NULL) {
			memcpy(row + 4 * (ptrdiff_t)x0, tmpl, rowBytes);
		} else {
			for (int32_t x = x0; x < x1; x++) {
				memcpy(row + 4 * (ptrdiff_t)x, &g32, 4);
			}
		}
		double py = y + 0.5;
		for (int32_t i = 0; i < n; i++) {
			const tg_line *l = &lines[i];
			if (y < l->y0 || y >= l->y1) {
				continue;
			}
			double lo = x0, hi = x1;
			bound(l->e1, py, &lo, &hi);
			bound(l->e2, py, &lo, &hi);
			if (!(lo < hi)) {
				continue;
			}
			int32_t xs = (int32_t)lo, xe = (int32_t)hi; // lo ≥ x0 ≥ 0: truncation is floor
			if (xe < x1 && (double)xe < hi) {
				xe++;
			}
			// Each pixel's distances computed afresh, in Coverage's order
			// of operations, so the bytes do not depend on where a span
			// starts.
			double r1 = l->e1[1] * py + l->e1[2], r2 = l->e2[1] * py + l->e2[2];
			for (int32_t x = xs; x < xe; x++) {
				double px = x + 0.5;
				double d1 = l->e1[0] * px + r1, d2 = l->e2[0] * px + r2;
				double u1 = 0.5 - d1, u2 = 0.5 - d2;
				if (!(u1 > 0) || !(u2 > 0)) { // NaN covers nothing
					continue;
				}
				double c = (u1 < 1 ? u1 : 1) + (u2 < 1 ? u2 : 1) - 1;
				if (c <= 0) {
					continue;
				}
				int a = (int)(c * 255 + 0.5);
				uint8_t *p = row + 4 * (ptrdiff_t)x;
				if (a >= 255) {
					memcpy(p, line, 4);
					continue;
				}
				// Alpha stays 255: both colours are opaque.
				p[0] = blend8(p[0], line[0], a);
				p[1] = blend8(p[1], line[1], a);
				p[2] = blend8(p[2], line[2], a);
			}
		}
	}
	free(tmpl);
}
