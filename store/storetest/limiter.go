package storetest

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// RunLimiter checks the backend's per-key rate limit: one limit per key
// whatever process asks (two limiters sharing the backend, raced by many
// goroutines, let exactly the burst through, and tell each refusal the
// wait as the store has it after the race), keys apart from each other
// even when many are asked at once, and a refused request told how long to
// wait, after which it passes, at a fractional rate too.
func RunLimiter(t *testing.T, newStores NewStores) {
	t.Run("SharedAcrossProcesses", func(t *testing.T) {
		t.Parallel()
		a, b := limiters(t, newStores, 0.001, 5)
		ctx := context.Background()
		for r := range raceRepeats {
			key := fmt.Sprintf("key_%d_%d", r, time.Now().UnixNano())
			var allowed atomic.Int32
			concurrently(60, func(i int) {
				l := a
				if i%2 == 1 {
					l = b
				}
				ok, wait, err := l.Allow(ctx, key)
				require.NoError(t, err)
				if ok {
					allowed.Add(1)
				} else {
					// The burst of five is spent: the next request is a
					// whole interval (1000 s) away, whichever request
					// raced which.
					require.Greater(t, wait, 900*time.Second, "a refusal says how long to wait, as the store has it now")
				}
			})
			require.EqualValues(t, 5, allowed.Load(), "the burst, whichever process answered")
			ok, _, err := b.Allow(ctx, key+"-other")
			require.NoError(t, err)
			require.True(t, ok, "another key has its own limit")
		}
	})
	t.Run("ManyKeysAtOnce", func(t *testing.T) {
		t.Parallel()
		a, b := limiters(t, newStores, 0.001, 3)
		ctx := context.Background()
		const keys, each = 16, 8
		for r := range raceRepeats {
			var allowed [keys]atomic.Int32
			concurrently(keys*each, func(i int) {
				l := a
				if i%2 == 1 {
					l = b
				}
				ok, wait, err := l.Allow(ctx, fmt.Sprintf("many_%d_%d", r, i%keys))
				require.NoError(t, err)
				if ok {
					allowed[i%keys].Add(1)
				} else {
					require.Positive(t, wait, "a refusal says how long to wait")
				}
			})
			for k := range allowed {
				require.EqualValues(t, 3, allowed[k].Load(), "key %d: its burst, whatever others asked at once", k)
			}
		}
	})
	t.Run("RefillsAfterRetryAfter", func(t *testing.T) {
		t.Parallel()
		// 2.5 a second, a fractional rate: one request every 400 ms.
		a, b := limiters(t, newStores, 2.5, 1)
		ctx := context.Background()
		ok, _, err := a.Allow(ctx, "key_refill")
		require.NoError(t, err)
		require.True(t, ok)
		ok, wait, err := b.Allow(ctx, "key_refill")
		require.NoError(t, err)
		require.False(t, ok, "the burst of one is spent")
		require.Positive(t, wait)
		require.LessOrEqual(t, wait, 400*time.Millisecond, "400 ms at 2.5 a second, not rounded to 2 a second")
		time.Sleep(wait + 20*time.Millisecond)
		ok, _, err = b.Allow(ctx, "key_refill")
		require.NoError(t, err)
		require.True(t, ok, "after the wait it passes")
	})
	t.Run("NoRateIsNoLimit", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		for _, perSecond := range []float64{0, -1, math.NaN()} {
			a, b := limiters(t, newStores, perSecond, 1)
			for i := range 20 {
				l := a
				if i%2 == 1 {
					l = b
				}
				ok, wait, err := l.Allow(ctx, "key_free")
				require.NoError(t, err, "%v a second", perSecond)
				require.True(t, ok, "%v a second: no limit", perSecond)
				require.Zero(t, wait)
			}
		}
	})
	t.Run("ExtremeRates", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		// One request in 30,000 years with a burst of a million: the
		// window does not fit a time.Duration, so it is bounded, not
		// wrapped round to a negative that refuses every request.
		a, b := limiters(t, newStores, 1e-12, 1_000_000)
		for i := range 20 {
			ok, _, err := a.Allow(ctx, fmt.Sprintf("key_slow_%d", i%2))
			require.NoError(t, err)
			require.True(t, ok, "within the burst")
		}
		a, b = limiters(t, newStores, 1e-12, 2)
		for range 2 {
			ok, _, err := a.Allow(ctx, "key_slow")
			require.NoError(t, err)
			require.True(t, ok, "within the burst")
		}
		ok, wait, err := b.Allow(ctx, "key_slow")
		require.NoError(t, err)
		require.False(t, ok, "the burst is spent")
		require.Greater(t, wait, 24*time.Hour, "the wait is long, and a positive duration")
		a, _ = limiters(t, newStores, 1e12, 1)
		for range 20 {
			ok, _, err := a.Allow(ctx, "key_fast")
			require.NoError(t, err)
			require.True(t, ok, "a trillion a second")
		}
	})
}

// limiters returns the two limiters of a fresh store (Stores.Limiters).
func limiters(t *testing.T, newStores NewStores, perSecond float64, burst int) (Limiter, Limiter) {
	t.Helper()
	st := newStores(t)
	if st.Limiters == nil {
		t.Fatal("storetest: Stores.Limiters is required")
	}
	return st.Limiters(perSecond, burst)
}
