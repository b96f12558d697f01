package pipeline

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tracegrid/tracegrid/internal/shard"
)

func renderShard(t *testing.T, s Spec, out string, sh shard.Shard) (Summary, error) {
	t.Helper()
	return Render(context.Background(), s, Options{Out: out, Workers: 2, Renderer: testRenderer, Shard: sh})
}

func manifestIDs(t *testing.T, path string) []string {
	t.Helper()
	entries, skipped, err := ReadManifest(path)
	if err != nil || skipped != 0 {
		t.Fatalf("%s: %v (%d skipped)", path, err, skipped)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	ids := []string{}
	for _, e := range entries {
		ids = append(ids, e.ID)
	}
	return ids
}

func shardManifest(out string, i, n int) string {
	return filepath.Join(out, ShardsDir, shard.Shard{Index: i, Count: n}.Dir(), ManifestName)
}

// TestShardedRenderEqualsOneProcess renders the 6-clip plan as 4 shards
// into one directory and merges: every clip of smallSpec has the same cost
// (2 s × 30 fps × 160 × 96), so the split is round robin in plan order —
// shard 1 gets clips 0 and 4, shard 2 clips 1 and 5, shard 3 clip 2, shard
// 4 clip 3 — and the merged manifest is byte for byte the one a single
// process writes.
func TestShardedRenderEqualsOneProcess(t *testing.T) {
	s := smallSpec(t)
	plan, _ := s.Plan()
	single, sharded := t.TempDir(), t.TempDir()
	if _, err := render(t, context.Background(), s, single); err != nil {
		t.Fatal(err)
	}
	want := [][]int{{0, 4}, {1, 5}, {2}, {3}}
	for i := 1; i <= 4; i++ {
		sum, err := renderShard(t, s, sharded, shard.Shard{Index: i, Count: 4})
		if err != nil {
			t.Fatalf("shard %d/4: %v", i, err)
		}
		var ids []string
		for _, k := range want[i-1] {
			ids = append(ids, plan[k].ID())
		}
		if got := manifestIDs(t, shardManifest(sharded, i, 4)); !slices.Equal(got, ids) {
			t.Errorf("shard %d/4 manifest = %v, want %v", i, got, ids)
		}
		if sum.Planned != len(ids) || sum.Rendered != len(ids) {
			t.Errorf("shard %d/4 summary %+v, want %d planned and rendered", i, sum, len(ids))
		}
	}
	if _, err := os.Stat(filepath.Join(sharded, ManifestName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a shard wrote the directory's own manifest: %v", err)
	}
	sum, err := MergeRender(sharded)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Shards != 4 || sum.Clips != 6 || sum.Unchanged {
		t.Errorf("merge summary %+v", sum)
	}
	a, _ := os.ReadFile(filepath.Join(single, ManifestName))
	b, _ := os.ReadFile(filepath.Join(sharded, ManifestName))
	if !bytes.Equal(a, b) {
		t.Errorf("merged manifest differs from the single process's:\n%s\n%s", a, b)
	}
	for _, p := range plan {
		for _, ext := range []string{".mp4", ".trace.json"} {
			x, _ := os.ReadFile(filepath.Join(single, "clips", p.ID()+ext))
			y, _ := os.ReadFile(filepath.Join(sharded, "clips", p.ID()+ext))
			if len(x) == 0 || !bytes.Equal(x, y) {
				t.Errorf("%s%s differs between one process and the shards", p.ID(), ext)
			}
		}
	}
	// Idempotent: a second merge writes nothing.
	fi1, _ := os.Stat(filepath.Join(sharded, ManifestName))
	sum, err = MergeRender(sharded)
	fi2, _ := os.Stat(filepath.Join(sharded, ManifestName))
	if err != nil || !sum.Unchanged || !fi1.ModTime().Equal(fi2.ModTime()) {
		t.Errorf("second merge: %+v, %v (mtime %v → %v)", sum, err, fi1.ModTime(), fi2.ModTime())
	}
	// A shard run again skips its verified clips.
	sum2, err := renderShard(t, s, sharded, shard.Shard{Index: 2, Count: 4})
	if err != nil || sum2.Skipped != 2 || sum2.Rendered != 0 {
		t.Errorf("shard 2/4 again: %+v, %v", sum2, err)
	}
	// An unsharded render of the same plan into the merged directory
	// finds everything done.
	sum3, err := render(t, context.Background(), s, sharded)
	if err != nil || sum3.Skipped != 6 {
		t.Errorf("unsharded render after the merge: %+v, %v", sum3, err)
	}
}

// TestEmptyShardWritesItsManifest: with more shards than clips the extra
// shards render nothing but still record that they ran.
func TestEmptyShardWritesItsManifest(t *testing.T) {
	s := smallSpec(t)
	out := t.TempDir()
	sum, err := renderShard(t, s, out, shard.Shard{Index: 8, Count: 8})
	if err != nil || sum.Planned != 0 || sum.Rendered != 0 {
		t.Fatalf("shard 8/8 of 6 clips: %+v, %v", sum, err)
	}
	b, err := os.ReadFile(shardManifest(out, 8, 8))
	if err != nil || len(b) != 0 {
		t.Fatalf("shard 8/8 manifest: %q, %v; want an empty file", b, err)
	}
	info, err := ReadShardInfo(out, shard.Shard{Index: 8, Count: 8})
	if err != nil || info.Items == nil || len(info.Items) != 0 || info.Shard != "8/8" {
		t.Fatalf("shard 8/8 record: %+v, %v", info, err)
	}
}

// TestShardLocks: shards of one plan and one N run side by side; the same
// shard twice, a shard of another N, an unsharded run and a merge are
// refused while a shard runs, and a shard of another plan always.
func TestShardLocks(t *testing.T) {
	s := smallSpec(t)
	plan, _ := s.Plan()
	id, err := renderPlanID(s, plan)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	p := ShardPlan{Kind: KindRender, ID: id, Items: planIDs(plan)}
	one, err := OpenShard(out, RenderLockName, p, shard.Shard{Index: 1, Count: 2}, planIDs(plan[:3]))
	if err != nil {
		t.Fatal(err)
	}
	two, err := OpenShard(out, RenderLockName, p, shard.Shard{Index: 2, Count: 2}, planIDs(plan[3:]))
	if err != nil {
		t.Fatalf("shard 2/2 beside 1/2: %v", err)
	}
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"same shard", func() error {
			o, err := OpenShard(out, RenderLockName, p, shard.Shard{Index: 1, Count: 2}, nil)
			o.Close()
			return err
		}, "shard 1/2 is already running"},
		{"another N", func() error {
			o, err := OpenShard(out, RenderLockName, p, shard.Shard{Index: 1, Count: 3}, nil)
			o.Close()
			return err
		}, "shards of another split are running (1/2, 2/2)"},
		{"unsharded render", func() error {
			_, err := render(t, context.Background(), s, out)
			return err
		}, "in use by another tracegrid run"},
		{"merge", func() error {
			_, err := MergeRender(out)
			return err
		}, "in use by another tracegrid run"},
	} {
		err := tc.err()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrOutput) {
			t.Errorf("%s: err = %v, want ErrOutput containing %q", tc.name, err, tc.want)
		}
	}
	// Another plan: refused whether shards run or not.
	other := p
	other.ID = strings.Repeat("0", 64)
	if o, err := OpenShard(out, RenderLockName, other, shard.Shard{Index: 2, Count: 3}, nil); !errors.Is(err, ErrOtherPlan) {
		o.Close()
		t.Errorf("another plan: err = %v, want ErrOtherPlan", err)
	}
	one.Close()
	two.Close()
	if o, err := OpenShard(out, RenderLockName, other, shard.Shard{Index: 1, Count: 2}, nil); !errors.Is(err, ErrOtherPlan) {
		o.Close()
		t.Errorf("another plan, no shard running: err = %v, want ErrOtherPlan", err)
	}
	// An unsharded render of another plan is refused too.
	s2 := s
	s2.Seeds = 2
	if _, err := render(t, context.Background(), s2, out); !errors.Is(err, ErrOtherPlan) || !strings.Contains(err.Error(), "holds shards of another render plan") {
		t.Errorf("unsharded render of another plan: err = %v, want ErrOtherPlan", err)
	}
	// Another N once nothing runs: allowed, and plan.json names the new
	// split for the merge.
	o, err := OpenShard(out, RenderLockName, p, shard.Shard{Index: 1, Count: 3}, nil)
	if err != nil {
		t.Fatalf("another N, nothing running: %v", err)
	}
	o.Close()
	if got, err := ReadShardPlan(out); err != nil || got.Shards != 3 || got.ID != id || len(got.Items) != 6 {
		t.Errorf("plan.json after a 1/3 run: %+v, %v", got, err)
	}
}

