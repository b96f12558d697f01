package gpu

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// errThreadStopped is returned by Call after stop.
var errThreadStopped = errors.New("gpu: GL thread stopped")

// glThread is one long-lived goroutine locked to its OS thread. An OpenGL
// context is current on one thread only, so every GL (and EGL context) call
// goes through Call. One goroutine for the renderer's lifetime, not one per
// call: a frame costs two channel operations and no allocation.
// (After Ebitengine's internal/thread.)
type glThread struct {
	mu      sync.Mutex // one Call at a time, so each result reaches its caller
	stopped bool
	work    chan func() error
	result  chan error
	done    chan struct{}
}

func startGLThread() *glThread {
	t := &glThread{
		work:   make(chan func() error),
		result: make(chan error),
		done:   make(chan struct{}),
	}
	go t.loop()
	return t
}

func (t *glThread) loop() {
	// Never unlocked: when the loop ends the goroutine exits still locked and
	// the runtime ends the OS thread with it, so no other goroutine inherits a
	// thread that had a GL context.
	runtime.LockOSThread()
	defer close(t.done)
	for f := range t.work {
		t.result <- runRecover(f)
	}
}

// runRecover turns a panic in f into an error, so a bug in GL code fails one
// call instead of leaving Call waiting forever or killing the program.
func runRecover(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("gpu: panic on the GL thread: %v\n%s", p, debug.Stack())
		}
	}()
	return f()
}

// Call runs f on the GL thread and waits for it. It is safe for concurrent
// use; calls run one after another.
func (t *glThread) Call(f func() error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return errThreadStopped
	}
	t.work <- f
	return <-t.result
}

// stop ends the thread after any running call and waits for it to exit. It
// is idempotent.
func (t *glThread) stop() {
	t.mu.Lock()
	if !t.stopped {
		t.stopped = true
		close(t.work)
	}
	t.mu.Unlock()
	<-t.done
}
