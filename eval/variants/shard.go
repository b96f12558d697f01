package variants

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"

	"github.com/tracegrid/tracegrid/internal/shard"
	"github.com/tracegrid/tracegrid/pipeline"
)

// Sharded runs (docs/variants.md, "Shards"; docs/cluster.md). With
// Options.Shard I/N (N > 1) a run makes the variants of its part of the
// clips only — the manifest's selected clips split by cost, each clip's
// frames × the variants' pixels (the policies are the same for every
// clip) — into the shared output directory D, and records them in
// D/shards/I-of-N/variants.jsonl (paths relative to D, as in
// D/variants.jsonl). Shards of one request share D: each holds D's lock
// shared and its own exclusively (pipeline.OpenShard), D/shards/plan.json
// refuses a shard of another request (other clips, policies, mode, format,
// quality or size), and MergeShards writes D/variants.jsonl from the shard
// records. --dataset is not sharded: run it once after the merge, without
// a shard (every variant is then verified and skipped).

// lockName is the lock file of an output directory and of each shard.
const lockName = ".variants.lock"

// sharded reports whether the run is one shard of several.
func (o *Options) sharded() bool { return o.Shard != (shard.Shard{}) && !o.Shard.IsWhole() }

// planID identifies what a sharded run makes: the selected clips (ids and
// video hashes) and every setting that names or shapes a variant.
func (o *Options) planID(selected []clipRef) (string, error) {
	return pipeline.PlanID(struct {
		Kind     string    `json:"kind"`
		Clips    []clipRef `json:"clips"`
		Policies []string  `json:"policies"`
		As       string    `json:"as"`
		Format   string    `json:"format"`
		Quality  int       `json:"quality"`
		Width    int       `json:"width"`
		Height   int       `json:"height"`
	}{pipeline.KindVariants, selected, o.policyNames(), o.As, string(o.Format), o.Quality, o.Width, o.Height})
}

type clipRef struct {
	ID     string `json:"id"`
	SHA256 string `json:"sha256"`
}

func (o *Options) policyNames() []string {
	names := make([]string, len(o.Policies))
	for i, p := range o.Policies {
		names[i] = p.String()
	}
	return names
}

// shardEntries is the shard's part of the selected entries, in their order.
func (o *Options) shardEntries(selected []pipeline.Entry) ([]pipeline.Entry, error) {
	costs := make([]float64, len(selected))
	for i, e := range selected {
		w, h := o.Width, o.Height
		if w == 0 {
			w, h = e.Render.Width, e.Render.Height
		}
		costs[i] = shard.RenderCost(int(math.Round(e.Render.Duration*float64(e.Render.FPS))), w, h)
	}
	idx, err := shard.Select(costs, o.Shard)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	part := make([]pipeline.Entry, len(idx))
	for k, i := range idx {
		part[k] = selected[i]
	}
	return part, nil
}

// output is where a run writes its records: the directory's own
// variants.jsonl under its exclusive lock, or one shard's.
type output struct {
	records string
	removed []string
	close   func()
}

// openOutput locks opt.Out for the run and removes what an interrupted
// run left: everything without a shard; with one, only the staging of the
// shard's own clips (other shards may be writing theirs).
func openOutput(opt Options, selected, part []pipeline.Entry) (output, error) {
	if !opt.sharded() {
		unlock, err := lockDir(opt.Out)
		if err != nil {
			return output{}, err
		}
		return output{records: filepath.Join(opt.Out, RecordsName), removed: removeStaleTemps(opt.Out), close: unlock}, nil
	}
	refs := make([]clipRef, len(selected))
	items := make([]string, len(selected))
	for i, e := range selected {
		refs[i], items[i] = clipRef{e.ID, e.SHA256}, e.ID
	}
	id, err := opt.planID(refs)
	if err != nil {
		return output{}, err
	}
	mine := make([]string, len(part))
	for i, e := range part {
		mine[i] = e.ID
	}
	plan := pipeline.ShardPlan{Kind: pipeline.KindVariants, ID: id, Items: items, Policies: opt.policyNames(), As: opt.As}
	so, err := pipeline.OpenShard(opt.Out, lockName, plan, opt.Shard, mine)
	if err != nil {
		return output{}, fmt.Errorf("%w: %w", ErrOutput, err)
	}
	opt.Log.Info("shard", "shard", opt.Shard.String(), "clips", len(part), "of", len(selected), "records", so.Path(RecordsName))
	return output{records: so.Path(RecordsName), removed: removeClipTemps(opt.Out, mine, so.Path("")), close: so.Close}, nil
}

// clipTemp takes the clip id out of a staging or temporary name:
// ".<clip>.tmp-N" (frames), ".<clip>.mp4.tmp-N" and
// ".<clip>.trace.json.tmp-N" (video).
var clipTemp = regexp.MustCompile(`^\.(.+?)(\.mp4|\.trace\.json)?\.tmp-[0-9]+$`)

// removeClipTemps removes the staging of the given clips in every policy
// directory of out, and every temporary file of the shard's directory.
func removeClipTemps(out string, ids []string, shardDir string) (removed []string) {
	mine := make(map[string]bool, len(ids))
	for _, id := range ids {
		mine[id] = true
	}
	if ents, err := os.ReadDir(out); err == nil {
		for _, d := range ents {
			if !d.IsDir() || tempName.MatchString(d.Name()) || d.Name() == pipeline.ShardsDir {
				continue
			}
			sub, err := os.ReadDir(filepath.Join(out, d.Name()))
			if err != nil {
				continue
			}
			for _, e := range sub {
				if m := clipTemp.FindStringSubmatch(e.Name()); m != nil && mine[m[1]] {
					if os.RemoveAll(filepath.Join(out, d.Name(), e.Name())) == nil {
						removed = append(removed, filepath.ToSlash(filepath.Join(d.Name(), e.Name())))
					}
				}
			}
		}
	}
	if ents, err := os.ReadDir(shardDir); err == nil {
		for _, e := range ents {
			if tempName.MatchString(e.Name()) && os.RemoveAll(filepath.Join(shardDir, e.Name())) == nil {
				rel, _ := filepath.Rel(out, filepath.Join(shardDir, e.Name()))
				removed = append(removed, filepath.ToSlash(rel))
			}
		}
	}
	sort.Strings(removed)
	return removed
}
