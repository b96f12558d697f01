// The C side of package raster; see raster.go.
#include <stddef.h>
#include <stdint.h>

// tg_line is raster.Line, field for field.
typedef struct {
	double e1[3], e2[3];
	int32_t y0, y1;
} tg_line;

void tg_ground(uint8_t *pix, ptrdiff_t stride, int32_t x0, int32_t y0, int32_t x1, int32_t y1,
               uint32_t ground, uint32_t line, const tg_line *lines, int32_t n);
