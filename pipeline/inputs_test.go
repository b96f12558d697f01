package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/scene"
)

// TestSpecRefusesSilentInput: issue 12 #10. Each of these specs used to
// be accepted: an empty file rendered the whole 2,190-clip paper grid, a
// second document was ignored, and floats in integer fields were
// truncated. Each is refused with its line and field.
func TestSpecRefusesSilentInput(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"empty file", "", "the spec is empty; name at least its grid"},
		{"only white space", "\n  \n", "the spec is empty"},
		{"only comments", "# grid: default\n", "the spec is empty"},
		{"only a document marker", "---\n", "the spec is empty"},
		{"null document", "~\n", "the spec is empty"},
		{"empty mapping", "{}\n", "line 1: the spec is empty"},
		{"a list", "- grid: default\n", "line 1: a spec is a mapping of fields"},
		{"second document", "grid: default\ncounts: [1]\n---\ngrid: paper\n", "line 3: a second YAML document starts here"},
		{"empty second document", "grid: default\n---\n", "line 2: a second YAML document"},
		{"float fps", "grid: default\nfps: 10.9\n", "line 2, field fps: 10.9 is not a whole number"},
		{"float count", "grid: default\ncounts: [0, 2.9]\n", "line 2, field counts[1]: 2.9 is not a whole number"},
		{"float width", "grid: default\nheight: 96\nwidth: 64.5\n", "line 3, field width: 64.5 is not a whole number"},
		{"float seeds", "grid: default\nseeds: 2.5\n", "field seeds: 2.5"},
		{"exponent seeds", "grid: default\nseeds: 1e3\n", "field seeds: 1e3 is not a whole number"},
		{"float crf", "grid: default\nencoder:\n  preset: fast\n  crf: 18.5\n", "line 4, field encoder.crf: 18.5"},
		{"float threads", "grid: default\nencoder: {threads: 1.5}\n", "field encoder.threads: 1.5"},
		{"integer too large", "grid: default\nseeds: 99999999999999999999\n", "field seeds: 99999999999999999999 is not a whole number"},
		{"no value", "grid: default\nseeds:\n", "line 2, field seeds: no value"},
		{"no value in a list", "grid: default\ncounts: [1, ~]\n", "field counts[1]: no value"},
		{"no value nested", "grid: default\nencoder: {preset: }\n", "field encoder.preset: no value"},
		{"float through an alias", "grid: default\nx: &r 10.9\n", "field x not found"},
		{"float through a merge key", "grid: default\nencoder:\n  <<: {crf: 20.5}\n", "line 3, field encoder.crf: 20.5 is not a whole number"},
		{"float in an aliased list", "grid: default\nclasses: &c [cube-red]\ncounts: [1, &n 2.5]\n", "field counts[1]: 2.5"},
	}
	for _, c := range cases {
		_, err := ParseSpec([]byte(c.yaml))
		if err == nil || !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrSpec containing %q", c.name, err, c.want)
		}
	}
	// Whole numbers in float fields, and integers written as such, are
	// fine.
	s, err := ParseSpec([]byte("grid: default\nfrequencies: [1, 2.5]\nduration: 4\nnominal_frequency: 1\nfps: 30\ncounts: [0, 3]\n"))
	if err != nil || s.Duration != 4 || s.Frequencies[0] != 1 || s.FPS != 30 {
		t.Errorf("valid spec: %+v, %v", s, err)
	}
	// The file name comes first.
	path := filepath.Join(t.TempDir(), "empty.yaml")
	os.WriteFile(path, nil, 0o644)
	if _, err := LoadSpec(path); err == nil || !strings.HasPrefix(err.Error(), path+": invalid spec: the spec is empty") {
		t.Errorf("LoadSpec of an empty file: %v", err)
	}
}

