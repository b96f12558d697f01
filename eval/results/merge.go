package results

// Merging the databases of eval shards (docs/cluster.md). This file uses
// only the package's exported API (Open, OpenReadOnly, Studies, Trials,
// Put, LockStudy, LockPath, Snapshots, PutSnapshot), so it does not depend
// on the store's internals.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tracegrid/tracegrid/eval/parse"
	"github.com/tracegrid/tracegrid/internal/fsutil"
	"github.com/tracegrid/tracegrid/internal/shard"
)

// ErrMerge is wrapped by Merge's errors about its inputs: a missing shard
// database, an input given twice or also as the output, a trial in two
// inputs, a conflict.
var ErrMerge = errors.New("results: merge")

// ShardDB is the default database of eval shard s: path with ".I-of-N"
// before its extension (results.db → results.2-of-3.db; a name without
// an extension gets it at the end). The whole plan (1/1) keeps path.
func ShardDB(path string, s shard.Shard) string {
	if s.IsWhole() {
		return path
	}
	dir, base := filepath.Split(path)
	ext := filepath.Ext(base)
	if ext == base { // ".db": a name that is only an extension
		ext = ""
	}
	return dir + strings.TrimSuffix(base, ext) + "." + s.Dir() + ext
}

// OtherShardings lists, beside shardDB (a shard database, named as ShardDB
// names them), the shard databases of the same database that belong to a
// split into another number of shards. Their trials are invisible to
// shardDB, so evaluating its shard would send those trials again: the
// caller refuses. A path that is not a shard database has none.
func OtherShardings(shardDB string) ([]string, error) {
	s, name, ok := shardName(shardDB)
	if !ok {
		return nil, nil
	}
	dir, base := filepath.Split(shardDB)
	parts := strings.Split(base, ".")
	for i := range parts {
		if parts[i] == s.Dir() {
			parts[i] = "*-of-*"
		} else {
			parts[i] = globEscape(parts[i])
		}
	}
	matches, err := filepath.Glob(globEscape(dir) + strings.Join(parts, "."))
	if err != nil {
		return nil, err
	}
	var other []string
	for _, m := range matches {
		if ms, mname, ok := shardName(m); ok && mname == name && ms.Count != s.Count {
			other = append(other, m)
		}
	}
	sort.Strings(other)
	return other, nil
}

// BaseDB is the database whose shard database shardDB is, ShardDB's
// inverse (results.2-of-3.db → results.db); ok is false for a path not
// named as a shard database.
func BaseDB(shardDB string) (base string, ok bool) {
	dir, name := filepath.Split(shardDB)
	parts, i, _, ok := shardPart(name)
	if !ok {
		return "", false
	}
	rest := append(parts[:i:i], parts[i+1:]...)
	if strings.Join(rest, "") == "" {
		return "", false
	}
	return dir + strings.Join(rest, "."), true
}

// SeedShard copies into the shard database dst what the database base
// (normally the merge of earlier shards, BaseDB) holds for study on the
// given clips: every trial whose key dst lacks, and every finished trial
// where dst's is unfinished. A shard run then skips the trials base
// already answered, as a run on base would, instead of paying for them
// again, and counts their recorded cost against its cap; merging dst back
// into base finds them unchanged. A missing base, or base and dst naming
// the same file, copies nothing. dst is created when needed and its
// study lock held while copying (ErrBusy: a run of the study holds it).
// It returns how many trials it copied.
func SeedShard(ctx context.Context, base, dst, study string, clips []string) (int, error) {
	bi, err := os.Stat(base)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("results: seed %s from %s: %w", dst, base, err)
	}
	if di, err := os.Stat(dst); err == nil && os.SameFile(bi, di) {
		return 0, nil
	}
	want := make(map[string]bool, len(clips))
	for _, c := range clips {
		want[c] = true
	}
	bdb, err := OpenReadOnly(base)
	if err != nil {
		return 0, fmt.Errorf("results: seed %s from %s: %w", dst, base, err)
	}
	defer bdb.Close()
	all, err := bdb.Trials(ctx, Filter{Study: study})
	if err != nil {
		return 0, err
	}
	var ts []Trial
	for _, t := range all {
		if want[t.Clip] {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return 0, nil
	}
	ddb, err := Open(dst)
	if err != nil {
		return 0, err
	}
	defer ddb.Close()
	lock, err := ddb.LockStudy(study)
	if err != nil {
		return 0, err
	}
	defer lock.Unlock()
	have, err := ddb.Trials(ctx, Filter{Study: study})
	if err != nil {
		return 0, err
	}
	done := make(map[Key]bool, len(have))
	for _, t := range have {
		done[t.Key] = t.Done()
	}
	n := 0
	for _, t := range ts {
		if d, ok := done[t.Key]; ok && (d || !t.Done()) {
			continue
		}
		if err := ddb.Put(ctx, t); err != nil {
			return n, fmt.Errorf("results: seed %s from %s: %w", dst, base, err)
		}
		n++
	}
	return n, ddb.Close()
}

