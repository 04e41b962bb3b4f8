package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
)

// Limiter is a per-key rate limit kept in Redis (GCRA, by redis_rate), so
// that it holds across every server process sharing the server. It
// satisfies httpapi.Limiter.
type Limiter struct {
	rl     *redis_rate.Limiter
	limit  redis_rate.Limit
	prefix string
}

// Limiter returns a rate limiter of perSecond requests a second per key with
// bursts of burst, stored under the store's prefix.
func (s *Store) Limiter(perSecond float64, burst int) *Limiter {
	// redis_rate counts whole requests per period: express fractional rates
	// as requests per a longer period.
	period := time.Second
	rate := perSecond
	for rate < 1 && period < time.Hour {
		rate *= 60
		period *= 60
	}
	return &Limiter{
		rl:    redis_rate.NewLimiter(s.client),
		limit: redis_rate.Limit{Rate: max(1, int(rate)), Burst: max(1, burst), Period: period},
		// redis_rate puts "rate:" in front; the store's hash tag follows.
		prefix: s.ns,
	}
}

// Allow implements httpapi.Limiter.
func (l *Limiter) Allow(ctx context.Context, key string) (bool, time.Duration, error) {
	res, err := l.rl.Allow(ctx, l.prefix+key, l.limit)
	if err != nil {
		return false, 0, fmt.Errorf("rate limit: %w", interpretError(ctx, err, nil))
	}
	if res.Allowed > 0 {
		return true, 0, nil
	}
	return false, res.RetryAfter, nil
}
