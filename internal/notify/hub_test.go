package notify_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/notify"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/memstore"
)

// TestForServiceAlwaysGivesANotifier: a service given no notifier gets a
// Local one, whose subscriptions hear this process's events and say they
// are Local (a view re-reads every second); a given notifier's
// subscriptions are not Local (re-read every 30 s).
func TestForServiceAlwaysGivesANotifier(t *testing.T) {
	ctx := context.Background()
	local := notify.ForService(nil)
	require.NotNil(t, local)
	require.True(t, notify.IsLocal(local))
	require.True(t, notify.Quiet(local), "a Local notifier no one subscribes to is quiet")
	sub, err := local.Subscribe(ctx, "t")
	require.NoError(t, err)
	require.False(t, notify.Quiet(local), "a subscription makes it heard")
	require.True(t, sub.Local)
	require.Equal(t, time.Second, sub.Poll())
	require.NoError(t, local.Publish(ctx, "t", []byte("x")))
	require.Equal(t, "x", string(<-sub.C))
	sub.Close()
	sub.Close()
	_, open := <-sub.C
	require.False(t, open, "Close closes C, and twice is once")
	require.True(t, notify.Quiet(local), "quiet again once the subscription closed")

	st := memstore.New()
	shared := notify.ForService(st)
	require.False(t, notify.IsLocal(shared))
	require.False(t, notify.Quiet(shared), "a shared notifier may be heard by other processes")
	sub, err = shared.Subscribe(ctx, "t")
	require.NoError(t, err)
	defer sub.Close()
	require.False(t, sub.Local)
	require.Equal(t, 30*time.Second, sub.Poll())
}

// TestHubSubscriptionEndsWithItsContext: a subscription made with a
// context closes when the context ends, and a hub refuses an event over
// store.MaxEventBytes.
func TestHubSubscriptionEndsWithItsContext(t *testing.T) {
	var h notify.Hub
	ctx, cancel := context.WithCancel(context.Background())
	sub := h.Subscribe(ctx, "t")
	cancel()
	select {
	case _, open := <-sub.C:
		require.False(t, open)
	case <-time.After(5 * time.Second):
		t.Fatal("the subscription outlived its context")
	}
	require.Error(t, h.Publish(context.Background(), "t", make([]byte, store.MaxEventBytes)))
}

func TestOnResyncIsCalledAfterResync(t *testing.T) {
	t.Parallel()
	var h notify.Hub
	h.Resync() // none set: nothing to call
	calls := 0
	h.OnResync(func() { calls++ })
	h.Resync()
	h.Resync()
	h.OnResync(nil)
	h.Resync()
	if calls != 2 {
		t.Fatalf("OnResync called %d times, want 2", calls)
	}
}

// TestClosedSubscriptionLeavesNothingOnItsContext: a subscription closed
// before its context ends holds no goroutine waiting on that context, so a
// long-lived context (a service's, an MCP session's) that subscribes and
// closes again and again does not pile them up.
func TestClosedSubscriptionLeavesNothingOnItsContext(t *testing.T) {
	var h notify.Hub
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	before := runtime.NumGoroutine()
	for range 1000 {
		h.Subscribe(ctx, "t").Close()
	}
	require.Less(t, runtime.NumGoroutine()-before, 10, "goroutines left behind by closed subscriptions")

	done, stop := context.WithCancel(context.Background())
	stop()
	sub := h.Subscribe(done, "t")
	select {
	case _, open := <-sub.C:
		require.False(t, open, "a subscription made with a done context closes")
	case <-time.After(5 * time.Second):
		t.Fatal("the subscription outlived its context")
	}
}
