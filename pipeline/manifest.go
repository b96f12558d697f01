package pipeline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/tracegrid/tracegrid/domain"
	"github.com/tracegrid/tracegrid/internal/fsutil"
	"github.com/tracegrid/tracegrid/internal/textin"
	"github.com/tracegrid/tracegrid/scene"
	"github.com/tracegrid/tracegrid/trace"
)

// Version is the tool's release; the VCS revision of the build is appended
// where the binary carries one.
const Version = "0.1.0"

// ToolVersion returns Version plus the VCS revision the binary was built
// from, when known (e.g. "0.1.0+3f2a9c1d").
func ToolVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return Version
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return Version
	}
	if dirty {
		rev += "-dirty"
	}
	return Version + "+" + rev
}

// RenderSettings are the settings that determine a clip's pixels; a clip
// whose recorded settings differ from the spec's is rendered again.
type RenderSettings struct {
	Duration float64 `json:"duration"`
	FPS      int     `json:"fps"`
	Width    int     `json:"width"`
	Height   int     `json:"height"`
	Encoder  Encoder `json:"encoder"`
}

// Entry is one line of manifest.jsonl.
type Entry struct {
	ID     string  `json:"id"`
	Domain string  `json:"domain"`
	N      int     `json:"n"`
	F      float64 `json:"f"`
	Class  string  `json:"class,omitempty"` // objects domain: "<shape>-<colour>"
	Seed   int     `json:"seed"`
	// Video and Trace are slash-separated paths relative to the manifest's
	// directory, which they may not leave (VideoPath, TracePath).
	Video string `json:"video"`
	Trace string `json:"trace"`
	// External marks a video imported from outside the render directory on
	// purpose: its path may then be absolute or lead anywhere. The trace
	// stays inside the directory either way.
	External    bool           `json:"external,omitempty"`
	SHA256      string         `json:"sha256"` // of the video file
	Frames      int            `json:"frames"`
	Render      RenderSettings `json:"render"`
	ToolVersion string         `json:"tool_version"`
	GLRenderer  string         `json:"gl_renderer,omitempty"`
	// Natural describes an imported natural video (domain natural,
	// `tracegrid import`); nil for every other entry. Such an entry is
	// External; Render holds the video's probed duration, its frame rate
	// rounded and its displayed size, Frames its frame count, Seed and F
	// are 0. Its Trace is "" when the annotation gives the count alone.
	Natural *NaturalVideo `json:"natural,omitempty"`
}

// NaturalVideo is what the entry of an imported natural video records
// beyond the common fields.
type NaturalVideo struct {
	// FrameRate is the video's average frame rate (render.fps is it
	// rounded), e.g. 29.97002997002997.
	FrameRate float64 `json:"frame_rate"`
	// Rotation is the angle in degrees, clockwise, by which the decoded
	// picture turns for display (0, 90, 180, 270); render.width and
	// render.height are the displayed size.
	Rotation int `json:"rotation"`
	// Source is the video's file name as the annotation names it.
	Source string `json:"source"`
	// Action is the annotation's action type; empty when it has none.
	Action string `json:"action,omitempty"`
}

// ManifestName is the manifest's file name inside the output directory.
const ManifestName = "manifest.jsonl"

// ErrManifest is wrapped by every error about a manifest's content: a
// line that is not an entry, a missing or mistyped field, a duplicate id,
// a path that leaves the manifest's directory, a trace file that is not a
// trace.
var ErrManifest = errors.New("invalid manifest")

// MaxManifestLine is the longest manifest line read, in bytes (an entry is
// well under 1 KB).
const MaxManifestLine = 1 << 20

// MaxIDBytes is the longest clip id a manifest holds: an id names the
// clip's files, and a file name has at most 255 bytes.
const MaxIDBytes = 255

