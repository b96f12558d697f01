package pipeline

// Sharded output directories (docs/cluster.md, "Shards"). Shards of one
// plan write into one directory DIR on a shared file system:
//
//	DIR/.tracegrid.lock             flock: shared by every shard, exclusive for an unsharded run or a merge
//	DIR/clips/…                     the clips, as an unsharded render writes them
//	DIR/shards/plan.json            the plan's identity (ShardPlan), written by the first shard
//	DIR/shards/I-of-N/shard.json    the clips shard I of N was given (ShardInfo)
//	DIR/shards/I-of-N/manifest.jsonl  its manifest (paths relative to DIR), always written, even empty
//	DIR/shards/I-of-N/.tracegrid.lock flock: exclusive, one process per shard
//
// The rules, and why:
//
//   - Shards of the same plan and the same N never touch each other's
//     clips (the partition is exact), so they share the directory lock and
//     each holds only its own shard's lock exclusively.
//   - A shard of another plan is refused: plan.json records the plan's
//     identity (PlanID of what determines its clips and their bytes) and
//     every shard compares it before writing anything.
//   - Shards of the same plan but another N would split the clips
//     differently, so two of them could write the same clip at once: a
//     shard refuses to start while any shard of another N holds its lock.
//     Each shard takes its own lock before it probes the others', so of
//     two that start together at least one sees the other (both may
//     refuse; never both run).
//   - An unsharded run, and a merge, take the directory lock exclusively:
//     they wait for no shard, they refuse while one runs.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/tracegrid/tracegrid/internal/fsutil"
	"github.com/tracegrid/tracegrid/internal/shard"
	"github.com/tracegrid/tracegrid/scene"
)

// Names in a sharded output directory.
const (
	// ShardsDir holds the shards' bookkeeping: DIR/shards.
	ShardsDir = "shards"
	// ShardPlanName is the plan's identity, DIR/shards/plan.json.
	ShardPlanName = "plan.json"
	// ShardInfoName is a shard's list of items, DIR/shards/I-of-N/shard.json.
	ShardInfoName = "shard.json"
	// RenderLockName is the lock file of a render directory and of each
	// of its shards.
	RenderLockName = ".tracegrid.lock"
)

// Kinds of sharded output (ShardPlan.Kind).
const (
	KindRender   = "render"
	KindVariants = "variants"
)

// ShardPlan is DIR/shards/plan.json: what the shards in DIR are shards of.
type ShardPlan struct {
	// Kind is KindRender or KindVariants.
	Kind string `json:"kind"`
	// ID identifies the plan (PlanID): shards with another ID are refused.
	ID string `json:"plan"`
	// Shards is N of the latest sharded run in the directory: the split a
	// merge reads.
	Shards int `json:"shards"`
	// Items are the plan's clip ids in plan order.
	Items []string `json:"items"`
	// Policies and As (variants only): the canonical policies and the mode
	// every clip is written in.
	Policies []string `json:"policies,omitempty"`
	As       string   `json:"as,omitempty"`
}

// ShardInfo is DIR/shards/I-of-N/shard.json: the items one shard was given.
type ShardInfo struct {
	Plan  string   `json:"plan"`
	Shard string   `json:"shard"` // "I/N"
	Items []string `json:"items"` // clip ids, in plan order
}

// PlanID is the SHA-256 (hex) of v's JSON: the identity of a plan, given
// what determines its items and their bytes.
func PlanID(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("plan identity: %w", err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:]), nil
}

// renderPlanID identifies a render plan: its clips in plan order and the
// settings that make their bytes.
func renderPlanID(spec Spec, plan []scene.Params) (string, error) {
	return PlanID(struct {
		Kind     string         `json:"kind"`
		Settings RenderSettings `json:"settings"`
		Clips    []string       `json:"clips"`
	}{KindRender, settingsOf(spec), planIDs(plan)})
}

func planIDs(plan []scene.Params) []string {
	ids := make([]string, len(plan))
	for i, p := range plan {
		ids[i] = p.ID()
	}
	return ids
}

