package redisstore_test

import (
	"context"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/store/redisstore"
)

// TestLimiterIsShared checks that two stores (two processes) on one server
// share one budget per key, and that keys do not share budgets.
func TestLimiterIsShared(t *testing.T) {
	mr := miniredis.RunT(t)
	prefix := testdb.UniqueName()
	newLimiter := func() *redisstore.Limiter {
		c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		t.Cleanup(func() { c.Close() })
		return redisstore.New(c, redisstore.WithPrefix(prefix)).Limiter(0.01, 3)
	}
	a, b := newLimiter(), newLimiter()
	ctx := context.Background()
	allowed := 0
	for i := 0; i < 6; i++ {
		l := a
		if i%2 == 1 {
			l = b
		}
		ok, wait, err := l.Allow(ctx, "key_1")
		require.NoError(t, err)
		if ok {
			allowed++
		} else {
			require.Positive(t, wait)
		}
	}
	require.Equal(t, 3, allowed, "the burst is shared by both processes")
	ok, _, err := a.Allow(ctx, "key_2")
	require.NoError(t, err)
	require.True(t, ok)
	for _, k := range mr.Keys() {
		require.Equal(t, "rate:{"+prefix+"}:", k[:len(prefix)+8])
	}
}
