package pipeline

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/internal/rgba"
	"github.com/tracegrid/tracegrid/scene"
)

// DumpRaw writes every frame of one clip as raw RGBA rows (top row first)
// to w. The benchmark feeds these frames to the ffmpeg CLI as the
// encode-only reference.
func DumpRaw(ctx context.Context, r *gpu.Renderer, p scene.Params, w io.Writer) error {
	clip, err := scene.New(p)
	if err != nil {
		return err
	}
	img := rgba.New(p.Width, p.Height)
	bw := bufio.NewWriterSize(w, 1<<20)
	var dl scene.DrawList
	for k := range frameCount(p.Duration, p.FPS) {
		if err := ctx.Err(); err != nil {
			return err
		}
		clip.StateInto(float64(k)/float64(p.FPS), &dl)
		if err := r.Render(&dl, img); err != nil {
			return fmt.Errorf("%s frame %d: %w", p.ID(), k, err)
		}
		if _, err := bw.Write(img.Pix); err != nil {
			return err
		}
	}
	return bw.Flush()
}
