package slots

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"time"
)

// FinishResult is one item's answer of FinishSlots: the slot as done, or
// the error FinishSlot would have returned.
type FinishResult struct {
	Slot Slot
	Err  error
}

// JobResult is one item's answer of TakeNextSlots: the job taken, or the
// error TakeNextSlot would have returned.
type JobResult struct {
	Job Job
	Err error
}

// MaxBatch is the most items one FinishSlots, TakeNextSlots or
// FinishAndTakeNextSlots call of a Service carries.
const MaxBatch = 256

// DefaultBatchWait is the maxWait of a Service's batches unless
// WithTakeBatching or WithDoneBatching sets another.
const DefaultBatchWait = time.Millisecond

// batching is how a Service coalesces its job-queue calls, as its options
// set it; New builds the batchers from it.
type batching struct {
	takesOff, donesOff bool
	takeWait, doneWait time.Duration
	flushers           int // WithBatchFlushers; 0: adaptive
}

// By default a Service coalesces concurrent TakeNext, Done and
// DoneAndTakeNext calls into batches (see WithDoneBatching) with
// DefaultBatchWait, and adapts how many batches it writes at once (see
// WithBatchFlushers). These options change that; the last one given for a
// kind of call wins.

// WithDoneBatching sets how concurrent Done calls are coalesced into one
// FinishSlots call of the store (one statement and commit on PostgreSQL,
// one script on Redis), as a batch completer does: while batches are being
// written, the dones that arrive wait and go together in the next.
// Concurrent DoneAndTakeNext calls are coalesced the same way into one
// FinishAndTakeNextSlots call. Each done is still decided and credited
// exactly once, in the store's atomic step.
//
// maxWait bounds how long a batch waits for the callers the last one
// answered: workers looping done → next are back a moment after their
// answer, and a batch that went without them would be followed by one of
// just those, a commit for a handful where one would do for all. A batch
// waits until it holds its share of the callers seen when a batch was last
// answered (all of them with one batch in flight, half with two), and no
// longer than maxWait when they do not come; a lone caller never waits. 0
// writes at once and only coalesces what piles up meanwhile. The default
// is DefaultBatchWait.
//
// A Done whose context ends while its batch is in flight returns the
// context's error; its slot may then be done, as after any interrupted
// request.
func WithDoneBatching(maxWait time.Duration) Option {
	return func(s *Service) { s.batching.donesOff, s.batching.doneWait = false, max(maxWait, 0) }
}

// WithTakeBatching sets how concurrent TakeNext calls are coalesced into
// one TakeNextSlots call of the store (one statement on PostgreSQL for the
// agents asking for the oldest slot with the same filters, one script on
// Redis): each agent still gets a slot of its own, never two seats of one
// claim, and no lost race. maxWait is as in WithDoneBatching.
func WithTakeBatching(maxWait time.Duration) Option {
	return func(s *Service) { s.batching.takesOff, s.batching.takeWait = false, max(maxWait, 0) }
}

// WithoutBatching makes each TakeNext, Done and DoneAndTakeNext its own
// store call. The calls in flight at once are still bounded as batches are
// (see WithBatchFlushers), so a crowd of callers queues in the Service
// instead of contending in the store for the head of the same queue.
func WithoutBatching() Option {
	return func(s *Service) { s.batching.takesOff, s.batching.donesOff = true, true }
}

// WithBatchFlushers fixes how many batches of one kind (dones, takes,
// dones with takes) the Service writes at once. Without it (or with n
// below 1) the number adapts to the load: it starts at 2 and moves one at a
// time, up while more batches at once answer more calls per second and
// back down when they answer fewer, between 1 and the CPUs Go may use (at
// least 2): every batch in flight costs this process CPU too. Fewer make bigger batches and so fewer commits per item
// (what a store whose commits wait for a disk wants), more overlap the
// round trips and the store's work of several batches (what a store with
// many idle cores wants).
func WithBatchFlushers(n int) Option {
	return func(s *Service) { s.batching.flushers = n }
}