// ShardOutput is one shard's hold on an output directory (OpenShard): a
// shared lock on the directory and an exclusive one on the shard. Close
// releases both.
type ShardOutput struct {
	Dir   string
	Shard shard.Shard
	locks []*os.File
}

// Path is a file of the shard: DIR/shards/I-of-N/name (the shard's
// directory for "").
func (o *ShardOutput) Path(name string) string {
	return filepath.Join(o.Dir, ShardsDir, o.Shard.Dir(), name)
}

// Close releases the shard's locks. It is nil-safe and idempotent.
func (o *ShardOutput) Close() {
	if o == nil {
		return
	}
	for i := len(o.locks) - 1; i >= 0; i-- {
		_ = syscall.Flock(int(o.locks[i].Fd()), syscall.LOCK_UN)
		o.locks[i].Close()
	}
	o.locks = nil
}

// OpenShard makes dir ready for shard s of plan and holds it: it takes a
// shared lock on dir/lockName (refused while an unsharded run or a merge
// holds it exclusively), an exclusive one on the shard's own lock file
// (refused while the same shard runs elsewhere), refuses while a shard of
// another N runs, records or checks dir/shards/plan.json (a different plan
// is refused with ErrOtherPlan) and writes the shard's ShardInfo with
// items. plan.Shards is set to s.Count.
func OpenShard(dir, lockName string, plan ShardPlan, s shard.Shard, items []string) (*ShardOutput, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	o := &ShardOutput{Dir: dir, Shard: s}
	if err := os.MkdirAll(o.Path(""), fsutil.DirMode); err != nil {
		return nil, fmt.Errorf("%w %s is not writable: %w", ErrOutput, dir, err)
	}
	ok := false
	defer func() {
		if !ok {
			o.Close()
		}
	}()
	// 1. The directory, shared with the other shards.
	f, err := flockFile(filepath.Join(dir, lockName), syscall.LOCK_SH)
	if errors.Is(err, fsutil.ErrLocked) {
		return nil, fmt.Errorf("%w %s is in use by a run that is not a shard (an unsharded run or a merge): wait for it, then start the shard again", ErrOutput, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("%w %s is not writable: %w", ErrOutput, dir, err)
	}
	o.locks = append(o.locks, f)
	// 2. The shard, alone.
	f, err = flockFile(o.Path(lockName), syscall.LOCK_EX)
	if errors.Is(err, fsutil.ErrLocked) {
		return nil, fmt.Errorf("%w %s: shard %s is already running (its lock %s is held)", ErrOutput, dir, s, o.Path(lockName))
	}
	if err != nil {
		return nil, fmt.Errorf("%w %s is not writable: %w", ErrOutput, dir, err)
	}
	o.locks = append(o.locks, f)
	// 3. The plan: recorded by the first shard, the same for the others.
	plan.Shards = s.Count
	have, err := recordPlan(dir, plan)
	if err != nil {
		return nil, err
	}
	// 4. No shard of another split runs; then this split is the latest.
	if running, err := otherSplitsRunning(dir, lockName, s.Count); err != nil {
		return nil, err
	} else if len(running) > 0 {
		return nil, fmt.Errorf("%w %s: shards of another split are running (%s): shards of one directory must share N while they run; wait for them, or use the same N",
			ErrOutput, dir, strings.Join(running, ", "))
	}
	if have.Shards != s.Count {
		path := filepath.Join(dir, ShardsDir, ShardPlanName)
		if err := writeJSON(path, plan); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrOutput, path, err)
		}
	}
	// 5. What this shard was given.
	info := ShardInfo{Plan: plan.ID, Shard: s.String(), Items: nonNilStrings(items)}
	if err := writeJSON(o.Path(ShardInfoName), info); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrOutput, o.Path(ShardInfoName), err)
	}
	ok = true
	return o, nil
}

// flockFile opens path (creating it) and takes flock how|LOCK_NB on it.
// Another holder is an error matching fsutil.ErrLocked.
func flockFile(path string, how int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, fsutil.FileMode)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, &fsutil.LockError{Path: path, Err: err}
	}
	return f, nil
}

