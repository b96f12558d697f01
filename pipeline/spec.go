// Package pipeline turns a render spec into clips: spec (YAML) → plan →
// one GL thread shared by parallel encoder workers with bounded buffers →
// clips, traces and a manifest, with resume and atomic writes.
package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/tracegrid/tracegrid/scene"
)

// Encoder settings of a spec.
type Encoder struct {
	// Codec is a libavcodec encoder name: libx264 (default), or a hardware
	// encoder such as h264_nvenc where the library and driver have it.
	Codec string `yaml:"codec" json:"codec"`
	// Preset is the encoder's speed/size preset (libx264: ultrafast … veryslow).
	Preset string `yaml:"preset" json:"preset"`
	// CRF is the constant rate factor (libx264: 0–51, lower is better).
	CRF int `yaml:"crf" json:"crf"`
	// Lossless encodes the YUV frames without loss (libx264 qp=0); it
	// overrides CRF.
	Lossless bool `yaml:"lossless" json:"lossless"`
	// Threads per encoder; 0 lets libav choose. The default, 1, encodes
	// each clip on one thread while workers encode clips in parallel: it
	// measured fastest on 2 cores, and the MP4 bytes then do not depend on
	// the machine's core count (x264 frame threading changes them).
	Threads int `yaml:"threads" json:"threads"`
}

// Spec says which clips to render and how. Every field defaults to the
// value of the built-in grid named by Grid, which defaults to "paper".
type Spec struct {
	// Grid is the built-in grid the other fields start from: "paper" (the
	// full 2,190-clip grid of low-frequency-trap §3.1), "default" (39
	// clips, about a minute on two cores) or "countvideobench" (the 2,600
	// objects clips of CountVideoBench §4).
	Grid string `yaml:"grid"`
	// Domains to render: bounce_ball, blinking, state_machine, objects.
	Domains []string `yaml:"domains"`
	// Counts N; 0 renders no-event controls at NominalFrequency. For the
	// objects domain, the numbers of objects (≥ 1).
	Counts []int `yaml:"counts"`
	// Frequencies F in Hz for positive counts (event domains only).
	Frequencies []float64 `yaml:"frequencies"`
	// Classes are the objects domain's "<shape>-<colour>" classes (cube or
	// sphere × red, blue, green, yellow, purple); every count gets Seeds
	// clips of every class. Event domains ignore it.
	Classes []string `yaml:"classes"`
	// Seeds per (domain, N, F) cell, or per (N, class) for objects,
	// numbered from 0.
	Seeds int `yaml:"seeds"`
	// NominalFrequency is the F recorded for N=0 controls (paper: 1.0 Hz).
	NominalFrequency float64 `yaml:"nominal_frequency"`
	// Duration of every clip in seconds.
	Duration float64 `yaml:"duration"`
	// FPS is the clip's constant frame rate.
	FPS int `yaml:"fps"`
	// Width and Height in pixels, even (yuv420p).
	Width  int `yaml:"width"`
	Height int `yaml:"height"`
	// Encoder settings.
	Encoder Encoder `yaml:"encoder"`
}

// Built-in grid names.
const (
	GridPaper           = "paper"
	GridDefault         = "default"
	GridCountVideoBench = "countvideobench"
)

// Grids lists the built-in grid names.
var Grids = []string{GridPaper, GridDefault, GridCountVideoBench}

// BuiltinSpec returns a built-in grid.
func BuiltinSpec(grid string) (Spec, error) {
	paper := Spec{
		Grid:             GridPaper,
		Domains:          scene.Domains(),
		Counts:           slices.Clone(scene.PaperCounts),
		Frequencies:      slices.Clone(scene.PaperFrequencies),
		Seeds:            scene.PaperSeeds,
		NominalFrequency: scene.PaperNominalF,
		Duration:         scene.PaperDuration,
		FPS:              scene.DefaultFPS,
		Width:            scene.DefaultWidth,
		Height:           scene.DefaultHeight,
		Encoder:          Encoder{Codec: "libx264", Preset: "veryfast", CRF: 18, Threads: 1},
	}
	switch grid {
	case GridPaper, "":
		return paper, nil
	case GridDefault:
		s := paper
		s.Grid = GridDefault
		s.Counts = []int{0, 2, 6, 12}
		s.Frequencies = []float64{0.5, 1.5, 2.5, 4.0}
		s.Seeds = 1
		return s, nil
	case GridCountVideoBench:
		// 26 cardinalities × 10 classes × 10 seeds = 2,600 clips of 5 s at
		// 30 fps, 1920×1080 (CountVideoBench §4.3).
		s := paper
		s.Grid = GridCountVideoBench
		s.Domains = []string{scene.ObjectsDomain}
		s.Counts = slices.Clone(scene.CountVideoBenchCounts)
		s.Frequencies = nil
		s.Classes = scene.ObjectClasses()
		s.Seeds = scene.CountVideoBenchSeeds
		s.Duration = scene.CountVideoBenchDuration
		s.Width, s.Height = scene.CountVideoBenchWidth, scene.CountVideoBenchHeight
		return s, nil
	}
	return Spec{}, fmt.Errorf("%w: unknown grid %q (known: %v)", ErrSpec, grid, Grids)
}

