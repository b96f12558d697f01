// Package leakcheck fails a test that leaves goroutines running
// (STYLE.md 9; the idea of pion's test.CheckRoutines): Check notes the
// goroutines alive when a test starts, and when the test ends waits for
// every goroutine started since to exit, failing the test with their
// stacks if some are still there after 10 s. For tests that do not
// run in parallel with others (t.Parallel), whose goroutines it would
// count too.
package leakcheck

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// maxWait bounds the wait for goroutines to exit once the test has ended:
// a pool that stops as it should ends its goroutines in microseconds, one
// that leaks never does. A variable for this package's tests.
var maxWait = 10 * time.Second

// Check registers the check with t.Cleanup; call it first in the test.
func Check(t testing.TB) {
	t.Helper()
	before := map[int]bool{}
	for _, g := range goroutines() {
		before[g.id] = true
	}
	t.Cleanup(func() {
		t.Helper()
		deadline := time.Now().Add(maxWait)
		for {
			left := started(before)
			if len(left) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("leakcheck: %d goroutines started by the test still run %v after it ended:\n\n%s", len(left), maxWait, strings.Join(left, "\n\n"))
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

// started returns the stacks of the goroutines not in before, but those
// the standard library starts once and keeps (os/signal's loop).
func started(before map[int]bool) []string {
	var out []string
	for _, g := range goroutines() {
		if !before[g.id] && !strings.Contains(g.stack, "os/signal.loop") {
			out = append(out, g.stack)
		}
	}
	return out
}

type goroutine struct {
	id    int
	stack string
}

// goroutines lists every goroutine but the caller's, with its stack, from
// runtime.Stack (whose records start "goroutine N [state]:").
func goroutines() []goroutine {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	recs := bytes.Split(buf, []byte("\n\n"))
	var out []goroutine
	for _, r := range recs[1:] { // the first is the caller's
		head, _, _ := strings.Cut(string(r), " [")
		id, err := strconv.Atoi(strings.TrimPrefix(head, "goroutine "))
		if err != nil {
			continue
		}
		out = append(out, goroutine{id: id, stack: string(r)})
	}
	return out
}
