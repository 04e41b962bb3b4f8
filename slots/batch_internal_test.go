package slots

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestGatherStopsWithTheLeadersContext: a caller that leads a batch waiting
// for callers who do not come stops waiting when its own context ends, and
// writes its batch then, rather than after maxWait.
func TestGatherStopsWithTheLeadersContext(t *testing.T) {
	one := 1
	var ran []int
	b := &batcher[int, int]{
		maxWait: time.Hour,
		limit:   flusherLimit{&one},
		key:     func(p int) string { return string(rune('a' + p)) },
		run: func(_ context.Context, ps []int) ([]int, error) {
			ran = append(ran, len(ps))
			return ps, nil
		},
		fail:    func(error) int { return -1 },
		callers: 4, // the last batch had four callers: this one waits for them
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	answered := make(chan error, 1)
	go func() {
		_, err := b.do(ctx, 1)
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
