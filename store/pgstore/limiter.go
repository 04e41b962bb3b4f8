package pgstore

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/agorahq/agora/store"
)

// Limiter is a per-key rate limit kept in PostgreSQL (GCRA), so that it
// holds across every server process sharing the database, as redisstore's
// does on Redis. It satisfies httpapi.Limiter. Each Allow is one
// statement on one row of agora_rate_limits (a refusal one more, to read
// how long to wait), timed by the database's clock, the one clock every
// process shares.
type Limiter struct {
	s        *Store
	none     bool  // no limit: every request passes (store.RateLimit)
	interval int64 // microseconds between requests at the steady rate
	window   int64 // interval × burst: how far ahead a key may run
	// Every pruneEvery calls, Allow deletes the rows whose tat has passed,
	// which are as good as absent, so the table holds about the keys seen
	// within a window however many keys come (the device-code route limits
	// by client address).
	pruneEvery uint64
	calls      atomic.Uint64
}

// pruneEvery is Limiter.pruneEvery's default.
const pruneEvery = 4096

// pruneQuery deletes the rows as good as absent. A row an Allow moves on
// meanwhile is re-checked on its new version and kept.
const pruneQuery = `DELETE FROM agora_rate_limits WHERE tat < (extract(epoch FROM clock_timestamp()) * 1000000)::bigint`

// Limiter returns a rate limiter of perSecond requests a second per key
// with bursts of burst, as store.RateLimit has them (0 or less: no limit).
func (s *Store) Limiter(perSecond float64, burst int) *Limiter {
	interval, window, ok := store.RateLimit(perSecond, burst)
	return &Limiter{s: s, none: !ok, interval: max(interval.Microseconds(), 1), window: max(window.Microseconds(), 1), pruneEvery: pruneEvery}
}

// allowQuery moves the key's theoretical arrival time (tat) one interval on
// from max(tat, now) when that stays within the window of now, in one
// statement: concurrent calls on one key queue on its row. It returns
// whether it moved.
const allowQuery = `
WITH clock AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS now),
took AS (
    INSERT INTO agora_rate_limits AS r (key, tat) SELECT $1, clock.now + $2 FROM clock
    ON CONFLICT (key) DO UPDATE SET tat = GREATEST(r.tat, EXCLUDED.tat - $2) + $2
    WHERE GREATEST(r.tat, EXCLUDED.tat - $2) + $2 <= EXCLUDED.tat - $2 + $3
    RETURNING r.tat)
SELECT EXISTS (SELECT 1 FROM took)`

// waitQuery is how long until the key's next request fits its window, in
// microseconds, read from the row as it is now. allowQuery cannot say it:
// its plain reads see the snapshot its statement began with, before the
// concurrent calls it queued behind moved the row (or, for a new key,
// inserted it), so a refusal would be told a wait too short (none at all).
const waitQuery = `
SELECT COALESCE((SELECT GREATEST(tat - (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, 0) + $2 - $3
    FROM agora_rate_limits WHERE key = $1), 0)`

// Allow implements httpapi.Limiter.
func (l *Limiter) Allow(ctx context.Context, key string) (bool, time.Duration, error) {
	if l.none {
		return true, 0, nil
	}
	if l.calls.Add(1)%l.pruneEvery == 0 {
		if _, err := l.s.db.ExecContext(ctx, pruneQuery); err != nil {
			return false, 0, fmt.Errorf("rate limit: %w", interpretError(ctx, err))
		}
	}
	var ok bool
	if err := l.s.get(ctx, &ok, allowQuery, key, l.interval, l.window); err != nil {
		return false, 0, fmt.Errorf("rate limit: %w", interpretError(ctx, err))
	}
	if ok {
		return true, 0, nil
	}
	// A statement of its own sees every change committed before it,
	// among them the one that refused this request.
	var wait int64
	if err := l.s.get(ctx, &wait, waitQuery, key, l.interval, l.window); err != nil {
		return false, 0, fmt.Errorf("rate limit: %w", interpretError(ctx, err))
	}
	return false, max(time.Duration(wait)*time.Microsecond, time.Millisecond), nil
}
