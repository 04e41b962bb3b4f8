package slots

import (
	"context"
	"time"

	"github.com/agorahq/agora/internal/batch"
)

// FinishResult is one item's answer of FinishSlots: the slot as done, or
// the error FinishSlot would have returned.
type FinishResult struct {
	Slot Slot  // the slot as done; zero when Err is set
	Err  error // the item's own error, as FinishSlot's
}

// JobResult is one item's answer of TakeNextSlots: the job taken, or the
// error TakeNextSlot would have returned.
type JobResult struct {
	Job Job   // the job, its slot taken; zero when Err is set
	Err error // the item's own error, as TakeNextSlot's (ErrNoJob among them)
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
// least 2): every batch in flight costs this process CPU too. A store that
// says how many calls its server carries out at once (store.Parallel) caps
// it at one more than that: 2 on Redis, which runs one script at a time,
// and on PostgreSQL one more than the pool's connections.
// Fewer make bigger batches and so fewer commits per item (what a store
// whose commits wait for a disk wants), more overlap the round trips and
// the store's work of several batches (what a store with many idle cores
// wants).
func WithBatchFlushers(n int) Option {
	return func(s *Service) { s.batching.flushers = n }
}

// initBatchers builds the Service's batchers from its options.
func (s *Service) initBatchers() {
	b := s.batching
	limit := func() *batch.Limit { return batch.NewLimit(b.flushers, batch.Procs(s.store)) }
	doneBatch, takeBatch := MaxBatch, MaxBatch
	if b.donesOff {
		doneBatch, b.doneWait = 1, 0
	}
	if b.takesOff {
		takeBatch, b.takeWait = 1, 0
	}
	s.dones = &batch.Batcher[FinishParams, FinishResult]{
		MaxWait:  b.doneWait,
		MaxBatch: doneBatch,
		Limit:    limit(),
		Key:      func(p FinishParams) string { return p.SlotID },
		Run: func(ctx context.Context, ps []FinishParams) ([]FinishResult, error) {
			if len(ps) == 1 && b.donesOff {
				slot, err := s.store.FinishSlot(ctx, ps[0])
				return []FinishResult{{Slot: slot, Err: err}}, nil
			}
			return s.store.FinishSlots(ctx, ps)
		},
		Fail: func(err error) FinishResult { return FinishResult{Err: err} },
	}
	s.doneTakes = &batch.Batcher[FinishTakeParams, FinishTakeResult]{
		MaxWait:  b.doneWait,
		MaxBatch: doneBatch,
		Limit:    limit(),
		Key:      func(p FinishTakeParams) string { return p.Next.Agent.KeyID },
		Run: func(ctx context.Context, ps []FinishTakeParams) ([]FinishTakeResult, error) {
			defer s.takers.spreadTakes(len(ps), func(i int) *NextSlotParams { return &ps[i].Next.Next })()
			return s.store.FinishAndTakeNextSlots(ctx, ps)
		},
		Fail: func(err error) FinishTakeResult { return FinishTakeResult{Err: err} },
	}
	s.takes = &batch.Batcher[TakeNextParams, JobResult]{
		MaxWait:  b.takeWait,
		MaxBatch: takeBatch,
		Limit:    limit(),
		Key:      func(p TakeNextParams) string { return p.Agent.KeyID },
		Run: func(ctx context.Context, ps []TakeNextParams) ([]JobResult, error) {
			defer s.takers.spreadTakes(len(ps), func(i int) *NextSlotParams { return &ps[i].Next })()
			if len(ps) == 1 && b.takesOff {
				job, err := s.store.TakeNextSlot(ctx, ps[0])
				return []JobResult{{Job: job, Err: err}}, nil
			}
			return s.store.TakeNextSlots(ctx, ps)
		},
		Fail: func(err error) JobResult { return JobResult{Err: err} },
	}
}
