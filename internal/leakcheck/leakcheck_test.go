package leakcheck

import (
	"testing"
	"time"
)

// fakeT records what Check reports, so that a leak can be asserted.
type fakeT struct {
	testing.TB
	cleanups []func()
	errors   int
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Cleanup(fn func())     { f.cleanups = append(f.cleanups, fn) }
func (f *fakeT) Errorf(string, ...any) { f.errors++ }
func (f *fakeT) end() {
	for _, fn := range f.cleanups {
		fn()
	}
}

func TestNoLeak(t *testing.T) {
	ft := &fakeT{}
	Check(ft)
	done := make(chan struct{})
	go func() { close(done) }()
	<-done
	ft.end()
	if ft.errors != 0 {
		t.Errorf("a goroutine that exited was reported as leaked")
	}
}

func TestLeak(t *testing.T) {
	defer func(w time.Duration) { maxWait = w }(maxWait)
	maxWait = 50 * time.Millisecond
	ft := &fakeT{}
	Check(ft)
	stop := make(chan struct{})
	go func() { <-stop }()
	ft.end()
	close(stop)
	if ft.errors != 1 {
		t.Errorf("a goroutine still running at the end was reported %d times, want once", ft.errors)
	}
}
