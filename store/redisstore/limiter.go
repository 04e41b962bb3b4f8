package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"

	"github.com/agorahq/agora/store"
)

// Limiter is a per-key rate limit kept in Redis (GCRA, by redis_rate), so
// that it holds across every server process sharing the server. It
// satisfies httpapi.Limiter.
type Limiter struct {
	rl     *redis_rate.Limiter
	none   bool // no limit: every request passes (store.RateLimit)
	limit  redis_rate.Limit
	prefix string
}

// Limiter returns a rate limiter of perSecond requests a second per key with
// bursts of burst, as store.RateLimit has them (0 or less: no limit),
// stored under the store's prefix.
func (s *Store) Limiter(perSecond float64, burst int) *Limiter {
	// One request per interval, as memstore's and pgstore's Limiter count:
	// redis_rate spaces requests Period/Rate apart, so Rate 1 keeps a
	// fractional rate (2.5 a second) whole rather than rounding it down.
	// redis_rate works out the window itself, in Lua's floats.
	interval, _, ok := store.RateLimit(perSecond, burst)
	return &Limiter{
		rl:    redis_rate.NewLimiter(s.client),
		none:  !ok,
		limit: redis_rate.Limit{Rate: 1, Burst: max(1, burst), Period: interval},
		// redis_rate puts "rate:" in front; the store's hash tag follows.
		prefix: s.ns,
	}
}

// Allow implements httpapi.Limiter.
func (l *Limiter) Allow(ctx context.Context, key string) (bool, time.Duration, error) {
	if l.none {
		return true, 0, nil
	}
	res, err := l.rl.Allow(ctx, l.prefix+key, l.limit)
	if err != nil {
		return false, 0, fmt.Errorf("rate limit: %w", interpretError(ctx, err, nil))
	}
	if res.Allowed > 0 {
		return true, 0, nil
	}
	return false, res.RetryAfter, nil
}
