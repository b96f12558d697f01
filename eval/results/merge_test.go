package results_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tracegrid/tracegrid/eval/parse"
	"github.com/tracegrid/tracegrid/eval/results"
	"github.com/tracegrid/tracegrid/internal/shard"
)

func TestShardDB(t *testing.T) {
	for _, tc := range []struct {
		path string
		s    shard.Shard
		want string
	}{
		{"results.db", shard.Shard{Index: 2, Count: 3}, "results.2-of-3.db"},
		{"/data/eval/results.sqlite", shard.Shard{Index: 10, Count: 12}, "/data/eval/results.10-of-12.sqlite"},
		{"dir.v2/results", shard.Shard{Index: 1, Count: 2}, "dir.v2/results.1-of-2"},
		{"a.b.db", shard.Shard{Index: 1, Count: 4}, "a.b.1-of-4.db"},
		{".db", shard.Shard{Index: 1, Count: 2}, ".db.1-of-2"},
		{"results.db", shard.Whole, "results.db"},
	} {
		if got := results.ShardDB(tc.path, tc.s); got != tc.want {
			t.Errorf("ShardDB(%q, %v) = %q, want %q", tc.path, tc.s, got, tc.want)
		}
	}
}

func TestOtherShardings(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"r.1-of-2.db", "r.2-of-2.db", "r.1-of-3.db", "r.db", "other.1-of-2.db", "r.x.1-of-2.db", "r.1-of-2.sqlite", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		s    shard.Shard
		want []string
	}{
		{shard.Shard{Index: 1, Count: 2}, []string{"r.1-of-3.db"}},
		{shard.Shard{Index: 2, Count: 3}, []string{"r.1-of-2.db", "r.2-of-2.db"}},
		{shard.Shard{Index: 1, Count: 4}, []string{"r.1-of-2.db", "r.1-of-3.db", "r.2-of-2.db"}},
	} {
		got, err := results.OtherShardings(results.ShardDB(filepath.Join(dir, "r.db"), tc.s))
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			got[i] = filepath.Base(got[i])
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("OtherShardings(r.db, %v) = %v, want %v", tc.s, got, tc.want)
		}
	}
	// Characters a glob reads are taken as they are.
	odd := filepath.Join(dir, "a[1]")
	if err := os.MkdirAll(odd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(odd, "r*.1-of-2.db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := results.OtherShardings(filepath.Join(odd, "r*.1-of-3.db")); err != nil || len(got) != 1 {
		t.Errorf("odd names: %v, %v", got, err)
	}
	// Not a shard database: nothing to compare with.
	if got, err := results.OtherShardings(filepath.Join(dir, "r.db")); err != nil || got != nil {
		t.Errorf("OtherShardings(r.db) = %v, %v", got, err)
	}
}

// mergeTrial is an answered trial of clip c in study "st", with every
// field the merge copies set.
func mergeTrial(c int) results.Trial {
	n := 2
	return results.Trial{
		Key:    results.Key{Study: "st", Model: "m", Clip: fmt.Sprintf("clip-%d", c), Policy: "fps:4", Labels: "time", Prompt: "direct", Repeat: 0},
		Domain: "blinking", N: 2, F: 1, Seed: c,
		Trace:      []byte(fmt.Sprintf(`{"id":"clip-%d"}`, c)),
		FrameTimes: []float64{0, 0.25}, Images: 2, ImageBytes: 300, PromptHash: "h",
		Responses: []string{"Final answer: 2"}, Count: &n, CountSource: parse.SourceFinalAnswer,
		Events:    []parse.Event{{T: 1, Text: "at 1 s"}},
		Usage:     results.Usage{PromptTokens: 10, CompletionTokens: 3, TotalTokens: 13},
		LatencyMS: int64(100 + c), CostUSD: 0.001, Attempts: 1,
		FinishedAt: time.Date(2026, 5, 1, 12, 0, c, 0, time.UTC), TemplateHash: "th",
	}
}

