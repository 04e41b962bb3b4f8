package batch

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// windowBatches is how many batches of items each close l's window.
func windowBatches(l *Limit, items int) int {
	return max(minWindow, windowPerFlush*l.n, (minWindowItems+items-1)/items)
}

// window drives l through one window of batches of 10 items, from now on,
// against a store that answers rate(n) items per second with n batches in
// flight, callers of them in the batcher.
func window(l *Limit, now *time.Time, callers int, rate func(n int) float64) {
	gen := l.gen
	for range windowBatches(l, 10) {
		*now = now.Add(time.Duration(float64(time.Second) * 10 / rate(l.n)))
		l.observe(*now, gen, 10, callers)
	}
}

// scales is a store whose rate grows with the batches in flight.
func scales(n int) float64 { return 1000 * float64(n) }

// climb drives l through windows (window, 64 callers) and returns the
// limits it held in the last half of them.
func climb(l *Limit, windows int, rate func(n int) float64) []int {
	now := time.Unix(0, 0)
	var held []int
	for w := range windows {
		window(l, &now, 64, rate)
		if w >= windows/2 {
			held = append(held, l.n)
		}
	}
	return held
}

// windowsAt counts the windows of held at limit n.
func windowsAt(held []int, n int) int {
	at := 0
	for _, h := range held {
		if h == n {
			at++
		}
	}
	return at
}

// TestLimitClimbs: the adaptive limit settles near the number of
// batches in flight that answers the most items per second: the peak of a
// store with spare cores, one for a store whose commits queue for one disk,
// the ceiling for one that scales past it, held there rather than left
// every other window (once in reprobeWindows it measures the limit below
// again); a fixed limit never moves.
func TestLimitClimbs(t *testing.T) {
	peak := func(top int) func(int) float64 {
		return func(n int) float64 { return 1000 * float64(top*top-(n-top)*(n-top)) }
	}
	for _, n := range climb(NewLimit(0, 8), 200, peak(6)) {
		require.InDelta(t, 6, n, 1, "around the peak at 6")
	}
	disk := func(n int) float64 { return 4000 / float64(n) }
	for _, n := range climb(NewLimit(0, 8), 200, disk) {
		require.LessOrEqual(t, n, 2, "one batch at a time, or two while it checks")
	}
	for _, procs := range []int{2, 16} {
		below := 0
		for _, n := range climb(NewLimit(0, procs), 200, scales) {
			if n != procs {
				require.Equal(t, procs-1, n, "one step below, measuring it again")
				below++
			}
		}
		require.LessOrEqual(t, below, 100/reprobeWindows, "held at the ceiling of the CPUs, one window in reprobeWindows below it")
	}
	low := climb(NewLimit(0, 2), 200, disk)
	require.Contains(t, low, 1, "one batch at a time, though it starts at a ceiling of two")
	for _, n := range climb(NewLimit(3, 8), 50, scales) {
		require.Equal(t, 3, n)
	}
}

// TestLimitClimbsThroughNoise: each window's rate off by up to 15 %
// either way, as a real store's are, the limit still spends most windows
// where the store answers most: at a ceiling of two that answers a ninth
// more than one, and around a peak at 6 of 16.
func TestLimitClimbsThroughNoise(t *testing.T) {
	for seed := range uint64(20) {
		rnd := rand.New(rand.NewPCG(seed, 1))
		noisy := func(rate func(int) float64) func(int) float64 {
			return func(n int) float64 { return rate(n) * (0.85 + 0.3*rnd.Float64()) }
		}
		two := noisy(func(n int) float64 { return 900 + 100*float64(min(n, 2)-1) })
		held := climb(NewLimit(0, 2), 400, two)
		require.GreaterOrEqual(t, windowsAt(held, 2), len(held)*8/10, "seed %d: two batches in flight in most windows", seed)

		one := noisy(func(n int) float64 { return 1000 - 100*float64(min(n, 2)-1) })
		held = climb(NewLimit(0, 2), 400, one)
		require.GreaterOrEqual(t, windowsAt(held, 1), len(held)*8/10, "seed %d: one batch in flight in most windows where one answers a ninth more", seed)

		peak := noisy(func(n int) float64 { return 1000 * float64(max(36-(n-6)*(n-6), 4)) })
		near := 0
		held = climb(NewLimit(0, 16), 400, peak)
		for _, n := range held {
			if n >= 5 && n <= 7 {
				near++
			}
		}
		require.GreaterOrEqual(t, near, len(held)*8/10, "seed %d: around the peak in most windows", seed)
	}
}

// TestLimitHoldsAtOne: where one batch in flight answers the most, the
// limit stays at one rather than bouncing to two every other window; once
// in reprobeWindows it measures two again. Where one and two tie it keeps
// measuring both.
func TestLimitHoldsAtOne(t *testing.T) {
	disk := func(n int) float64 { return 4000 / float64(n) }
	for _, procs := range []int{2, 8} {
		held := climb(NewLimit(0, procs), 200, disk)
		require.GreaterOrEqual(t, windowsAt(held, 1), len(held)-len(held)/reprobeWindows-1, "procs %d: %v", procs, held)
	}
	flat := func(int) float64 { return 4000 }
	held := climb(NewLimit(0, 2), 200, flat)
	require.Contains(t, held, 1)
	require.Contains(t, held, 2)
}

