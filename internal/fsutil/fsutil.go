// Package fsutil holds the file helpers every writer of tracegrid shares:
// WriteFileAtomic (a reader sees the old file or the whole new one, never
// a part), TryLock (an exclusive flock(2) that the kernel releases when its
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
	"os"
	"path/filepath"
	"syscall"
)

// WriteFileAtomic writes path through a temporary file in the same
// directory, named "." + base + ".tmp" + a random suffix (so a run that
// owns the directory can recognise and remove one a kill left behind):
// write fills it through a buffer, and the file is flushed, fsynced,
// closed and renamed over path, then the directory is fsynced so the
// rename itself survives a crash. Readers see the old file or the complete
// new one, never a part. On any error the temporary file is removed and
// path is untouched (up to the rename; a failed directory sync is reported
// with the new file already in place). The new file has mode 0600, the
// temporary file's: a caller that shares it chmods it.
func WriteFileAtomic(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
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
