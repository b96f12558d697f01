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

// TestRunObjectsEndToEnd: `run` on objects clips evaluates the reference
// perceiver with CountVideoBench's protocol (ten uniform frames, the
// class question) and reports the CountVideoBench section.
func TestRunObjectsEndToEnd(t *testing.T) {
	out := t.TempDir()
	spec := writeFile(t, "o.yaml", "grid: countvideobench\ncounts: [5, 12]\nclasses: [cube-red, sphere-yellow]\nseeds: 1\nduration: 2\n")
	msg, code := run(t, "run", "--spec", spec, "--size", "640x360", "--out", out)
	if code != 0 || !strings.Contains(msg, "share_with_an_object_leaving") {
		t.Fatalf("run: exit %d:\n%s", code, msg)
	}
	b, err := os.ReadFile(filepath.Join(out, "report", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Totals          struct{ Trials, Scored, Failed int }
		CountVideoBench struct {
			Rows []struct {
				Policy, Prompt   string
				Trials, Answered int
				EM, Coverage     float64
				ByCardinality    []struct{ N, Trials int } `json:"by_cardinality"`
			}
			Views struct {
				Clips int
			}
		} `json:"countvideobench"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Totals.Trials != 4 || sum.Totals.Failed != 0 || len(sum.CountVideoBench.Rows) != 1 || sum.CountVideoBench.Views.Clips != 4 {
		t.Fatalf("totals %+v, countvideobench %+v", sum.Totals, sum.CountVideoBench)
	}
	row := sum.CountVideoBench.Rows[0]
	if row.Policy != "uniform:10" || row.Prompt != "countvideobench" || row.Trials != 4 || len(row.ByCardinality) != 2 {
		t.Fatalf("row %+v", row)
	}
	// The perceiver answers every clip (Coverage 1); on these sparse
	// clips it counts right.
	if row.Coverage != 1 || row.EM < 0.75 {
		t.Errorf("perceiver on 4 objects clips: coverage %v EM %v", row.Coverage, row.EM)
	}
}
