// Package pool is the project's one worker pool: an errgroup with a limit
// (golang.org/x/sync/errgroup) whose tasks each also get a worker value
// that no other running task holds — an image encoder, frame buffers, a
// renderer's per-worker state — reused from task to task. errgroup alone
// has the error and cancellation rules (the first task error cancels the
// pool's context and is what Wait returns; Wait returns only when every
// task has), but not the per-worker state that three of the project's
// four pools need; Limit is the pool without it.
//
// A task reports a result that is not an error (a finished clip, an
// encoded image, an error that belongs to one item rather than to the
// whole run) through the caller's own channel or slot and returns nil:
// only errors that should stop the pool are returned.
package pool

import (
	"context"
	"errors"

	"golang.org/x/sync/errgroup"
)

// Pool runs tasks on a fixed set of workers, at most one task per worker
// at a time. Every call to Go happens before Wait.
type Pool[W any] struct {
	g    *errgroup.Group
	free chan W
}

// errNoWorkers is Wait's error for a pool made without workers.
var errNoWorkers = errors.New("pool: no workers")

// New returns a pool whose tasks run on workers, and its context: it is
// cancelled when a task returns an error, when ctx ends, and when Wait
// returns. Give at least one worker: a pool without any runs no task, and
// its Wait says so.
func New[W any](ctx context.Context, workers []W) (*Pool[W], context.Context) {
	g, ctx := errgroup.WithContext(ctx)
	p := &Pool[W]{g: g, free: make(chan W, len(workers))}
	for _, w := range workers {
		p.free <- w
	}
	g.SetLimit(len(workers))
	return p, ctx
}

// Limit returns a pool of n workers without state (each task gets its
// worker's number, 0 to n−1) and its context, as New; n below 1 is 1.
func Limit(ctx context.Context, n int) (*Pool[int], context.Context) {
	ids := make([]int, max(n, 1))
	for i := range ids {
		ids[i] = i
	}
	return New(ctx, ids)
}

// Go runs task on a free worker in a new goroutine; it blocks until a
// worker is free. The task runs even when the pool's context has ended:
// a task that should not start then checks the context itself.
func (p *Pool[W]) Go(task func(w W) error) {
	if cap(p.free) == 0 {
		return // no workers: Wait reports it
	}
	p.g.Go(func() error {
		w := <-p.free // never waits: the limit admits one task per free worker
		defer func() { p.free <- w }()
		return task(w)
	})
}

// Wait waits for every task and returns the first error a task returned
// (nil if none).
func (p *Pool[W]) Wait() error {
	if cap(p.free) == 0 {
		_ = p.g.Wait() // cancels the context
		return errNoWorkers
	}
	return p.g.Wait()
}
