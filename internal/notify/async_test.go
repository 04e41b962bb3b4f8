package notify_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/notify"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/memstore"
)

// gate is a Notifier whose Publish records the event and then waits until
// the test opens it, like a backend that is slow to answer.
type gate struct {
	started chan string // each event as its Publish starts
	open    chan struct{}
	mu      sync.Mutex
	got     []string
}

func newGate() *gate { return &gate{started: make(chan string, 100), open: make(chan struct{})} }

func (g *gate) Publish(ctx context.Context, topic string, payload []byte) error {
	e := topic + "=" + string(payload)
	g.started <- e
	select {
	case <-g.open:
	case <-ctx.Done():
		return ctx.Err()
	}
	g.mu.Lock()
	g.got = append(g.got, e)
	g.mu.Unlock()
	return nil
}

func (g *gate) Subscribe(ctx context.Context, topic string) (*store.Subscription, error) {
	var h notify.Hub
	return h.Subscribe(ctx, topic), nil
}

func (g *gate) published() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.got...)
}

// TestAsyncPublishesInOrderWithoutWaiting: Publish returns while the
// backend is stuck; the events then go out in order, an event equal to a
// waiting one is dropped, and one equal to an event already being sent is
// not (it announces a later change).
func TestAsyncPublishesInOrderWithoutWaiting(t *testing.T) {
	g := newGate()
	n := notify.Async(g)
	ctx := context.Background()
	require.NoError(t, n.Publish(ctx, "claims", []byte("a")))
	require.Equal(t, "claims=a", <-g.started, "a is being sent, and the backend is stuck")

	for _, p := range []string{"b", "c", "b", "a"} {
		require.NoError(t, n.Publish(ctx, "claims", []byte(p)), "Publish does not wait for the backend")
	}
	require.NoError(t, n.Publish(ctx, "games", []byte("b")), "another topic is another event")
	close(g.open)
	require.Eventually(t, func() bool { return len(g.published()) == 5 }, 5*time.Second, time.Millisecond)
	require.Equal(t, []string{"claims=a", "claims=b", "claims=c", "claims=a", "games=b"}, g.published())

	// Once drained, the next event starts a new round of publishing.
	require.NoError(t, n.Publish(ctx, "claims", []byte("b")))
	require.Eventually(t, func() bool { return len(g.published()) == 6 }, 5*time.Second, time.Millisecond)
	require.Equal(t, "claims=b", g.published()[5])
}

func TestAsyncRefusesOversizeEventsAndPassesSubscribeThrough(t *testing.T) {
	var h notify.Hub
	n := notify.Async(hubNotifier{&h})
	err := n.Publish(context.Background(), "t", []byte(strings.Repeat("x", store.MaxEventBytes)))
	require.Error(t, err)
	require.Same(t, n, notify.Async(n), "wrapping twice is wrapping once")
	require.Nil(t, notify.Async(nil))
	st := memstore.New()
	require.Same(t, st, notify.Async(st), "an in-process notifier is kept as it is")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub, err := n.Subscribe(ctx, "t")
	require.NoError(t, err)
	require.NoError(t, n.Publish(ctx, "t", []byte("hello")))
	select {
	case got := <-sub.C:
		require.Equal(t, "hello", string(got))
	case <-time.After(5 * time.Second):
		t.Fatal("the event did not arrive")
	}
}

// TestAsyncUnderRace publishes from many goroutines at once: every
// distinct event arrives (under -race).
func TestAsyncUnderRace(t *testing.T) {
	var h notify.Hub
	n := notify.Async(hubNotifier{&h})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub, err := n.Subscribe(ctx, "t")
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 4 {
				_ = n.Publish(ctx, "t", []byte{byte('a' + i), byte('0' + j)})
			}
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for len(seen) < 32 {
		select {
		case got := <-sub.C:
			seen[string(got)] = true
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d of 32 events arrived", len(seen))
		}
	}
}

// hubNotifier is the in-process Notifier over a Hub.
type hubNotifier struct{ h *notify.Hub }

func (n hubNotifier) Publish(_ context.Context, topic string, payload []byte) error {
	n.h.Deliver(topic, payload)
	return nil
}

func (n hubNotifier) Subscribe(ctx context.Context, topic string) (*store.Subscription, error) {
	return n.h.Subscribe(ctx, topic), nil
}
