package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Objects clips render through the CLI, log the view statistics, and
// replay: N is the answer, and --at lists the objects in view.
func TestRenderObjectsThenReplay(t *testing.T) {
	out := t.TempDir()
	spec := writeFile(t, "o.yaml", "grid: countvideobench\ncounts: [6]\nclasses: [sphere-purple]\nseeds: 1\nduration: 1\n")
	msg, code := run(t, "render", "--spec", spec, "--size", "320x180", "--out", out)
	if code != 0 || !strings.Contains(msg, "share_with_an_object_leaving") || !strings.Contains(msg, "paper 83.0%") {
		t.Fatalf("render: exit %d: %s", code, msg)
	}
	tr := filepath.Join(out, "clips", "objects_N06_sphere-purple_s00.trace.json")
	msg, code = run(t, "trace", "replay", tr, "--at", "0.5")
	if code != 0 || !strings.Contains(msg, "6 sphere-purple objects (the answer is 6)") || !strings.Contains(msg, "(frame 15)") {
		t.Fatalf("replay: exit %d: %s", code, msg)
	}
	msg, code = run(t, "trace", "replay", tr, "--json")
	var got struct {
		N          int    `json:"n"`
		FinalCount int    `json:"final_count"`
		Class      string `json:"class"`
		Frames     int    `json:"frames"`
	}
	if code != 0 || json.Unmarshal([]byte(msg), &got) != nil || got.N != 6 || got.FinalCount != 6 || got.Class != "sphere-purple" || got.Frames != 30 {
		t.Fatalf("replay --json: exit %d: %s", code, msg)
	}
	if _, err := os.Stat(filepath.Join(out, "clips", "objects_N06_sphere-purple_s00.mp4")); err != nil {
		t.Fatal(err)
	}
	// Bad sizes and classes are usage errors.
	for _, args := range [][]string{
		{"render", "--grid", "countvideobench", "--size", "321x180", "--out", out},
		{"render", "--spec", writeFile(t, "b.yaml", "grid: countvideobench\nclasses: [cube-cyan]\n"), "--out", out},
	} {
		if msg, code := run(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, msg)
		}
	}
}
