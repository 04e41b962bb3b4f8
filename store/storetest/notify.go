package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/store"
)

// eventTimeout bounds how long the suite waits for an event that must come.
const eventTimeout = 5 * time.Second

func receive(t *testing.T, s *store.Subscription) string {
	t.Helper()
	select {
	case p, ok := <-s.C:
		require.True(t, ok, "subscription closed")
		return string(p)
	case <-time.After(eventTimeout):
		t.Fatal("no event within", eventTimeout)
	}
	return ""
}

func requireNoEvent(t *testing.T, s *store.Subscription) {
	t.Helper()
	select {
	case p := <-s.C:
		t.Fatalf("unexpected event %q", p)
	case <-time.After(100 * time.Millisecond):
	}
}

// RunNotifier runs the notifier section: events reach subscribers of their
// topic in this process and in another process on the same backend (the
// Peer), in order, and stop at Close or when the context ends.
func RunNotifier(t *testing.T, newStores NewStores) {
	newStores = requireNotifiers(newStores)
	t.Run("FanOutAcrossProcesses", func(t *testing.T) {
		t.Parallel()
		st := newStores(t)
		ctx := context.Background()
		here, err := st.Notifier.Subscribe(ctx, "claim:1")
		require.NoError(t, err)
		defer here.Close()
		there, err := st.Peer.Subscribe(ctx, "claim:1")
		require.NoError(t, err)
		defer there.Close()
		other, err := st.Peer.Subscribe(ctx, "claim:2")
		require.NoError(t, err)
		defer other.Close()

		for i := 0; i < 10; i++ {
			require.NoError(t, st.Notifier.Publish(ctx, "claim:1", []byte(fmt.Sprint("v", i))))
		}
		for i := 0; i < 10; i++ {
			require.Equal(t, fmt.Sprint("v", i), receive(t, here))
			require.Equal(t, fmt.Sprint("v", i), receive(t, there))
		}
		require.NoError(t, st.Peer.Publish(ctx, "claim:2", []byte("from the peer")))
		require.Equal(t, "from the peer", receive(t, other))
		requireNoEvent(t, here)
	})

	t.Run("ResyncAfterCut", func(t *testing.T) {
		t.Parallel()
		st := newStores(t)
		if st.CutPeer == nil {
			t.Skip("this backend's notifier has no connection to cut")
		}
		ctx := context.Background()
		sub, err := st.Peer.Subscribe(ctx, "claim:1")
		require.NoError(t, err)
		defer sub.Close()
		require.NoError(t, st.Notifier.Publish(ctx, "claim:1", []byte("before")))
		require.Equal(t, "before", receive(t, sub))

		st.CutPeer(t)
		// Published while the peer may be away: it may never arrive, so
		// the peer's subscribers must be told to re-read once it is back.
		require.NoError(t, st.Notifier.Publish(ctx, "claim:1", []byte("during")))
		for got := receive(t, sub); got != ""; got = receive(t, sub) {
			require.Equal(t, "during", got, "only the event published during the cut may come before the re-read")
		}
		require.NoError(t, st.Notifier.Publish(ctx, "claim:1", []byte("after")))
		got := receive(t, sub)
		if got == "during" { // the peer was back before it was published
			got = receive(t, sub)
		}
		require.Equal(t, "after", got, "events flow again after the reconnect")
	})

	t.Run("SubscriberBehindIsToldToReRead", func(t *testing.T) {
		t.Parallel()
		st := newStores(t)
		ctx := context.Background()
		behind, err := st.Peer.Subscribe(ctx, "claim:1")
		require.NoError(t, err)
		defer behind.Close()
		marker, err := st.Peer.Subscribe(ctx, "marker")
		require.NoError(t, err)
		defer marker.Close()
		// Far more events than a subscription holds while its reader is
		// busy elsewhere, each naming what changed (as a claim's hint
		// does), then the empty event the convention allows.
		const n = 300
		for i := 0; i < n; i++ {
			require.NoError(t, st.Notifier.Publish(ctx, "claim:1", []byte(fmt.Sprint("v", i))))
		}
		require.NoError(t, st.Notifier.Publish(ctx, "claim:1", []byte{}))
		require.NoError(t, st.Notifier.Publish(ctx, "marker", []byte("all sent")))
		require.Equal(t, "all sent", receive(t, marker), "events of one notifier arrive in order")
		// The reader may miss events, but never silently: an event
		// dropped for it comes after an empty one still waiting, so the
		// re-read it does for that one sees what the dropped one named.
		var got [][]byte
		for len(got) == 0 || len(got[len(got)-1]) > 0 {
			select {
			case p, ok := <-behind.C:
				require.True(t, ok, "subscription closed")
				got = append(got, p)
			case <-time.After(eventTimeout):
				t.Fatalf("after %d events none is the empty one that says to re-read", len(got))
			}
		}
		require.Nil(t, got[len(got)-1], "an empty event is delivered as nil, whatever slice was published")
		for i, p := range got[:len(got)-1] {
			require.Equal(t, fmt.Sprint("v", i), string(p), "in order, and none dropped before the empty event")
		}
	})

	t.Run("CloseAndCancel", func(t *testing.T) {
		t.Parallel()
		st := newStores(t)
		ctx, cancel := context.WithCancel(context.Background())
		a, err := st.Notifier.Subscribe(ctx, "topic")
		require.NoError(t, err)
		b, err := st.Notifier.Subscribe(context.Background(), "topic")
		require.NoError(t, err)
		b.Close()
		b.Close()
		_, ok := <-b.C
		require.False(t, ok, "Close closes C")
		cancel()
		select {
		case _, ok := <-a.C:
			require.False(t, ok, "a done context closes C")
		case <-time.After(eventTimeout):
			t.Fatal("subscription outlived its context")
		}
		require.NoError(t, st.Notifier.Publish(context.Background(), "topic", []byte("nobody listens")))

		_, err = st.Notifier.Subscribe(ctx, "topic")
		require.ErrorIs(t, err, context.Canceled)
		big := make([]byte, store.MaxEventBytes+1)
		require.Error(t, st.Notifier.Publish(context.Background(), "topic", big))
	})
}

func requireNotifiers(newStores NewStores) NewStores {
	return func(t *testing.T) Stores {
		st := newStores(t)
		if st.Notifier == nil || st.Peer == nil {
			t.Fatal("storetest: Stores.Notifier and Stores.Peer are required")
		}
		return st
	}
}

// watched wraps n so the returned channel is closed once a subscription
// through it has been made: a test waits on it instead of sleeping to let
// a waiter subscribe.
func watched(n store.Notifier) (store.Notifier, <-chan struct{}) {
	w := &watchedNotifier{Notifier: n, subscribed: make(chan struct{})}
	return w, w.subscribed
}

type watchedNotifier struct {
	store.Notifier
	subscribed chan struct{}
	once       sync.Once
}

func (w *watchedNotifier) Subscribe(ctx context.Context, topic string) (*store.Subscription, error) {
	s, err := w.Notifier.Subscribe(ctx, topic)
	if err == nil {
		w.once.Do(func() { close(w.subscribed) })
	}
	return s, err
}
