package pipeline

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// entryLine is a valid manifest line for id.
func entryLine(t *testing.T, id string) string {
	t.Helper()
	b, err := json.Marshal(Entry{ID: id, Domain: "blinking", N: 2, F: 1, Seed: 0, Video: "clips/" + id + ".mp4", Trace: "clips/" + id + ".trace.json",
		SHA256: "00", Frames: 120, Render: RenderSettings{Duration: 4, FPS: 30, Width: 160, Height: 96}, ToolVersion: Version})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeManifestText(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), ManifestName)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTornLastLineOnlyInRender: a render's own append cut short by a kill
// (the last line, without its newline) is skipped by ReadManifest (render
// resume) and refused by LoadManifest (eval, frames); a bad line that ends
// with a newline is refused by both.
func TestTornLastLineOnlyInRender(t *testing.T) {
	a, b := entryLine(t, "a"), entryLine(t, "b")
	torn := writeManifestText(t, a+"\n"+b+"\n"+entryLine(t, "c")[:40])
	entries, skipped, err := ReadManifest(torn)
	if err != nil || skipped != 1 || len(entries) != 2 || entries[1].ID != "b" {
		t.Errorf("render resume: %d entries, %d skipped, %v; want 2, 1, nil", len(entries), skipped, err)
	}
	_, err = LoadManifest(torn)
	if !errors.Is(err, ErrManifest) || !strings.Contains(err.Error(), torn+":3:") || !strings.Contains(err.Error(), "no newline") {
		t.Errorf("eval: %v; want ErrManifest at line 3 naming the missing newline", err)
	}
	// A complete last line without its newline is a whole entry.
	if entries, err := LoadManifest(writeManifestText(t, a+"\n"+b)); err != nil || len(entries) != 2 {
		t.Errorf("last line without newline: %d entries, %v", len(entries), err)
	}
	// Garbage in the middle is never a torn append.
	mid := writeManifestText(t, a+"\n{\"id\": \"x\", \n"+b+"\n")
	for name, read := range map[string]func(string) error{
		"ReadManifest": func(p string) error { _, _, err := ReadManifest(p); return err },
		"LoadManifest": func(p string) error { _, err := LoadManifest(p); return err },
	} {
		if err := read(mid); !errors.Is(err, ErrManifest) || !strings.Contains(err.Error(), mid+":2:") {
			t.Errorf("%s, bad middle line: %v; want ErrManifest at line 2", name, err)
		}
	}
	// A missing manifest is an empty one for a render, an error for use.
	missing := filepath.Join(t.TempDir(), ManifestName)
	if entries, skipped, err := ReadManifest(missing); err != nil || skipped != 0 || entries != nil {
		t.Errorf("ReadManifest(missing) = %v, %d, %v", entries, skipped, err)
	}
	if _, err := LoadManifest(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadManifest(missing) = %v, want fs.ErrNotExist", err)
	}
}

// TestLoadManifestRefusesBadLines: every malformed line is an error that
// names the file, the line and the field, and quotes none of the line.
func TestLoadManifestRefusesBadLines(t *testing.T) {
	good := entryLine(t, "a")
	edit := func(f func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(good), &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	cases := []struct {
		name, line, want string
	}{
		{"not JSON", "root:SECRET:0:0:root:/root:/bin/bash", "not a JSON object (syntax error at byte 1"},
		{"a list", "[1, 2]", "not a JSON object (an array)"},
		{"no id", edit(func(m map[string]any) { delete(m, "id") }), "field id is missing"},
		{"no n", edit(func(m map[string]any) { delete(m, "n") }), "field n is missing"},
		{"no render.fps", edit(func(m map[string]any) { delete(m["render"].(map[string]any), "fps") }), "field render.fps is missing"},
		{"empty trace", edit(func(m map[string]any) { m["trace"] = "" }), "field trace is empty"},
		{"float n", edit(func(m map[string]any) { m["n"] = 2.9 }), "field n: want a whole number, got a number"},
		{"float fps", edit(func(m map[string]any) { m["render"].(map[string]any)["fps"] = 29.97 }), "field render.fps: want a whole number"},
		{"string seed", edit(func(m map[string]any) { m["seed"] = "SECRET" }), "field seed: want a whole number, got a string"},
		{"unknown field", edit(func(m map[string]any) { m["colour"] = "red" }), `unknown field "colour"`},
		{"trailing text", good + ` {"SECRET": 1}`, "text after the entry"},
	}
	for _, c := range cases {
		p := writeManifestText(t, good+"\n"+c.line+"\n")
		_, err := LoadManifest(p)
		if !errors.Is(err, ErrManifest) || !strings.Contains(err.Error(), p+":2: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want ErrManifest at %s:2 with %q", c.name, err, p, c.want)
		} else if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: the error quotes the line: %v", c.name, err)
		}
	}
	dup := writeManifestText(t, good+"\n"+entryLine(t, "b")+"\n"+good+"\n")
	if _, err := LoadManifest(dup); !errors.Is(err, ErrManifest) || !strings.Contains(err.Error(), `:3: id "a" already on line 1`) {
		t.Errorf("duplicate id: %v", err)
	}
	if _, err := LoadManifest(writeManifestText(t, "\n\n")); !errors.Is(err, ErrManifest) || !strings.Contains(err.Error(), "lists no clips") {
		t.Errorf("empty manifest: %v", err)
	}
}

