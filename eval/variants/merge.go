package variants

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"

	"github.com/tracegrid/tracegrid/internal/fsutil"
	"github.com/tracegrid/tracegrid/pipeline"
)

// MergeSummary says what MergeShards did.
type MergeSummary struct {
	Shards   int // N of the split merged
	Variants int // records from the shards
	Kept     int // records of D/variants.jsonl outside the sharded plan, kept as they were
	// Unchanged: D/variants.jsonl already held exactly this.
	Unchanged bool
	// Others are shard directories of other splits (another N), ignored.
	Others []string
}

// MergeShards writes D/variants.jsonl from the records of the shards of
// the latest split in D (pipeline.ReadShardSet): every clip of the plan ×
// every policy, in plan order, then the records D/variants.jsonl already
// had for other clips or policies, as they were. It holds D's lock
// exclusively (refused while a variants run or a shard runs) and writes
// nothing unless the shards are exactly the plan: a shard that never
// started or has not finished (variants of its clips missing, a last line
// cut short), a variant recorded by two shards (a duplicate when the
// files' hashes agree, a conflict when they differ), one of a clip the
// shard was not given, and a variant whose files no longer have their
// recorded sha256s are errors wrapping pipeline.ErrMerge that name them.
// Every file is hashed, as a resumed run does. A second merge writes
// nothing (Unchanged).
func MergeShards(dir string) (MergeSummary, error) {
	var sum MergeSummary
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return sum, fmt.Errorf("%w: %s is not a variants directory", pipeline.ErrMerge, dir)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return sum, err
	}
	defer unlock()
	set, err := pipeline.ReadShardSet(dir, pipeline.KindVariants)
	if err != nil {
		return sum, err
	}
	sum.Shards, sum.Others = set.Plan.Shards, set.Others
	as := set.Plan.As
	type seen struct {
		shard string
		rec   Record
	}
	found := map[key][]seen{}
	var problems []string
	for k, s := range set.Shards {
		if set.Missing[k] != "" {
			problems = append(problems, set.Missing[k])
			continue
		}
		path := filepath.Join(dir, pipeline.ShardsDir, s.Dir(), RecordsName)
		if _, err := os.Stat(path); err != nil {
			problems = append(problems, fmt.Sprintf("shard %s has no %s: it stopped before it began; run it again", s, filepath.Join(pipeline.ShardsDir, s.Dir(), RecordsName)))
			continue
		}
		recs, torn, err := readRecords(path)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("shard %s: %v", s, err))
			continue
		case torn:
			problems = append(problems, fmt.Sprintf("shard %s: the last line of its %s was cut short: it was killed or is still running; run it again", s, RecordsName))
			continue
		}
		mine := map[string]bool{}
		for _, id := range set.Infos[k].Items {
			mine[id] = true
		}
		have := map[key]bool{}
		var foreign []string
		for _, r := range recs {
			if !mine[r.Clip] {
				foreign = append(foreign, r.Clip+" "+r.Policy)
			}
			have[r.key()] = true
			found[r.key()] = append(found[r.key()], seen{s.String(), r})
		}
		if len(foreign) > 0 {
			problems = append(problems, fmt.Sprintf("shard %s records variants of clips it was not given: %s", s, pipeline.NameSome(foreign)))
		}
		var missing []string
		for _, id := range set.Infos[k].Items {
			for _, p := range set.Plan.Policies {
				if !have[key{id, p, as}] {
					missing = append(missing, id+" "+p)
				}
			}
		}
		if len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("shard %s has not finished: %d of its %d variants are missing (%s); run it again",
				s, len(missing), len(set.Infos[k].Items)*len(set.Plan.Policies), pipeline.NameSome(missing)))
		}
	}
	var merged []Record
	inPlan := map[key]bool{}
	for _, id := range set.Plan.Items {
		for _, p := range set.Plan.Policies {
			k := key{id, p, as}
			inPlan[k] = true
			occ := found[k]
			switch {
			case len(occ) == 0:
				continue // reported above, by its shard
			case len(occ) > 1:
				kind := "duplicate: the same files"
				for _, o := range occ[1:] {
					if !maps.Equal(o.rec.SHA256, occ[0].rec.SHA256) {
						kind = "conflict: different files"
					}
				}
				where := ""
				for i, o := range occ {
					if i > 0 {
						where += ", "
					}
					where += o.shard
				}
				problems = append(problems, fmt.Sprintf("variant %s %s is recorded by %d shards, %s: %s", id, p, len(occ), kind, where))
				continue
			}
			r := occ[0].rec
			if why := verify(dir, r, r); why != "" {
				problems = append(problems, fmt.Sprintf("variant %s %s of shard %s does not match its files (%s); run shard %s again", id, p, occ[0].shard, why, occ[0].shard))
				continue
			}
			merged = append(merged, r)
		}
	}
	if len(problems) > 0 {
		return sum, pipeline.MergeError(dir, problems)
	}
	sum.Variants = len(merged)
	path := filepath.Join(dir, RecordsName)
	old, torn, err := readRecords(path)
	if err != nil {
		return sum, fmt.Errorf("%w: %w", ErrOutput, err)
	}
	if torn {
		return sum, fmt.Errorf("%w: the last line of %s was cut short by an interrupted run: run tracegrid variants without a shard to repair it, or move the file away", ErrOutput, path)
	}
	for _, r := range old {
		if !inPlan[r.key()] {
			merged = append(merged, r)
			sum.Kept++
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, r := range merged {
		if err := enc.Encode(r); err != nil {
			return sum, err
		}
	}
	if b, err := os.ReadFile(path); err == nil && bytes.Equal(b, buf.Bytes()) {
		sum.Unchanged = true
		return sum, nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return sum, fmt.Errorf("%w: %w", ErrOutput, err)
	}
	if err := fsutil.WriteFileAtomic(path, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }); err != nil {
		return sum, fmt.Errorf("%w: writing %s: %w", ErrOutput, path, err)
	}
	return sum, nil
}
