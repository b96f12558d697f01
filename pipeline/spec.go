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
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/tracegrid/tracegrid/domain"
	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/internal/textin"
	"github.com/tracegrid/tracegrid/scene"
	"github.com/tracegrid/tracegrid/trace"
)

// Encoder settings of a spec.
type Encoder struct {
	// Codec is a libavcodec encoder name: libx264 (default), or a hardware
	// encoder such as h264_nvenc where the library and driver have it.
	Codec string `yaml:"codec" json:"codec"`
	// Preset is the encoder's speed/size preset (libx264: ultrafast …
	// veryslow; h264_nvenc: p1 … p7). Left out (or empty), it is the
	// codec's default, encode.DefaultPreset: x264's names mean nothing to
	// nvenc, which refuses them.
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
		Encoder:          Encoder{Codec: "libx264", Preset: encode.DefaultPreset("libx264"), CRF: 18, Threads: 1},
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
		s.Domains = []string{domain.Objects}
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

// Limits on a spec and its plan (docs/spec.md, "Limits").
const (
	// MaxSpecBytes caps a spec file: a spec is a few lines, and reading
	// stops here, so --spec /dev/zero fails at once instead of filling
	// memory.
	MaxSpecBytes = 1 << 20
	// ConfirmClips is the largest plan rendered without confirmation
	// (render and run --yes). The built-in grids stay below it (paper
	// 2,190 clips, countvideobench 2,600); 10,000 clips are hours of
	// rendering on two cores and gigabytes of disk, so a typo such as
	// --seeds 100 asks first.
	ConfirmClips = 10000
	// MaxClips is the largest plan at all, --yes or not: it is counted
	// from the spec's list lengths before the plan is built, so
	// seeds: 1000000000 is refused without allocating anything.
	MaxClips = 1000000
)

// LoadSpec reads a YAML spec file of at most MaxSpecBytes.
func LoadSpec(path string) (Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return Spec{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxSpecBytes+1))
	if err != nil {
		return Spec{}, fmt.Errorf("%s: %w", path, err)
	}
	s, err := ParseSpec(b)
	if err != nil {
		return Spec{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseSpec decodes one YAML document over the built-in grid it names
// (paper when it names none). Refused, each with its line and field: an
// empty document (it would silently mean the whole paper grid), a second
// document, unknown fields, a field with no value, and a number with a
// fraction or exponent in an integer field (YAML decoding would truncate
// fps: 10.9 to 10).
func ParseSpec(b []byte) (Spec, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrSpec, fmt.Sprintf(format, args...))
	}
	if len(b) > MaxSpecBytes {
		return Spec{}, bad("the file is larger than %d bytes (%d KiB), the limit for a spec", MaxSpecBytes, MaxSpecBytes>>10)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return Spec{}, bad("%s", emptySpec)
		}
		return Spec{}, bad("%v", err)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return Spec{}, bad("%v", err)
	default:
		return Spec{}, bad("line %d: a second YAML document starts here; a spec is one document (render each spec on its own)", next.Line)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return Spec{}, bad("%s", emptySpec)
	}
	if root.Kind != yaml.MappingNode {
		return Spec{}, bad("line %d: a spec is a mapping of fields (grid: …, counts: […]), not %s", root.Line, nodeKind(root))
	}
	if len(root.Content) == 0 {
		return Spec{}, bad("line %d: %s", root.Line, emptySpec)
	}
	if err := checkNode(root, reflect.TypeFor[Spec](), ""); err != nil {
		return Spec{}, bad("%v", err)
	}
	// Which grid to start from.
	var head struct {
		Grid string `yaml:"grid"`
	}
	if err := root.Decode(&head); err != nil {
		return Spec{}, bad("%v", err)
	}
	s, err := BuiltinSpec(head.Grid)
	if err != nil {
		return Spec{}, err
	}
	// The preset follows the codec unless the spec names one.
	s.Encoder.Preset = ""
	strict := yaml.NewDecoder(bytes.NewReader(b))
	strict.KnownFields(true)
	if err := strict.Decode(&s); err != nil {
		return Spec{}, bad("%v", err)
	}
	if s.Encoder.Preset == "" {
		s.Encoder.Preset = encode.DefaultPreset(s.Encoder.Codec)
	}
	if err := s.Validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

const emptySpec = "the spec is empty; name at least its grid (grid: default, 39 clips; grid: paper, all 2,190 clips)"

// checkNode walks a YAML node against the Go type it will be decoded
// into and refuses what the decoder would accept silently: a null value
// (the field keeps the grid's value), and a float in an integer field
// (truncated). Unknown fields and other type mismatches are left to the
// decoder, which names them with their line.
func checkNode(n *yaml.Node, t reflect.Type, path string) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return fmt.Errorf("line %d, field %s: no value (give one, or leave the field out to keep the grid's)", n.Line, path)
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			if key == "<<" { // a merge key: its mappings' fields are this struct's
				v := n.Content[i+1]
				for v.Kind == yaml.AliasNode && v.Alias != nil {
					v = v.Alias
				}
				merged := []*yaml.Node{v}
				if v.Kind == yaml.SequenceNode {
					merged = v.Content
				}
				for _, m := range merged {
					if err := checkNode(m, t, path); err != nil {
						return err
					}
				}
				continue
			}
			f, ok := yamlField(t, key)
			if !ok {
				continue
			}
			if err := checkNode(n.Content[i+1], f.Type, joinPath(path, key)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, e := range n.Content {
			if err := checkNode(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!float" {
			return fmt.Errorf("line %d, field %s: %s is not a whole number (the field takes an integer, written without a decimal point or exponent)", n.Line, path, n.Value)
		}
	}
	return nil
}

// yamlField finds the struct field a YAML key names.
func yamlField(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if name == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "the value " + textin.Quote(n.Value)
	}
	return "that"
}

