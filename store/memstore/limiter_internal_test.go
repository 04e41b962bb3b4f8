package memstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLimiterDropsPassedKeys: the store's rate state holds about the keys
// seen within a window, not every key ever limited (the device-code route
// limits by client address); a key within its window is kept and limited.
func TestLimiterDropsPassedKeys(t *testing.T) {
	ctx := context.Background()
	s := New()
	l := s.Limiter(1, 1)
	at := time.Unix(1_000_000, 0)
	l.now = func() time.Time { return at }
	ok, _, _ := l.Allow(ctx, "k")
	require.True(t, ok)
	at = at.Add(time.Hour)
	for i := range 3 * minPrune {
		ok, _, err := l.Allow(ctx, fmt.Sprint("addr-", i))
		require.NoError(t, err)
		require.True(t, ok)
	}
	require.LessOrEqual(t, len(s.rates.tat), 3*minPrune, "k, passed, was dropped")
	_, found := s.rates.tat["k"]
	require.False(t, found)
	ok, _, _ = l.Allow(ctx, "addr-0")
	require.False(t, ok, "a key within its window is kept")
	at = at.Add(time.Hour)
	_, _, _ = l.Allow(ctx, "late")
	for i := range minPrune {
		_, _, _ = l.Allow(ctx, fmt.Sprint("more-", i))
	}
	require.LessOrEqual(t, len(s.rates.tat), 2*minPrune+1)
}
