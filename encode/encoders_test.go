package encode

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/internal/rgba"
)

// TestProbeEncoder: "compiled in" and "usable" are separate answers. An
// encoder is usable exactly when a render could open it: libx264 here, an
// unknown name never, and h264_nvenc (compiled into Debian's libavcodec)
// only where Create opens it — on a machine without an NVIDIA driver it is
// compiled in, not usable, and the error says why (issue 31, item 17).
func TestProbeEncoder(t *testing.T) {
	if s := ProbeEncoder("libx264"); s != (EncoderStatus{Name: "libx264", CompiledIn: true, Usable: true}) {
		t.Errorf("libx264: %+v, want compiled in and usable", s)
	}
	s := ProbeEncoder("nope")
	if s.CompiledIn || s.Usable || !strings.Contains(s.Error, `encoder "nope" is not available`) {
		t.Errorf("nope: %+v, want neither, with the reason", s)
	}
	if s := ProbeEncoder("aac"); s.CompiledIn || s.Usable || s.Error == "" {
		t.Errorf("aac (audio): %+v, want neither, with the reason", s)
	}
	// The encoders a render is documented with. libx265 and libsvtav1 are
	// reported by info but not cross-checked: after TestNVENC, libx265's
	// first packet fails in the MP4 muxer ("Not yet implemented in
	// FFmpeg") in this test binary, order-dependent and not understood;
	// info then shows it not usable, with that reason.
	for _, name := range []string{"libx264", "h264_nvenc", "hevc_nvenc"} {
		s := ProbeEncoder(name)
		// The render's own way to open it, independently of Usable. An
		// opened encoder gets a frame and is closed, not aborted:
		// libsvtav1 (SVT-AV1 1.4) hangs when freed before any frame.
		w, err := Create(filepath.Join(t.TempDir(), "x.mp4"), Options{Width: 256, Height: 256, FPS: 30, Codec: name, Threads: 1})
		if err == nil {
			if err := w.WriteRGBA(rgba.New(256, 256)); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%+v", s)
		switch {
		case s.CompiledIn != Available(name):
			t.Errorf("%s: compiled_in %v, Available %v", name, s.CompiledIn, Available(name))
		case s.Usable != (err == nil):
			t.Errorf("%s: usable %v but Create says %v", name, s.Usable, err)
		case s.Usable != (s.Error == ""):
			t.Errorf("%s: usable %v with error %q", name, s.Usable, s.Error)
		case !s.Usable && s.CompiledIn && !errors.Is(err, ErrUnavailable):
			t.Errorf("%s: compiled in, not usable, Create error %v not ErrUnavailable", name, err)
		}
	}
}
