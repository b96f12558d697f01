package results_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracegrid/tracegrid/eval/results"
)

// copyV1 copies testdata/v1.sqlite — a database written by the release
// before label modes (schema version 1: two keyframes trials of study
// v1study) — into a temporary directory.
func copyV1(t *testing.T) string {
	t.Helper()
	src, err := os.Open(filepath.Join("testdata", "v1.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(t.TempDir(), "old.sqlite")
	dst, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestUpgradeV1: a version-1 database opens, is upgraded in place to the
// current schema, keeps every trial with labels "time" (what version 1
// sent), and takes new trials with other label modes under the same
// policy without a key clash. A read-only open upgrades too.
func TestUpgradeV1(t *testing.T) {
	ctx := context.Background()
	for name, open := range map[string]func(string) (*results.DB, error){"Open": results.Open, "OpenReadOnly": results.OpenReadOnly} {
		path := copyV1(t)
		db, err := open(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ts, err := db.Trials(ctx, results.Filter{Study: "v1study"})
		if err != nil {
			t.Fatal(err)
		}
		if len(ts) != 2 {
			t.Fatalf("%s: %d trials after the upgrade, want 2", name, len(ts))
		}
		for _, tr := range ts {
			if tr.Labels != "time" || tr.Policy != "keyframes" || tr.Count == nil || *tr.Count != 2 || len(tr.Events) != 1 || tr.CostUSD != 0.01 {
				t.Errorf("%s: upgraded trial %+v", name, tr)
			}
		}
		db.Close()
		// Once upgraded it is a current store.
		db, err = results.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		k := ts[0].Key
		k.Labels = "position"
		nt := ts[0]
		nt.Key = k
		if err := db.Put(ctx, nt); err != nil {
			t.Fatal(err)
		}
		done, err := db.Done(ctx, "v1study")
		if err != nil {
			t.Fatal(err)
		}
		if len(done) != 3 || !done[k] || !done[ts[0].Key] {
			t.Errorf("%s: done keys %v", name, done)
		}
		db.Close()
	}
}
