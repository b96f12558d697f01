package variants

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracegrid/tracegrid/internal/shard"
	"github.com/tracegrid/tracegrid/pipeline"
)

func shardRecords(t *testing.T, out string, i, n int) []Record {
	t.Helper()
	path := filepath.Join(out, pipeline.ShardsDir, shard.Shard{Index: i, Count: n}.Dir(), RecordsName)
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	recs, torn, err := readRecords(path)
	if err != nil || torn {
		t.Fatalf("%s: %v (torn %v)", path, err, torn)
	}
	return recs
}

// TestShardedVariantsEqualOneRun: the grid's 6 clips have the same size
// and length, so 3 shards take clips {0, 3}, {1, 4}, {2, 5} in manifest
// order; after the merge, D/variants.jsonl and every file are byte for
// byte those of one unsharded run.
func TestShardedVariantsEqualOneRun(t *testing.T) {
	manifest := grid(t)
	entries, err := pipeline.LoadManifest(manifest)
	if err != nil {
		t.Fatal(err)
	}
	pols := policies(t, "fps:1", "keyframes")
	single, sharded := t.TempDir(), t.TempDir()
	run(t, Options{Manifest: manifest, Policies: pols, Out: single, Workers: 2})
	want := [][]int{{0, 3}, {1, 4}, {2, 5}}
	for i := 1; i <= 3; i++ {
		sum := run(t, Options{Manifest: manifest, Policies: pols, Out: sharded, Workers: 2, Shard: shard.Shard{Index: i, Count: 3}})
		if sum.Variants != 4 {
			t.Errorf("shard %d/3 made %d variants, want 2 clips × 2 policies", i, sum.Variants)
		}
		var got, exp []string
		for _, r := range shardRecords(t, sharded, i, 3) {
			got = append(got, r.Clip+" "+r.Policy)
		}
		for _, k := range want[i-1] {
			exp = append(exp, entries[k].ID+" fps:1", entries[k].ID+" keyframes:0.1")
		}
		if !slices.Equal(got, exp) {
			t.Errorf("shard %d/3 records %v, want %v", i, got, exp)
		}
	}
	if _, err := os.Stat(filepath.Join(sharded, RecordsName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a shard wrote D/variants.jsonl: %v", err)
	}
	sum, err := MergeShards(sharded)
	if err != nil || sum.Shards != 3 || sum.Variants != 12 || sum.Unchanged {
		t.Fatalf("merge: %+v, %v", sum, err)
	}
	a, _ := os.ReadFile(filepath.Join(single, RecordsName))
	b, _ := os.ReadFile(filepath.Join(sharded, RecordsName))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("merged variants.jsonl differs from one run's:\n%s\n%s", a, b)
	}
	recs, _, _ := readRecords(filepath.Join(single, RecordsName))
	for _, r := range recs {
		for name := range r.SHA256 {
			x, _ := os.ReadFile(filepath.Join(single, name))
			y, _ := os.ReadFile(filepath.Join(sharded, name))
			if !bytes.Equal(x, y) {
				t.Errorf("%s differs between one run and the shards", name)
			}
		}
	}
	if sum, err := MergeShards(sharded); err != nil || !sum.Unchanged {
		t.Errorf("second merge: %+v, %v", sum, err)
	}
	// A run without a shard afterwards finds everything done.
	if sum := run(t, Options{Manifest: manifest, Policies: pols, Out: sharded, Workers: 2}); sum.Skipped != 12 || sum.Variants != 0 {
		t.Errorf("unsharded run after the merge: %+v", sum)
	}
}

