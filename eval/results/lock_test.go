package results_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tracegrid/tracegrid/eval/results"
)

// lockHolderEnv makes the test binary a process that takes study "s"'s
// lock on the database it names, says "locked", and waits to be killed.
const lockHolderEnv = "TRACEGRID_RESULTS_TEST_LOCK_HOLDER"

func holdLock(path string) int {
	db, err := results.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	l, err := db.LockStudy("s")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("locked")
	// Hold it until killed: sleep (a bare select{} is a deadlock the
	// runtime ends when no other goroutine exists, releasing the lock),
	// and keep the lock reachable so no finalizer closes its file.
	for {
		time.Sleep(time.Hour)
		runtime.KeepAlive(l)
	}
}

func TestLockStudy(t *testing.T) {
	db, path := open(t)
	other, err := results.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	l, err := db.LockStudy("s")
	if err != nil {
		t.Fatal(err)
	}
	if want := path + ".s.lock"; l.Path() != want {
		t.Errorf("lock file %s, want %s", l.Path(), want)
	}
	// The same study through another handle, or another name of the file,
	// is refused at once, naming the holder; another study is not.
	link := filepath.Join(t.TempDir(), "link.db")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	viaLink, err := results.Open(link)
	if err != nil {
		t.Fatal(err)
	}
	defer viaLink.Close()
	for name, h := range map[string]*results.DB{"same handle": db, "other handle": other, "symlink": viaLink} {
		_, err := h.LockStudy("s")
		if !errors.Is(err, results.ErrBusy) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
			t.Errorf("%s: %v", name, err)
		}
	}
	l2, err := other.LockStudy("t")
	if err != nil {
		t.Errorf("another study: %v", err)
	}
	l2.Unlock()
	// Released, it can be taken again; Unlock is idempotent and nil-safe.
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	var none *results.StudyLock
	none.Unlock()
	l3, err := other.LockStudy("s")
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	l3.Unlock()
	ro, err := results.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.LockStudy("s"); err == nil {
		t.Error("read-only handle locked a study")
	}
	for _, bad := range []string{"", "a/b", ".."} {
		if _, err := db.LockStudy(bad); err == nil {
			t.Errorf("study %q locked", bad)
		}
	}
}

// TestLockOfAKilledHolder: a process holding the study's lock is killed
// with SIGKILL; its lock is gone with it (the lock file stays, naming the
// dead holder, and blocks nothing).
func TestLockOfAKilledHolder(t *testing.T) {
	db, path := open(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), lockHolderEnv+"="+path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if sc := bufio.NewScanner(stdout); !sc.Scan() || sc.Text() != "locked" {
		t.Fatalf("holder did not lock: %s", stderr.String())
	}
	_, err = db.LockStudy("s")
	if !errors.Is(err, results.ErrBusy) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(cmd.Process.Pid)) {
		t.Fatalf("while held: %v", err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	b, _ := os.ReadFile(path + ".s.lock")
	if !strings.Contains(string(b), "pid "+strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("lock file after the kill: %q", b)
	}
	l, err := db.LockStudy("s")
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	l.Unlock()
}

// TestOutcomes: the outcome of every stored trial, without its payload.
func TestOutcomes(t *testing.T) {
	db, _ := open(t)
	ctx := context.Background()
	ok, failed, refused := sample(0), sample(1), sample(2)
	failed.Error, failed.ErrorKind, failed.CostUSD = "HTTP 500", results.KindServer, 0
	refused.Error, refused.ErrorKind = "too many images", results.KindInvalidRequest
	other := sample(3)
	other.Study = "other"
	for _, tr := range []results.Trial{ok, failed, refused, other} {
		if err := db.Put(ctx, tr); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.Outcomes(ctx, ok.Study)
	if err != nil || len(got) != 3 {
		t.Fatalf("%v %v", got, err)
	}
	for _, c := range []struct {
		tr             results.Trial
		done, answered bool
	}{{ok, true, true}, {failed, false, false}, {refused, true, false}} {
		o := got[c.tr.Key]
		if o.Done() != c.done || o.Answered() != c.answered || o.CostUSD != c.tr.CostUSD || o.Attempts != c.tr.Attempts || o.ErrorKind != c.tr.ErrorKind {
			t.Errorf("%v: %+v (done %v answered %v)", c.tr.Key, o, o.Done(), o.Answered())
		}
	}
}