// TestLimitSkipsWarmUp: the first window, a fifth as fast while
// connections and statements get ready, is not measured, so it does not
// keep a store that scales from its ceiling.
func TestLimitSkipsWarmUp(t *testing.T) {
	batches := 0
	warming := func(n int) float64 {
		batches++
		if batches <= windowBatches(NewLimit(0, 2), 10) {
			return 400
		}
		return scales(n)
	}
	l := NewLimit(0, 2)
	require.Equal(t, []int{2, 2}, climb(l, 4, warming), "at the ceiling from the third window, after one below it")
	require.Equal(t, []int{2, 2, 2, 2}, climb(l, 8, warming), "and held there")
}

// TestLimitFollowsCallers: a batch taken before the last move is not
// measured, and the limit never climbs past the callers there are.
func TestLimitFollowsCallers(t *testing.T) {
	l := NewLimit(0, 8)
	now := time.Unix(0, 0)
	for range 100 {
		now = now.Add(time.Millisecond)
		l.observe(now, l.gen-1, 10, 64)
	}
	require.Equal(t, startFlushers, l.n)
	require.Zero(t, l.gen)
	for i := range 1000 {
		now = now.Add(time.Millisecond)
		l.observe(now, l.gen, 1, 1)
		if i >= minWindowItems {
			require.Equal(t, 1, l.n, "one caller, one batch at a time once a window has closed (batch %d)", i)
		}
	}
}

// TestLimitClimbsBackAfterFewCallers: a limit held at its ceiling
// comes down with the callers, and climbs back when they return, rather
// than holding where the dip left it.
func TestLimitClimbsBackAfterFewCallers(t *testing.T) {
	l := NewLimit(0, 4)
	now := time.Unix(0, 0)
	for range 20 {
		window(l, &now, 64, scales)
	}
	require.Equal(t, 4, l.n, "held at the ceiling")
	window(l, &now, 1, scales)
	require.Equal(t, 1, l.n, "one caller, one batch")
	for range 20 {
		window(l, &now, 64, scales)
	}
	require.Equal(t, 4, l.n, "back at the ceiling with the callers")
}

// TestLimitDoubles: on a store that scales, the limit doubles after each
// window that gained (2, 4, 8, 16 on sixteen CPUs) rather than climbing one
// step a window, and doubles again after an idle gap; a doubling that lost
// goes back to where it came from.
func TestLimitDoubles(t *testing.T) {
	l := NewLimit(0, 16)
	now := time.Unix(0, 0)
	var seen []int
	for range 4 {
		window(l, &now, 64, scales)
		seen = append(seen, l.n)
	}
	require.Equal(t, []int{2, 4, 8, 16}, seen, "the first window warms up, then each doubles")

	now = now.Add(time.Second)
	l.n = 3
	seen = nil
	for range 3 {
		window(l, &now, 64, scales)
		seen = append(seen, l.n)
	}
	require.Equal(t, []int{3, 6, 12}, seen, "doubling again after an idle gap")

	l = NewLimit(0, 16)
	knee := func(n int) float64 { return 1000 * float64(min(n, 5)) / float64(max(1, n-4)) }
	seen = nil
	for range 5 {
		window(l, &now, 64, knee)
		seen = append(seen, l.n)
	}
	require.Equal(t, []int{2, 4, 8, 4, 5}, seen, "8 lost to 4: back to 4, then up by one")
}

// TestLimitWindowCountsItems: a window of one-item batches closes at
// minWindowItems items, not at minWindow batches, so that the limit does
// not move on a few batches' luck.
func TestLimitWindowCountsItems(t *testing.T) {
	l := NewLimit(0, 16)
	now := time.Unix(0, 0)
	for range 2*minWindowItems - 1 {
		now = now.Add(time.Millisecond)
		l.observe(now, l.gen, 1, 64)
	}
	require.Equal(t, startFlushers, l.n, "the warm-up window and the first measured one still open")
	l.observe(now.Add(time.Millisecond), l.gen, 1, 64)
	require.Equal(t, 2*startFlushers, l.n, "the first measured window closed: doubled")
}

// parallelism is a store whose server carries out n calls at once.
type parallelism int

func (p parallelism) Parallelism() int { return int(p) }

// TestProcs: the ceiling is the CPUs Go may use, or one more than a store's
// parallelism where the store says and that is fewer.
func TestProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	require.Equal(t, 8, Procs(struct{}{}), "a store that does not say")
	require.Equal(t, 8, Procs(parallelism(0)), "a store that does not know")
	require.Equal(t, 2, Procs(parallelism(1)))
	require.Equal(t, 5, Procs(parallelism(4)))
	require.Equal(t, 8, Procs(parallelism(64)), "more than the CPUs")
}
