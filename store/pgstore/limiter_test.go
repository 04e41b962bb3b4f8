package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/store/pgstore"
)

// TestLimiterPrunesPassedRows: the rate limit's table holds about the keys
// seen within a window, not a row per key forever (the device-code route
// limits by client address); a key within its window keeps its row and
// stays limited.
func TestLimiterPrunesPassedRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := open(t)
	fast := pgstore.New(db).Limiter(1e6, 1) // a row passes within a microsecond
	fast.SetPruneEvery(100)
	slow := pgstore.New(db).Limiter(0.001, 1)
	ok, _, err := slow.Allow(ctx, "k")
	require.NoError(t, err)
	require.True(t, ok)
	for i := range 99 {
		_, _, err := fast.Allow(ctx, fmt.Sprint("addr-", i))
		require.NoError(t, err)
	}
	count := func() int {
		t.Helper()
		var n int
		require.NoError(t, db.GetContext(ctx, &n, `SELECT count(*) FROM agora_rate_limits`))
		return n
	}
	require.Equal(t, 100, count())
	time.Sleep(2 * time.Millisecond)
	_, _, err = fast.Allow(ctx, "the hundredth call prunes")
	require.NoError(t, err)
	require.Equal(t, 2, count(), "k, within its window, and the newest")
	ok, wait, err := slow.Allow(ctx, "k")
	require.NoError(t, err)
	require.False(t, ok)
	require.Greater(t, wait, 900*time.Second)
}