// otherSplitsRunning names the shards of dir whose count is not n and
// whose lock is held: a probe takes each lock and releases it at once.
func otherSplitsRunning(dir, lockName string, n int) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(dir, ShardsDir))
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrOutput, dir, err)
	}
	var running []string
	for _, e := range ents {
		s, err := shard.ParseDir(e.Name())
		if err != nil || !e.IsDir() || s.Count == n {
			continue
		}
		f, err := flockFile(filepath.Join(dir, ShardsDir, e.Name(), lockName), syscall.LOCK_EX)
		if errors.Is(err, fsutil.ErrLocked) {
			running = append(running, s.String())
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w %s: probing shard %s: %w", ErrOutput, dir, s, err)
		}
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
	return running, nil
}

// recordPlan creates dir/shards/plan.json, or checks that it names the
// same plan; it returns the plan as recorded.
func recordPlan(dir string, plan ShardPlan) (ShardPlan, error) {
	path := filepath.Join(dir, ShardsDir, ShardPlanName)
	b, err := json.Marshal(plan)
	if err != nil {
		return plan, err
	}
	created, err := createExclusive(path, append(b, '\n'))
	if err != nil {
		return plan, fmt.Errorf("%w: %s: %w", ErrOutput, path, err)
	}
	if created {
		return plan, nil
	}
	have, err := ReadShardPlan(dir)
	if err != nil {
		return have, err
	}
	return have, samePlan(dir, have, plan.Kind, plan.ID)
}

// samePlan refuses a directory whose shards belong to another kind or
// plan (ErrOtherPlan).
func samePlan(dir string, have ShardPlan, kind, id string) error {
	if have.Kind != kind {
		return fmt.Errorf("%w: %s holds the shards of a %s (%s), not of a %s: use another directory",
			ErrOtherPlan, dir, have.Kind, filepath.Join(dir, ShardsDir, ShardPlanName), kind)
	}
	if have.ID != id {
		return fmt.Errorf("%w: %s holds shards of another %s plan (%s: plan %.12s…, %d clips; this one is %.12s…): a directory holds one plan: use a new directory, or delete %s to replace it",
			ErrOtherPlan, dir, kind, filepath.Join(dir, ShardsDir, ShardPlanName), have.ID, len(have.Items), id, dir)
	}
	return nil
}

// CheckShardPlan is for an unsharded run into dir: when dir has shards,
// they must be of this kind and plan id (ErrOtherPlan otherwise).
func CheckShardPlan(dir, kind, id string) error {
	have, err := ReadShardPlan(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return samePlan(dir, have, kind, id)
}

// ReadShardPlan reads dir/shards/plan.json (an error wrapping
// fs.ErrNotExist when there is none).
func ReadShardPlan(dir string) (ShardPlan, error) {
	path := filepath.Join(dir, ShardsDir, ShardPlanName)
	var p ShardPlan
	b, err := os.ReadFile(path)
	if err != nil {
		return p, fmt.Errorf("%w: %w", ErrOutput, err)
	}
	if err := json.Unmarshal(b, &p); err != nil || p.ID == "" || p.Kind == "" || p.Shards < 1 {
		return p, fmt.Errorf("%w: %s is not a shard plan (delete %s to start the shards over)", ErrOutput, path, filepath.Join(dir, ShardsDir))
	}
	return p, nil
}

// ReadShardInfo reads dir/shards/I-of-N/shard.json.
func ReadShardInfo(dir string, s shard.Shard) (ShardInfo, error) {
	path := filepath.Join(dir, ShardsDir, s.Dir(), ShardInfoName)
	var info ShardInfo
	b, err := os.ReadFile(path)
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(b, &info); err != nil || info.Shard != s.String() {
		return info, fmt.Errorf("%s is not shard %s's record", path, s)
	}
	return info, nil
}

// createExclusive writes path with data unless it exists (created false):
// a temporary file linked to path, so no reader sees a part and of two
// writers one wins.
func createExclusive(path string, data []byte) (created bool, err error) {
	tmp, err := fsutil.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	err = os.Link(tmp.Name(), path)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	return err == nil, err
}

// writeJSON writes v as one JSON line, atomically.
func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(path, func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err })
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// renderOutput is where one render run writes: the whole directory, or
// one shard of it.
type renderOutput struct {
	plan     []scene.Params // the clips this run renders, in plan order
	clipsDir string
	manifest string // this run's manifest
	close    func()
}

