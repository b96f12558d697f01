package pool

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tracegrid/tracegrid/internal/leakcheck"
)

// TestWorkersNeverShared: 200 tasks on 3 workers; no worker ever runs two
// tasks at once, never more than 3 run, and every task runs once.
func TestWorkersNeverShared(t *testing.T) {
	leakcheck.Check(t)
	type worker struct{ busy atomic.Int32 }
	ws := []*worker{{}, {}, {}}
	p, _ := New(context.Background(), ws)
	var running, most, ran atomic.Int32
	var shared atomic.Bool
	for range 200 {
		p.Go(func(w *worker) error {
			if w.busy.Add(1) != 1 {
				shared.Store(true)
			}
			n := running.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			ran.Add(1)
			running.Add(-1)
			w.busy.Add(-1)
			return nil
		})
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if shared.Load() {
		t.Error("two tasks ran on one worker at once")
	}
	if m := most.Load(); m > 3 {
		t.Errorf("%d tasks ran at once on 3 workers", m)
	}
	if n := ran.Load(); n != 200 {
		t.Errorf("%d of 200 tasks ran", n)
	}
}

// TestAllWorkersRun: n tasks that each wait for the others all get to
// run at once (the pool starts as many as it has workers).
func TestAllWorkersRun(t *testing.T) {
	leakcheck.Check(t)
	const n = 4
	p, _ := Limit(context.Background(), n)
	var wg sync.WaitGroup
	wg.Add(n)
	all := make(chan struct{})
	go func() { wg.Wait(); close(all) }()
	seen := make([]atomic.Int32, n)
	for range n {
		p.Go(func(id int) error {
			seen[id].Add(1)
			wg.Done()
			select {
			case <-all:
				return nil
			case <-time.After(10 * time.Second): // a bound, not a measurement
				return errors.New("the other tasks never started")
			}
		})
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	for id := range seen {
		if got := seen[id].Load(); got != 1 {
			t.Errorf("worker %d ran %d tasks, want 1", id, got)
		}
	}
}

// TestFirstErrorWins: the first task error cancels the context the other
// tasks see and is what Wait returns; their own later errors are not.
func TestFirstErrorWins(t *testing.T) {
	leakcheck.Check(t)
	first := errors.New("first")
	p, ctx := Limit(context.Background(), 3)
	started := make(chan struct{}, 2)
	for range 2 {
		p.Go(func(int) error {
			started <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		})
	}
	<-started
	<-started
	p.Go(func(int) error { return first })
	if err := p.Wait(); err != first {
		t.Errorf("Wait = %v, want the first error", err)
	}
	if !errors.Is(context.Cause(ctx), first) {
		t.Errorf("context cause %v, want the first error", context.Cause(ctx))
	}
}

// TestContext: the pool's context ends with its parent, and when Wait
// returns.
func TestContext(t *testing.T) {
	leakcheck.Check(t)
	parent, cancel := context.WithCancel(context.Background())
	p, ctx := Limit(parent, 1)
	p.Go(func(int) error { <-ctx.Done(); return nil })
	cancel()
	if err := p.Wait(); err != nil {
		t.Errorf("Wait = %v, want nil (the task returned nil)", err)
	}
	p2, ctx2 := Limit(context.Background(), 2)
	p2.Go(func(int) error { return nil })
	if err := p2.Wait(); err != nil || ctx2.Err() == nil {
		t.Errorf("after Wait: err %v, context err %v; want nil and cancelled", err, ctx2.Err())
	}
}

// TestLimitAtLeastOne and TestNoWorkers: Limit(0) still runs tasks; New
// without workers runs none and Wait says so.
func TestLimitAtLeastOne(t *testing.T) {
	p, _ := Limit(context.Background(), 0)
	ran := false
	p.Go(func(id int) error { ran = id == 0; return nil })
	if err := p.Wait(); err != nil || !ran {
		t.Errorf("Limit(0): ran %v, err %v; want the task run on worker 0", ran, err)
	}
}

func TestNoWorkers(t *testing.T) {
	p, ctx := New[int](context.Background(), nil)
	ran := false
	p.Go(func(int) error { ran = true; return nil })
	if err := p.Wait(); !errors.Is(err, errNoWorkers) || ran {
		t.Errorf("no workers: ran %v, err %v; want no task and errNoWorkers", ran, err)
	}
	if ctx.Err() == nil {
		t.Error("context not cancelled after Wait")
	}
}