// requiredFields must be present in every entry, and requiredRender in its
// render object (a zero is a value for n, f and seed, so presence is
// checked on the JSON, not on the decoded struct).
var (
	requiredFields = []string{"id", "domain", "n", "f", "seed", "video", "trace", "render"}
	requiredRender = []string{"duration", "fps", "width", "height"}
)

// ReadManifest reads a manifest for the render that owns it (resume). Every
// line must be a whole entry (LoadManifest's rules), with one exception: a
// final line that has no newline and does not decode — an append cut short
// by a kill, since appendManifest writes each line and its newline in one
// write — is skipped and counted (skipped is 0 or 1), and the render
// rewrites the manifest without it. A missing file is an empty manifest.
// Any other bad line is an error wrapping ErrManifest that names the file,
// the line and the field.
func ReadManifest(path string) (entries []Entry, skipped int, err error) {
	entries, torn, err := readManifest(path, true)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if torn {
		skipped = 1
	}
	return entries, skipped, err
}

// LoadManifest reads a manifest for use (eval, frames, dry runs): every
// line, the last one included, must be one JSON object with every
// required field (id, domain, n, f, seed, video, trace, render with
// duration, fps, width and height) and no unknown field, and ids must be
// unique. Errors wrap ErrManifest (fs.ErrNotExist for a missing file) and
// name the file, the line and the field; they never quote the file's text
// beyond a field name.
func LoadManifest(path string) ([]Entry, error) {
	entries, torn, err := readManifest(path, false)
	if err != nil {
		return nil, err
	}
	if torn {
		// Not reached: readManifest reports a torn line as an error when
		// it is not tolerated.
		return nil, fmt.Errorf("%w: %s: last line incomplete", ErrManifest, path)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("%w: %s lists no clips", ErrManifest, path)
	}
	return entries, nil
}

