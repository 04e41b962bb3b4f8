package batch

import (
	"runtime"
	"time"

	"github.com/agorahq/agora/store"
)

// Limit bounds a Batcher's batches in flight; the Batcher's mutex
// guards it. Fixed (NewLimit's fixed), it otherwise climbs a hill: over
// a window of batches it measures the items answered per second, then
// moves one step, and turns round when a step up did not gain or a step
// down lost. From its start, and after an idle gap, it doubles while
// doubling gains, so that a machine of many cores reaches its limit in a
// few windows rather than one window per step. So it settles where one
// more batch at once stops paying: near one on a store whose commits
// queue for a disk, near its spare cores on one that has them; and never
// above the callers there are, so that when fewer come each batch still
// gathers several. It compares each
// limit's smoothed rate over its windows rather than one window against
// the last: a window's rate varies by a tenth or more from one to the
// next, more than one limit differs from its neighbour.
type Limit struct {
	n     int
	fixed bool
	ceil  int
	step  int
	// gen counts the moves; a batch taken before the last one is not
	// measured.
	gen int
	// The window being measured.
	start, last    time.Time
	items, batches int
	// rates[k] is the smoothed items per second of the windows measured
	// with a limit of k; 0: none yet. from is the limit of the window
	// before the last one closed (0: none; its rate is then measured).
	rates []float64
	from  int
	// warm says a window has closed since the last reset: the first one,
	// which pays for connections and statements getting ready, is not
	// measured.
	warm bool
	// held says the limit stayed at its ceiling (step > 0) or at one
	// (step < 0) after the last window, heldFor for how many windows in a
	// row.
	held    bool
	heldFor int
	// doubling says the limit doubles after each window that gained on
	// the one before; the first that did not ends it.
	doubling bool
}

// The climb's constants: where it starts, how many batches (per batch in
// flight) and items a window measures at least, and how long an idle gap
// resets it.
const (
	startFlushers  = 2
	windowPerFlush = 4
	minWindow      = 8
	// minWindowItems keeps a window of small batches from being a few
	// batches' luck: on sixteen cores with eight callers, windows of eight
	// batches of two items varied so much that the limit settled at one or
	// two in flight in some runs and near five in others.
	minWindowItems  = 256
	idleResetWindow = 50 * time.Millisecond
	// climbGain is the share by which a limit's rate must beat its
	// neighbour's to count as a gain (or fall short of it to count as a
	// loss).
	climbGain = 0.02
	// reprobeWindows is how many windows a limit holds at its ceiling
	// before it measures the one below again: that one's rate may be from
	// a load long gone.
	reprobeWindows = 32
	// rateSmoothing is the weight of a window's rate in its limit's
	// smoothed rate: about the last three windows at a limit count.
	rateSmoothing = 0.3
)

// Procs is NewLimit's procs for calls of st: the CPUs Go may use, or, where
// st says how many calls its server carries out at once (store.Parallel),
// one more than that when that is fewer.
func Procs(st any) int {
	n := runtime.GOMAXPROCS(0)
	if p := store.ParallelismOf(st); p > 0 {
		n = min(n, p+1)
	}
	return n
}

// NewLimit returns a limit fixed at fixed batches in flight, or, with fixed
// below 1, one that adapts between 1 and procs (at least 2), starting at 2.
func NewLimit(fixed, procs int) *Limit {
	if fixed >= 1 {
		return &Limit{n: fixed, fixed: true}
	}
	ceil := max(2, procs)
	return &Limit{n: startFlushers, ceil: ceil, step: 1, rates: make([]float64, ceil+1)}
}

