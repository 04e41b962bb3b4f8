package httpapi

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limiter decides whether the API key key may make one more rate-limited
// request (take, done, comment, creating a claim) now. When it may not, it returns false and
// how long until it may. A Limiter shared by several processes (such as
// redisstore's) makes the limit hold across all of them.
type Limiter interface {
	Allow(ctx context.Context, key string) (ok bool, retryAfter time.Duration, err error)
}

// Default rate limit of a key on take, done, comment and creating claims: generous enough
// for any agent that is not misbehaving (a burst of a thousand retries is
// still answered on its merits), tight enough to stop one that loops.
const (
	DefaultRatePerSecond = 100
	DefaultRateBurst     = 1000
)

// LocalLimiter is a token bucket per key in this process
// (golang.org/x/time/rate). Several server processes each keep their own.
type LocalLimiter struct {
	mu      sync.Mutex
	every   rate.Limit
	burst   int
	buckets map[string]*rate.Limiter
}

// NewLocalLimiter allows perSecond requests a second per key with bursts of
// burst.
func NewLocalLimiter(perSecond float64, burst int) *LocalLimiter {
	return &LocalLimiter{every: rate.Limit(perSecond), burst: burst, buckets: map[string]*rate.Limiter{}}
}

// Allow implements Limiter.
func (l *LocalLimiter) Allow(_ context.Context, key string) (bool, time.Duration, error) {
	l.mu.Lock()
	b, ok := l.buckets[key]
	if !ok {
		b = rate.NewLimiter(l.every, l.burst)
		l.buckets[key] = b
	}
	l.mu.Unlock()
	res := b.Reserve()
	if d := res.Delay(); d > 0 {
		res.Cancel()
		return false, d, nil
	}
	return true, 0, nil
}