// readManifest reads the entries; with tolerateTorn, an undecodable final
// line without a newline is dropped and reported as torn.
func readManifest(path string, tolerateTorn bool) (entries []Entry, torn bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	// A manifest saved again by another tool may start with a byte order
	// mark; a CRLF line end leaves "\r", which JSON reads as space.
	br := textin.NewReader(f, 4096)
	seen := map[string]int{}
	for n := 1; ; n++ {
		line, complete, err := readLine(br, MaxManifestLine)
		if err != nil && !errors.Is(err, io.EOF) {
			if errors.Is(err, errLineTooLong) {
				return nil, false, fmt.Errorf("%w: %s:%d: line longer than %d bytes", ErrManifest, path, n, MaxManifestLine)
			}
			return nil, false, fmt.Errorf("%s: %w", path, err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			e, derr := decodeEntry(line)
			if derr != nil {
				if !complete && tolerateTorn {
					return entries, true, nil
				}
				if !complete {
					derr = fmt.Errorf("%w (the last line has no newline: a render was killed or is still writing; rerun tracegrid render to finish it)", derr)
				}
				return nil, false, fmt.Errorf("%w: %s:%d: %w", ErrManifest, path, n, derr)
			}
			if prev, ok := seen[e.ID]; ok {
				return nil, false, fmt.Errorf("%w: %s:%d: id %s already on line %d", ErrManifest, path, n, textin.Quote(e.ID), prev)
			}
			seen[e.ID] = n
			entries = append(entries, e)
		}
		if errors.Is(err, io.EOF) {
			return entries, false, nil
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its newline; complete is false
// for a last line that ends without one. At the end it returns io.EOF
// (with the last line, if any).
func readLine(br *bufio.Reader, limit int) (line []byte, complete bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > limit+1 {
			return nil, false, errLineTooLong
		}
		switch {
		case err == nil:
			return line[:len(line)-1], true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return line, false, err
		}
	}
}

// decodeEntry decodes one line strictly. Its errors name the field; they
// quote no text of the line but a field name.
func decodeEntry(line []byte) (Entry, error) {
	var e Entry
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return Entry{}, describeJSONError(err)
	}
	if dec.More() {
		return Entry{}, errors.New("text after the entry's JSON object")
	}
	var present map[string]json.RawMessage
	if err := json.Unmarshal(line, &present); err != nil {
		return Entry{}, describeJSONError(err)
	}
	for _, k := range requiredFields {
		if _, ok := present[k]; !ok {
			return Entry{}, fmt.Errorf("field %s is missing", k)
		}
	}
	var render map[string]json.RawMessage
	if err := json.Unmarshal(present["render"], &render); err != nil {
		return Entry{}, errors.New("field render: want an object")
	}
	for _, k := range requiredRender {
		if _, ok := render[k]; !ok {
			return Entry{}, fmt.Errorf("field render.%s is missing", k)
		}
	}
	for _, f := range []struct {
		name string
		bad  bool
	}{
		{"id", e.ID == ""}, {"domain", e.Domain == ""}, {"video", e.Video == ""},
		// A natural video annotated with its count alone has no trace.
		{"trace", e.Trace == "" && !domain.Of(e.Domain).EventsOptional},
		{"render.duration", !(e.Render.Duration > 0)}, {"render.fps", e.Render.FPS <= 0},
		{"render.width", e.Render.Width <= 0}, {"render.height", e.Render.Height <= 0},
	} {
		if f.bad {
			return Entry{}, fmt.Errorf("field %s is empty or not positive", f.name)
		}
	}
	// An id names the clip's files (<id>.mp4, <id>.trace.json) and every
	// message about the clip: one longer than a file name can be is no id.
	if len(e.ID) > MaxIDBytes {
		return Entry{}, fmt.Errorf("field id is %d bytes, longer than %d (it names the clip's files): %s", len(e.ID), MaxIDBytes, textin.Quote(e.ID))
	}
	// An imported video (a domain without a scene) says so and how to read
	// it; a rendered clip has no such section.
	if imported := importedDomain(e.Domain); imported || e.Natural != nil {
		switch {
		case !imported:
			return Entry{}, fmt.Errorf("field natural: domain %s is rendered, not imported", textin.Quote(e.Domain))
		case e.Natural == nil:
			return Entry{}, fmt.Errorf("field natural is missing (domain %s is an imported video)", textin.Quote(e.Domain))
		case !e.External:
			return Entry{}, errors.New("field external: an imported video's entry says \"external\": true")
		case !(e.Natural.FrameRate > 0) || e.Natural.FrameRate > 1e6:
			return Entry{}, errors.New("field natural.frame_rate is empty or not positive")
		case e.Natural.Rotation%90 != 0 || e.Natural.Rotation < 0 || e.Natural.Rotation >= 360:
			return Entry{}, errors.New("field natural.rotation: want 0, 90, 180 or 270")
		}
	}
	return e, nil
}

// describeJSONError says what is wrong with a line without quoting it:
// the field and the expected type, or the byte where the syntax breaks.
func describeJSONError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("not a JSON object (syntax error at byte %d of the line)", se.Offset)
	case errors.As(err, &te):
		if te.Field == "" {
			return fmt.Errorf("not a JSON object (%s)", jsonKind(te.Value))
		}
		return fmt.Errorf("field %s: want %s, got %s", te.Field, goKind(te.Type.Kind().String()), jsonKind(te.Value))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errors.New("not a whole JSON object (it ends early)")
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if len(name) > 66 {
			name = name[:64] + "…\""
		}
		return fmt.Errorf("unknown field %s", name)
	}
	return errors.New("not a valid entry")
}

// jsonKind names the JSON type in an UnmarshalTypeError's Value ("number
// 2.9" → "a number"), without the value.
func jsonKind(v string) string {
	kind, _, _ := strings.Cut(v, " ")
	if kind == "array" || kind == "object" {
		return "an " + kind
	}
	return "a " + kind
}

func goKind(k string) string {
	switch {
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"):
		return "a whole number"
	case strings.HasPrefix(k, "float"):
		return "a number"
	case k == "string":
		return "a string"
	case k == "bool":
		return "true or false"
	case k == "struct", k == "map":
		return "an object"
	case k == "slice":
		return "a list"
	}
	return k
}