// ErrSpec is wrapped by every spec error.
var ErrSpec = errors.New("invalid spec")

// LoadSpec reads a YAML spec file.
func LoadSpec(path string) (Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, err
	}
	s, err := ParseSpec(b)
	if err != nil {
		return Spec{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseSpec decodes YAML over the built-in grid the document names (paper
// when it names none). Unknown fields are errors.
func ParseSpec(b []byte) (Spec, error) {
	// First pass: which grid to start from.
	var head struct {
		Grid string `yaml:"grid"`
	}
	if err := yaml.Unmarshal(b, &head); err != nil {
		return Spec{}, fmt.Errorf("%w: %v", ErrSpec, err)
	}
	s, err := BuiltinSpec(head.Grid)
	if err != nil {
		return Spec{}, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil && !errors.Is(err, io.EOF) {
		return Spec{}, fmt.Errorf("%w: %v", ErrSpec, err)
	}
	if err := s.Validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// Validate checks the spec as a whole and every clip it plans.
func (s Spec) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrSpec, fmt.Sprintf(format, args...))
	}
	if len(s.Domains) == 0 || len(s.Counts) == 0 {
		return bad("domains and counts must not be empty")
	}
	if s.Seeds < 1 {
		return bad("seeds must be at least 1, got %d", s.Seeds)
	}
	// libav reads crf 0 as "the encoder's default", not lossless: refuse it
	// so nobody gets crf 23 while asking for the best quality.
	if !s.Encoder.Lossless && (s.Encoder.CRF < 1 || s.Encoder.CRF > 63) {
		return bad("encoder.crf %d out of range [1, 63] (use encoder.lossless for lossless)", s.Encoder.CRF)
	}
	if s.Encoder.Threads < 0 {
		return bad("encoder.threads must be ≥ 0")
	}
	if fr := s.Duration * float64(s.FPS); s.FPS > 0 && math.Abs(fr-math.Round(fr)) > 1e-6 {
		return bad("duration × fps = %v is not a whole number of frames", fr)
	}
	events, objects := false, false
	for _, d := range s.Domains {
		if d == scene.ObjectsDomain {
			objects = true
		} else {
			events = true
		}
	}
	for _, n := range s.Counts {
		if events && n > 0 && len(s.Frequencies) == 0 {
			return bad("positive counts need at least one frequency")
		}
	}
	if objects && len(s.Classes) == 0 {
		return bad("the objects domain needs at least one class")
	}
	if _, err := s.Plan(); err != nil {
		return err
	}
	return nil
}

// Plan lists the clips of the spec in a fixed order (domain, N, F, seed;
// objects: N, class, seed), each validated. N=0 gets one cell at the
// nominal frequency.
func (s Spec) Plan() ([]scene.Params, error) {
	var out []scene.Params
	seen := map[string]bool{}
	for _, d := range s.Domains {
		if d == scene.ObjectsDomain {
			for _, n := range s.Counts {
				for _, class := range s.Classes {
					for seed := range s.Seeds {
						p := scene.Params{Domain: d, N: n, Class: class, Seed: seed, Duration: s.Duration, FPS: s.FPS, Width: s.Width, Height: s.Height}
						if err := p.Validate(); err != nil {
							return nil, fmt.Errorf("%w: clip %s: %w", ErrSpec, p.ID(), err)
						}
						if !seen[p.ID()] {
							seen[p.ID()] = true
							out = append(out, p)
						}
					}
				}
			}
			continue
		}
		for _, n := range s.Counts {
			freqs := s.Frequencies
			if n == 0 {
				freqs = []float64{s.NominalFrequency}
			}
			for _, f := range freqs {
				for seed := range s.Seeds {
					p := scene.Params{Domain: d, N: n, F: f, Seed: seed, Duration: s.Duration, FPS: s.FPS, Width: s.Width, Height: s.Height}
					if err := p.Validate(); err != nil {
						return nil, fmt.Errorf("%w: clip %s: %w", ErrSpec, p.ID(), err)
					}
					if seen[p.ID()] {
						continue // a repeated value in counts/frequencies
					}
					seen[p.ID()] = true
					out = append(out, p)
				}
			}
		}
	}
	return out, nil
}
