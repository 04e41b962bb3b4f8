package httpapi

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/agorahq/agora/store"
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
	// pruneAt is how many buckets a new key finds before the full ones,
	// which are as good as absent, are dropped: the buckets held stay
	// about those of the keys seen within a refill, however many keys
	// come (the device-code route limits by client address).
	pruneAt int
}

// minPrune is the fewest buckets or keys a limiter holds before it drops
// those as good as absent.
const minPrune = 1024

// NewLocalLimiter allows perSecond requests a second per key with bursts of
// burst, as store.RateLimit has them: 0 or less (or NaN) is no limit.
func NewLocalLimiter(perSecond float64, burst int) *LocalLimiter {
	every := rate.Limit(perSecond)
	if _, _, ok := store.RateLimit(perSecond, burst); !ok {
		every = rate.Inf
	}
	return &LocalLimiter{every: every, burst: max(burst, 1), buckets: map[string]*rate.Limiter{}, pruneAt: minPrune}
}

// Allow implements Limiter.
// The bucket is read, and dropped when full, under l.mu, so no request is
// counted on a bucket a prune has just dropped.
func (l *LocalLimiter) Allow(_ context.Context, key string) (bool, time.Duration, error) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= l.pruneAt {
			for k, o := range l.buckets {
				if o.TokensAt(now) >= float64(l.burst) {
					delete(l.buckets, k)
				}
			}
			l.pruneAt = max(minPrune, 2*len(l.buckets))
		}
		b = rate.NewLimiter(l.every, l.burst)
		l.buckets[key] = b
	}
	res := b.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return false, d, nil
	}
	return true, 0, nil
}