// VideoPath is the entry's video file: Video resolved against the
// manifest's directory. It must stay inside that directory, symbolic links
// included, unless the entry is External (then an absolute path is taken
// as it is and a relative one is read from the manifest's directory).
func (e Entry) VideoPath(manifestPath string) (string, error) {
	dir := filepath.Dir(manifestPath)
	if e.External {
		p := filepath.FromSlash(e.Video)
		if e.Video == "" {
			return "", fmt.Errorf("%w: clip %s: video path is empty", ErrManifest, e.ID)
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		return p, nil
	}
	return inside(dir, e.Video, "video", e.ID)
}

// TracePath is the entry's trace file, which must stay inside the
// manifest's directory, symbolic links included (also for External
// entries).
func (e Entry) TracePath(manifestPath string) (string, error) {
	return inside(filepath.Dir(manifestPath), e.Trace, "trace", e.ID)
}

// inside resolves rel against dir and refuses a result outside dir:
// lexically (an absolute path, "..") and after following symbolic links
// (of the file, or of its nearest existing parent when it does not exist
// yet). The path is quoted; no file is opened.
func inside(dir, rel, field, id string) (string, error) {
	if rel == "" {
		return "", fmt.Errorf("%w: clip %s: %s path is empty", ErrManifest, id, field)
	}
	p := filepath.FromSlash(rel)
	if filepath.IsAbs(p) || filepath.VolumeName(p) != "" {
		return "", fmt.Errorf("%w: clip %s: %s path %s is absolute; manifest paths are relative to the manifest's directory (an imported video outside it says \"external\": true)", ErrManifest, id, field, textin.Quote(rel))
	}
	full := filepath.Join(dir, p)
	if !within(filepath.Clean(dir), full) {
		return "", fmt.Errorf("%w: clip %s: %s path %s leaves the manifest's directory", ErrManifest, id, field, textin.Quote(rel))
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("manifest directory: %w", err)
	}
	// The file, or its nearest existing parent.
	probe := full
	real, err := filepath.EvalSymlinks(probe)
	for err != nil && errors.Is(err, fs.ErrNotExist) && probe != filepath.Dir(probe) {
		probe = filepath.Dir(probe)
		real, err = filepath.EvalSymlinks(probe)
	}
	if err != nil {
		return "", fmt.Errorf("clip %s: %s path %s: %w", id, field, textin.Quote(rel), err)
	}
	if !within(realDir, real) {
		return "", fmt.Errorf("%w: clip %s: %s path %s leads outside the manifest's directory through a symbolic link", ErrManifest, id, field, textin.Quote(rel))
	}
	return full, nil
}

// within reports whether p is base or below it (both clean).
func within(base, p string) bool {
	rel, err := filepath.Rel(base, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// writeManifest atomically replaces the manifest with entries sorted by
// the given order (ids not in order go last, by id).
func writeManifest(path string, entries []Entry, order map[string]int) error {
	sorted := append([]Entry(nil), entries...)
	rank := func(id string) int {
		if r, ok := order[id]; ok {
			return r
		}
		return len(order)
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		ri, rj := rank(sorted[i].ID), rank(sorted[j].ID)
		if ri != rj {
			return ri < rj
		}
		return sorted[i].ID < sorted[j].ID
	})
	return fsutil.WriteFileAtomic(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for _, e := range sorted {
			if err := enc.Encode(e); err != nil {
				return err
			}
		}
		return nil
	})
}

// appendManifest adds one entry with a single write, so a kill leaves at
// most a torn last line, which ReadManifest skips.
func appendManifest(f *os.File, e Entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		return err
	}
	return f.Sync()
}

// ErrNoClip is returned by LoadClip for an id the manifest does not list.
var ErrNoClip = errors.New("clip not in manifest")