// openRenderOutput prepares opt.Out for a render of plan: without a shard
// (or 1/1) the whole directory under its exclusive lock, as always (and a
// directory with shards of another plan is refused); with a shard, that
// shard's part of the plan, balanced by frames × pixels, under OpenShard's
// locks, with its manifest in DIR/shards/I-of-N/manifest.jsonl. Temporary
// files a killed run left are removed: all of them without a shard, only
// those of the shard's own clips with one (other shards may be writing
// theirs).
func openRenderOutput(spec Spec, plan []scene.Params, opt Options, log *slog.Logger) (renderOutput, error) {
	o := renderOutput{plan: plan, clipsDir: filepath.Join(opt.Out, "clips")}
	if err := os.MkdirAll(o.clipsDir, fsutil.DirMode); err != nil {
		return o, fmt.Errorf("%w %s is not writable: %w", ErrOutput, opt.Out, err)
	}
	id, err := renderPlanID(spec, plan)
	if err != nil {
		return o, err
	}
	if opt.Shard == (shard.Shard{}) || opt.Shard.IsWhole() {
		unlock, err := lockDir(opt.Out)
		if err != nil {
			return o, err
		}
		if err := CheckShardPlan(opt.Out, KindRender, id); err != nil {
			unlock()
			return o, err
		}
		removeStaleTemps(o.clipsDir, log)
		removeStaleTemps(opt.Out, log)
		o.manifest, o.close = filepath.Join(opt.Out, ManifestName), unlock
		return o, nil
	}
	costs := make([]float64, len(plan))
	for i, p := range plan {
		costs[i] = shard.RenderCost(frameCount(p.Duration, p.FPS), p.Width, p.Height)
	}
	idx, err := shard.Select(costs, opt.Shard)
	if err != nil {
		return o, err
	}
	part := make([]scene.Params, len(idx))
	for k, i := range idx {
		part[k] = plan[i]
	}
	so, err := OpenShard(opt.Out, RenderLockName, ShardPlan{Kind: KindRender, ID: id, Items: planIDs(plan)}, opt.Shard, planIDs(part))
	if err != nil {
		return o, err
	}
	removeClipTemps(o.clipsDir, planIDs(part), log)
	removeStaleTemps(so.Path(""), log)
	log.Info("shard", "shard", opt.Shard.String(), "clips", len(part), "of", len(plan), "manifest", so.Path(ManifestName))
	o.plan, o.manifest, o.close = part, so.Path(ManifestName), so.Close
	return o, nil
}

// removeClipTemps deletes the temporary files a killed run left for the
// given clips only: ".<id>.mp4.tmp" and ".<id>.trace.json.tmp…".
func removeClipTemps(clipsDir string, ids []string, log *slog.Logger) {
	mine := make(map[string]bool, len(ids))
	for _, id := range ids {
		mine[id] = true
	}
	ents, err := os.ReadDir(clipsDir)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, ".") || !strings.Contains(name, ".tmp") {
			continue
		}
		id := name[1:]
		for _, suffix := range []string{".mp4.tmp", ".trace.json.tmp"} {
			if i := strings.Index(id, suffix); i > 0 && mine[id[:i]] {
				if os.Remove(filepath.Join(clipsDir, name)) == nil {
					log.Info("removed a temporary file left by an interrupted run", "file", name)
				}
				break
			}
		}
	}
}

// ShardSet is what a merge reads: the plan and, for each shard 1…N of its
// latest split, the shard's record (or the reason it is missing).
type ShardSet struct {
	Plan   ShardPlan
	Shards []shard.Shard
	Infos  []ShardInfo // Infos[k] is Shards[k]'s; zero when Missing[k] != ""
	// Missing[k] says why shard k has no record ("" when it has one).
	Missing []string
	// Others are the shard directories of other splits, ignored.
	Others []string
}

