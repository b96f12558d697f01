package pipeline

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"

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
	ID          string         `json:"id"`
	Domain      string         `json:"domain"`
	N           int            `json:"n"`
	F           float64        `json:"f"`
	Class       string         `json:"class,omitempty"` // objects domain: "<shape>-<colour>"
	Seed        int            `json:"seed"`
	Video       string         `json:"video"` // relative to the manifest's directory
	Trace       string         `json:"trace"`
	SHA256      string         `json:"sha256"` // of the video file
	Frames      int            `json:"frames"`
	Render      RenderSettings `json:"render"`
	ToolVersion string         `json:"tool_version"`
	GLRenderer  string         `json:"gl_renderer,omitempty"`
}

// ManifestName is the manifest's file name inside the output directory.
const ManifestName = "manifest.jsonl"

// ReadManifest reads the entries of a manifest. A torn last line (a kill
// during an append) and other undecodable lines are skipped and counted,
// not fatal: the clips they describe are simply rendered again.
func ReadManifest(path string) (entries []Entry, skipped int, err error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil || e.ID == "" {
			skipped++
			continue
		}
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return entries, skipped, nil
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
	return WriteFileAtomic(path, func(w io.Writer) error {
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

// WriteFileAtomic writes through a temporary file in the same directory,
// fsyncs it and renames it over path, so readers see the old file or the
// complete new one, never a part.
func WriteFileAtomic(path string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriter(tmp)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// fileSHA256 hashes a file.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ErrNoClip is returned by LoadClip for an id the manifest does not list.
var ErrNoClip = errors.New("clip not in manifest")

// LoadClip finds a clip in a manifest and rebuilds its scene from the
// recorded parameters, checking that the scene reproduces the trace file
// on disk, so frames rendered later are those of the recorded clip.
func LoadClip(manifestPath, id string) (*scene.Clip, *trace.Trace, Entry, error) {
	entries, _, err := ReadManifest(manifestPath)
	if err != nil {
		return nil, nil, Entry{}, err
	}
	if entries == nil {
		if _, err := os.Stat(manifestPath); err != nil {
			return nil, nil, Entry{}, err
		}
	}
	var e Entry
	found := false
	for _, x := range entries {
		if x.ID == id {
			e, found = x, true
		}
	}
	if !found {
		return nil, nil, Entry{}, fmt.Errorf("%w: %q is not in %s (%d clips)", ErrNoClip, id, manifestPath, len(entries))
	}
	dir := filepath.Dir(manifestPath)
	tr, err := trace.Load(filepath.Join(dir, filepath.FromSlash(e.Trace)))
	if err != nil {
		return nil, nil, e, err
	}
	r := e.Render
	clip, err := scene.New(scene.Params{Domain: e.Domain, N: e.N, F: e.F, Class: e.Class, Seed: e.Seed, Duration: r.Duration, FPS: r.FPS, Width: r.Width, Height: r.Height})
	if err != nil {
		return nil, nil, e, fmt.Errorf("clip %s: %w", id, err)
	}
	a, _ := clip.Trace().Marshal()
	b, _ := tr.Marshal()
	if !bytes.Equal(a, b) {
		return nil, nil, e, fmt.Errorf("clip %s: the trace on disk differs from the scene this version renders (made by %s); re-render the clip", id, e.ToolVersion)
	}
	return clip, tr, e, nil
}
