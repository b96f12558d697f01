// Package fsutil holds the file helpers every writer of tracegrid shares:
// WriteFileAtomic (a reader sees the old file or the whole new one, never
// a part), CreateTemp (a temporary file with the mode os.Create gives), TryLock (an exclusive flock(2) that the kernel releases when its
// holder dies, however it dies) and FileSHA256. It imports only the
// standard library, so packages that write files link neither GL nor libav
// through it.
package fsutil

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// FileMode is the mode every file tracegrid writes is created with, before
// the umask: what os.Create, os.WriteFile(…, 0o666) and libav's file
// output use. With the usual umask 022 a file is 0644 (022: readable by
// all; 002: group-writable too; 077: owner-only): on a shared cluster file
// system colleagues' jobs, and containers with other user ids, can read
// what a run wrote unless the user's umask says otherwise. Directories
// are made with DirMode (0755 under umask 022).
const (
	FileMode fs.FileMode = 0o666
	DirMode  fs.FileMode = 0o777
)

// CreateTemp is os.CreateTemp (a new file in dir named pattern with "*",
// or the end, replaced by a random string; opened read-write, O_EXCL) but
// created with FileMode, so the kernel applies the umask: os.CreateTemp
// makes every file 0600, and a file renamed into place from it stays
// owner-only. Every writer that renames a temporary file over its target
// goes through here, so all of tracegrid's files get the same mode.
func CreateTemp(dir, pattern string) (*os.File, error) {
	if strings.ContainsRune(pattern, os.PathSeparator) {
		return nil, &fs.PathError{Op: "createtemp", Path: pattern, Err: errors.New("pattern contains path separator")}
	}
	prefix, suffix := pattern, ""
	if i := strings.LastIndexByte(pattern, '*'); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, FileMode)
		if errors.Is(err, fs.ErrExist) && try < 10000 {
			continue
		}
		return f, err
	}
}

// WriteFileAtomic writes path through a temporary file in the same
// directory, named "." + base + ".tmp" + a random suffix (so a run that
// owns the directory can recognise and remove one a kill left behind):
// write fills it through a buffer, and the file is flushed, fsynced,
// closed and renamed over path, then the directory is fsynced so the
// rename itself survives a crash. Readers see the old file or the complete
// new one, never a part. On any error the temporary file is removed and
// path is untouched (up to the rename; a failed directory sync is reported
// with the new file already in place). The new file has FileMode under
// the umask (0644 under umask 022), like any file tracegrid writes (an
// existing file's mode is not kept: the new file replaces it).
func WriteFileAtomic(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriter(tmp)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir fsyncs a directory, making a rename in it durable. A filesystem
// that cannot sync directories (EINVAL) has nothing more to offer and is
// not an error.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// FileSHA256 returns the SHA-256 of a file's content, in lower-case hex.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
