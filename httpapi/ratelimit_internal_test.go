package httpapi

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLocalLimiterDropsFullBuckets: a LocalLimiter keyed by many keys (the
// device-code route limits by client address) holds about those seen
// within a refill, not one bucket per key forever; a bucket not yet full
// is kept, so its key stays limited.
func TestLocalLimiterDropsFullBuckets(t *testing.T) {
	ctx := context.Background()
	fast := NewLocalLimiter(1e6, 1) // full again within a microsecond
	for i := range 10 * minPrune {
		ok, _, err := fast.Allow(ctx, fmt.Sprint("addr-", i))
		require.NoError(t, err)
		require.True(t, ok)
		require.LessOrEqual(t, len(fast.buckets), 2*minPrune, "after %d keys", i+1)
	}

	slow := NewLocalLimiter(0.001, 1) // a request every 1,000 s
	ok, _, _ := slow.Allow(ctx, "k")
	require.True(t, ok)
	for i := range 2 * minPrune {
		_, _, _ = slow.Allow(ctx, fmt.Sprint("addr-", i))
	}
	ok, wait, _ := slow.Allow(ctx, "k")
	require.False(t, ok, "a bucket not full is kept")
	require.Greater(t, wait, 900*time.Second)
}
