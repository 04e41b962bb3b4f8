package slots_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/memstore"
)

// finishSpy records the size of every FinishSlots batch, in order; each
// call lingers so that the callers not in it queue behind it.
type finishSpy struct {
	slots.Store
	mu    sync.Mutex
	sizes []int
}

func (s *finishSpy) FinishSlots(ctx context.Context, ps []slots.FinishParams) ([]slots.FinishResult, error) {
	s.mu.Lock()
	s.sizes = append(s.sizes, len(ps))
	s.mu.Unlock()
	time.Sleep(3 * time.Millisecond)
	return s.Store.FinishSlots(ctx, ps)
}

func (s *finishSpy) batches() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.sizes...)
}

// seated is workers agents, each holding one seat of each of rounds claims.
func seated(t *testing.T, svc *slots.Service, workers, rounds int) ([]identity.Key, [][]slots.Job) {
	t.Helper()
	ctx := context.Background()
	keys, held := make([]identity.Key, workers), make([][]slots.Job, workers)
	for i := range keys {
		keys[i] = identity.Key{ID: fmt.Sprint("key_w", i), Name: fmt.Sprint("w", i), Scopes: []identity.Scope{slots.ScopeCommentCreate}}
	}
	for range rounds {
		c, err := svc.CreateClaim(ctx, slots.NewClaim{Title: "t", Body: "b"})
		require.NoError(t, err)
		_, err = svc.AddComment(identity.WithKey(ctx, identity.Key{ID: "drafter"}), slots.NewComment{ClaimID: c.ID, Body: "d", CommentType: "draft"})
		require.NoError(t, err)
		_, err = svc.ConfigureSlots(ctx, c.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: workers}})
		require.NoError(t, err)
		for i, k := range keys {
			job, err := svc.TakeNext(identity.WithKey(ctx, k), slots.JobQuery{})
			require.NoError(t, err)
			held[i] = append(held[i], job)
		}
	}
	return keys, held
}

// finishAll has every agent finish its seats one after another, all agents
// at once, within a deadline: every batch waiting out the tests' maxWait
// (batchWait) would take several times longer, one doing so (the last,
// whose callers are gone) fits.
func finishAll(t *testing.T, svc *slots.Service, keys []identity.Key, held [][]slots.Job) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*batchWait)
	defer cancel()
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, job := range held[i] {
				_, err := svc.Done(identity.WithKey(ctx, keys[i]), job.Claim.ID, job.Slot.ID)
				require.NoError(t, err)
			}
		}()
	}
	wg.Wait()
}

// finishedInBatches has workers agents finish rounds seats each through a
// Service with the given flushers and a maxWait of batchWait, and returns
// the sizes of the store's batches, checking that every done went in one
// once.
func finishedInBatches(t *testing.T, flushers, workers, rounds int) []int {
	t.Helper()
	spy := &finishSpy{Store: memstore.New()}
	svc := slots.New(spy, slots.WithBatchFlushers(flushers), slots.WithDoneBatching(batchWait))
	keys, held := seated(t, svc, workers, rounds)
	finishAll(t, svc, keys, held)
	sizes := spy.batches()
	total := 0
	for _, n := range sizes {
		total += n
	}
	require.Equal(t, workers*rounds, total, "every done went in a batch once: %v", sizes)
	return sizes
}

// batchWait is the tests' maxWait: far longer than a batch of theirs takes.
const batchWait = time.Second

// TestBatchWaitGathersReturningCallers: with a maxWait, a batch goes as
// soon as the callers the last one answered are back, not before (one
// flusher: every batch after the first holds every worker, where without
// the wait the callers split into a batch of the one that came back first
// and one of the rest) and not later (its maxWait is waited out only by the
// last batch, whose first caller has finished its rounds).
func TestBatchWaitGathersReturningCallers(t *testing.T) {
	const workers, rounds = 8, 6
	sizes := finishedInBatches(t, 1, workers, rounds)
	// The first caller finds no batch in flight and goes alone; the rest
	// queue behind it, and from then on each batch waits for the ones the
	// last answered: all the workers but the first caller's one round ahead
	// ([1 8 8 8 8 8 7]). On a loaded machine the rest may not all have
	// queued when the first is answered, and the second batch goes with
	// those that had ([1 4 8 8 8 8 7 4]): a round's split at the start, never
	// one every round as without the wait.
	full := 0
	for _, n := range sizes {
		require.LessOrEqual(t, n, workers, "%v", sizes)
		if n == workers {
			full++
		}
	}
	require.LessOrEqual(t, len(sizes), rounds+2, "batches: %v", sizes)
	require.GreaterOrEqual(t, full, rounds-2, "batches holding every worker: %v", sizes)
}

