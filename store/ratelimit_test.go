package store_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/store"
)

// TestRateLimit: the interval and window the stores' limiters keep, never
// overflowing, and no limit for no rate.
func TestRateLimit(t *testing.T) {
	for _, r := range []float64{0, -3, math.NaN(), math.Inf(-1)} {
		_, _, ok := store.RateLimit(r, 5)
		require.False(t, ok, "%v a second is no limit", r)
	}
	for _, c := range []struct {
		perSecond        float64
		burst            int
		interval, window time.Duration
	}{
		{2.5, 1, 400 * time.Millisecond, 400 * time.Millisecond},
		{10, 20, 100 * time.Millisecond, 2 * time.Second},
		{10, 0, 100 * time.Millisecond, 100 * time.Millisecond},
		{1e12, 1, 1, 1},
		{math.Inf(1), 3, 1, 3},
		{1e-12, 4, store.MaxRateWindow / 4, store.MaxRateWindow},
		{1e-3, math.MaxInt, 1, store.MaxRateWindow},
	} {
		interval, window, ok := store.RateLimit(c.perSecond, c.burst)
		require.True(t, ok)
		require.Equal(t, c.interval, interval, "%v a second, burst %d", c.perSecond, c.burst)
		require.Equal(t, c.window, window, "%v a second, burst %d", c.perSecond, c.burst)
	}
}