// TestSpecSizeLimit: issue 12 #12. --spec /dev/zero used to grow without
// bound; a spec file is read up to MaxSpecBytes.
func TestSpecSizeLimit(t *testing.T) {
	_, err := LoadSpec("/dev/zero")
	if err == nil || !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), "/dev/zero: invalid spec: the file is larger than 1048576 bytes (1024 KiB)") {
		t.Errorf("/dev/zero: %v", err)
	}
	// A comment-padded spec of exactly MaxSpecBytes is read; one byte more
	// is not.
	body := "grid: default\n#"
	pad := strings.Repeat("x", MaxSpecBytes-len(body)-1) + "\n"
	if _, err := ParseSpec([]byte(body + pad)); err != nil {
		t.Errorf("a spec of exactly MaxSpecBytes: %v", err)
	}
	if _, err := ParseSpec([]byte(body + "x" + pad)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a spec of MaxSpecBytes+1: %v", err)
	}
}

// TestClipCount: the plan's size counted from the spec alone, by hand:
// paper 3 domains × (9 counts × 8 F + 1 control) × 10 seeds = 2,190;
// default 3 × (3 × 4 + 1) × 1 = 39; countvideobench 26 × 10 × 10 = 2,600;
// repeated values count once.
func TestClipCount(t *testing.T) {
	for grid, want := range map[string]int{GridPaper: 2190, GridDefault: 39, GridCountVideoBench: 2600} {
		s, _ := BuiltinSpec(grid)
		if got := s.ClipCount(); got != want {
			t.Errorf("%s: ClipCount %d, want %d", grid, got, want)
		}
		if want > ConfirmClips {
			t.Errorf("the built-in grid %s needs --yes", grid)
		}
	}
	s, err := ParseSpec([]byte("grid: default\ndomains: [blinking, blinking, bounce_ball]\ncounts: [0, 0, 3, 3, 2]\nfrequencies: [1, 1.0, 2]\nseeds: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	plan, _ := s.Plan()
	// 2 domains × (2 counts × 2 F + 1) × 2 seeds = 20.
	if s.ClipCount() != 20 || len(plan) != 20 {
		t.Errorf("ClipCount %d, plan %d, want 20", s.ClipCount(), len(plan))
	}
	objects := Spec{Domains: []string{scene.ObjectsDomain, "blinking"}, Counts: []int{5, 5, 8}, Frequencies: []float64{1}, Classes: []string{"cube-red", "sphere-blue"}, Seeds: 3}
	// objects 2 counts × 2 classes × 3 seeds = 12; blinking (2 × 1) × 3 = 6.
	if got := objects.ClipCount(); got != 18 {
		t.Errorf("mixed ClipCount %d, want 18", got)
	}
}

// TestHugePlanRefusedBeforeAllocation: issue 12 #12. seeds: 1000000000
// used to build a plan of 39·10⁹ clips. It is refused from the count, with
// almost nothing allocated.
func TestHugePlanRefusedBeforeAllocation(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ParseSpec([]byte("grid: default\nseeds: 1000000000\n"))
	runtime.ReadMemStats(&after)
	if err == nil || !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), "the spec plans 39000000000 clips (seeds 1000000000), more than the limit of 1000000 clips per plan") {
		t.Errorf("seeds 1e9: %v", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("refusing the plan allocated %d bytes", grew)
	}
	// Just over the limit: 1 cell × 1,000,001 seeds. Plan refuses it too.
	s := Spec{Domains: []string{"blinking"}, Counts: []int{1}, Frequencies: []float64{1}, Seeds: MaxClips + 1, Duration: 2, FPS: 30, Width: 64, Height: 64, Encoder: Encoder{CRF: 18}}
	if _, err := s.Plan(); err == nil || !strings.Contains(err.Error(), "1000001 clips") {
		t.Errorf("Plan of MaxClips+1: %v", err)
	}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "1000001 clips") {
		t.Errorf("Validate of MaxClips+1: %v", err)
	}
}

