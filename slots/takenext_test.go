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
