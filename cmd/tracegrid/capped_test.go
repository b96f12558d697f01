package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestCappedPolicyCommands: fps:K,max:M (issue 26 §3) through frames and
// variants. A comma inside a policy must not split --policies, and a bad
// cap is exit 2 with a message, before anything is rendered or written.
func TestCappedPolicyCommands(t *testing.T) {
	render := t.TempDir()
	// One clip of 4 s at 10 fps: fps:4 would give 16 frames.
	spec := writeFile(t, "s.yaml", "grid: default\ndomains: [blinking]\ncounts: [2]\nfrequencies: [1.0]\nduration: 4\nfps: 10\nwidth: 96\nheight: 64\n")
	if msg, code := run(t, "render", "--spec", spec, "--out", render); code != 0 {
		t.Fatalf("render: exit %d: %s", code, msg)
	}
	manifest := filepath.Join(render, "manifest.jsonl")
	clip := []string{"--manifest", manifest, "--clip", "blinking_N02_F1.0_s00"}

	// The cap bites: 10 evenly spaced frames at j·4/10, recorded in
	// frames.json under the canonical policy.
	fdir := filepath.Join(t.TempDir(), "f")
	if msg, code := run(t, append([]string{"frames", "--out", fdir, "--policy", "fps:4.0,max:010"}, clip...)...); code != 0 || !strings.Contains(msg, "10 frames (fps:4,max:10)") {
		t.Fatalf("frames --policy fps:4.0,max:010: exit %d: %s", code, msg)
	}
	var idx struct {
		Policy string `json:"policy"`
		Note   string `json:"note"`
		Frames []struct {
			T    float64 `json:"t"`
			File string  `json:"file"`
		} `json:"frames"`
	}
	b, _ := os.ReadFile(filepath.Join(fdir, "frames.json"))
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatalf("frames.json: %v: %s", err, b)
	}
	var ts []float64
	for _, f := range idx.Frames {
		ts = append(ts, f.T)
	}
	if want := []float64{0, 0.4, 0.8, 1.2, 1.6, 2, 2.4, 2.8, 3.2, 3.6}; idx.Policy != "fps:4,max:10" || !reflect.DeepEqual(ts, want) {
		t.Errorf("frames.json: policy %q, times %v; want fps:4,max:10 at %v", idx.Policy, ts, want)
	}
	if !strings.Contains(idx.Note, "more than max 10") {
		t.Errorf("frames.json note %q does not say the cap applied", idx.Note)
	}
	// The cap does not bite: fps:2 gives 8 frames.
	if msg, code := run(t, append([]string{"frames", "--out", t.TempDir(), "--policy", "fps:2,max:768"}, clip...)...); code != 0 || !strings.Contains(msg, "8 frames (fps:2,max:768)") {
		t.Errorf("frames --policy fps:2,max:768: exit %d: %s", code, msg)
	}

	bad := []struct {
		args []string
		want string
	}{
		{append([]string{"frames", "--policy", "fps:2,max:0"}, clip...), "max:0: M is not a positive whole number"},
		{append([]string{"frames", "--policy", "fps:2,max:-4"}, clip...), "max:-4: M is not a positive whole number"},
		{append([]string{"frames", "--policy", "fps:2,max:7.5"}, clip...), "max:7.5: M is not a positive whole number"},
		{append([]string{"frames", "--policy", "keyframes,max:5"}, clip...), "keyframes:0.1 takes no frame cap"},
		{append([]string{"frames", "--policy", "uniform:8,max:4"}, clip...), "uniform:8 takes no frame cap"},
		{append([]string{"frames", "--policy", "fps:1,fps:4"}, clip...), "only a frame cap max:M may follow the comma"},
		{append([]string{"frames", "--policy", "fps:20,max:10"}, clip...), "fps:20,max:10 on clip \"blinking_N02_F1.0_s00\": 20 samples/s is faster than the clip's own 10 fps"},
		{[]string{"variants", "--manifest", manifest, "--policies", "fps:1,keyframes,max:5"}, "keyframes:0.1 takes no frame cap"},
		{[]string{"variants", "--manifest", manifest, "--policies", "fps:2,max:0"}, "max:0: M is not a positive whole number"},
		{[]string{"variants", "--manifest", manifest, "--policies", "max:10,fps:2"}, "max:M is a frame cap: write it after its policy"},
		// Its rate is K or M/D by clip: no one whole rate for an MP4.
		{[]string{"variants", "--manifest", manifest, "--policies", "fps:2,max:10", "--as", "video"}, "policy fps:2,max:10: its rate depends on the clip"},
		// Split before policy names only: both policies parse, so the
		// next check (--quality) is the one that refuses.
		{[]string{"variants", "--manifest", manifest, "--policies", "fps:1,fps:2,max:10", "--policies", "uniform:4", "--quality", "0"}, "--quality 0 out of range"},
	}
	for _, c := range bad {
		out := filepath.Join(t.TempDir(), "o")
		args := append(c.args, "--out", out)
		msg, code := run(t, args...)
		if code != 2 || !strings.Contains(msg, c.want) {
			t.Errorf("tracegrid %s: exit %d: %s\nwant exit 2 and %q", strings.Join(args, " "), code, msg, c.want)
		}
		noPanic(t, args, msg)
		if es := entries(t, out); len(es) != 0 {
			t.Errorf("tracegrid %s wrote %v", strings.Join(args, " "), es)
		}
	}

	evalArgs := []string{"eval", "--manifest", manifest, "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--prompt", "direct", "--dry-run", "--db", filepath.Join(t.TempDir(), "r.db")}
	if msg, code := run(t, append(evalArgs, "--policy", "fps:2,max:0")...); code != 2 || !strings.Contains(msg, "max:0: M is not a positive whole number") {
		t.Errorf("eval --policy fps:2,max:0: exit %d: %s", code, msg)
	}
	// eval: --policy is one policy or a list split before policy names;
	// the dry run plans each (fps:2 → 8 frames; fps:4 capped at 10).
	msg, code := run(t, append(evalArgs, "--policy", "fps:2,max:10", "--policy", "fps:1,fps:4,max:10", "--json")...)
	var est struct {
		Estimates []struct {
			Policy string `json:"policy"`
			Images int    `json:"images"`
		} `json:"estimates"`
	}
	if err := json.Unmarshal([]byte(msg), &est); code != 0 || err != nil {
		t.Fatalf("eval --dry-run: exit %d, %v: %s", code, err, msg)
	}
	var got []string
	for _, e := range est.Estimates {
		got = append(got, e.Policy+"="+strconv.Itoa(e.Images))
	}
	if want := []string{"fps:2,max:10=8", "fps:1=4", "fps:4,max:10=10"}; !reflect.DeepEqual(got, want) {
		t.Errorf("eval --dry-run estimates %v, want %v", got, want)
	}

	// variants --as frames writes the capped policy as a policy of its own.
	vdir := filepath.Join(t.TempDir(), "v")
	if msg, code := run(t, "variants", "--manifest", manifest, "--policies", "fps:1,fps:4,max:10", "--out", vdir); code != 0 || !strings.Contains(msg, "2 made") {
		t.Fatalf("variants fps:1,fps:4,max:10: exit %d: %s", code, msg)
	}
	b, _ = os.ReadFile(filepath.Join(vdir, "fps_4,max_10", "blinking_N02_F1.0_s00", "frames.json"))
	if err := json.Unmarshal(b, &idx); err != nil || idx.Policy != "fps:4,max:10" || len(idx.Frames) != 10 || idx.Frames[9].T != 3.6 {
		t.Errorf("variant fps:4,max:10: %v, %s", err, b)
	}
}