// TestMergeRenderErrors: every way a split can fail to be the plan is an
// error naming the shard and the clips, and nothing is written until all
// is well. Plan of 6 equal clips in 3 shards: {0,3}, {1,4}, {2,5}.
func TestMergeRenderErrors(t *testing.T) {
	s := smallSpec(t)
	plan, _ := s.Plan()
	id := func(k int) string { return plan[k].ID() }
	out := t.TempDir()
	merged := filepath.Join(out, ManifestName)
	expectErr := func(what string, wants ...string) {
		t.Helper()
		_, err := MergeRender(out)
		if err == nil || !errors.Is(err, ErrMerge) {
			t.Fatalf("%s: err = %v, want ErrMerge", what, err)
		}
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", what, err, w)
			}
		}
		if _, err := os.Stat(merged); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: a failed merge wrote %s", what, merged)
		}
	}
	if _, err := MergeRender(out); !errors.Is(err, ErrNoShards) {
		t.Errorf("no shards: err = %v, want ErrNoShards", err)
	}
	for _, i := range []int{1, 2} {
		if _, err := renderShard(t, s, out, shard.Shard{Index: i, Count: 3}); err != nil {
			t.Fatal(err)
		}
	}
	expectErr("shard 3 never ran", "shard 3/3 never started (no shards/3-of-3/shard.json)")

	if _, err := renderShard(t, s, out, shard.Shard{Index: 3, Count: 3}); err != nil {
		t.Fatal(err)
	}
	m3 := shardManifest(out, 3, 3)
	full3, _ := os.ReadFile(m3)
	lines := strings.SplitAfter(string(full3), "\n")
	// Shard 3 stopped after its first clip.
	os.WriteFile(m3, []byte(lines[0]), 0o644)
	expectErr("shard 3 unfinished", "shard 3/3 has not finished: 1 of its 2 clips are missing ("+id(5)+"); run it again")
	// Killed while appending: a torn last line.
	os.WriteFile(m3, []byte(lines[0]+lines[1][:40]), 0o644)
	expectErr("torn shard manifest", "shard 3/3:", "the last line has no newline")
	os.WriteFile(m3, full3, 0o644)

	// A clip of shard 1 also in shard 2's manifest: a duplicate, or a
	// conflict when the hashes differ.
	m1, m2 := shardManifest(out, 1, 3), shardManifest(out, 2, 3)
	full1, _ := os.ReadFile(m1)
	full2, _ := os.ReadFile(m2)
	first1 := strings.SplitAfter(string(full1), "\n")[0]
	os.WriteFile(m2, append(slices.Clone(full2), first1...), 0o644)
	expectErr("duplicate", "shard 2/3 records clips it was not given: "+id(0),
		"clip "+id(0)+" is in 2 shard manifests, duplicate: the same video")
	var e Entry
	if e2, err := decodeEntry([]byte(strings.TrimSpace(first1))); err != nil {
		t.Fatal(err)
	} else {
		e = e2
	}
	bad := strings.Replace(first1, e.SHA256, strings.Repeat("f", 64), 1)
	os.WriteFile(m2, append(slices.Clone(full2), bad...), 0o644)
	expectErr("conflict", "clip "+id(0)+" is in 2 shard manifests, conflict: different video hashes: 1/3 (sha256 "+e.SHA256[:12]+"…), 2/3 (sha256 ffffffffffff…)")
	os.WriteFile(m2, full2, 0o644)

	// A video changed after its shard recorded it.
	video := filepath.Join(out, "clips", id(4)+".mp4")
	orig, _ := os.ReadFile(video)
	os.WriteFile(video, append(slices.Clone(orig), 0), 0o644)
	expectErr("changed video", "clip "+id(4)+" of shard 2/3 does not match its files (video hash mismatch)")
	os.WriteFile(video, orig, 0o644)

	sum, err := MergeRender(out)
	if err != nil || sum.Clips != 6 || sum.Shards != 3 {
		t.Fatalf("merge after the repairs: %+v, %v", sum, err)
	}
	if got := manifestIDs(t, merged); !slices.Equal(got, planIDs(plan)) {
		t.Errorf("merged manifest %v, want the plan %v", got, planIDs(plan))
	}
}