// TestBatchWaitSharesCallersAmongFlushers: with two flushers each batch
// expects half the callers, so two batches overlap instead of one taking
// everyone and leaving the other idle.
func TestBatchWaitSharesCallersAmongFlushers(t *testing.T) {
	const workers = 8
	sizes := finishedInBatches(t, 2, workers, 8)
	// Before the first batch is answered there is no share to keep to.
	for i, n := range sizes[2:] {
		require.LessOrEqual(t, n, workers/2, "batch %d of %v", i+2, sizes)
	}
	// On a loaded machine (the whole suite under -race) a caller is
	// sometimes not back within a batch's wait and goes in the next one,
	// ([2 2 3 3 4 4 2 4 2 2 4 3 3 4 4 2 2 4 4 4 2] in one such run), so
	// the full shares are counted against a third of the batches.
	full := 0
	for _, n := range sizes {
		if n == workers/2 {
			full++
		}
	}
	require.GreaterOrEqual(t, full, len(sizes)/3, "batches holding their whole share: %v", sizes)
}

// TestBatchWaitIsBounded: a lone caller never waits for others, and
// callers that stop coming back hold the next batch up for no longer than
// maxWait.
func TestBatchWaitIsBounded(t *testing.T) {
	t.Run("lone", func(t *testing.T) {
		spy := &finishSpy{Store: memstore.New()}
		svc := slots.New(spy, slots.WithDoneBatching(time.Hour)) // waited out even once, it fails
		keys, held := seated(t, svc, 1, 5)
		finishAll(t, svc, keys, held)
		require.Equal(t, []int{1, 1, 1, 1, 1}, spy.batches())
	})
	t.Run("gone", func(t *testing.T) {
		spy := &finishSpy{Store: memstore.New()}
		svc := slots.New(spy, slots.WithBatchFlushers(1), slots.WithDoneBatching(batchWait))
		keys, held := seated(t, svc, 8, 2)
		first := make([][]slots.Job, len(held))
		for i := range held {
			first[i] = held[i][:1]
		}
		finishAll(t, svc, keys, first)
		// Seven of the eight do not come back: the last one's done waits
		// for them until maxWait, then goes alone.
		finishAll(t, svc, keys[:1], [][]slots.Job{held[0][1:]})
		sizes := spy.batches()
		require.Equal(t, 1, sizes[len(sizes)-1], "%v", sizes)
	})
}

// singleSpy counts the FinishSlot calls in flight at once; FinishSlots
// (a batch) fails the test.
type singleSpy struct {
	slots.Store
	t                   *testing.T
	mu                  sync.Mutex
	inflight, most, sum int
}

func (s *singleSpy) FinishSlot(ctx context.Context, p slots.FinishParams) (slots.Slot, error) {
	s.mu.Lock()
	s.inflight++
	s.most = max(s.most, s.inflight)
	s.sum++
	s.mu.Unlock()
	time.Sleep(2 * time.Millisecond)
	defer func() { s.mu.Lock(); s.inflight--; s.mu.Unlock() }()
	return s.Store.FinishSlot(ctx, p)
}

func (s *singleSpy) FinishSlots(context.Context, []slots.FinishParams) ([]slots.FinishResult, error) {
	s.t.Error("WithoutBatching wrote a batch")
	return nil, nil
}

// TestWithoutBatchingBoundsCallsInFlight: without batching each Done is its
// own FinishSlot, and a crowd of callers still has no more of them in
// flight than the Service's limit.
func TestWithoutBatchingBoundsCallsInFlight(t *testing.T) {
	spy := &singleSpy{Store: memstore.New(), t: t}
	svc := slots.New(spy, slots.WithoutBatching(), slots.WithBatchFlushers(3))
	const workers = 20 // a claim's most seats
	keys, held := seated(t, svc, workers, 2)
	finishAll(t, svc, keys, held)
	require.Equal(t, 2*workers, spy.sum, "every done its own store call")
	require.LessOrEqual(t, spy.most, 3, "calls in flight at once")
	require.Greater(t, spy.most, 1, "the limit lets several run at once")
}

// parallelSpy is a store whose server carries out par calls at once
// (store.Parallel; 0: it does not say), counting the FinishSlots batches in
// flight at once; each lingers so that the others overlap it.
type parallelSpy struct {
	slots.Store
	par            int
	mu             sync.Mutex
	inflight, most int
}

func (s *parallelSpy) Parallelism() int { return s.par }

func (s *parallelSpy) FinishSlots(ctx context.Context, ps []slots.FinishParams) ([]slots.FinishResult, error) {
	s.mu.Lock()
	s.inflight++
	s.most = max(s.most, s.inflight)
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.inflight--; s.mu.Unlock() }()
	time.Sleep(time.Millisecond)
	return s.Store.FinishSlots(ctx, ps)
}

// TestBatchesInFlightFollowStoreParallelism: the adaptive limit climbs
// past two batches in flight where the CPUs allow (here eight), but not on
// a store whose server carries out one call at once: a third batch there
// would only wait behind the other two.
func TestBatchesInFlightFollowStoreParallelism(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	most := func(par int) int {
		spy := &parallelSpy{Store: memstore.New(), par: par}
		svc := slots.New(spy)
		keys, held := seated(t, svc, 20, 60)
		finishAll(t, svc, keys, held)
		return spy.most
	}
	require.Greater(t, most(0), 2, "batches in flight at once, the store not saying")
	require.LessOrEqual(t, most(1), 2, "batches in flight at once on a store of one call at a time")
}
