package main

import (
	"syscall"
	"testing"
	"time"
)

// A command that does not return after the second signal (a read that
// never ends) is ended with exit 130 stuckGrace later; one that returns in
// time is not; a third signal ends it at once.
func TestSignalsEndAStuckCommand(t *testing.T) {
	oldExit, oldGrace := forceExit, stuckGrace
	defer func() { forceExit, stuckGrace = oldExit, oldGrace }()
	exited := make(chan int, 1)
	forceExit = func(code int) { exited <- code }
	kill := func() {
		if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
	}
	waitDone := func(what string, ctx interface{ Done() <-chan struct{} }) {
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: context did not end", what)
		}
	}

	// Stuck: two signals, then nothing returns.
	stuckGrace = 200 * time.Millisecond
	ctx, stop := signals()
	kill()
	waitDone("first signal", ctx)
	kill()
	waitDone("second signal", hardContext(ctx))
	select {
	case code := <-exited:
		if code != exitInterrupted {
			t.Errorf("exit %d, want %d", code, exitInterrupted)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a stuck command was not ended after the second signal")
	}
	stop()

	// Returns in time: no forced exit.
	stuckGrace = time.Hour
	ctx, stop = signals()
	kill()
	waitDone("first signal", ctx)
	kill()
	waitDone("second signal", hardContext(ctx))
	stop()
	select {
	case code := <-exited:
		t.Errorf("forced exit %d for a command that returned", code)
	case <-time.After(300 * time.Millisecond):
	}

	// A third signal ends it at once, whatever the grace.
	ctx, stop = signals()
	defer stop()
	kill()
	waitDone("first signal", ctx)
	kill()
	waitDone("second signal", hardContext(ctx))
	kill()
	select {
	case code := <-exited:
		if code != exitInterrupted {
			t.Errorf("exit %d, want %d", code, exitInterrupted)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a third signal did not end the command")
	}
}
