package frames

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/sampling"
	"github.com/tracegrid/tracegrid/internal/fsutil"
)

// IndexName is the index file written beside a plan's images.
const IndexName = "frames.json"

// Index is frames.json, the index `tracegrid frames` and `tracegrid
// variants` write beside a plan's images (docs/sampling.md).
type Index struct {
	Clip      string          `json:"clip,omitempty"`
	Video     string          `json:"video,omitempty"`
	Source    string          `json:"source"` // "scene" (rendered) or "video" (decoded)
	Policy    string          `json:"policy"`
	Format    string          `json:"format"`
	Width     int             `json:"width"`
	Height    int             `json:"height"`
	Exact     bool            `json:"exact"`
	Note      string          `json:"note,omitempty"`
	Limit     *sampling.Limit `json:"limit,omitempty"`
	Events    []float64       `json:"events,omitempty"`
	Frames    []IndexFrame    `json:"frames"`
	Sheet     string          `json:"sheet,omitempty"`
	Generator string          `json:"tool_version"`
}

// IndexFrame is one image of an Index.
type IndexFrame struct {
	Index     int     `json:"index"`
	Position  int     `json:"position"`
	T         float64 `json:"t"`
	ClipFrame *int    `json:"clip_frame,omitempty"`
	File      string  `json:"file"`
}

// ImageName is the file name of a frame's image: its position in the
// shown order alone, e.g. "0007.jpg". A name never holds the sample time
// or the time order: a harness that forwards file:// URLs sends the name
// to the server, and a keyframe's time is a true event's time (the times
// are in frames.json, for scoring).
func ImageName(f sampling.Frame, format encode.ImageFormat) string {
	ext := "jpg"
	if format == encode.ImagePNG {
		ext = "png"
	}
	return fmt.Sprintf("%04d.%s", f.Position, ext)
}

// Marshal returns the index as frames.json holds it: indented JSON with a
// final newline, frames in shown order (by position).
func (idx Index) Marshal() ([]byte, error) {
	idx.Frames = slices.Clone(idx.Frames)
	if idx.Frames == nil {
		idx.Frames = []IndexFrame{}
	}
	slices.SortStableFunc(idx.Frames, func(a, b IndexFrame) int { return cmp.Compare(a.Position, b.Position) })
	b, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("frames: %s: %w", IndexName, err)
	}
	return append(b, '\n'), nil
}

// Dir writes a plan's images and frames.json into a directory: Add for
// each image (in any order), then Close. With Staged the directory is a
// private staging directory that the caller renames into place as a
// whole, so images are written directly; otherwise each image goes through
// a temporary name and a rename, so no reader sees half an image. The
// index is written last, atomically and fsynced; the images are not
// fsynced one by one (hundreds of fsyncs would cost more than rendering
// them).
type Dir struct {
	Path   string
	Staged bool
	Index  Index
	// Wrote, when set, is called with each file written (its name in the
	// directory and its bytes), frames.json included.
	Wrote func(name string, data []byte)
	// writeFile writes one file (a test seam for disk-full errors).
	writeFile func(path string, data []byte) error
}

// NewDir returns a writer of idx's images into path, which must exist.
func NewDir(path string, idx Index, staged bool) *Dir {
	idx.Frames = nil
	return &Dir{Path: path, Staged: staged, Index: idx}
}

// Add writes the image of frame f (clip frame k, -1 for none) and adds it
// to the index.
func (d *Dir) Add(f sampling.Frame, clipFrame int, data []byte) error {
	name := ImageName(f, encode.ImageFormat(d.Index.Format))
	if err := d.write(name, data, !d.Staged); err != nil {
		return err
	}
	item := IndexFrame{Index: f.Index, Position: f.Position, T: f.T, File: name}
	if clipFrame >= 0 {
		k := clipFrame
		item.ClipFrame = &k
	}
	d.Index.Frames = append(d.Index.Frames, item)
	return nil
}

// AddImage is Add for an Image of a stream.
func (d *Dir) AddImage(img Image) error { return d.Add(img.Frame, img.ClipFrame, img.Data) }

// WriteFile writes another file into the directory (a contact sheet),
// atomically.
func (d *Dir) WriteFile(name string, write func(io.Writer) error) error {
	return fsutil.WriteFileAtomic(filepath.Join(d.Path, name), write)
}

// Close writes frames.json (atomically, fsynced) and returns its bytes.
func (d *Dir) Close() ([]byte, error) {
	b, err := d.Index.Marshal()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(d.Path, IndexName)
	if d.writeFile != nil {
		err = d.writeFile(path, b)
	} else {
		err = fsutil.WriteFileAtomic(path, func(w io.Writer) error { _, err := w.Write(b); return err })
	}
	if err != nil {
		return nil, fmt.Errorf("frames: writing %s: %w", path, err)
	}
	if d.Wrote != nil {
		d.Wrote(IndexName, b)
	}
	return b, nil
}

func (d *Dir) write(name string, data []byte, rename bool) error {
	path := filepath.Join(d.Path, name)
	var err error
	switch {
	case d.writeFile != nil:
		err = d.writeFile(path, data)
	case rename:
		err = writeRename(path, data)
	default:
		err = os.WriteFile(path, data, 0o644)
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) && pe.Path == path {
			err = pe.Err // the path is in the message already
		}
		return fmt.Errorf("frames: writing %s: %w", path, err)
	}
	if d.Wrote != nil {
		d.Wrote(name, data)
	}
	return nil
}

// SetWriteFile replaces how Dir writes files (tests: a full disk).
func (d *Dir) SetWriteFile(fn func(path string, data []byte) error) { d.writeFile = fn }

// writeRename writes through a temporary file and a rename.
func writeRename(path string, data []byte) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