// observe counts a batch of items, taken at generation gen, answered at
// now, when callers were in the batcher.
func (l *Limit) observe(now time.Time, gen, items, callers int) {
	if l.fixed {
		return
	}
	// A climb starts (the first batch, or the first after an idle gap)
	// from a clean slate, doubling.
	if l.last.IsZero() || now.Sub(l.last) > idleResetWindow {
		l.start, l.items, l.batches = now, 0, 0
		clear(l.rates)
		l.from, l.held, l.warm = 0, false, false
		l.doubling, l.step = true, 1
	}
	l.last = now
	if gen != l.gen {
		return
	}
	l.items += items
	l.batches++
	if l.batches < max(minWindow, windowPerFlush*l.n) || l.items < minWindowItems {
		return
	}
	top := min(l.ceil, max(callers, 1))
	if !l.warm {
		l.warm = true
		if l.n > top {
			l.n = top
			l.gen++
		}
		l.start, l.items, l.batches = now, 0, 0
		return
	}
	rate := float64(l.items) / max(now.Sub(l.start).Seconds(), 1e-9)
	if l.rates[l.n] == 0 {
		l.rates[l.n] = rate
	} else {
		l.rates[l.n] += rateSmoothing * (rate - l.rates[l.n])
	}
	est, from := l.rates[l.n], l.from
	l.from = l.n
	judged := from > 0
	back := false
	if l.doubling && judged && !gained(est, l.rates[from]) {
		// The doubling that did not gain ends it: back to where it came
		// from and on up by steps if it lost, else down by steps while
		// that costs nothing.
		l.doubling = false
		back = lost(est, l.rates[from])
		l.step = -1
		if back {
			l.step = 1
		}
	}
	switch {
	case back:
		l.n = min(from, top)
	case l.doubling && 2*l.n <= top:
		l.n *= 2
	case l.doubling && l.n < top:
		l.n = top
	default:
		l.doubling = false
		l.n = l.stepped(est, from, top)
	}
	l.gen++
	l.start, l.items, l.batches = now, 0, 0
}

// stepped is the limit one step on from l.n, whose smoothed rate is est,
// measured after a window at from (0: none), top the most it may be.
//
// One more batch at once must pay for itself; one fewer goes on while
// it costs nothing. On a plateau the limit so comes down to its knee:
// the fewest batches, so the biggest, that answer as many. At the
// ceiling it holds once a step up gained, until its rate falls below
// the one below it, and at one batch once one gained on two, while it
// still does; either until reprobeWindows have passed. Bouncing straight
// back would spend every other window off the best limit: on two cores,
// PostgreSQL at W = 8 answered a third more seats with one batch in
// flight than with the two the bounce kept every other window. One batch
// holds only where it wins, not where it ties: held after a lucky window,
// it would keep away from two for reprobeWindows windows where two answer
// more.
func (l *Limit) stepped(est float64, from, top int) int {
	judged := from > 0
	if judged {
		switch {
		case l.held:
			l.heldFor++
			if l.heldFor >= reprobeWindows || l.step > 0 && l.n > 1 && lost(est, l.rates[l.n-1]) || l.step < 0 && !l.beats(est, 2) {
				l.step = -l.step
			}
		case l.step > 0 && !gained(est, l.rates[from]), l.step < 0 && lost(est, l.rates[from]):
			l.step = -l.step
		}
	}
	next := l.n + l.step
	// Only the ceiling and one batch hold: the callers there are change
	// from one window to the next, and a limit held at a dip in them would
	// stay low.
	l.held = judged && (l.step > 0 && next > l.ceil && top == l.ceil || l.step < 0 && next < 1 && l.beats(est, 2))
	if !l.held {
		l.heldFor = 0
	}
	switch {
	case l.held:
		next = l.n
	case next < 1 || next > top:
		l.step = -l.step
		next = l.n + l.step
	}
	return min(max(next, 1), top)
}

// beats reports whether rate est gained on the rate measured with k
// batches in flight; not when none was measured.
func (l *Limit) beats(est float64, k int) bool {
	return k < len(l.rates) && l.rates[k] > 0 && gained(est, l.rates[k])
}

// gained reports whether rate est beats ref by more than climbGain, lost
// whether it falls short of it by more than that.
func gained(est, ref float64) bool { return est > ref*(1+climbGain) }

func lost(est, ref float64) bool { return est < ref*(1-climbGain) }
