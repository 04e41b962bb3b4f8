package slots

import (
	"context"
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

// WithDoneBatching coalesces concurrent Done calls into one FinishSlots
// call of the store (one statement and commit on PostgreSQL, one script on
// Redis), as a batch completer does: while batches are being written (up to
// WithBatchFlushers at once), the dones that arrive wait and go together in
// the next. Concurrent DoneAndTakeNext calls are coalesced the same way into
// one FinishAndTakeNextSlots call. Each done is still decided and credited
// exactly once, in the store's atomic step.
//
// maxWait bounds how long a batch waits for the callers the last one
// answered: workers looping done → next are back a moment after their
// answer, and a batch that went without them would be followed by one of
// just those, a commit for a handful where one would do for all. A batch
// waits until it holds its share of the callers seen when a batch was last
// answered (all of them with one flusher, half with two), and no longer than
// maxWait when they do not come; a lone caller never waits. 0 writes at once
// and only coalesces what piles up meanwhile, adding no wait of its own.
//
// A Done whose context ends while its batch is in flight returns the
// context's error; its slot may then be done, as after any interrupted
// request.
func WithDoneBatching(maxWait time.Duration) Option {
	return func(s *Service) {
		s.dones = &batcher[FinishParams, FinishResult]{
			maxWait: max(maxWait, 0),
			limit:   flusherLimit{&s.batchFlushers},
			key:     func(p FinishParams) string { return p.SlotID },
			run: func(ctx context.Context, ps []FinishParams) ([]FinishResult, error) {
				return s.store.FinishSlots(ctx, ps)
			},
			fail: func(err error) FinishResult { return FinishResult{Err: err} },
		}
		s.doneTakes = &batcher[FinishTakeParams, FinishTakeResult]{
			maxWait: max(maxWait, 0),
			limit:   flusherLimit{&s.batchFlushers},
			key:     func(p FinishTakeParams) string { return p.Next.Agent.KeyID },
			run: func(ctx context.Context, ps []FinishTakeParams) ([]FinishTakeResult, error) {
				return s.store.FinishAndTakeNextSlots(ctx, ps)
			},
			fail: func(err error) FinishTakeResult { return FinishTakeResult{Err: err} },
		}
	}
}

// WithTakeBatching coalesces concurrent TakeNext calls into one
// TakeNextSlots call of the store the same way (one statement on
// PostgreSQL for the agents asking for the oldest slot with the same
// filters, one script on Redis): each agent still gets a slot of its own,
// never two seats of one claim, and no lost race. maxWait is as in
// WithDoneBatching.
func WithTakeBatching(maxWait time.Duration) Option {
	return func(s *Service) {
		s.takes = &batcher[TakeNextParams, JobResult]{
			maxWait: max(maxWait, 0),
			limit:   flusherLimit{&s.batchFlushers},
			key:     func(p TakeNextParams) string { return p.Agent.KeyID },
			run: func(ctx context.Context, ps []TakeNextParams) ([]JobResult, error) {
				return s.store.TakeNextSlots(ctx, ps)
			},
			fail: func(err error) JobResult { return JobResult{Err: err} },
		}
	}
}

// maxFlushers is how many batches of one kind a Service writes at once
// unless WithBatchFlushers says otherwise. A caller that finds fewer in
// flight writes its own batch itself, so a lone caller pays no hand-over
// and a few callers are not queued behind one another; past that, callers
// queue and go in the next batch.
const maxFlushers = 4

// WithBatchFlushers sets how many batches of one kind (dones, takes, dones
// with takes) the Service's batchers write at once; the default is 4. Fewer
// make bigger batches and so fewer commits per item, more overlap the
// round trips of several batches: a host whose store's commits are dear
// (PostgreSQL flushing its log to a slow disk) may want 1 or 2. Values
// below 1 mean the default.
func WithBatchFlushers(n int) Option {
	return func(s *Service) { s.batchFlushers = n }
}

// flusherLimit is a batcher's bound on batches in flight: the Service's
// WithBatchFlushers, read when a call arrives, so options apply in any
// order.
type flusherLimit struct{ n *int }

func (l flusherLimit) max() int {
	if l.n == nil || *l.n < 1 {
		return maxFlushers
	}
	return *l.n
}

// batcher coalesces calls into batches. A batch holds each key once (a
// slot's dones, an agent's takes): a second call with the same key waits
// for a later batch, so it sees the first one's outcome.
type batcher[P, R any] struct {
	maxWait time.Duration
	limit   flusherLimit
	key     func(P) string
	run     func(context.Context, []P) ([]R, error)
	fail    func(error) R

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
	lead := b.flushers < b.limit.max() && b.gathering == 0
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
		b.mu.Unlock()
		b.write(ctx, batch)
		if own == nil {
			continue
		}
		select {
		case <-own.done:
			b.mu.Lock()
			rest := len(b.queue) > 0
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
		return MaxBatch
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	flushers := b.limit.max()
	share := min((b.callers+flushers-1)/flushers, MaxBatch)
	if share == 0 {
		return MaxBatch
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
	limit = min(limit, MaxBatch)
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

// write runs one batch and answers its calls, counting the callers before
// it answers them (answered, they may be back in the queue at once).
func (b *batcher[P, R]) write(ctx context.Context, batch []*batchCall[P, R]) {
	ps := make([]P, len(batch))
	for i, c := range batch {
		ps[i] = c.p
	}
	res, err := b.run(ctx, ps)
	b.mu.Lock()
	b.inFlight -= len(batch)
	b.callers = len(batch) + len(b.queue) + b.inFlight
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