// TestObjectsTraceSizeLimit: a spec whose objects traces could not be
// read back (trace.MaxBytes) is refused, and the bound used for it holds
// for real traces.
func TestObjectsTraceSizeLimit(t *testing.T) {
	// 200 objects × 28,800 frames (120 s at 240 fps): 28,800 × (14·200 +
	// 32) + 64 KiB = 81,627,136 bytes, 77 MiB.
	_, err := ParseSpec([]byte("grid: countvideobench\ncounts: [200]\nclasses: [cube-red]\nseeds: 1\nduration: 120\nfps: 240\nwidth: 320\nheight: 180\n"))
	if err == nil || !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), "200 objects over 28800 frames would write traces of about 77 MiB, above the 64 MiB limit") {
		t.Errorf("huge objects traces: %v", err)
	}
	// Half as long fits (about 38 MiB).
	if _, err := ParseSpec([]byte("grid: countvideobench\ncounts: [200]\nclasses: [cube-red]\nseeds: 1\nduration: 60\nfps: 240\nwidth: 320\nheight: 180\n")); err != nil {
		t.Errorf("60 s objects clips: %v", err)
	}
	for _, n := range []int{1, 9, 50} {
		c, err := scene.New(scene.Params{Domain: scene.ObjectsDomain, N: n, Class: "cube-blue", Seed: 1, Duration: 3, FPS: 30, Width: 320, Height: 180})
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.Trace().Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if est := objectsTraceBytes(n, 90); len(b) > est {
			t.Errorf("N=%d: trace of %d bytes, bound %d", n, len(b), est)
		}
	}
}

// TestRenderRefusesAnotherPlan: issue 12 #14. Rendering a different spec
// into a directory used to keep the old clips in the new manifest. A plan
// that lacks clips the directory records is refused and nothing changes;
// a plan that holds them all (an interrupted run, more seeds) resumes, and
// the manifest lists exactly its clips.
func TestRenderRefusesAnotherPlan(t *testing.T) {
	out := t.TempDir()
	s := smallSpec(t) // 6 clips: 3 domains × N ∈ {0, 3} at 2 Hz
	if _, err := render(t, context.Background(), s, out); err != nil {
		t.Fatal(err)
	}
	mpath := filepath.Join(out, ManifestName)
	before, _ := os.ReadFile(mpath)
	other := s
	other.Counts = []int{3}
	_, err := render(t, context.Background(), other, out)
	if !errors.Is(err, ErrOtherPlan) || !errors.Is(err, ErrOutput) ||
		!strings.Contains(err.Error(), out+" records 6 clips, 3 of them not in this plan (blinking_N00_F1.0_s00, bounce_ball_N00_F1.0_s00, state_machine_N00_F1.0_s00)") ||
		!strings.Contains(err.Error(), "render into a new --out directory") {
		t.Fatalf("another plan: %v", err)
	}
	if after, _ := os.ReadFile(mpath); string(after) != string(before) {
		t.Errorf("the refused run changed the manifest")
	}
	// A plan that holds the six clips and one more F: 3 more clips.
	grown := s
	grown.Frequencies = []float64{2.0, 4.0}
	sum, err := render(t, context.Background(), grown, out)
	if err != nil || sum.Skipped != 6 || sum.Rendered != 3 {
		t.Fatalf("grown plan: %+v, %v", sum, err)
	}
	plan, _ := grown.Plan()
	entries, _, _ := ReadManifest(mpath)
	if len(entries) != len(plan) {
		t.Fatalf("manifest has %d entries, plan %d", len(entries), len(plan))
	}
	for i, e := range entries {
		if e.ID != plan[i].ID() {
			t.Errorf("manifest line %d is %s, want %s", i, e.ID, plan[i].ID())
		}
	}
}

// TestRenderRefusesEmptyOut: issue 12 #14. An empty output name used to
// write into the current directory.
func TestRenderRefusesEmptyOut(t *testing.T) {
	_, err := render(t, context.Background(), smallSpec(t), "")
	if !errors.Is(err, ErrOutput) || !strings.Contains(err.Error(), "not given") {
		t.Errorf("empty --out: %v", err)
	}
}