// TestEntryPathsStayInside: video and trace paths resolve inside the
// manifest's directory, symbolic links included, unless the entry marks
// its video external.
func TestEntryPathsStayInside(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "render")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(dir, "clips"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("SECRET"), 0o644)
	os.WriteFile(filepath.Join(dir, "clips", "a.trace.json"), []byte("{}"), 0o644)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "clips", "leak.trace.json")))
	must(os.Symlink(outside, filepath.Join(dir, "out")))
	must(os.Symlink("a.trace.json", filepath.Join(dir, "clips", "alias.trace.json")))
	manifest := filepath.Join(dir, ManifestName)

	for _, c := range []struct {
		rel, want string
	}{
		{"../outside/secret.txt", "leaves the manifest's directory"},
		{"clips/../../outside/secret.txt", "leaves the manifest's directory"},
		{filepath.Join(outside, "secret.txt"), "is absolute"},
		{"clips/leak.trace.json", "through a symbolic link"},
		{"out/secret.txt", "through a symbolic link"},
		{"out/not-there.json", "through a symbolic link"},
		{"", "path is empty"},
	} {
		e := Entry{ID: "x", Video: c.rel, Trace: c.rel}
		for name, resolve := range map[string]func(string) (string, error){"video": e.VideoPath, "trace": e.TracePath} {
			if _, err := resolve(manifest); !errors.Is(err, ErrManifest) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s %q: %v; want ErrManifest with %q", name, c.rel, err, c.want)
			}
		}
	}
	for _, rel := range []string{"clips/a.trace.json", "clips/alias.trace.json", "clips/not-yet.mp4"} {
		e := Entry{ID: "x", Video: rel, Trace: rel}
		if p, err := e.TracePath(manifest); err != nil || p != filepath.Join(dir, filepath.FromSlash(rel)) {
			t.Errorf("trace %q: %q, %v", rel, p, err)
		}
	}
	// An imported video may live anywhere; its trace may not.
	ext := Entry{ID: "x", External: true, Video: filepath.Join(outside, "v.mp4"), Trace: "../outside/secret.txt"}
	if p, err := ext.VideoPath(manifest); err != nil || p != filepath.Join(outside, "v.mp4") {
		t.Errorf("external video: %q, %v", p, err)
	}
	if _, err := ext.TracePath(manifest); !errors.Is(err, ErrManifest) {
		t.Errorf("external entry's trace outside: %v", err)
	}
}

// TestLoadEntryNeverQuotesTheTrace: a trace file that is not a trace is
// reported by name and kind of damage, never by its content.
func TestLoadEntryNeverQuotesTheTrace(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "clips"), 0o755)
	os.WriteFile(filepath.Join(dir, "clips", "a.trace.json"), []byte("SECRET:x:0:0\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "clips", "b.trace.json"), []byte(`{"SECRET": 1}`), 0o644)
	manifest := filepath.Join(dir, ManifestName)
	for _, id := range []string{"a", "b"} {
		var e Entry
		if err := json.Unmarshal([]byte(entryLine(t, id)), &e); err != nil {
			t.Fatal(err)
		}
		_, _, err := LoadEntry(manifest, e)
		if !errors.Is(err, ErrManifest) || !strings.Contains(err.Error(), "not a valid tracegrid trace") || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("clip %s: %v", id, err)
		}
	}
}