// initBatchers builds the Service's batchers from its options.
func (s *Service) initBatchers() {
	b := s.batching
	limit := func() *flushLimit { return newFlushLimit(b.flushers, runtime.GOMAXPROCS(0)) }
	doneBatch, takeBatch := MaxBatch, MaxBatch
	if b.donesOff {
		doneBatch, b.doneWait = 1, 0
	}
	if b.takesOff {
		takeBatch, b.takeWait = 1, 0
	}
	s.dones = &batcher[FinishParams, FinishResult]{
		maxWait:  b.doneWait,
		maxBatch: doneBatch,
		limit:    limit(),
		key:      func(p FinishParams) string { return p.SlotID },
		run: func(ctx context.Context, ps []FinishParams) ([]FinishResult, error) {
			if len(ps) == 1 && b.donesOff {
				slot, err := s.store.FinishSlot(ctx, ps[0])
				return []FinishResult{{Slot: slot, Err: err}}, nil
			}
			return s.store.FinishSlots(ctx, ps)
		},
		fail: func(err error) FinishResult { return FinishResult{Err: err} },
	}
	s.doneTakes = &batcher[FinishTakeParams, FinishTakeResult]{
		maxWait:  b.doneWait,
		maxBatch: doneBatch,
		limit:    limit(),
		key:      func(p FinishTakeParams) string { return p.Next.Agent.KeyID },
		run: func(ctx context.Context, ps []FinishTakeParams) ([]FinishTakeResult, error) {
			return s.store.FinishAndTakeNextSlots(ctx, ps)
		},
		fail: func(err error) FinishTakeResult { return FinishTakeResult{Err: err} },
	}
	s.takes = &batcher[TakeNextParams, JobResult]{
		maxWait:  b.takeWait,
		maxBatch: takeBatch,
		limit:    limit(),
		key:      func(p TakeNextParams) string { return p.Agent.KeyID },
		run: func(ctx context.Context, ps []TakeNextParams) ([]JobResult, error) {
			if len(ps) == 1 && b.takesOff {
				job, err := s.store.TakeNextSlot(ctx, ps[0])
				return []JobResult{{Job: job, Err: err}}, nil
			}
			return s.store.TakeNextSlots(ctx, ps)
		},
		fail: func(err error) JobResult { return JobResult{Err: err} },
	}
}

// flushLimit bounds a batcher's batches in flight; the batcher's mutex
// guards it. Fixed by WithBatchFlushers, it otherwise climbs a hill: over
// a window of batches it measures the items answered per second, then
// moves one step, and turns round when a step up did not gain or a step
// down lost. So it settles where one more batch at once stops paying:
// near one on a store whose commits queue for a disk, near its spare cores
// on one that has them; and never above the callers there are, so that
// when fewer come each batch still gathers several. It compares each
// limit's smoothed rate over its windows rather than one window against
// the last: a window's rate varies by a tenth or more from one to the
// next, more than one limit differs from its neighbour.
type flushLimit struct {
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
	// held says the limit stayed at its ceiling after the last window,
	// heldFor for how many windows in a row.
	held    bool
	heldFor int
}

