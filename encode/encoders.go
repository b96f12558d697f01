package encode

import (
	"os"
	"path/filepath"

	"github.com/tracegrid/tracegrid/internal/rgba"
)

// InfoEncoders are the encoders `tracegrid info` reports: the default, the
// NVIDIA hardware ones a render may be configured with, and the other
// software encoders a Debian libavcodec carries.
var InfoEncoders = []string{"libx264", "libx265", "h264_nvenc", "hevc_nvenc", "libsvtav1"}

// EncoderStatus says whether an encoder can be used here, in two steps:
// compiled into this libavcodec (Available), and usable — it opened and
// encoded a frame (Usable). A hardware encoder is often compiled in but not
// usable: h264_nvenc without an NVIDIA driver or GPU.
type EncoderStatus struct {
	Name       string `json:"name"`
	CompiledIn bool   `json:"compiled_in"`
	Usable     bool   `json:"usable"`
	// Error is why the encoder is not usable ("" when it is): libav's own
	// text, e.g. that libcuda or the NVENC library cannot be loaded.
	Error string `json:"error"`
}

// ProbeEncoder reports codec's status (see Usable).
func ProbeEncoder(codec string) EncoderStatus {
	s := EncoderStatus{Name: codec, CompiledIn: Available(codec)}
	if err := Usable(codec); err != nil {
		s.Error = err.Error()
	} else {
		s.Usable = true
	}
	return s
}

// probeSize is the side of the frame Usable encodes: small enough to cost
// milliseconds, yet well above the smallest frame hardware encoders take.
const probeSize = 256

// Usable opens codec ("" is DefaultCodec) exactly as a render would (Create
// with its options), encodes one probeSize×probeSize frame, finishes the
// file and frees everything. nil means a render with this encoder can
// start; otherwise the error says why not (ErrUnavailable for an encoder
// that is missing or fails to open). Unlike Available, it asks the driver:
// a compiled-in hardware encoder without its driver is not usable.
func Usable(codec string) error {
	dir, err := os.MkdirTemp("", "tracegrid-encoder-probe")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	w, err := Create(filepath.Join(dir, "probe.mp4"), Options{Width: probeSize, Height: probeSize, FPS: 30, Codec: codec, Threads: 1})
	if err != nil {
		return err
	}
	if err := w.WriteRGBA(rgba.New(probeSize, probeSize)); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}