// ReadShardSet reads dir's plan (of kind) and the records of its shards.
// It checks that the records of the shards present name the plan and
// that their items are each in exactly one shard and all in the plan;
// shards without a record are listed in Missing, not errors.
func ReadShardSet(dir, kind string) (ShardSet, error) {
	var set ShardSet
	p, err := ReadShardPlan(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return set, fmt.Errorf("%w: %s has no %s: nothing to merge", ErrNoShards, dir, filepath.Join(ShardsDir, ShardPlanName))
	}
	if err != nil {
		return set, err
	}
	if p.Kind != kind {
		return set, fmt.Errorf("%w: %s holds the shards of a %s, not of a %s", ErrNoShards, dir, p.Kind, kind)
	}
	set.Plan = p
	if ents, err := os.ReadDir(filepath.Join(dir, ShardsDir)); err == nil {
		for _, e := range ents {
			if s, err := shard.ParseDir(e.Name()); err == nil && e.IsDir() && s.Count != p.Shards {
				set.Others = append(set.Others, e.Name())
			}
		}
	}
	inPlan := make(map[string]bool, len(p.Items))
	for _, id := range p.Items {
		inPlan[id] = true
	}
	owner := map[string]string{}
	var problems []string
	for i := 1; i <= p.Shards; i++ {
		s := shard.Shard{Index: i, Count: p.Shards}
		set.Shards = append(set.Shards, s)
		info, err := ReadShardInfo(dir, s)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			set.Infos = append(set.Infos, ShardInfo{})
			set.Missing = append(set.Missing, fmt.Sprintf("shard %s never started (no %s)", s, filepath.Join(ShardsDir, s.Dir(), ShardInfoName)))
			continue
		case err != nil:
			return set, fmt.Errorf("%w: %w", ErrMerge, err)
		case info.Plan != p.ID:
			problems = append(problems, fmt.Sprintf("shard %s belongs to another plan (%.12s…, not %.12s…)", s, info.Plan, p.ID))
		}
		for _, id := range info.Items {
			switch {
			case !inPlan[id]:
				problems = append(problems, fmt.Sprintf("shard %s was given clip %s, which is not in the plan", s, id))
			case owner[id] != "":
				problems = append(problems, fmt.Sprintf("clip %s was given to shards %s and %s", id, owner[id], s))
			default:
				owner[id] = s.String()
			}
		}
		set.Infos = append(set.Infos, info)
		set.Missing = append(set.Missing, "")
	}
	if len(problems) > 0 {
		return set, MergeError(dir, problems)
	}
	return set, nil
}

// ErrMerge is wrapped by every error about what a merge reads: a missing
// shard, an unfinished one, an item present twice, a conflict.
var ErrMerge = errors.New("merge")

// ErrNoShards is the error for a directory that holds no shards of the
// kind asked for — none at all, only another kind's, or no directory:
// bad input to a merge, not a finding about shards. It wraps ErrMerge.
var ErrNoShards = fmt.Errorf("%w: no shards", ErrMerge)

// maxNamed is how many items of one kind a merge error names.
const maxNamed = 5

// MergeError joins the problems a merge found in dir (the first ten, then
// a count) into one error wrapping ErrMerge.
func MergeError(dir string, problems []string) error {
	more := ""
	if len(problems) > 2*maxNamed {
		more = fmt.Sprintf("; and %d more", len(problems)-2*maxNamed)
		problems = problems[:2*maxNamed]
	}
	return fmt.Errorf("%w %s: %s%s", ErrMerge, dir, strings.Join(problems, "; "), more)
}

// NameSome lists up to five ids (sorted), then how many more: for merge
// errors that name what is missing.
func NameSome(ids []string) string {
	ids = slices.Clone(ids)
	sort.Strings(ids)
	if len(ids) <= maxNamed {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:maxNamed], ", ") + fmt.Sprintf(" and %d more", len(ids)-maxNamed)
}