// TestOtherSplitReusesClips: after a complete 3-shard render, a shard of
// another split (1/2) and a plain render into the same directory render
// nothing again — every clip is verified and reused, its file untouched —
// and a clip damaged in between is the only one rendered again.
func TestOtherSplitReusesClips(t *testing.T) {
	s := smallSpec(t)
	plan, _ := s.Plan()
	out := t.TempDir()
	for i := 1; i <= 3; i++ {
		if sum, err := renderShard(t, s, out, shard.Shard{Index: i, Count: 3}); err != nil || sum.Rendered != 2 {
			t.Fatalf("shard %d/3: %+v, %v", i, sum, err)
		}
	}
	video := func(k int) string { return filepath.Join(out, "clips", plan[k].ID()+".mp4") }
	mtimes := map[int]time.Time{}
	for k := range plan {
		fi, err := os.Stat(video(k))
		if err != nil {
			t.Fatal(err)
		}
		mtimes[k] = fi.ModTime()
	}
	time.Sleep(20 * time.Millisecond) // a rewrite would get a later mtime

	sum, err := renderShard(t, s, out, shard.Shard{Index: 1, Count: 2})
	if err != nil || sum.Planned != 3 || sum.Skipped != 3 || sum.Rendered != 0 {
		t.Errorf("shard 1/2 after a 3-way split: %+v, %v; want its 3 clips reused", sum, err)
	}
	if got := manifestIDs(t, shardManifest(out, 1, 2)); len(got) != 3 {
		t.Errorf("shard 1/2's manifest records %v, want its 3 reused clips", got)
	}
	// Damage one clip; a plain render redoes it alone.
	if err := os.WriteFile(video(5), []byte("not a video"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err = render(t, context.Background(), s, out)
	if err != nil || sum.Planned != 6 || sum.Skipped != 5 || sum.Rendered != 1 {
		t.Errorf("plain render after the shards: %+v, %v; want 5 reused and the damaged clip rendered", sum, err)
	}
	if got := manifestIDs(t, filepath.Join(out, ManifestName)); !slices.Equal(got, planIDs(plan)) {
		t.Errorf("DIR/manifest.jsonl = %v, want the plan %v", got, planIDs(plan))
	}
	for k := range plan[:5] {
		if fi, err := os.Stat(video(k)); err != nil || !fi.ModTime().Equal(mtimes[k]) {
			t.Errorf("%s was written again (mtime %v → %v, %v)", plan[k].ID(), mtimes[k], fi.ModTime(), err)
		}
	}
	if fi, err := os.Stat(video(5)); err != nil || fi.ModTime().Equal(mtimes[5]) || fi.Size() < 100 {
		t.Errorf("the damaged clip was not rendered again: %v, %v", fi, err)
	}
	// And now everything is done for any split.
	if sum, err := render(t, context.Background(), s, out); err != nil || sum.Skipped != 6 {
		t.Errorf("plain render again: %+v, %v", sum, err)
	}
}
