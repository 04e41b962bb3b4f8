package memstore

import (
	"context"
	"sync"
	"time"

	"github.com/agorahq/agora/store"
)

// rateData is every Limiter's state: each key's GCRA theoretical arrival
// time, under its own lock so that rate limiting never waits on the data.
type rateData struct {
	mu  sync.Mutex
	tat map[string]time.Time
	// pruneAt is how many keys a new key finds before those whose tat has
	// passed, which are as good as absent, are dropped (at least
	// minPrune): the keys held stay about those seen within a window,
	// however many keys come.
	pruneAt int
}

// minPrune is the fewest keys rateData holds before it drops those as
// good as absent.
const minPrune = 1024

// Limiter is a per-key rate limit (GCRA) kept in the store, the same rule
// pgstore's and redisstore's Limiter keep in theirs: every Limiter of one
// store shares it. It satisfies httpapi.Limiter.
type Limiter struct {
	r        *rateData
	none     bool          // no limit: every request passes (store.RateLimit)
	interval time.Duration // between requests at the steady rate
	window   time.Duration // interval × burst: how far ahead a key may run
	now      func() time.Time
}

// Limiter returns a rate limiter of perSecond requests a second per key
// with bursts of burst, as store.RateLimit has them (0 or less: no limit).
func (s *Store) Limiter(perSecond float64, burst int) *Limiter {
	interval, window, ok := store.RateLimit(perSecond, burst)
	return &Limiter{r: &s.rates, none: !ok, interval: interval, window: window, now: time.Now}
}

// Allow implements httpapi.Limiter.
func (l *Limiter) Allow(_ context.Context, key string) (bool, time.Duration, error) {
	if l.none {
		return true, 0, nil
	}
	now := l.now()
	l.r.mu.Lock()
	defer l.r.mu.Unlock()
	tat := l.r.tat[key]
	if tat.Before(now) {
		tat = now
	}
	next := tat.Add(l.interval)
	if wait := next.Sub(now) - l.window; wait > 0 {
		return false, wait, nil
	}
	if l.r.tat == nil {
		l.r.tat = map[string]time.Time{}
	}
	if _, ok := l.r.tat[key]; !ok && len(l.r.tat) >= max(l.r.pruneAt, minPrune) {
		for k, t := range l.r.tat {
			if !t.After(now) {
				delete(l.r.tat, k)
			}
		}
		l.r.pruneAt = 2 * len(l.r.tat)
	}
	l.r.tat[key] = next
	return true, 0, nil
}
