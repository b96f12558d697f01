package results

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/tracegrid/tracegrid/internal/fsutil"
)

// ErrBusy is wrapped by LockStudy's error when another process (or another
// LockStudy in this one) holds the study's lock on the database.
var ErrBusy = errors.New("results: study is being evaluated by another process")

// StudyLock is the exclusive right to run one study against one database
// (LockStudy). Release it with Unlock; the kernel releases it when the
// holding process dies, however it dies.
type StudyLock struct {
	l *fsutil.Lock
}

// LockPath is the lock file of a study beside a database file:
// "<db>.<study>.lock", next to the database's -wal and -shm files. The
// database path is resolved through symbolic links first, so every name of
// the same file gives the same lock.
func LockPath(dbPath, study string) (string, error) {
	abs, err := filepath.Abs(dbPath)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs + "." + study + ".lock", nil
}

// LockStudy takes the lock that makes a run the only one evaluating study
// on this database: flock(2), exclusive and non-blocking, on the file
// LockPath names (created when missing, never deleted: removing a lock
// file races with a process about to lock it). A second LockStudy for the
// same study and database — from another process, or from this one
// through another handle — fails at once with ErrBusy, naming the holder's
// pid, host and start time as the holder wrote them into the file. Other
// studies on the same database are not affected. The lock lives exactly as
// long as the holder's open file: Unlock, process exit, SIGKILL or a crash
// all release it, so a killed run never leaves the study stuck. (flock on
// NFS is emulated with byte-range locks on Linux ≥ 2.6.12; a filesystem
// without locking at all is an error, not a silent pass.)
func (db *DB) LockStudy(study string) (*StudyLock, error) {
	if db.readOnly {
		return nil, fmt.Errorf("results: lock study %q in %s: opened read-only", study, db.path)
	}
	if study == "" || strings.ContainsAny(study, `/\`) || study == "." || study == ".." {
		return nil, fmt.Errorf("results: lock study %q in %s: not a study name", study, db.path)
	}
	path, err := LockPath(db.path, study)
	if err != nil {
		return nil, fmt.Errorf("results: lock study %q in %s: %w", study, db.path, err)
	}
	l, err := fsutil.TryLock(path)
	var le *fsutil.LockError
	switch {
	case errors.Is(err, fsutil.ErrLocked):
		return nil, fmt.Errorf("%w: study %q in %s is held by %s (lock file %s); wait for that run to end, or evaluate into another database or under another study name",
			ErrBusy, study, db.path, readHolder(path), path)
	case errors.As(err, &le):
		return nil, fmt.Errorf("results: lock study %q with %s: %w (the filesystem must support flock)", study, path, le.Err)
	case err != nil:
		return nil, fmt.Errorf("results: lock study %q: %w", study, err)
	}
	host, _ := os.Hostname()
	info := fmt.Sprintf("pid %d on %s since %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	if f := l.File(); f.Truncate(0) == nil {
		_, _ = f.WriteAt([]byte(info), 0) // informative only: the flock is the lock
	}
	return &StudyLock{l: l}, nil
}

// Path is the lock file.
func (l *StudyLock) Path() string {
	if l == nil {
		return ""
	}
	return l.l.Path()
}

// Unlock releases the lock. It is nil-safe and idempotent.
func (l *StudyLock) Unlock() error {
	if l == nil || l.l.File() == nil {
		return nil
	}
	_ = l.l.File().Truncate(0)
	if err := l.l.Unlock(); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

// readHolder is the holder's note from the lock file (printable text, at
// most 200 bytes), or a generic name when it has none yet (or the file
// cannot be read).
func readHolder(path string) string {
	var b []byte
	if f, err := os.Open(path); err == nil {
		b, _ = io.ReadAll(io.LimitReader(f, 200))
		f.Close()
	}
	s := strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, string(b)))
	if s == "" {
		return "another process"
	}
	return s
}

// Outcome is a stored trial's result without its payload: what a run
// needs to resume, keep to its spending cap and report its exit status.
type Outcome struct {
	ErrorKind string
	Failed    bool // the trial's Error is set
	CostUSD   float64
	Attempts  int
}

// Done reports whether a rerun skips the trial (Trial.Done's rule).
func (o Outcome) Done() bool { return isDone(o.ErrorKind, o.Failed) }

// Answered reports whether the trial needs nothing more: a reply to score
// (no error, or a reply that failed to parse, KindParse), or a condition
// that does not apply to the clip (KindNotApplicable: nothing to ask).
func (o Outcome) Answered() bool {
	return !o.Failed || o.ErrorKind == KindParse || o.ErrorKind == KindNotApplicable
}

// Outcomes returns the outcome of every stored trial of study ("" means
// every study), by key.
func (db *DB) Outcomes(ctx context.Context, study string) (map[Key]Outcome, error) {
	sdb, err := db.handle()
	if err != nil {
		return nil, err
	}
	q := "SELECT " + keyColumns + ", error, error_kind, cost_usd, attempts FROM trials"
	var args []any
	if study != "" {
		q += " WHERE study = ?"
		args = append(args, study)
	}
	rows, err := sdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("results: outcomes from %s: %w", db.path, err)
	}
	defer rows.Close()
	out := map[Key]Outcome{}
	for rows.Next() {
		var k Key
		var o Outcome
		var msg string
		if err := rows.Scan(append(k.dest(), &msg, &o.ErrorKind, &o.CostUSD, &o.Attempts)...); err != nil {
			return nil, fmt.Errorf("results: outcomes from %s: %w", db.path, err)
		}
		o.Failed = msg != ""
		out[k] = o
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("results: outcomes from %s: %w", db.path, err)
	}
	return out, nil
}
