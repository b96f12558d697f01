package fsutil

import (
	"fmt"
	"os"
	"syscall"
)

// ErrLocked is matched (errors.Is) by TryLock's error when another holder
// has the lock: flock's EWOULDBLOCK.
var ErrLocked error = syscall.EWOULDBLOCK

// LockError is TryLock's error when the file opened but could not be
// locked: Err is flock's errno (ErrLocked when another holder has it; a
// filesystem without locking gives another).
type LockError struct {
	Path string
	Err  error
}

func (e *LockError) Error() string { return "lock " + e.Path + ": " + e.Err.Error() }
func (e *LockError) Unwrap() error { return e.Err }

// Lock is an exclusive flock(2) on an open file (TryLock). It lives
// exactly as long as its open file: Unlock, process exit, SIGKILL or a
// crash all release it, so a killed holder never leaves it stuck.
type Lock struct {
	f    *os.File
	path string
}

// TryLock opens path (creating it, FileMode under the umask, when missing; it is never
// deleted, since removing a lock file races with a process about to lock
// it) and takes an exclusive, non-blocking flock(2) on it. A second
// TryLock on the same file — from another process, or from this one
// through another open — fails at once. An error opening the file is
// os.OpenFile's *fs.PathError; an error locking it is a *LockError, which
// wraps ErrLocked when another holder has the lock. (flock on NFS is
// emulated with byte-range locks on Linux ≥ 2.6.12; a filesystem without
// locking at all is an error, not a silent pass.)
func TryLock(path string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, FileMode)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, &LockError{Path: path, Err: err}
	}
	return &Lock{f: f, path: path}, nil
}

// Path is the lock file ("" for a nil Lock).
func (l *Lock) Path() string {
	if l == nil {
		return ""
	}
	return l.path
}

// File is the open lock file, for a holder that writes a note into it
// (nil once unlocked). Closing it releases the lock: use Unlock.
func (l *Lock) File() *os.File {
	if l == nil {
		return nil
	}
	return l.f
}

// Unlock releases the lock and closes the file. It is nil-safe and
// idempotent.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	if err != nil {
		return fmt.Errorf("unlock %s: %w", l.path, err)
	}
	return nil
}