// The climb's constants: where it starts, how many batches (per batch in
// flight) a window measures, and how long an idle gap resets it.
const (
	startFlushers   = 2
	windowPerFlush  = 4
	minWindow       = 8
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

func newFlushLimit(fixed, procs int) *flushLimit {
	if fixed >= 1 {
		return &flushLimit{n: fixed, fixed: true}
	}
	ceil := max(2, procs)
	return &flushLimit{n: startFlushers, ceil: ceil, step: 1, rates: make([]float64, ceil+1)}
}

// observe counts a batch of items, taken at generation gen, answered at
// now, when callers were in the batcher.
func (l *flushLimit) observe(now time.Time, gen, items, callers int) {
	if l.fixed {
		return
	}
	if l.last.IsZero() || now.Sub(l.last) > idleResetWindow {
		l.start, l.items, l.batches = now, 0, 0
		clear(l.rates)
		l.from, l.held, l.warm = 0, false, false
	}
	l.last = now
	if gen != l.gen {
		return
	}
	l.items += items
	l.batches++
	if l.batches < max(minWindow, windowPerFlush*l.n) {
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
	// One more batch at once must pay for itself; one fewer goes on while
	// it costs nothing. On a plateau the limit so comes down to its knee:
	// the fewest batches, so the biggest, that answer as many. At the
	// ceiling it holds once a step up gained, until its rate falls below
	// the one below it or reprobeWindows have passed: bouncing straight
	// back would spend every other window below the best limit.
	est, from := l.rates[l.n], l.from
	l.from = l.n
	judged := from > 0
	if judged {
		lost := func(ref float64) bool { return est < ref*(1-climbGain) }
		switch {
		case l.held:
			l.heldFor++
			if l.n > 1 && lost(l.rates[l.n-1]) || l.heldFor >= reprobeWindows {
				l.step = -1
			}
		case l.step > 0 && est <= l.rates[from]*(1+climbGain), l.step < 0 && lost(l.rates[from]):
			l.step = -l.step
		}
	}
	next := l.n + l.step
	// Only the ceiling holds: the callers there are change from one
	// window to the next, and a limit held at a dip in them would stay low.
	l.held = judged && next > l.ceil && top == l.ceil && l.step > 0
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
	l.n = min(max(next, 1), top)
	l.gen++
	l.start, l.items, l.batches = now, 0, 0
}

// batcher coalesces calls into batches. A batch holds each key once (a
// slot's dones, an agent's takes): a second call with the same key waits
// for a later batch, so it sees the first one's outcome.
type batcher[P, R any] struct {
	maxWait  time.Duration
	maxBatch int // at most MaxBatch; 1: each call its own store call
	limit    *flushLimit
	key      func(P) string
	run      func(context.Context, []P) ([]R, error)
	fail     func(error) R

	mu       sync.Mutex
	queue    []*batchCall[P, R]
	flushers int
	// inFlight counts the calls of the batches being written.
	inFlight int
	// callers is how many calls were in the batcher when a batch was last
	// answered: that batch's, those queued and those of the other batches
	// in flight. Callers answered a moment ago are usually on their way back
	// with their next call, so each batch expects its share of them.
	callers int
	// gathering counts the flushers waiting in gather; waiters are their
	// waits.
	gathering int
	waiters   []batchWaiter
}

// batchWaiter is a batch waiting for the queue to hold want calls.
type batchWaiter struct {
	want  int
	ready chan struct{}
}

type batchCall[P, R any] struct {
	p    P
	res  R
	done chan struct{}
}

// do queues p and waits for its result, or for ctx to end; when fewer than
// the limit's batches are in flight and none is gathering callers, it
// writes batches itself until its own is answered.
func (b *batcher[P, R]) do(ctx context.Context, p P) (R, error) {
	c := &batchCall[P, R]{p: p, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, c)
	b.wakeWaiters()
	// A flusher gathering a batch takes this call with it; another would
	// only split the batch.
	lead := b.flushers < b.limit.n && b.gathering == 0
	if lead {
		b.flushers++
	}
	b.mu.Unlock()
	if lead {
		b.flush(context.WithoutCancel(ctx), c, ctx.Done())
	}
	select {
	case <-c.done:
		return c.res, nil
	case <-ctx.Done():
		var zero R
		return zero, ctx.Err()
	}
}

// flush writes batches until own is answered (nil: until the queue is
// empty), then hands the rest of the queue, if any, to a goroutine: the
// callers it answered lead their next batch themselves. Once stop (the
// leader's context) is done its batches wait for no one.
func (b *batcher[P, R]) flush(ctx context.Context, own *batchCall[P, R], stop <-chan struct{}) {
	for {
		share := b.gather(own, stop)
		b.mu.Lock()
		batch := b.next(share)
		if len(batch) == 0 {
			b.flushers--
			b.mu.Unlock()
			return
		}
		b.inFlight += len(batch)
		gen := b.limit.gen
		b.mu.Unlock()
		b.write(ctx, batch, gen)
		if own == nil {
			// A flusher past a limit that came down retires; the others
			// carry on with the queue.
			b.mu.Lock()
			retire := b.flushers > b.limit.n
			if retire {
				b.flushers--
			}
			b.mu.Unlock()
			if retire {
				return
			}
			continue
		}
		select {
		case <-own.done:
			b.mu.Lock()
			rest := len(b.queue) > 0 && b.flushers <= b.limit.n
			if !rest {
				b.flushers--
			}
			b.mu.Unlock()
			if rest {
				go b.flush(ctx, nil, nil)
			}
			return
		default:
		}
	}
}

// gather returns the size of this batch's share of the callers (MaxBatch
// when there is no share to keep to) once the queue holds it, once own (if
// not nil) has been answered by another flusher's batch, once stop is done,
// or once maxWait has passed. The share is the callers seen when a batch
// was last answered divided among the batches that may be in flight: a
// batch that went without the callers just answered would be followed by
// one of just those, a commit for a handful where one would do, and one
// that took more than its share would leave the other flushers idle. Callers that do not come
// back cost a batch no more than maxWait, and a lone caller nothing; with
// maxWait 0 a batch never waits and takes all it can.
func (b *batcher[P, R]) gather(own *batchCall[P, R], stop <-chan struct{}) int {
	if b.maxWait <= 0 {
		return b.maxBatch
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	flushers := b.limit.n
	share := min((b.callers+flushers-1)/flushers, b.maxBatch)
	if share == 0 {
		return b.maxBatch
	}
	if len(b.queue) >= share {
		return share
	}
	var answered <-chan struct{}
	if own != nil {
		answered = own.done
	}
	b.gathering++
	defer func() { b.gathering-- }()
	deadline := time.NewTimer(b.maxWait)
	defer deadline.Stop()
	for len(b.queue) < share {
		w := batchWaiter{want: share, ready: make(chan struct{})}
		b.waiters = append(b.waiters, w)
		b.mu.Unlock()
		select {
		case <-w.ready:
			b.mu.Lock()
			continue
		case <-answered:
		case <-stop:
		case <-deadline.C:
		}
		b.mu.Lock()
		b.waiters = slices.DeleteFunc(b.waiters, func(o batchWaiter) bool { return o.ready == w.ready })
		break
	}
	return share
}

// wakeWaiters releases the batches whose wait the queue now satisfies; the
// caller holds b.mu.
func (b *batcher[P, R]) wakeWaiters() {
	if len(b.waiters) == 0 {
		return
	}
	b.waiters = slices.DeleteFunc(b.waiters, func(w batchWaiter) bool {
		if len(b.queue) < w.want {
			return false
		}
		close(w.ready)
		return true
	})
}

// next takes the next batch, of at most limit calls, off the queue; the
// caller holds b.mu.
func (b *batcher[P, R]) next(limit int) []*batchCall[P, R] {
	limit = min(limit, b.maxBatch)
	var batch, rest []*batchCall[P, R]
	seen := map[string]bool{}
	for _, c := range b.queue {
		k := b.key(c.p)
		if len(batch) == limit || seen[k] {
			rest = append(rest, c)
			continue
		}
		seen[k] = true
		batch = append(batch, c)
	}
	b.queue = rest
	return batch
}

// write runs one batch, taken at the limit's generation gen, and answers
// its calls, counting the callers before it answers them (answered, they
// may be back in the queue at once).
func (b *batcher[P, R]) write(ctx context.Context, batch []*batchCall[P, R], gen int) {
	ps := make([]P, len(batch))
	for i, c := range batch {
		ps[i] = c.p
	}
	res, err := b.run(ctx, ps)
	now := time.Now()
	b.mu.Lock()
	b.inFlight -= len(batch)
	b.callers = len(batch) + len(b.queue) + b.inFlight
	b.limit.observe(now, gen, len(batch), b.callers)
	b.mu.Unlock()
	for i, c := range batch {
		if err != nil {
			c.res = b.fail(err)
		} else {
			c.res = res[i]
		}
		close(c.done)
	}
}
