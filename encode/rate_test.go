package encode

import (
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/tracegrid/tracegrid/internal/rgba"
)

// A fractional frame rate (uniform:10 over 24 s: 5/12 frames a second)
// puts frame j at exactly j·12/5 s in the MP4, every frame once, and the
// stream reports that rate.
func TestFractionalRate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.mp4")
	w, err := Create(path, Options{Width: 64, Height: 48, Rate: Rate{5, 12}, Preset: "ultrafast", CRF: 10, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if err := w.WriteRGBA(rgba.New(64, 48)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := Probe(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Frames != 10 || math.Abs(info.FPS-5.0/12) > 1e-9 || math.Abs(info.Duration-24) > 1e-6 {
		t.Errorf("info %+v, want 10 frames at 5/12 fps over 24 s", info)
	}
	var pts []float64
	if err := DecodeAll(path, func(f Frame) error { pts = append(pts, f.PTS); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(pts) != 10 {
		t.Fatalf("%d frames decoded, want 10", len(pts))
	}
	for j, p := range pts {
		if math.Abs(p-float64(j)*2.4) > 1e-6 {
			t.Errorf("frame %d at %.9f s, want %.1f", j, p, float64(j)*2.4)
		}
	}
	for _, bad := range []Rate{{-1, 2}, {1, 0}, {241, 1}, {1, MaxRateDen + 1}} {
		if _, err := Create(filepath.Join(t.TempDir(), "bad.mp4"), Options{Width: 64, Height: 48, Rate: bad}); !errors.Is(err, ErrOptions) {
			t.Errorf("rate %v: %v, want ErrOptions", bad, err)
		}
	}
}
