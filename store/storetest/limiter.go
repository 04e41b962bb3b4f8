package storetest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// RunLimiter checks the backend's per-key rate limit: one limit per key
// whatever process asks (two limiters sharing the backend, raced by many
// goroutines, let exactly the burst through), keys apart from each other,
// and a refused request told how long to wait, after which it passes.
func RunLimiter(t *testing.T, newStores NewStores) {
	t.Run("SharedAcrossProcesses", func(t *testing.T) {
		t.Parallel()
		st := newStores(t)
		if st.Limiters == nil {
			t.Fatal("storetest: Stores.Limiters is required")
		}
		a, b := st.Limiters(0.001, 5)
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
					require.Positive(t, wait, "a refusal says how long to wait")
				}
			})
			require.EqualValues(t, 5, allowed.Load(), "the burst, whichever process answered")
			ok, _, err := b.Allow(ctx, key+"-other")
			require.NoError(t, err)
			require.True(t, ok, "another key has its own limit")
		}
	})
	t.Run("RefillsAfterRetryAfter", func(t *testing.T) {
		t.Parallel()
		st := newStores(t)
		if st.Limiters == nil {
			t.Fatal("storetest: Stores.Limiters is required")
		}
		a, b := st.Limiters(2, 1)
		ctx := context.Background()
		ok, _, err := a.Allow(ctx, "key_refill")
		require.NoError(t, err)
		require.True(t, ok)
		ok, wait, err := b.Allow(ctx, "key_refill")
		require.NoError(t, err)
		require.False(t, ok, "the burst of one is spent")
		require.Positive(t, wait)
		require.LessOrEqual(t, wait, 500*time.Millisecond, "half a second at 2 a second")
		time.Sleep(wait + 20*time.Millisecond)
		ok, _, err = b.Allow(ctx, "key_refill")
		require.NoError(t, err)
		require.True(t, ok, "after the wait it passes")
	})
}