// globEscape quotes the characters filepath.Glob gives a meaning.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// shardName reads the shard from a file name made by ShardDB (the last
// dot-separated part that is I-of-N) and returns the name with that part
// as "*", so that shards of one database share it.
func shardName(path string) (shard.Shard, string, bool) {
	dir, base := filepath.Split(path)
	parts, i, s, ok := shardPart(base)
	if !ok {
		return shard.Shard{}, "", false
	}
	parts[i] = "*"
	return s, dir + strings.Join(parts, "."), true
}

// shardPart splits a file name at its dots and finds the last part that
// names a shard as ShardDB writes it ("2-of-3"): parts[i] is s.
func shardPart(name string) (parts []string, i int, s shard.Shard, ok bool) {
	parts = strings.Split(name, ".")
	for i := len(parts) - 1; i >= 0; i-- {
		if s, err := shard.ParseDir(parts[i]); err == nil {
			return parts, i, s, true
		}
	}
	return parts, -1, shard.Shard{}, false
}

// MergeSummary says what Merge did.
type MergeSummary struct {
	Inputs int
	Trials int // trials in the inputs
	Added  int // new in the output
	// Replaced: the output had the trial without an answer (a failure a
	// rerun retries) and the input's replaced it.
	Replaced int
	// Unchanged: the output already had the trial with the same answer.
	Unchanged int
	// Snapshots of studies copied (those the output did not have).
	Snapshots int
	// Shards is N when the inputs are the shard databases 1…N of one
	// database (names made by ShardDB), 0 otherwise.
	Shards int
}

// answer is what must agree between two copies of one trial: the clip's
// truth and the answer (replies, parsed count, events, flags, error).
// Timing, cost, attempts and the provider's bookkeeping may differ
// between two runs of the same request and are not compared.
type answer struct {
	Domain      string          `json:"domain"`
	N           int             `json:"n"`
	F           float64         `json:"f"`
	Seed        int             `json:"seed"`
	Trace       json.RawMessage `json:"trace"`
	Responses   []string        `json:"responses"`
	Count       *int            `json:"count"`
	CountSource string          `json:"count_source"`
	Events      []parse.Event   `json:"events"`
	ParseFlags  []string        `json:"parse_flags"`
	Error       string          `json:"error"`
	ErrorKind   string          `json:"error_kind"`
}

func fingerprint(t Trial) (string, error) {
	b, err := json.Marshal(answer{t.Domain, t.N, t.F, t.Seed, t.Trace, t.Responses, t.Count, t.CountSource, t.Events, t.ParseFlags, t.Error, t.ErrorKind})
	if err != nil {
		return "", fmt.Errorf("%s: %w", t.Key, err)
	}
	s := sha256.Sum256(b)
	return string(s[:]), nil
}