// writeDB makes a database at dir/name holding trials and snapshots.
func writeDB(t *testing.T, dir, name string, trials []results.Trial, snapshots ...string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	db, err := results.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tr := range trials {
		if err := db.Put(context.Background(), tr); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range snapshots {
		if _, err := db.PutSnapshot(context.Background(), "st", []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func readTrials(t *testing.T, path string) []results.Trial {
	t.Helper()
	db, err := results.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ts, err := db.Trials(context.Background(), results.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestMergeShardDatabases: three shard databases holding clips {0, 3},
// {1, 4}, {2, 5} merge into one with all six trials, field for field, and
// the two distinct snapshots; a second merge changes nothing.
func TestMergeShardDatabases(t *testing.T) {
	dir := t.TempDir()
	var in []string
	for i := 1; i <= 3; i++ {
		snap := `{"name":"st","clips":["a"]}`
		if i == 3 {
			snap = `{"name":"st","clips":["b"]}`
		}
		in = append(in, writeDB(t, dir, results.ShardDB("results.sqlite", shard.Shard{Index: i, Count: 3}),
			[]results.Trial{mergeTrial(i - 1), mergeTrial(i + 2)}, snap))
	}
	out := filepath.Join(dir, "results.sqlite")
	sum, err := results.Merge(context.Background(), out, in)
	if err != nil {
		t.Fatal(err)
	}
	want := results.MergeSummary{Inputs: 3, Trials: 6, Added: 6, Snapshots: 2, Shards: 3}
	if sum != want {
		t.Errorf("summary %+v, want %+v", sum, want)
	}
	got := readTrials(t, out)
	var exp []results.Trial
	for c := range 6 {
		exp = append(exp, mergeTrial(c))
	}
	if len(got) != 6 {
		t.Fatalf("%d trials merged, want 6", len(got))
	}
	for i := range got {
		got[i].FinishedAt = got[i].FinishedAt.UTC()
		if !reflect.DeepEqual(got[i], exp[i]) {
			t.Errorf("trial %d:\n got %+v\nwant %+v", i, got[i], exp[i])
		}
	}
	db, _ := results.OpenReadOnly(out)
	snaps, _ := db.Snapshots(context.Background(), "st")
	db.Close()
	if len(snaps) != 2 || string(snaps[0].JSON) != `{"name":"st","clips":["a"]}` || string(snaps[1].JSON) != `{"name":"st","clips":["b"]}` {
		t.Errorf("snapshots %v", snaps)
	}
	sum, err = results.Merge(context.Background(), out, in)
	want = results.MergeSummary{Inputs: 3, Trials: 6, Unchanged: 6, Shards: 3}
	if err != nil || sum != want {
		t.Errorf("second merge: %+v, %v; want %+v", sum, err, want)
	}
}

func TestMergeRefusals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a := writeDB(t, dir, "results.1-of-3.sqlite", []results.Trial{mergeTrial(0)})
	b := writeDB(t, dir, "results.2-of-3.sqlite", []results.Trial{mergeTrial(1)})
	c := writeDB(t, dir, "results.3-of-3.sqlite", []results.Trial{mergeTrial(2)})
	out := filepath.Join(dir, "results.sqlite")
	expect := func(what string, err error, want string) {
		t.Helper()
		if err == nil || !errors.Is(err, results.ErrMerge) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want ErrMerge saying %q", what, err, want)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: a refused merge created %s", what, out)
		}
	}
	_, err := results.Merge(ctx, out, []string{a, c})
	expect("missing shard", err, "missing shard databases of "+filepath.Join(dir, "results.*.sqlite")+": results.2-of-3.sqlite")
	d := writeDB(t, dir, "results.2-of-4.sqlite", nil)
	_, err = results.Merge(ctx, out, []string{a, b, c, d})
	expect("two splits", err, "the inputs are shards of different splits (N = 3, 4)")
	link := filepath.Join(dir, "again.sqlite")
	os.Symlink(b, link)
	_, err = results.Merge(ctx, out, []string{a, b, link})
	expect("input twice", err, "input "+link+" is given twice (also as "+b+")")
	_, err = results.Merge(ctx, out, []string{a, filepath.Join(dir, "none.sqlite")})
	expect("missing input", err, "input "+filepath.Join(dir, "none.sqlite"))

	// The same trial in two inputs: a duplicate, or a conflict.
	dup := writeDB(t, dir, "dup.sqlite", []results.Trial{mergeTrial(0)})
	_, err = results.Merge(ctx, out, []string{a, dup})
	expect("duplicate", err, "trial st/m/clip-0/fps:4/time/direct#0 is in "+a+" and "+dup+" (duplicate: the same answer)")
	other := mergeTrial(0)
	three := 3
	other.Count = &three
	con := writeDB(t, dir, "conflict.sqlite", []results.Trial{other})
	_, err = results.Merge(ctx, out, []string{a, con})
	expect("conflict", err, "(conflict: different answers)")

	// A run still evaluating an input.
	db, err := results.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	l, err := db.LockStudy("st")
	if err != nil {
		t.Fatal(err)
	}
	_, err = results.Merge(ctx, out, []string{a, b, c})
	expect("input in use", err, "input "+b+" is being evaluated (study \"st\"")
	l.Unlock()
	db.Close()

	if _, err := results.Merge(ctx, out, []string{a, b, c}); err != nil {
		t.Fatal(err)
	}
	// The output among the inputs.
	if _, err := results.Merge(ctx, out, []string{a, out}); err == nil || !strings.Contains(err.Error(), "the output "+out+" is also an input") {
		t.Errorf("output as input: err = %v", err)
	}
	// Against what the output holds: a different answer is a conflict;
	// a trial the output has without an answer is replaced.
	if _, err := results.Merge(ctx, out, []string{con}); err == nil || !strings.Contains(err.Error(), "trial st/m/clip-0/fps:4/time/direct#0: "+out+" has a different answer than "+con+" (conflict)") {
		t.Errorf("conflict with the output: err = %v", err)
	}
	failed := mergeTrial(7)
	failed.Responses, failed.Count, failed.CountSource, failed.Events = nil, nil, "", nil
	failed.Error, failed.ErrorKind = "timeout after 300 s", results.KindTimeout
	odb, _ := results.Open(out)
	odb.Put(ctx, failed)
	odb.Close()
	retried := writeDB(t, dir, "retried.sqlite", []results.Trial{mergeTrial(7)})
	sum, err := results.Merge(ctx, out, []string{retried})
	if err != nil || sum.Replaced != 1 || sum.Added != 0 {
		t.Errorf("retried trial: %+v, %v; want 1 replaced", sum, err)
	}
	if got := readTrials(t, out); len(got) != 4 || got[3].Error != "" || got[3].Count == nil {
		t.Errorf("after the retry merge: %d trials, last %+v", len(got), got[len(got)-1])
	}
}

func TestBaseDB(t *testing.T) {
	for _, path := range []string{"results.db", "/data/eval/results.sqlite", "dir.v2/results", "a.b.db", ".db"} {
		for _, s := range []shard.Shard{{Index: 1, Count: 2}, {Index: 10, Count: 12}} {
			sp := results.ShardDB(path, s)
			if got, ok := results.BaseDB(sp); !ok || got != path {
				t.Errorf("BaseDB(%q) = %q, %v; want %q", sp, got, ok, path)
			}
		}
	}
	for _, p := range []string{"results.db", "1-of-2", "dir.1-of-2/results.db", "r.x-of-2.db"} {
		if got, ok := results.BaseDB(p); ok {
			t.Errorf("BaseDB(%q) = %q: not a shard database", p, got)
		}
	}
}

// TestSeedShard: a shard database takes from the base what the base holds
// for the shard's clips: a trial it lacks, and a finished trial where its
// own is unfinished; never another clip's trial, never over its own
// finished trial, never an unfinished trial over its own. Seeding again
// copies nothing; a missing base, or the base itself, copies nothing; a
// run holding the study's lock on the shard database stops it.
func TestSeedShard(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	failed := func(tr results.Trial) results.Trial {
		tr.Error, tr.ErrorKind, tr.Responses, tr.Count, tr.CountSource = "timeout after 300 s", results.KindTimeout, nil, nil, ""
		return tr
	}
	base := writeDB(t, dir, "r.db", []results.Trial{
		mergeTrial(0),         // the shard lacks it: copied
		failed(mergeTrial(1)), // the shard lacks it: copied (its rerun retries it, as on the base)
		mergeTrial(2),         // the shard's is unfinished: copied over it
		failed(mergeTrial(3)), // the shard's is unfinished too: the shard's stays
		mergeTrial(4),         // the shard's own answer stays
		mergeTrial(5),         // another shard's clip: not copied
	})
	own4 := mergeTrial(4)
	own4.Responses = []string{"Final answer: 3"}
	dst := writeDB(t, dir, "r.1-of-2.db", []results.Trial{failed(mergeTrial(2)), failed(mergeTrial(3)), own4})
	own3 := readTrials(t, dst)[1]
	clips := []string{"clip-0", "clip-1", "clip-2", "clip-3", "clip-4"}
	n, err := results.SeedShard(ctx, base, dst, "st", clips)
	if err != nil || n != 3 {
		t.Fatalf("SeedShard = %d, %v; want 3 copied", n, err)
	}
	got := readTrials(t, dst)
	want := []results.Trial{mergeTrial(0), failed(mergeTrial(1)), mergeTrial(2), own3, own4}
	if len(got) != len(want) {
		t.Fatalf("the shard holds %d trials, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("trial %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	if n, err := results.SeedShard(ctx, base, dst, "st", clips); err != nil || n != 0 {
		t.Errorf("seeding again: %d, %v; want 0", n, err)
	}
	if n, err := results.SeedShard(ctx, filepath.Join(dir, "none.db"), filepath.Join(dir, "r.2-of-2.db"), "st", clips); err != nil || n != 0 {
		t.Errorf("missing base: %d, %v; want 0", n, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.2-of-2.db")); err == nil {
		t.Error("a missing base created the shard database")
	}
	if n, err := results.SeedShard(ctx, base, base, "st", clips); err != nil || n != 0 {
		t.Errorf("base as its own shard: %d, %v; want 0", n, err)
	}
	db, err := results.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lock, err := db.LockStudy("st")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	if _, err := results.SeedShard(ctx, base, dst, "st", []string{"clip-5"}); !errors.Is(err, results.ErrBusy) {
		t.Errorf("seeding a shard a run holds: %v, want ErrBusy", err)
	}
}
