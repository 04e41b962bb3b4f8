package batch

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestGatherStopsWithTheLeadersContext: a caller that leads a batch waiting
// for callers who do not come stops waiting when its own context ends, and
// writes its batch then, rather than after maxWait.
func TestGatherStopsWithTheLeadersContext(t *testing.T) {
	var ran []int
	b := &Batcher[int, int]{
		MaxWait:  time.Hour,
		MaxBatch: 256,
		Limit:    NewLimit(1, 1),
		Key:      func(p int) string { return string(rune('a' + p)) },
		Run: func(_ context.Context, ps []int) ([]int, error) {
			ran = append(ran, len(ps))
			return ps, nil
		},
		Fail:    func(error) int { return -1 },
		callers: 4, // the last batch had four callers: this one waits for them
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	answered := make(chan error, 1)
	go func() {
		_, err := b.Do(ctx, 1)
		answered <- err
	}()
	select {
	case <-answered:
	case <-time.After(30 * time.Second):
		t.Fatal("the leader waited on after its context ended")
	}
	require.Equal(t, []int{1}, ran, "its batch was written, alone")
	require.Zero(t, b.flushers)
	require.Zero(t, b.gathering)
	require.Empty(t, b.waiters)
}

// TestBatcherWithoutKeyBatchesDuplicates: without Key, calls with equal
// parameters go in one batch, where with Key each waits for a batch of its
// own.
func TestBatcherWithoutKeyBatchesDuplicates(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		release := make(chan struct{})
		var mu sync.Mutex
		var ran [][]int
		b := &Batcher[int, int]{
			MaxBatch: 256,
			Limit:    NewLimit(1, 1),
			Run: func(_ context.Context, ps []int) ([]int, error) {
				mu.Lock()
				ran = append(ran, slices.Clone(ps))
				first := len(ran) == 1
				mu.Unlock()
				if first {
					<-release
				}
				return ps, nil
			},
			Fail: func(error) int { return -1 },
		}
		if keyed {
			b.Key = func(p int) string { return string(rune('a' + p)) }
		}
		var wg sync.WaitGroup
		call := func(p int) {
			defer wg.Done()
			r, err := b.Do(context.Background(), p)
			require.NoError(t, err)
			require.Equal(t, p, r)
		}
		wg.Add(1)
		go call(1)
		require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(ran) == 1 }, 10*time.Second, time.Millisecond)
		for range 4 {
			wg.Add(1)
			go call(7)
		}
		require.Eventually(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return len(b.queue) == 4 }, 10*time.Second, time.Millisecond)
		close(release)
		wg.Wait()
		if keyed {
			require.Equal(t, [][]int{{1}, {7}, {7}, {7}, {7}}, ran, "one of a key a batch")
		} else {
			require.Equal(t, [][]int{{1}, {7, 7, 7, 7}}, ran, "the queue in one batch")
		}
	}
}

// TestNextReadsOnlyWhatTheBatchNeeds: a batch is taken off the front of
// the queue, calls whose key it already holds stay at the front in their
// order, and the calls behind are not read, so that a crowd waiting costs
// a batch nothing.
func TestNextReadsOnlyWhatTheBatchNeeds(t *testing.T) {
	var reads int
	b := &Batcher[string, string]{MaxBatch: 256, Key: func(p string) string { reads++; return p }}
	queued := func(ps ...string) {
		for _, p := range ps {
			b.queue = append(b.queue, &batchCall[string, string]{p: p})
		}
	}
	params := func(cs []*batchCall[string, string]) []string {
		var ps []string
		for _, c := range cs {
			ps = append(ps, c.p)
		}
		return ps
	}
	queued("a", "a", "b", "a", "c", "d")
	require.Equal(t, []string{"a", "b"}, params(b.next(2)))
	require.Equal(t, []string{"a", "a", "c", "d"}, params(b.queue), "the a passed over first, in order")
	require.Equal(t, 3, reads, "read up to the batch's last call")
	require.Equal(t, []string{"a", "c", "d"}, params(b.next(3)))
	require.Equal(t, []string{"a"}, params(b.queue))

	reads = 0
	for i := range 10000 {
		queued(string(rune('a' + i%20)))
	}
	require.Len(t, b.next(1), 1)
	require.Equal(t, 1, reads, "one call read for a batch of one, 10,000 behind it")

	b.Key, b.queue = nil, nil
	queued("x", "x", "y")
	require.Equal(t, []string{"x", "x"}, params(b.next(2)), "without Key, duplicates together")
	require.Equal(t, []string{"y"}, params(b.queue))
}

// BenchmarkBatcherCrowd measures a call of a Batcher without coalescing
// (MaxBatch 1, as slots.WithoutBatching) and one coalescing, with a store
// call that costs nothing, as the callers waiting grow: a call's cost
// should not grow with them.
func BenchmarkBatcherCrowd(b *testing.B) {
	for _, maxBatch := range []int{1, 256} {
		for _, callers := range []int{8, 64, 256, 1024} {
			b.Run(fmt.Sprintf("batch=%d/callers=%d", maxBatch, callers), func(b *testing.B) {
				bt := &Batcher[int, int]{
					MaxBatch: maxBatch,
					Limit:    NewLimit(2, 2),
					Key:      func(p int) string { return strconv.Itoa(p) },
					Run:      func(_ context.Context, ps []int) ([]int, error) { return ps, nil },
					Fail:     func(error) int { return -1 },
				}
				var left atomic.Int64
				left.Store(int64(b.N))
				var wg sync.WaitGroup
				for c := range callers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for left.Add(-1) >= 0 {
							if _, err := bt.Do(context.Background(), c); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
			})
		}
	}
}
