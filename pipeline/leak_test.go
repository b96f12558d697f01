package pipeline

import (
	"context"
	"errors"
	"testing"

	"github.com/tracegrid/tracegrid/internal/leakcheck"
)

// TestRenderLeavesNoGoroutines: when Render returns, its worker pool, the
// goroutine feeding it and every clip's render/encode producer have
// ended — after a complete run and after one cancelled midway (2 workers,
// cancelled when the first clip is recorded).
func TestRenderLeavesNoGoroutines(t *testing.T) {
	leakcheck.Check(t)
	s := smallSpec(t)
	if sum, err := render(t, context.Background(), s, t.TempDir()); err != nil || sum.Rendered != 6 {
		t.Fatalf("complete run: %+v %v", sum, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := Render(ctx, s, Options{Out: t.TempDir(), Workers: 2, Renderer: testRenderer, Progress: func(done, total int) {
		if done == 1 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: got %v, want context.Canceled", err)
	}
}
