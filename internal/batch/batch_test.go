package batch

import (
	"context"
	"slices"
	"sync"
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