// Merge copies every trial of the input databases into out (created when
// missing) with Put, and the study snapshots out does not have yet. It is
// idempotent: a trial out already has with the same answer is left as it
// is, so a second merge changes nothing. It refuses, with an error
// wrapping ErrMerge that names them and before writing anything:
//
//   - out given as an input, or an input given twice (the same file under
//     any name);
//   - when every input is named as a shard of one database (ShardDB's
//     names, e.g. results.2-of-3.sqlite): a missing shard, or shards of
//     different N;
//   - a trial in two inputs (a duplicate when the answers agree, a
//     conflict when they differ): shards split the clips, so no trial
//     belongs to two of them;
//   - a trial out already has, answered, with a different answer (a
//     conflict); one out has without an answer (a retryable failure) is
//     replaced by the input's.
//
// An input that a run is still evaluating (its study lock is held) is
// refused, and so is out while a run evaluates into it: Merge holds the
// inputs' study locks and out's for its whole run. Inputs are opened
// read-only. The batch bookkeeping of a database (batch_requests) is not
// copied: a merged database is for reports and export; resume each shard
// from its own database.
func Merge(ctx context.Context, out string, inputs []string) (MergeSummary, error) {
	sum := MergeSummary{Inputs: len(inputs)}
	if len(inputs) == 0 {
		return sum, fmt.Errorf("%w: no input databases", ErrMerge)
	}
	if err := checkInputs(out, inputs, &sum); err != nil {
		return sum, err
	}
	var locks []*fsutil.Lock
	defer func() {
		for _, l := range locks {
			_ = l.Unlock()
		}
	}()
	ins := make([]*DB, len(inputs))
	defer func() {
		for _, db := range ins {
			if db != nil {
				db.Close()
			}
		}
	}()
	studySet := map[string]bool{}
	for i, path := range inputs {
		db, err := OpenReadOnly(path)
		if err != nil {
			return sum, fmt.Errorf("%w: input %s: %w", ErrMerge, path, err)
		}
		ins[i] = db
		studies, err := db.Studies(ctx)
		if err != nil {
			return sum, err
		}
		for _, s := range studies {
			studySet[s] = true
			lp, err := LockPath(path, s)
			if err != nil {
				return sum, fmt.Errorf("results: merge: %w", err)
			}
			l, err := fsutil.TryLock(lp)
			switch {
			case errors.Is(err, fsutil.ErrLocked):
				return sum, fmt.Errorf("%w: input %s is being evaluated (study %q: a run holds %s): wait for that run to end", ErrMerge, path, s, lp)
			case err == nil:
				locks = append(locks, l)
			}
			// An input whose directory does not let us create the lock
			// file cannot be written by a run there either.
		}
	}
	studies := make([]string, 0, len(studySet))
	for s := range studySet {
		studies = append(studies, s)
	}
	sort.Strings(studies)

	// The output: opened (and locked) now when it exists, so that its
	// trials are checked too; created only once everything checks out.
	var odb *DB
	var outLocks []*StudyLock
	openOut := func() error {
		var err error
		if odb, err = Open(out); err != nil {
			return fmt.Errorf("results: merge into %s: %w", out, err)
		}
		for _, s := range studies {
			l, err := odb.LockStudy(s)
			if err != nil {
				return fmt.Errorf("results: merge into %s: %w", out, err)
			}
			outLocks = append(outLocks, l)
		}
		return nil
	}
	defer func() {
		for _, l := range outLocks {
			_ = l.Unlock()
		}
		if odb != nil {
			odb.Close()
		}
	}()
	if _, err := os.Stat(out); err == nil {
		if err := openOut(); err != nil {
			return sum, err
		}
	}

	// Check everything, then write.
	type action int
	const (
		skip action = iota
		add
		replace
	)
	type src struct {
		input int
		fp    string
	}
	plan := map[Key]action{}
	var problems []string
	for _, s := range studies {
		have := map[Key]struct {
			fp   string
			done bool
		}{}
		var ts []Trial
		if odb != nil {
			var err error
			if ts, err = odb.Trials(ctx, Filter{Study: s}); err != nil {
				return sum, err
			}
		}
		for _, t := range ts {
			fp, err := fingerprint(t)
			if err != nil {
				return sum, err
			}
			have[t.Key] = struct {
				fp   string
				done bool
			}{fp, t.Done()}
		}
		from := map[Key]src{}
		for i, db := range ins {
			ts, err := db.Trials(ctx, Filter{Study: s})
			if err != nil {
				return sum, err
			}
			for _, t := range ts {
				fp, err := fingerprint(t)
				if err != nil {
					return sum, err
				}
				sum.Trials++
				if prev, ok := from[t.Key]; ok {
					kind := "duplicate: the same answer"
					if prev.fp != fp {
						kind = "conflict: different answers"
					}
					problems = append(problems, fmt.Sprintf("trial %s is in %s and %s (%s)", t.Key, inputs[prev.input], inputs[i], kind))
					continue
				}
				from[t.Key] = src{i, fp}
				o, ok := have[t.Key]
				switch {
				case !ok:
					plan[t.Key] = add
				case o.fp == fp:
					plan[t.Key] = skip
				case !o.done:
					plan[t.Key] = replace
				default:
					problems = append(problems, fmt.Sprintf("trial %s: %s has a different answer than %s (conflict)", t.Key, out, inputs[i]))
				}
			}
		}
	}
	if len(problems) > 0 {
		return sum, mergeProblems(out, problems)
	}
	if odb == nil {
		if err := openOut(); err != nil {
			return sum, err
		}
	}
	for i, db := range ins {
		for _, s := range studies {
			ts, err := db.Trials(ctx, Filter{Study: s})
			if err != nil {
				return sum, err
			}
			for _, t := range ts {
				switch plan[t.Key] {
				case skip:
					sum.Unchanged++
					continue
				case add:
					sum.Added++
				case replace:
					sum.Replaced++
				}
				if err := odb.Put(ctx, t); err != nil {
					return sum, fmt.Errorf("results: merge %s into %s: %w", inputs[i], out, err)
				}
			}
		}
	}
	// Snapshots: each one out does not have yet, byte for byte.
	for _, s := range studies {
		snaps, err := odb.Snapshots(ctx, s)
		if err != nil {
			return sum, err
		}
		var known [][]byte
		for _, sn := range snaps {
			known = append(known, sn.JSON)
		}
		for _, db := range ins {
			snaps, err := db.Snapshots(ctx, s)
			if err != nil {
				return sum, err
			}
			for _, sn := range snaps {
				if containsBytes(known, sn.JSON) {
					continue
				}
				if _, err := odb.PutSnapshot(ctx, s, sn.JSON); err != nil {
					return sum, fmt.Errorf("results: merge into %s: %w", out, err)
				}
				known = append(known, sn.JSON)
				sum.Snapshots++
			}
		}
	}
	return sum, nil
}

