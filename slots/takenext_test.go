package slots_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/memstore"
)

// crowdSpy holds every NextOpenSlot call until n have arrived, so the n
// calls are in flight at once, and records what each asked for.
type crowdSpy struct {
	slots.Store
	n       int
	mu      sync.Mutex
	got     []slots.NextSlotParams
	arrived chan struct{}
}

func (s *crowdSpy) NextOpenSlot(ctx context.Context, p slots.NextSlotParams) (slots.Job, error) {
	s.mu.Lock()
	s.got = append(s.got, p)
	if len(s.got) == s.n {
		close(s.arrived)
	}
	s.mu.Unlock()
	<-s.arrived
	return s.Store.NextOpenSlot(ctx, p)
}

// TestNextJobSpreadsACrowd: callers asking for the oldest job at the same
// time ask the store for the 1st, 2nd, … oldest eligible slot, one each; a
// caller alone, or asking at random, skips nothing.
func TestNextJobSpreadsACrowd(t *testing.T) {
	ctx := context.Background()
	const n = 8
	spy := &crowdSpy{Store: memstore.New(), n: n, arrived: make(chan struct{})}
	svc := slots.New(spy)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := svc.NextJob(identity.WithKey(ctx, identity.Key{ID: "key_a"}), slots.JobQuery{})
			require.ErrorIs(t, err, slots.ErrNoJob)
		}()
	}
	wg.Wait()
	var skips []int
	for _, p := range spy.got {
		skips = append(skips, p.Skip)
	}
	slices.Sort(skips)
	require.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, skips)

	spy.n, spy.got, spy.arrived = 1, nil, make(chan struct{})
	_, err := svc.NextJob(ctx, slots.JobQuery{})
	require.ErrorIs(t, err, slots.ErrNoJob)
	require.Zero(t, spy.got[0].Skip, "alone: the oldest")
	spy.n, spy.got, spy.arrived = 1, nil, make(chan struct{})
	_, err = svc.NextJob(ctx, slots.JobQuery{Strategy: slots.StrategyRandom})
	require.ErrorIs(t, err, slots.ErrNoJob)
	require.Zero(t, spy.got[0].Skip)
}

// takeSpy holds each TakeNextSlot call until its release is closed, and
// sends what it asked for on asked.
type takeSpy struct {
	slots.Store
	asked chan slots.TakeNextParams
	mu    sync.Mutex
	hold  map[string]chan struct{} // by agent key ID
}

func (s *takeSpy) release(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.hold[key])
}

func (s *takeSpy) TakeNextSlot(ctx context.Context, p slots.TakeNextParams) (slots.Job, error) {
	s.mu.Lock()
	h := make(chan struct{})
	s.hold[p.Agent.KeyID] = h
	s.mu.Unlock()
	s.asked <- p
	<-h
	return s.Store.TakeNextSlot(ctx, p)
}

// TestTakesInFlightSkipEachOther: a take is told how many seats the takes
// in flight are taking (Skip), but for the one that started first; the
// head skips none, and when it is answered the next take becomes the
// head. Random picks are told nothing.
func TestTakesInFlightSkipEachOther(t *testing.T) {
	ctx := context.Background()
	spy := &takeSpy{Store: memstore.New(), asked: make(chan slots.TakeNextParams), hold: map[string]chan struct{}{}}
	svc := slots.New(spy, slots.WithoutBatching(), slots.WithBatchFlushers(8))
	answered := map[string]chan struct{}{}
	take := func(key string, q slots.JobQuery) slots.TakeNextParams {
		done := make(chan struct{})
		answered[key] = done
		go func() {
			defer close(done)
			_, err := svc.TakeNext(identity.WithKey(ctx, identity.Key{ID: key}), q)
			require.ErrorIs(t, err, slots.ErrNoJob)
		}()
		return <-spy.asked
	}
	finish := func(keys ...string) {
		for _, k := range keys {
			spy.release(k)
			<-answered[k]
		}
	}
	require.Equal(t, 0, take("a", slots.JobQuery{}).Next.Skip, "alone: the head")
	require.Equal(t, 0, take("b", slots.JobQuery{}).Next.Skip, "a, the first, is not counted")
	require.Equal(t, 0, take("r", slots.JobQuery{Strategy: slots.StrategyRandom}).Next.Skip, "random")
	require.Equal(t, 1, take("c", slots.JobQuery{}).Next.Skip, "b's seat")
	require.Equal(t, 2, take("g", slots.JobQuery{}).Next.Skip, "b's and c's")
	finish("a")
	require.Equal(t, 0, take("d", slots.JobQuery{}).Next.Skip, "the head answered: the next is the head")
	require.Equal(t, 3, take("e", slots.JobQuery{}).Next.Skip, "c's, g's and d's: b is now the first")
	finish("b", "r", "c", "g", "d", "e")
	require.Equal(t, 0, take("f", slots.JobQuery{}).Next.Skip, "alone again")
	finish("f")
}
