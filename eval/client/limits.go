package client

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// newRequestLimiter paces requests at perMinute, one at a time (burst 1):
// providers count per minute, and an even pace never bunches a minute's
// requests into its first second. Nil means unlimited.
func newRequestLimiter(perMinute int) *rate.Limiter {
	if perMinute <= 0 {
		return nil
	}
	return rate.NewLimiter(rate.Limit(float64(perMinute)/60), 1)
}

// tokenBudget is a tokens-per-minute limit: a token bucket that refills
// at perMinute/60 tokens a second and holds at most perMinute. Each
// attempt takes its estimate before it is sent; settle then corrects with
// the usage the server reports: a larger actual count is taken at once
// (the bucket goes into debt and later requests wait), a smaller one is
// kept as credit that later requests spend before waiting on the bucket
// (rate.Limiter cannot give tokens back). Failed attempts keep their
// charge. A nil *tokenBudget is unlimited.
type tokenBudget struct {
	lim *rate.Limiter

	mu     sync.Mutex
	credit int
}

func newTokenBudget(perMinute int) *tokenBudget {
	if perMinute <= 0 {
		return nil
	}
	return &tokenBudget{lim: rate.NewLimiter(rate.Limit(float64(perMinute)/60), perMinute)}
}

// take waits until n tokens are available and takes them; it returns how
// many it took (n, clamped to the bucket size: a request larger than a
// minute's budget goes when the bucket is full).
func (b *tokenBudget) take(ctx context.Context, n int) (int, error) {
	if b == nil || n <= 0 {
		return 0, nil
	}
	n = min(n, b.lim.Burst())
	b.mu.Lock()
	fromCredit := min(b.credit, n)
	b.credit -= fromCredit
	b.mu.Unlock()
	if err := b.lim.WaitN(ctx, n-fromCredit); err != nil {
		b.refund(fromCredit)
		return 0, err
	}
	return n, nil
}

// settle corrects a successful attempt's charge with its actual usage.
// The debt one reply can add is at most one minute's budget, so that a
// server reporting absurd usage cannot stall every later request.
func (b *tokenBudget) settle(charged, actual int) {
	if b == nil || actual <= 0 {
		return
	}
	actual = min(actual, charged+b.lim.Burst())
	if actual < charged {
		b.refund(charged - actual)
		return
	}
	now := time.Now()
	for extra := actual - charged; extra > 0; {
		n := min(extra, b.lim.Burst())
		b.lim.ReserveN(now, n) // debt: never waited on here, it delays later takes
		extra -= n
	}
}

func (b *tokenBudget) refund(n int) {
	b.mu.Lock()
	b.credit = min(b.credit+n, b.lim.Burst())
	b.mu.Unlock()
}