// ClipCount is the number of clips the spec plans, computed from the
// lengths of its lists (repeated values counted once) without building the
// plan, so an absurd seeds value costs nothing. It saturates at
// math.MaxInt.
func (s Spec) ClipCount() int {
	counts := float64(len(distinct(s.Counts)))
	positive := counts // event cells: one per F for N > 0, one for N = 0
	hasZero := slices.Contains(s.Counts, 0)
	if hasZero {
		positive--
	}
	freqs := float64(len(distinct(s.Frequencies)))
	classes := float64(len(distinct(s.Classes)))
	seeds := float64(max(s.Seeds, 0))
	total := 0.0
	for _, d := range distinct(s.Domains) {
		if domain.Of(d).Class {
			total += counts * classes * seeds
			continue
		}
		cells := positive * freqs
		if hasZero {
			cells++
		}
		total += cells * seeds
	}
	if total >= math.MaxInt {
		return math.MaxInt
	}
	return int(total)
}

// distinct returns the distinct values of xs.
func distinct[T comparable](xs []T) []T {
	seen := make(map[T]bool, len(xs))
	var out []T
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
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
	if n := s.ClipCount(); n > MaxClips {
		return bad("the spec plans %d clips (seeds %d), more than the limit of %d clips per plan", n, s.Seeds, MaxClips)
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
		if domain.Of(d).Class {
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
	if objects {
		// An objects trace lists the objects in view in every frame: refuse
		// a clip whose trace could not be read back (trace.MaxBytes).
		n := slices.Max(s.Counts)
		frames := frameCount(s.Duration, s.FPS)
		if est := objectsTraceBytes(n, frames); est > trace.MaxBytes {
			return bad("objects clips of %d objects over %d frames would write traces of about %d MiB, above the %d MiB limit for a trace: shorten the clip, lower fps or the count",
				n, frames, est>>20, trace.MaxBytes>>20)
		}
	}
	return nil
}

// objectsTraceBytes bounds the size of an objects clip's trace: each
// frame's in_view list takes at most 14 bytes per object (an indented id
// of up to three digits and ",\n") plus 32 bytes of brackets; 64 KiB
// cover the rest (items, camera keys, nuisance).
func objectsTraceBytes(n, frames int) int {
	return frames*(14*n+32) + 64<<10
}

// Plan lists the clips of the spec in a fixed order (domain, N, F, seed;
// objects: N, class, seed), each validated. N=0 gets one cell at the
// nominal frequency.
func (s Spec) Plan() ([]scene.Params, error) {
	if n := s.ClipCount(); n > MaxClips {
		return nil, fmt.Errorf("%w: the spec plans %d clips (seeds %d), more than the limit of %d clips per plan", ErrSpec, n, s.Seeds, MaxClips)
	}
	var out []scene.Params
	seen := map[string]bool{}
	for _, d := range s.Domains {
		if domain.Of(d).Class {
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