func TestShardedVariantsRefusals(t *testing.T) {
	manifest := grid(t)
	pols := policies(t, "fps:1")
	out := t.TempDir()
	_, err := Run(context.Background(), Options{Manifest: manifest, Policies: pols, Out: out, Renderer: testRenderer,
		Shard: shard.Shard{Index: 1, Count: 2}, Dataset: &DatasetOptions{}})
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "a dataset is not written by shards") {
		t.Errorf("--dataset with a shard: err = %v", err)
	}
	run(t, Options{Manifest: manifest, Policies: pols, Out: out, Shard: shard.Shard{Index: 1, Count: 2}})
	// Another request in the same directory: refused.
	_, err = Run(context.Background(), Options{Manifest: manifest, Policies: policies(t, "fps:2"), Out: out, Renderer: testRenderer,
		Shard: shard.Shard{Index: 2, Count: 2}})
	if !errors.Is(err, pipeline.ErrOtherPlan) || !errors.Is(err, ErrOutput) {
		t.Errorf("a shard of other policies: err = %v, want ErrOtherPlan", err)
	}
	// Shard 2 never ran.
	if _, err := MergeShards(out); !errors.Is(err, pipeline.ErrMerge) || !strings.Contains(err.Error(), "shard 2/2 never started") {
		t.Errorf("merge without shard 2: err = %v", err)
	}
	run(t, Options{Manifest: manifest, Policies: pols, Out: out, Shard: shard.Shard{Index: 2, Count: 2}})
	// A variant's file changed after it was recorded.
	recs := shardRecords(t, out, 2, 2)
	var file string
	for name := range recs[0].SHA256 {
		file = name
		break
	}
	path := filepath.Join(out, filepath.FromSlash(file))
	orig, _ := os.ReadFile(path)
	os.WriteFile(path, append(slices.Clone(orig), 1), 0o644)
	_, err = MergeShards(out)
	if !errors.Is(err, pipeline.ErrMerge) || !strings.Contains(err.Error(), "variant "+recs[0].Clip+" fps:1 of shard 2/2 does not match its files (file changed: "+file+")") {
		t.Errorf("merge with a changed file: err = %v", err)
	}
	os.WriteFile(path, orig, 0o644)
	// Shard 2's records lost a line: it has not finished.
	recPath := filepath.Join(out, pipeline.ShardsDir, "2-of-2", RecordsName)
	full, _ := os.ReadFile(recPath)
	lines := strings.SplitAfter(string(full), "\n")
	os.WriteFile(recPath, []byte(strings.Join(lines[1:], "")), 0o644)
	_, err = MergeShards(out)
	if !errors.Is(err, pipeline.ErrMerge) || !strings.Contains(err.Error(), "shard 2/2 has not finished: 1 of its 3 variants are missing ("+recs[0].Clip+" fps:1)") {
		t.Errorf("merge with a record missing: err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, RecordsName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed merge wrote variants.jsonl")
	}
	os.WriteFile(recPath, full, 0o644)
	if sum, err := MergeShards(out); err != nil || sum.Variants != 6 {
		t.Errorf("merge after the repairs: %+v, %v", sum, err)
	}
}

// Video variants (an MP4 and the trace beside it) are kept by a rerun and
// merge from shards: their trace file used to count as "a file outside the
// variant", so every rerun made them again and merge refused them.
func TestVideoVariantsRerunAndMerge(t *testing.T) {
	manifest := grid(t)
	pols := policies(t, "fps:2")
	clips := []string{"blinking_N02_F1.0_s00", "state_machine_N02_F1.0_s00"}
	out := t.TempDir()
	opt := Options{Manifest: manifest, Policies: pols, Out: out, As: AsVideo, Clips: clips, Workers: 2}
	if s := run(t, opt); s.Variants != 2 {
		t.Fatalf("first run %+v", s)
	}
	if s := run(t, opt); s.Variants != 0 || s.Skipped != 2 {
		t.Errorf("second run made video variants again: %+v", s)
	}
	sharded := t.TempDir()
	for i := 1; i <= 2; i++ {
		o := opt
		o.Out, o.Shard = sharded, shard.Shard{Index: i, Count: 2}
		run(t, o)
	}
	if sum, err := MergeShards(sharded); err != nil || sum.Variants != 2 {
		t.Fatalf("merge of video shards: %+v, %v", sum, err)
	}
	a, _ := os.ReadFile(filepath.Join(out, RecordsName))
	b, _ := os.ReadFile(filepath.Join(sharded, RecordsName))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("merged variants.jsonl differs from one run's:\n%s\n%s", a, b)
	}
}