// importedDomain reports whether d is a registered domain whose clips are
// imported videos, not rendered (natural).
func importedDomain(d string) bool {
	s, ok := domain.Lookup(d)
	return ok && !s.Scene
}

// ErrNoScene is returned by LoadClip and LoadEntry for an imported video
// (a domain without a scene, e.g. natural): there is nothing to rebuild;
// its frames are decoded from the video (package natural).
var ErrNoScene = errors.New("clip has no scene")

// LoadClip finds a clip in a manifest (LoadManifest's rules) and rebuilds
// it (LoadEntry).
func LoadClip(manifestPath, id string) (*scene.Clip, *trace.Trace, Entry, error) {
	entries, err := LoadManifest(manifestPath)
	if err != nil {
		return nil, nil, Entry{}, err
	}
	for _, e := range entries {
		if e.ID == id {
			clip, tr, err := LoadEntry(manifestPath, e)
			return clip, tr, e, err
		}
	}
	return nil, nil, Entry{}, fmt.Errorf("%w: %s is not in %s (%d clips)", ErrNoClip, textin.Quote(id), manifestPath, len(entries))
}

// LoadEntry rebuilds an entry's scene from the recorded parameters and
// checks that it reproduces the trace file on disk, so frames rendered
// later are those of the recorded clip. The trace must lie inside the
// manifest's directory (TracePath). A trace file that is not a valid trace
// is an error wrapping ErrManifest (and trace.ErrSchema or trace.ErrEvents
// when it is one of those) that does not quote the file: `tracegrid trace
// replay` on the file says what is wrong.
func LoadEntry(manifestPath string, e Entry) (*scene.Clip, *trace.Trace, error) {
	if importedDomain(e.Domain) {
		return nil, nil, fmt.Errorf("%w: clip %s is a %s video imported by tracegrid import, not rendered: decode its frames from the video (tracegrid frames --video %s)",
			ErrNoScene, e.ID, e.Domain, e.Video)
	}
	path, err := e.TracePath(manifestPath)
	if err != nil {
		return nil, nil, err
	}
	tr, err := trace.Load(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("clip %s: trace %s: %w", e.ID, e.Trace, fs.ErrNotExist)
		}
		return nil, nil, traceError(e, path, err)
	}
	r := e.Render
	clip, err := scene.New(scene.Params{Domain: e.Domain, N: e.N, F: e.F, Class: e.Class, Seed: e.Seed, Duration: r.Duration, FPS: r.FPS, Width: r.Width, Height: r.Height})
	if err != nil {
		return nil, nil, fmt.Errorf("clip %s: %w", e.ID, err)
	}
	a, _ := clip.Trace().Marshal()
	b, _ := tr.Marshal()
	if !bytes.Equal(a, b) {
		return nil, nil, fmt.Errorf("clip %s: the trace on disk differs from the scene this version renders (made by %s); re-render the clip", e.ID, e.ToolVersion)
	}
	return clip, tr, nil
}

// traceError describes a trace file that did not load without quoting
// any of its text.
func traceError(e Entry, path string, err error) error {
	what := "it does not validate"
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		what = fmt.Sprintf("not JSON: syntax error at byte %d", se.Offset)
	case errors.As(err, &te):
		what = "a field has the wrong type"
	case strings.Contains(err.Error(), "unknown field"):
		what = "it has an unknown field"
	case errors.Is(err, trace.ErrSchema):
		what = "wrong schema"
	case errors.Is(err, trace.ErrEvents):
		what = "its events are inconsistent"
	}
	msg := fmt.Errorf("%w: clip %s: trace file %s is not a valid tracegrid trace (%s); run `tracegrid trace replay %s` to see why", ErrManifest, e.ID, e.Trace, what, path)
	for _, sentinel := range []error{trace.ErrSchema, trace.ErrEvents} {
		if errors.Is(err, sentinel) {
			return fmt.Errorf("%w [%w]", msg, sentinel)
		}
	}
	return msg
}
