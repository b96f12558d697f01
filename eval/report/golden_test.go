package report

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/eval/results"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden.sha256 from the current output")

// goldenFile holds, per fixture, the SHA-256 of every file Write produces
// (summary.json, tables/*.csv, figures/*.png, cases.html, index.html).
// It was recorded before Build was split into section builders and the
// objects domain moved behind the domain registry (issue 13), so the
// report's output is byte-for-byte what it was then. Regenerate it with
// `go test ./eval/report -run TestGoldenOutput -update` only for a change
// that is meant to alter the report, and say so in the change.
const goldenFile = "testdata/golden.sha256"

// TestGoldenOutput writes the report of each test fixture and of
// DemoTrials(1) and compares every file's hash with goldenFile.
func TestGoldenOutput(t *testing.T) {
	objects, _ := objectsFixture(t)
	fixtures := []struct {
		name   string
		trials []results.Trial
		study  string
	}{
		{"fixture", fixture(), "fx"},
		{"objects", append(fixture(), objects...), "fx"},
		{"cases", caseTrials(), ""},
		{"demo1", DemoTrials(1), DemoStudy},
	}
	got := map[string]string{}
	for _, fx := range fixtures {
		r, err := Build(fx.trials, Options{Study: fx.study})
		if err != nil {
			t.Fatalf("%s: %v", fx.name, err)
		}
		dir := filepath.Join(t.TempDir(), fx.name)
		if err := r.Write(dir); err != nil {
			t.Fatalf("%s: %v", fx.name, err)
		}
		err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			got[fx.name+"/"+filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", fx.name, err)
		}
	}
	if *updateGolden {
		var b strings.Builder
		for _, k := range slices.Sorted(maps.Keys(got)) {
			fmt.Fprintf(&b, "%s  %s\n", got[k], k)
		}
		if err := os.MkdirAll(filepath.Dir(goldenFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d files)", goldenFile, len(got))
		return
	}
	want := readGolden(t)
	for _, k := range slices.Sorted(maps.Keys(want)) {
		switch g, ok := got[k]; {
		case !ok:
			t.Errorf("%s: not written", k)
		case g != want[k]:
			t.Errorf("%s: sha256 %s, want %s", k, g, want[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: written, but not in %s", k, goldenFile)
		}
	}
}

func readGolden(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("%s: bad line %q", goldenFile, sc.Text())
		}
		want[name] = sum
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatalf("%s is empty", goldenFile)
	}
	return want
}
