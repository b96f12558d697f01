package frames

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/sampling"
)

// TestDirWritesIndexInShownOrder: images added in any order are listed in
// frames.json by position, named by position alone, with the clip frame
// when there is one; no temporary file is left.
func TestDirWritesIndexInShownOrder(t *testing.T) {
	dir := t.TempDir()
	var wrote []string
	d := NewDir(dir, Index{Clip: "c", Source: "scene", Policy: "shuffled:3", Format: "png", Width: 64, Height: 48, Generator: "test"}, false)
	d.Wrote = func(name string, _ []byte) { wrote = append(wrote, name) }
	// Time order 0, 1, 2 shown as 2, 0, 1; added in time order.
	for _, f := range []struct {
		fr sampling.Frame
		k  int
	}{{sampling.Frame{Index: 0, Position: 1, T: 0}, 0}, {sampling.Frame{Index: 1, Position: 2, T: 1.25}, 37}, {sampling.Frame{Index: 2, Position: 0, T: 2.5}, -1}} {
		if err := d.Add(f.fr, f.k, []byte{byte(f.fr.Index)}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := d.Close()
	if err != nil {
		t.Fatal(err)
	}
	onDisk, _ := os.ReadFile(filepath.Join(dir, IndexName))
	if string(onDisk) != string(b) || !strings.HasSuffix(string(b), "}\n") {
		t.Errorf("frames.json on disk differs from the bytes returned, or lacks the final newline")
	}
	var idx Index
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	want := []string{"0000.png", "0001.png", "0002.png"}
	for i, f := range idx.Frames {
		if f.Position != i || f.File != want[i] {
			t.Errorf("frame %d: %+v, want file %s", i, f, want[i])
		}
	}
	if idx.Frames[0].ClipFrame != nil || idx.Frames[2].ClipFrame == nil || *idx.Frames[2].ClipFrame != 37 {
		t.Errorf("clip frames: %+v", idx.Frames)
	}
	if strings.Join(wrote, ",") != "0001.png,0002.png,0000.png,frames.json" {
		t.Errorf("wrote %v", wrote)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 4 {
		t.Errorf("%d entries in the directory, want 3 images and frames.json", len(ents))
	}
	// An empty plan lists "frames": [].
	e, _ := Index{Policy: "keyframes:0.1"}.Marshal()
	if !strings.Contains(string(e), `"frames": []`) {
		t.Errorf("empty index: %s", e)
	}
}
