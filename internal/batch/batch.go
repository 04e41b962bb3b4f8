// Package batch coalesces concurrent calls into batches, one store call
// each, with an adaptive bound on the batches in flight: the slots
// Service's job-queue calls and the identity Service's key lookups.
package batch

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Batcher coalesces calls into batches. With Key, a batch holds each key
// once (a slot's dones, an agent's takes): a second call with the same key
// waits for a later batch, so it sees the first one's outcome. Its fields
// are set before its first call and not changed after.
type Batcher[P, R any] struct {
	// MaxWait bounds how long a batch waits for the callers the last one
	// answered (see gather); 0: it never waits.
	MaxWait time.Duration
	// MaxBatch is the most calls a batch holds; 1: each call its own.
	MaxBatch int
	// Limit bounds the batches in flight.
	Limit *Limit
	// Key, when set, names the calls a batch may hold only one of.
	Key func(P) string
	// Run answers a batch, one result per call in order.
	Run func(context.Context, []P) ([]R, error)
	// Fail is each call's result when Run returns an error.
	Fail func(error) R

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

// Do queues p and waits for its result, or for ctx to end; when fewer than
// the limit's batches are in flight and none is gathering callers, it
// writes batches itself until its own is answered.
func (b *Batcher[P, R]) Do(ctx context.Context, p P) (R, error) {
	c := &batchCall[P, R]{p: p, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, c)
	b.wakeWaiters()
	// A flusher gathering a batch takes this call with it; another would
	// only split the batch.
	lead := b.flushers < b.Limit.n && b.gathering == 0
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
func (b *Batcher[P, R]) flush(ctx context.Context, own *batchCall[P, R], stop <-chan struct{}) {
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
		gen := b.Limit.gen
		b.mu.Unlock()
		b.write(ctx, batch, gen)
		if own == nil {
			// A flusher past a limit that came down retires; the others
			// carry on with the queue.
			b.mu.Lock()
			retire := b.flushers > b.Limit.n
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
			rest := len(b.queue) > 0 && b.flushers <= b.Limit.n
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
func (b *Batcher[P, R]) gather(own *batchCall[P, R], stop <-chan struct{}) int {
	if b.MaxWait <= 0 {
		return b.MaxBatch
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	flushers := b.Limit.n
	share := min((b.callers+flushers-1)/flushers, b.MaxBatch)
	if share == 0 {
		return b.MaxBatch
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
	deadline := time.NewTimer(b.MaxWait)
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
func (b *Batcher[P, R]) wakeWaiters() {
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
// caller holds b.mu. It reads the queue only as far as the batch needs, so
// that a batch costs the same however many calls wait behind it: with
// MaxBatch 1, reading the whole queue for each call cost each call time in
// proportion to the crowd. Calls passed over (a key already in the batch)
// stay at the front, in their order.
func (b *Batcher[P, R]) next(limit int) []*batchCall[P, R] {
	limit = min(limit, b.MaxBatch)
	q := b.queue
	var batch, passed []*batchCall[P, R]
	i := 0
	if b.Key == nil {
		i = min(limit, len(q))
		batch = slices.Clone(q[:i])
	} else {
		seen := map[string]bool{}
		for ; i < len(q) && len(batch) < limit; i++ {
			k := b.Key(q[i].p)
			if seen[k] {
				passed = append(passed, q[i])
				continue
			}
			seen[k] = true
			batch = append(batch, q[i])
		}
	}
	// The queue keeps its array: the calls read go, those passed over move
	// up to just before the calls not read, and the places freed are cleared
	// so that the array holds no answered call.
	start := i - len(passed)
	copy(q[start:i], passed)
	clear(q[:start])
	b.queue = q[start:]
	return batch
}

// write runs one batch, taken at the limit's generation gen, and answers
// its calls, counting the callers before it answers them (answered, they
// may be back in the queue at once).
func (b *Batcher[P, R]) write(ctx context.Context, batch []*batchCall[P, R], gen int) {
	ps := make([]P, len(batch))
	for i, c := range batch {
		ps[i] = c.p
	}
	res, err := b.Run(ctx, ps)
	now := time.Now()
	b.mu.Lock()
	b.inFlight -= len(batch)
	b.callers = len(batch) + len(b.queue) + b.inFlight
	b.Limit.observe(now, gen, len(batch), b.callers)
	b.mu.Unlock()
	for i, c := range batch {
		if err != nil {
			c.res = b.Fail(err)
		} else {
			c.res = res[i]
		}
		close(c.done)
	}
}
