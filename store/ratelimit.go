package store

import (
	"math"
	"time"
)

// MaxRateWindow bounds how far ahead of now a rate limit's key may run, so
// that a limiter's arithmetic on its times never overflows: about 100
// years, whatever the rate and burst asked.
const MaxRateWindow = 100 * 365 * 24 * time.Hour

// RateLimit is the rule every store's per-key limiter (GCRA) keeps for
// perSecond requests a second with bursts of burst: one request every
// interval, a key running at most window (interval × burst) ahead. A
// perSecond of 0 or less, or NaN, is no limit: ok is false and every
// request passes. A burst below 1 is 1. The interval is at least a
// nanosecond, and short enough that the window fits MaxRateWindow: a rate
// slower than that keeps its burst and refills faster.
func RateLimit(perSecond float64, burst int) (interval, window time.Duration, ok bool) {
	if !(perSecond > 0) {
		return 0, 0, false
	}
	b := float64(max(burst, 1))
	i := math.Min(float64(time.Second)/perSecond, float64(MaxRateWindow)/b)
	interval = max(time.Duration(i), 1)
	window = time.Duration(math.Min(float64(interval)*b, float64(MaxRateWindow)))
	return interval, window, true
}
