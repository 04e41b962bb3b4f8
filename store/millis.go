package store

import "time"

// Millis is t as the Unix milliseconds the backends store the times of
// slots, prism and identity in (and their JSON carries); the zero time,
// "not set", is 0.
func Millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// FromMillis is the time a stored count of Unix milliseconds stands for, in
// UTC; 0 is the zero time. FromMillis(Millis(t)) equals Milli(t).
func FromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// Milli is t as a backend gives it back once stored in milliseconds:
// truncated to the millisecond, in UTC, without a monotonic reading. A
// service stamps its times with it so that what it returns equals what a
// later read returns.
func Milli(t time.Time) time.Time { return FromMillis(Millis(t)) }
