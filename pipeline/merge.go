package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/tracegrid/tracegrid/internal/fsutil"
)

// MergeSummary says what MergeRender did.
type MergeSummary struct {
	// Shards is N of the split merged (0: dir had no shards, only its own
	// manifest from an unsharded run).
	Shards int
	// Clips in the merged manifest.
	Clips int
	// Unchanged: dir/manifest.jsonl already held exactly this (a second
	// merge writes nothing).
	Unchanged bool
	// Others are shard directories of other splits (another N), ignored.
	Others []string
}

// MergeRender writes dir/manifest.jsonl from the manifests of the shards
// of the latest split in dir (docs/cluster.md), in plan order. It holds
// dir's lock exclusively, so it refuses while a shard or another render
// runs. It checks, and names in one error wrapping ErrMerge, everything
// that keeps the union of the shards from being exactly the plan: a shard
// that never started or has not finished (clips of its part missing from
// its manifest, or a last line cut short), a clip in two shard manifests
// (a duplicate when the hashes agree, a conflict when they differ), a
// clip that is not the shard's, and a clip whose files no longer match
// its entry (the video's sha256, the trace the scene reproduces: another
// run rendered it again). Nothing is written unless every check passes;
// a merge run again writes nothing (Unchanged).
//
// A dir without shards but with a manifest of its own (a render run as
// one process, or as shard 1/1) is already merged: the summary says so
// and nothing is written.
func MergeRender(dir string) (MergeSummary, error) {
	var sum MergeSummary
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return sum, fmt.Errorf("%w: %s is not a render directory", ErrNoShards, dir)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return sum, err
	}
	defer unlock()
	manifest := filepath.Join(dir, ManifestName)
	set, err := ReadShardSet(dir, KindRender)
	if errors.Is(err, ErrNoShards) {
		if entries, _, rerr := ReadManifest(manifest); rerr == nil && len(entries) > 0 {
			sum.Clips, sum.Unchanged = len(entries), true
			return sum, nil
		}
	}
	if err != nil {
		return sum, err
	}
	sum.Shards, sum.Others = set.Plan.Shards, set.Others
	removeStaleTemps(filepath.Join(dir, ShardsDir), slog.New(slog.DiscardHandler))

	type seen struct {
		shard string
		entry Entry
	}
	found := map[string][]seen{}
	var problems []string
	for k, s := range set.Shards {
		if set.Missing[k] != "" {
			problems = append(problems, set.Missing[k])
			continue
		}
		path := filepath.Join(dir, ShardsDir, s.Dir(), ManifestName)
		entries, _, err := readManifest(path, false)
		if errors.Is(err, fs.ErrNotExist) {
			problems = append(problems, fmt.Sprintf("shard %s has no manifest (%s): it stopped before its first clip; run it again", s, filepath.Join(ShardsDir, s.Dir(), ManifestName)))
			continue
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("shard %s: %v (run it again)", s, err))
			continue
		}
		mine := map[string]bool{}
		for _, id := range set.Infos[k].Items {
			mine[id] = true
		}
		have := map[string]bool{}
		var foreign []string
		for _, e := range entries {
			have[e.ID] = true
			if !mine[e.ID] {
				foreign = append(foreign, e.ID)
			}
			found[e.ID] = append(found[e.ID], seen{s.String(), e})
		}
		if len(foreign) > 0 {
			problems = append(problems, fmt.Sprintf("shard %s records clips it was not given: %s", s, NameSome(foreign)))
		}
		var missing []string
		for _, id := range set.Infos[k].Items {
			if !have[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("shard %s has not finished: %d of its %d clips are missing (%s); run it again", s, len(missing), len(set.Infos[k].Items), NameSome(missing)))
		}
	}
	var merged []Entry
	for _, id := range set.Plan.Items {
		occ := found[id]
		switch {
		case len(occ) == 0:
			continue // reported above, by its shard
		case len(occ) > 1:
			kind := "duplicate: the same video"
			for _, o := range occ[1:] {
				if o.entry.SHA256 != occ[0].entry.SHA256 {
					kind = "conflict: different video hashes"
				}
			}
			where := ""
			for i, o := range occ {
				if i > 0 {
					where += ", "
				}
				where += fmt.Sprintf("%s (sha256 %.12s…)", o.shard, o.entry.SHA256)
			}
			problems = append(problems, fmt.Sprintf("clip %s is in %d shard manifests, %s: %s", id, len(occ), kind, where))
			continue
		}
		e := occ[0].entry
		if why := verifyEntry(dir, e, e.Render); why != "" {
			problems = append(problems, fmt.Sprintf("clip %s of shard %s does not match its files (%s): another run rendered it again or it was changed; run shard %s again", id, occ[0].shard, why, occ[0].shard))
			continue
		}
		merged = append(merged, e)
	}
	if len(problems) > 0 {
		return sum, MergeError(dir, problems)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, e := range merged {
		if err := enc.Encode(e); err != nil {
			return sum, err
		}
	}
	sum.Clips = len(merged)
	if old, err := os.ReadFile(manifest); err == nil && bytes.Equal(old, buf.Bytes()) {
		sum.Unchanged = true
		return sum, nil
	}
	if err := fsutil.WriteFileAtomic(manifest, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }); err != nil {
		return sum, fmt.Errorf("%w: %s: %w", ErrOutput, manifest, err)
	}
	return sum, nil
}
