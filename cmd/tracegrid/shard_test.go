package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/tracegrid/tracegrid/internal/fakemodel"
	"github.com/tracegrid/tracegrid/pipeline"
)

// runEnv runs the binary with the scheduler variables of this process
// removed and env added.
func runEnv(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLURM_") && !strings.HasPrefix(kv, "JOB_COMPLETION_INDEX=") && !strings.HasPrefix(kv, "TRACEGRID_SHARDS=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

func readEntries(t *testing.T, path string) []pipeline.Entry {
	t.Helper()
	entries, skipped, err := pipeline.ReadManifest(path)
	if err != nil || skipped != 0 {
		t.Fatalf("%s: %v", path, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	return entries
}

// TestRenderShardsCLI renders a 6-clip grid in one process and as 3
// shards — one from --shard, one from a Slurm array task's environment,
// one from a Kubernetes index with --shards — and merges: the shard
// manifests hold every clip of the single manifest exactly once (equal
// clips split round robin: shard k has plan clips k−1 and k+2), and the
// merged manifest is the single one, hashes included.
func TestRenderShardsCLI(t *testing.T) {
	spec := writeFile(t, "grid.yaml", "grid: default\ndomains: [bounce_ball, blinking, state_machine]\ncounts: [0, 2]\nfrequencies: [1.0]\nduration: 2\nwidth: 160\nheight: 96\n")
	single, sharded := t.TempDir(), t.TempDir()
	if out, code := runEnv(t, nil, "render", "--spec", spec, "--out", single); code != 0 {
		t.Fatalf("render: exit %d: %s", code, out)
	}
	want := readEntries(t, filepath.Join(single, pipeline.ManifestName))
	if len(want) != 6 {
		t.Fatalf("%d clips, want 6", len(want))
	}
	for _, tc := range []struct {
		env  []string
		args []string
		log  string
	}{
		{nil, []string{"--shard", "1/3"}, "shard 1/3 from --shard"},
		{[]string{"SLURM_ARRAY_JOB_ID=77", "SLURM_ARRAY_TASK_ID=11", "SLURM_ARRAY_TASK_COUNT=3", "SLURM_ARRAY_TASK_MIN=10", "SLURM_ARRAY_TASK_MAX=12", "SLURM_ARRAY_TASK_STEP=1"},
			nil, "shard 2/3 from Slurm array job 77: SLURM_ARRAY_TASK_ID=11, SLURM_ARRAY_TASK_MIN=10, SLURM_ARRAY_TASK_COUNT=3"},
		{[]string{"JOB_COMPLETION_INDEX=2"}, []string{"--shards", "3"}, "shard 3/3 from the Kubernetes Indexed Job: JOB_COMPLETION_INDEX=2, --shards 3"},
	} {
		out, code := runEnv(t, tc.env, append([]string{"render", "--spec", spec, "--out", sharded}, tc.args...)...)
		if code != 0 || !strings.Contains(out, tc.log) {
			t.Fatalf("render %v %v: exit %d, want the log %q:\n%s", tc.env, tc.args, code, tc.log, out)
		}
	}
	var union []string
	for k := 1; k <= 3; k++ {
		got := readEntries(t, filepath.Join(sharded, "shards", []string{"", "1-of-3", "2-of-3", "3-of-3"}[k], pipeline.ManifestName))
		var ids []string
		for _, e := range got {
			ids = append(ids, e.ID)
		}
		if exp := []string{want[k-1].ID, want[k+2].ID}; !slices.Equal(ids, exp) {
			t.Errorf("shard %d/3 manifest %v, want %v", k, ids, exp)
		}
		union = append(union, ids...)
	}
	var all []string
	for _, e := range want {
		all = append(all, e.ID)
	}
	sort.Strings(union)
	sort.Strings(all)
	if !slices.Equal(union, all) {
		t.Errorf("the shard manifests hold %v, the single manifest %v", union, all)
	}
	if _, err := os.Stat(filepath.Join(sharded, pipeline.ManifestName)); err == nil {
		t.Error("a shard wrote DIR/manifest.jsonl")
	}

	msg, err, code := inProcess(t, newMergeCmd(), "--render", sharded)
	if err != nil || code != 0 || !strings.Contains(msg, "merge: 3 shards, 6 clips") {
		t.Fatalf("merge: exit %d, %v: %s", code, err, msg)
	}
	merged := readEntries(t, filepath.Join(sharded, pipeline.ManifestName))
	if len(merged) != len(want) {
		t.Fatalf("merged %d clips, want %d", len(merged), len(want))
	}
	for i := range want {
		if merged[i].ID != want[i].ID || merged[i].SHA256 != want[i].SHA256 || merged[i].Video != want[i].Video || merged[i].Trace != want[i].Trace {
			t.Errorf("merged line %d: %s %s, single %s %s", i, merged[i].ID, merged[i].SHA256, want[i].ID, want[i].SHA256)
		}
	}
	if msg, _, code := inProcess(t, newMergeCmd(), "--render", sharded); code != 0 || !strings.Contains(msg, "(unchanged)") {
		t.Errorf("second merge: exit %d: %s", code, msg)
	}

	// Bad shard settings and another plan: usage errors, exit 2.
	other := writeFile(t, "other.yaml", "grid: default\ndomains: [blinking]\ncounts: [2]\nfrequencies: [1.0]\nduration: 2\nwidth: 160\nheight: 96\n")
	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--spec", spec, "--shard", "4/3"}, "shard 4/3: shard 4 does not exist, there are 3"},
		{nil, []string{"--spec", spec, "--shard", "1/3", "--shards", "3"}, "--shard 1/3 and --shards 3 together"},
		{[]string{"JOB_COMPLETION_INDEX=0"}, []string{"--spec", spec}, "JOB_COMPLETION_INDEX=0 but no number of shards"},
		{[]string{"SLURM_ARRAY_TASK_ID=3", "SLURM_ARRAY_TASK_COUNT=3", "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_TASK_MAX=7"}, []string{"--spec", spec}, "Slurm array task ids are not a range"},
		{nil, []string{"--spec", other, "--shard", "1/3"}, "holds shards of another render plan"},
		{nil, []string{"--spec", other}, "holds shards of another render plan"},
	} {
		out, code := runEnv(t, tc.env, append([]string{"render", "--out", sharded}, tc.args...)...)
		if code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("render %v %v: exit %d, want 2 with %q:\n%s", tc.env, tc.args, code, tc.want, out)
		}
	}
}

// TestMergeCLIErrors: a merge of shards that are not all there exits 1
// and names the shard; flags that do not add up exit 2.
func TestMergeCLIErrors(t *testing.T) {
	spec := writeFile(t, "grid.yaml", "grid: default\ndomains: [blinking]\ncounts: [0, 2]\nfrequencies: [1.0]\nduration: 2\nwidth: 160\nheight: 96\n")
	dir := t.TempDir()
	if out, code := runEnv(t, nil, "render", "--spec", spec, "--out", dir, "--shard", "2/2"); code != 0 {
		t.Fatalf("render: %s", out)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--render", dir}, 1, "shard 1/2 never started"},
		{[]string{"--render", t.TempDir()}, 2, "has no shards/plan.json: nothing to merge"},
		{[]string{"--render", filepath.Join(dir, "absent")}, 2, "absent is not a directory"},
		{[]string{"--render", spec}, 2, "grid.yaml is not a directory"},
		{[]string{"--variants", filepath.Join(dir, "absent")}, 2, "absent is not a directory"},
		{[]string{"--variants", dir}, 2, "holds the shards of a render, not of a variants"},
		{[]string{}, 2, "give one of --render DIR, --variants D or --db OUT IN…"},
		{[]string{"--render", dir, "--db", "x.sqlite"}, 2, "give one of"},
		{[]string{"--db", filepath.Join(dir, "out.sqlite")}, 2, "--db OUT needs input databases"},
		{[]string{"--render", dir, "extra"}, 2, "unexpected arguments"},
		{[]string{"--db", filepath.Join(dir, "out.sqlite"), filepath.Join(dir, "none.sqlite")}, 2, "none.sqlite"},
	} {
		msg, err, code := inProcess(t, newMergeCmd(), tc.args...)
		if err != nil {
			msg += err.Error()
		}
		if code != tc.code || !strings.Contains(msg, tc.want) {
			t.Errorf("merge %v: exit %d, want %d with %q: %s", tc.args, code, tc.code, tc.want, msg)
		}
	}
}

// exportTrials is the export of db as JSON objects without the columns
// that depend on timing.
func exportTrials(t *testing.T, db string) []string {
	t.Helper()
	out, code := run(t, "export", "--db", db, "--format", "jsonl")
	if code != 0 {
		t.Fatalf("export %s: %s", db, out)
	}
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		delete(m, "latency_ms")
		delete(m, "finished_at")
		delete(m, "attempts")
		b, _ := json.Marshal(m)
		rows = append(rows, string(b))
	}
	return rows
}

