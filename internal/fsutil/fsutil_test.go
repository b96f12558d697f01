package fsutil

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// withUmask sets the process's umask for one test (tests here do not run
// in parallel: the umask is the process's).
func withUmask(t *testing.T, mask int) {
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

// TestWriteFileAtomicMode: the file gets 0666 under the umask, as
// os.Create and libav's MP4 output give (0644 under the usual 022), not
// os.CreateTemp's owner-only 0600 — also when it replaces a file.
func TestWriteFileAtomicMode(t *testing.T) {
	for _, tc := range []struct {
		umask int
		want  fs.FileMode
	}{{0o022, 0o644}, {0o002, 0o664}, {0o077, 0o600}} {
		withUmask(t, tc.umask)
		path := filepath.Join(t.TempDir(), "m.jsonl")
		for range 2 { // created, then replaced
			if err := WriteFileAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "{}\n"); return err }); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != tc.want {
				t.Errorf("umask %03o: mode %v, %v; want %v", tc.umask, fi.Mode().Perm(), err, tc.want)
			}
		}
		f, err := CreateTemp(filepath.Dir(path), ".x.tmp*")
		if err != nil {
			t.Fatal(err)
		}
		fi, err := f.Stat()
		f.Close()
		if err != nil || fi.Mode().Perm() != tc.want || !strings.HasPrefix(fi.Name(), ".x.tmp") {
			t.Errorf("umask %03o: CreateTemp %s mode %v, %v; want .x.tmp… with %v", tc.umask, fi.Name(), fi.Mode().Perm(), err, tc.want)
		}
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if err := WriteFileAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "first\n"); return err }); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "second\n"); return err }); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "second\n" {
		t.Fatalf("content %q, %v; want the second write", b, err)
	}
	// A write that fails leaves the old file and no temporary file.
	boom := errors.New("boom")
	err = WriteFileAtomic(path, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want the writer's", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "second\n" {
		t.Errorf("after a failed write the file holds %q, want the old content", b)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "out.txt" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only out.txt", names)
	}
	// A directory that does not exist is an error, and nothing is made.
	if err := WriteFileAtomic(filepath.Join(dir, "no", "x"), func(io.Writer) error { return nil }); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing directory: err %v, want fs.ErrNotExist", err)
	}
}

// The temporary file is named ".<base>.tmp…" in the target's directory, the
// name pipeline's removeStaleTemps recognises.
func TestWriteFileAtomicTempName(t *testing.T) {
	dir := t.TempDir()
	var seen string
	err := WriteFileAtomic(filepath.Join(dir, "m.jsonl"), func(io.Writer) error {
		ents, err := os.ReadDir(dir)
		if err != nil || len(ents) != 1 {
			return errors.New("want exactly the temporary file")
		}
		seen = ents[0].Name()
		return nil
	})
	if err != nil || !strings.HasPrefix(seen, ".m.jsonl.tmp") {
		t.Fatalf("temporary file %q, err %v; want .m.jsonl.tmp…", seen, err)
	}
}

func TestFileSHA256(t *testing.T) {
	p := filepath.Join(t.TempDir(), "abc")
	if err := os.WriteFile(p, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	// FIPS 180-2, appendix B.1.
	const want = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got, err := FileSHA256(p); err != nil || got != want {
		t.Errorf("sha256(abc) = %s, %v; want %s", got, err, want)
	}
	if _, err := FileSHA256(p + ".missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err %v, want fs.ErrNotExist", err)
	}
}

func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	l, err := TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	if l.Path() != path || l.File() == nil {
		t.Fatalf("Path %q File %v", l.Path(), l.File())
	}
	// A second open of the same file is refused at once.
	_, err = TryLock(path)
	var le *LockError
	if !errors.Is(err, ErrLocked) || !errors.As(err, &le) || le.Path != path {
		t.Fatalf("second TryLock: err %v, want a *LockError wrapping ErrLocked", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(); err != nil || l.File() != nil {
		t.Errorf("second Unlock: %v, file %v; want nil, nil", err, l.File())
	}
	var nilLock *Lock
	if err := nilLock.Unlock(); err != nil || nilLock.Path() != "" {
		t.Errorf("nil Lock: Unlock %v, Path %q", err, nilLock.Path())
	}
	// Released: it can be taken again, and the file was never removed.
	l2, err := TryLock(path)
	if err != nil {
		t.Fatalf("after Unlock: %v", err)
	}
	defer l2.Unlock()
	// A file that cannot be opened is the open error, not a LockError.
	_, err = TryLock(filepath.Join(path, "sub"))
	var pe *fs.PathError
	if err == nil || errors.As(err, &le) || !errors.As(err, &pe) || pe.Op != "open" {
		t.Errorf("unopenable lock file: err %v, want os.OpenFile's *fs.PathError", err)
	}
}
