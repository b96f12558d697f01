package job

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/frames"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/gpu"
	"github.com/tracegrid/tracegrid/scene"
	"github.com/tracegrid/tracegrid/trace"
)

// caseSheetWidth is the width of the frames drawn for a case card's contact
// sheet (the sheet scales them to its thumbnails anyway).
const caseSheetWidth = 480

// CaseSheets draws the report's case sheets (report.SheetMaker): it
// rebuilds each trial's clip from its stored trace (a scene is a pure
// function of its parameters), renders exactly the frames the trial
// showed, in the order shown, and draws them as `tracegrid frames --sheet`
// does. The zero CaseSheets makes its GL renderer on first use, so a
// report without cases needs none; where it cannot be made, every card
// says why. Close it when done.
type CaseSheets struct {
	once   sync.Once
	r      *gpu.Renderer
	err    error
	shared bool // r belongs to the caller
}

// SheetsWith draws with a renderer the caller owns (and closes).
func SheetsWith(r *gpu.Renderer) *CaseSheets {
	c := &CaseSheets{r: r, shared: true}
	c.once.Do(func() {})
	return c
}

func (c *CaseSheets) renderer() (*gpu.Renderer, error) {
	c.once.Do(func() {
		c.r, c.err = gpu.NewRenderer()
		if c.err != nil {
			c.err = fmt.Errorf("no renderer for the case sheets: %w", c.err)
		}
	})
	return c.r, c.err
}

// Close frees the renderer it made, if any.
func (c *CaseSheets) Close() error {
	if c.shared {
		return nil
	}
	return c.r.Close()
}

// Sheet draws the contact sheet of one trial's frames as a PNG.
func (c *CaseSheets) Sheet(t *results.Trial) ([]byte, error) {
	r, err := c.renderer()
	if err != nil {
		return nil, err
	}
	var tr trace.Trace
	if err := json.Unmarshal(t.Trace, &tr); err != nil {
		return nil, fmt.Errorf("stored trace: %w", err)
	}
	clip, err := scene.New(scene.Params{Domain: tr.Domain, N: tr.N, F: tr.F, Class: tr.Class, Seed: tr.Seed,
		Duration: tr.Duration, FPS: tr.FPS, Width: tr.Width, Height: tr.Height})
	if err != nil {
		return nil, fmt.Errorf("rebuilding clip %s from its trace: %w", t.Clip, err)
	}
	if !sameEvents(clip.Trace().Times(), tr.Times()) {
		return nil, errors.New("the scene rebuilt from the stored trace has other events (a trace from another tracegrid version)")
	}
	plan := sampling.Plan{Policy: t.Policy}
	for i, ts := range t.FrameTimes {
		plan.Frames = append(plan.Frames, sampling.Frame{Index: i, Position: i, T: ts})
	}
	h := max(2, caseSheetWidth*tr.Height/max(1, tr.Width)/2*2)
	src, err := frames.NewSource(r, frames.Options{Format: encode.ImageJPEG, Width: caseSheetWidth, Height: h, Workers: 1})
	if err != nil {
		return nil, err
	}
	var imgs []frames.Image
	for img, err := range src.Stream(context.Background(), clip, plan) {
		if err != nil {
			return nil, err
		}
		imgs = append(imgs, img)
	}
	var buf bytes.Buffer
	opt := frames.SheetOptions{Title: fmt.Sprintf("%s — %s (%s labels), as shown to %s", t.Clip, t.Policy, t.Labels, t.Model),
		Duration: tr.Duration, Events: tr.Times(), FrameSpan: 1 / float64(tr.FPS)}
	if err := frames.WriteSheet(&buf, imgs, opt); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func sameEvents(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if d := a[i] - b[i]; d > 1e-6 || d < -1e-6 {
			return false
		}
	}
	return true
}