// TestEvalShardsCLI evaluates two clips in one process and as two shards
// with their own databases (the study's db with .1-of-2 and .2-of-2 before
// the extension), each with half the spending cap, and merges: the trials
// are the single run's.
func TestEvalShardsCLI(t *testing.T) {
	manifest := renderSmall(t)
	fm := fakemodel.New(t, fakemodel.Always(fakemodel.Reply{Text: "Final answer: 2", PromptTokens: 100}))
	dir := t.TempDir()
	study := studyFile(t, manifest, fm.URL(), filepath.Join(dir, "r.db"), 1, 1, "max_usd: 10\n")
	if out, code := runEnv(t, nil, "eval", "--config", study, "--db", filepath.Join(dir, "single.db")); code != 0 {
		t.Fatalf("single eval: exit %d: %s", code, out)
	}
	for i, env := range [][]string{{"TRACEGRID_SHARDS=2", "JOB_COMPLETION_INDEX=0"}, {"TRACEGRID_SHARDS=2", "JOB_COMPLETION_INDEX=1"}} {
		out, code := runEnv(t, env, "eval", "--config", study)
		if code != 0 {
			t.Fatalf("shard %d: exit %d: %s", i+1, code, out)
		}
		for _, w := range []string{"clips=1 of=2", "r." + []string{"1-of-2", "2-of-2"}[i] + ".db", "shard spending cap\" max_usd=5.0000"} {
			if !strings.Contains(out, w) {
				t.Errorf("shard %d: the log does not say %q:\n%s", i+1, w, out)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "r.db")); err == nil {
		t.Error("a shard wrote the study's own database")
	}
	one, two := exportTrials(t, filepath.Join(dir, "r.1-of-2.db")), exportTrials(t, filepath.Join(dir, "r.2-of-2.db"))
	if len(one) != 1 || len(two) != 1 {
		t.Fatalf("shard databases hold %d and %d trials, want 1 and 1", len(one), len(two))
	}
	merged := filepath.Join(dir, "merged.db")
	msg, err, code := inProcess(t, newMergeCmd(), "--db", merged, filepath.Join(dir, "r.1-of-2.db"), filepath.Join(dir, "r.2-of-2.db"))
	if code != 0 || !strings.Contains(msg, "merge: 2 databases (shards 1…2), 2 trials: 2 added") {
		t.Fatalf("merge: exit %d, %v: %s", code, err, msg)
	}
	if got, want := exportTrials(t, merged), exportTrials(t, filepath.Join(dir, "single.db")); !slices.Equal(got, want) {
		t.Errorf("merged trials differ from the single run's:\n%v\n%v", got, want)
	}
	// An explicit --db is used as given.
	explicit := filepath.Join(dir, "mine.db")
	if out, code := runEnv(t, nil, "eval", "--config", study, "--shard", "2/2", "--db", explicit); code != 0 || !strings.Contains(out, "db="+explicit) {
		t.Errorf("--shard 2/2 --db: exit %d: %s", code, out)
	}
	// A split into another number of shards beside the 2-way split's
	// databases cannot see their trials: it is refused, and sends nothing.
	sent := fm.Requests()
	if out, code := runEnv(t, nil, "eval", "--config", study, "--shard", "1/3"); code != 2 ||
		!strings.Contains(out, "shard databases of another split are there") || !strings.Contains(out, "r.1-of-2.db") {
		t.Errorf("--shard 1/3 beside a 2-way split: exit %d: %s", code, out)
	}
	// So is a --db named like a shard database, as the job files pass it.
	if out, code := runEnv(t, nil, "eval", "--config", study, "--shard", "1/3", "--db", filepath.Join(dir, "r.1-of-3.db")); code != 2 ||
		!strings.Contains(out, "shard databases of another split are there") {
		t.Errorf("--shard 1/3 --db r.1-of-3.db beside a 2-way split: exit %d: %s", code, out)
	}
	if fm.Requests() != sent {
		t.Errorf("the refused split sent %d requests", fm.Requests()-sent)
	}
	// After a merge into the study's own database and without the 2-way
	// split's files, a 3-way split starts from the merged trials: it sends
	// nothing for them, and merging it back changes nothing.
	if msg, err, code := inProcess(t, newMergeCmd(), "--db", filepath.Join(dir, "r.db"), filepath.Join(dir, "r.1-of-2.db"), filepath.Join(dir, "r.2-of-2.db")); code != 0 {
		t.Fatalf("merge into r.db: exit %d, %v: %s", code, err, msg)
	}
	for _, n := range []string{"r.1-of-2.db", "r.2-of-2.db"} {
		if err := os.Remove(filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	seeded := 0
	for i := 1; i <= 3; i++ {
		out, code := runEnv(t, nil, "eval", "--config", study, "--shard", fmt.Sprintf("%d/3", i))
		if code != 0 {
			t.Fatalf("--shard %d/3 after the merge: exit %d: %s", i, code, out)
		}
		if strings.Contains(out, "shard database seeded from the merged database") {
			seeded++
		}
	}
	if fm.Requests() != sent || seeded != 2 {
		t.Errorf("a 3-way split after the merge sent %d requests and seeded %d shards, want 0 and 2 (one shard has no clip)", fm.Requests()-sent, seeded)
	}
	msg, err, code = inProcess(t, newMergeCmd(), "--db", filepath.Join(dir, "r.db"), filepath.Join(dir, "r.1-of-3.db"), filepath.Join(dir, "r.2-of-3.db"), filepath.Join(dir, "r.3-of-3.db"))
	if code != 0 || !strings.Contains(msg, "2 unchanged") {
		t.Errorf("merging the seeded 3-way split: exit %d, %v: %s", code, err, msg)
	}
	if got, want := exportTrials(t, filepath.Join(dir, "r.db")), exportTrials(t, filepath.Join(dir, "single.db")); !slices.Equal(got, want) {
		t.Errorf("trials after the 3-way split differ from the single run's:\n%v\n%v", got, want)
	}
	// More shards than clips: the empty shard still makes its database.
	dir3 := t.TempDir()
	study3 := studyFile(t, manifest, fm.URL(), filepath.Join(dir3, "r.db"), 1, 1, "max_usd: 10\n")
	if out, code := runEnv(t, nil, "eval", "--config", study3, "--shard", "3/3"); code != 0 || !strings.Contains(out, "this shard has no clips") {
		t.Errorf("--shard 3/3 of 2 clips: exit %d: %s", code, out)
	}
	if rows, _ := exportRows(t, filepath.Join(dir3, "r.3-of-3.db")); rows != 0 {
		t.Errorf("the empty shard's database holds %d trials", rows)
	}
}

// TestEmptyShardFlag: --shard "" (a job script's --shard "$SHARD" with
// SHARD unset) is refused by every command that takes --shard, exit 2,
// before anything is written: read as "no flag" it would run the whole
// plan in every task.
func TestEmptyShardFlag(t *testing.T) {
	manifest := renderSmall(t)
	out := t.TempDir()
	spec := writeFile(t, "grid.yaml", "grid: default\ndomains: [blinking]\ncounts: [2]\nfrequencies: [1.0]\nduration: 2\nwidth: 160\nheight: 96\n")
	study := studyFile(t, manifest, "http://127.0.0.1:9/v1", filepath.Join(out, "r.db"), 1, 1, "")
	for _, args := range [][]string{
		{"render", "--spec", spec, "--out", filepath.Join(out, "render")},
		{"variants", "--manifest", manifest, "--policies", "fps:1", "--out", filepath.Join(out, "variants")},
		{"eval", "--config", study, "--dry-run"},
		{"eval", "--config", study},
	} {
		for _, empty := range []string{"", " "} {
			msg, code := runEnv(t, nil, append(args, "--shard", empty)...)
			if code != 2 || !strings.Contains(msg, "--shard is empty") {
				t.Errorf("%s --shard %q: exit %d, want 2 with \"--shard is empty\":\n%s", args[0], empty, code, msg)
			}
		}
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("a refused run wrote %v", ents)
	}
}

// TestWrittenFileModes: under the usual umask 022 every file a render, a
// sharded render and its merge, and variants runs (frames with the
// dataset, videos in shards) write is 0644 and every
// directory 0755 — manifests, traces, plan and shard records, frames.json,
// variants.jsonl and dataset.jsonl included, which atomic writes used to
// leave owner-only (0600): colleagues' jobs on a shared file system could
// not read them.
func TestWrittenFileModes(t *testing.T) {
	old := syscall.Umask(0o022) // the children inherit it
	t.Cleanup(func() { syscall.Umask(old) })
	root := t.TempDir()
	spec := writeFile(t, "grid.yaml", "grid: default\ndomains: [bounce_ball, blinking]\ncounts: [0, 2]\nfrequencies: [1.0]\nduration: 2\nwidth: 160\nheight: 96\n")
	one, sharded := filepath.Join(root, "render"), filepath.Join(root, "sharded")
	manifest := filepath.Join(one, pipeline.ManifestName)
	for _, args := range [][]string{
		{"render", "--spec", spec, "--out", one},
		{"render", "--spec", spec, "--out", sharded, "--shard", "1/2"},
		{"render", "--spec", spec, "--out", sharded, "--shard", "2/2"},
		{"merge", "--render", sharded},
		{"variants", "--manifest", manifest, "--policies", "fps:1,keyframes", "--out", filepath.Join(root, "frames"), "--dataset"},
		{"variants", "--manifest", manifest, "--policies", "fps:2", "--as", "video", "--out", filepath.Join(root, "video"), "--shard", "1/2"},
		{"variants", "--manifest", manifest, "--policies", "fps:2", "--as", "video", "--out", filepath.Join(root, "video"), "--shard", "2/2"},
	} {
		if out, code := runEnv(t, nil, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, out)
		}
	}
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || path == root {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := os.FileMode(0o644)
		if d.IsDir() {
			want = 0o755 | os.ModeDir
		}
		if fi.Mode() != want {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s: mode %v, want %v", rel, fi.Mode(), want)
		}
		seen[filepath.Base(path)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"manifest.jsonl", "plan.json", "shard.json", "frames.json", "variants.jsonl", "dataset.jsonl", ".tracegrid.lock"} {
		if !seen[name] {
			t.Errorf("no %s was written: the test does not cover it", name)
		}
	}
}