func containsBytes(list [][]byte, b []byte) bool {
	for _, x := range list {
		if bytes.Equal(x, b) {
			return true
		}
	}
	return false
}

// checkInputs refuses out among the inputs, an input twice, a missing
// input, and an incomplete or mixed set of shard databases.
func checkInputs(out string, inputs []string, sum *MergeSummary) error {
	outInfo, outErr := os.Stat(out)
	infos := make([]os.FileInfo, len(inputs))
	for i, in := range inputs {
		fi, err := os.Stat(in)
		if err != nil {
			return fmt.Errorf("%w: input %s: %w", ErrMerge, in, err)
		}
		if fi.IsDir() {
			return fmt.Errorf("%w: input %s is a directory", ErrMerge, in)
		}
		if outErr == nil && os.SameFile(fi, outInfo) {
			return fmt.Errorf("%w: the output %s is also an input (%s): merge into a new file, e.g. %s",
				ErrMerge, out, in, filepath.Join(filepath.Dir(out), "merged.sqlite"))
		}
		for j := range i {
			if os.SameFile(fi, infos[j]) {
				return fmt.Errorf("%w: input %s is given twice (also as %s)", ErrMerge, in, inputs[j])
			}
		}
		infos[i] = fi
	}
	if outErr != nil && !errors.Is(outErr, fs.ErrNotExist) {
		return fmt.Errorf("%w: output %s: %w", ErrMerge, out, outErr)
	}
	// Shard databases of one database: all of them, of one N.
	var stem string
	counts := map[int]bool{}
	have := map[int]bool{}
	for i, in := range inputs {
		s, st, ok := shardName(in)
		if !ok || (i > 0 && st != stem) {
			return nil // not one sharded database: nothing to check
		}
		stem = st
		counts[s.Count] = true
		have[s.Index] = true
	}
	if len(counts) > 1 {
		var ns []string
		for n := range counts {
			ns = append(ns, fmt.Sprint(n))
		}
		sort.Strings(ns)
		return fmt.Errorf("%w: the inputs are shards of different splits (N = %s): merge the shards of one N (the shards of another split hold the same trials)", ErrMerge, strings.Join(ns, ", "))
	}
	var n int
	for c := range counts {
		n = c
	}
	var missing []string
	for i := 1; i <= n; i++ {
		if !have[i] {
			missing = append(missing, strings.Replace(filepath.Base(stem), "*", shard.Shard{Index: i, Count: n}.Dir(), 1))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: missing shard databases of %s: %s (a shard that has not run, or a file not given)", ErrMerge, stem, strings.Join(missing, ", "))
	}
	sum.Shards = n
	return nil
}

// mergeProblems names the first ten problems and counts the rest.
func mergeProblems(out string, problems []string) error {
	more := ""
	if len(problems) > 10 {
		more = fmt.Sprintf("; and %d more", len(problems)-10)
		problems = problems[:10]
	}
	return fmt.Errorf("%w into %s: %s%s; nothing was written", ErrMerge, out, strings.Join(problems, "; "), more)
}
