package gpu

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func TestGLThreadOneOSThread(t *testing.T) {
	th := startGLThread()
	defer th.stop()
	var first int
	if err := th.Call(func() error { first = syscall.Gettid(); return nil }); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := fmt.Errorf("call %d", i)
			err := th.Call(func() error {
				if tid := syscall.Gettid(); tid != first {
					return fmt.Errorf("ran on thread %d, want %d", tid, first)
				}
				return want
			})
			if err != want { // each caller gets its own result back
				t.Errorf("call %d returned %v", i, err)
			}
		}()
	}
	wg.Wait()
}

func TestGLThreadPanic(t *testing.T) {
	th := startGLThread()
	defer th.stop()
	err := th.Call(func() error { panic("boom") })
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("panic came back as %v", err)
	}
	if err := th.Call(func() error { return nil }); err != nil {
		t.Fatalf("thread unusable after a panic: %v", err)
	}
}

func TestGLThreadStop(t *testing.T) {
	th := startGLThread()
	th.stop()
	th.stop() // idempotent
	if err := th.Call(func() error { return nil }); !errors.Is(err, errThreadStopped) {
		t.Fatalf("Call after stop = %v, want errThreadStopped", err)
	}
}
