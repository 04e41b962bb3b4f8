// Package notify holds the machinery behind Agora's notifiers: the
// in-process fan-out every backend's notifier delivers through (Hub), the
// notifier a service uses when it is given none (Local), and the wrapper
// that takes publishing off a caller's path (Async).
package notify

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/agorahq/agora/store"
)

// subscriptionBuffer is how many undelivered events a subscription holds.
// Its last place is kept for the empty event: an event that finds one place
// left is replaced by an empty one, and one that finds none is dropped
// behind it. A subscriber that fell behind thus reads the events it could
// hold and then the empty one, and the re-read that one asks for sees what
// the dropped events named — a hint naming one claim or prompt is never
// lost without a word.
const subscriptionBuffer = 64

// Hub fans events out to the subscriptions of this process. memstore uses
// it as its Notifier; the PostgreSQL and Redis notifiers feed it from their
// one listening connection. The zero value is ready to use.
type Hub struct {
	// Local marks the hub's subscriptions store.Subscription.Local: the
	// hub hears this process alone while others share the backend.
	Local bool

	mu       sync.Mutex
	subs     map[string]map[chan []byte]struct{}
	open     atomic.Int64           // subscriptions not yet closed, read without the lock
	onResync atomic.Pointer[func()] // called after each Resync
}

// OnResync sets fn to be called after every Resync, outside the hub's
// lock: an operator's count of the notifier's reconnects. nil removes it.
func (h *Hub) OnResync(fn func()) {
	if fn == nil {
		h.onResync.Store(nil)
		return
	}
	h.onResync.Store(&fn)
}

// Subscribe registers a subscription to topic; it is closed when ctx is
// done or Close is called.
func (h *Hub) Subscribe(ctx context.Context, topic string) *store.Subscription {
	c := make(chan []byte, subscriptionBuffer)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[string]map[chan []byte]struct{}{}
	}
	if h.subs[topic] == nil {
		h.subs[topic] = map[chan []byte]struct{}{}
	}
	h.subs[topic][c] = struct{}{}
	h.open.Add(1)
	h.mu.Unlock()
	// Closed with ctx, by a callback that Close unregisters: a subscription
	// closed first leaves nothing waiting on a context that lives on.
	var s *store.Subscription
	made := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		<-made
		s.Close()
	})
	s = store.NewSubscription(c, h.Local, func() {
		stop()
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs[topic], c)
		h.open.Add(-1)
		if len(h.subs[topic]) == 0 {
			delete(h.subs, topic)
		}
		close(c)
	})
	close(made)
	return s
}

// Deliver hands payload to every subscription of topic without blocking.
// An empty payload is delivered as nil. A subscription with one place left
// gets the empty event instead, and one with none drops payload: the empty
// event waiting there makes its reader re-read everything.
func (h *Hub) Deliver(topic string, payload []byte) {
	if len(payload) == 0 {
		payload = nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.subs[topic] {
		send(c, payload)
	}
}

// send puts payload on c unless that would take c's last place, which only
// the empty event takes; c is full only behind an empty event. Only the
// hub, holding its lock, sends on c, so its length only falls meanwhile.
func send(c chan []byte, payload []byte) {
	if len(c) >= cap(c)-1 {
		payload = nil
	}
	select {
	case c <- payload:
	default: // full: the empty event waiting says to re-read
	}
}

// Resync hands an empty payload to every subscription of every topic, as if
// each had been told "something changed, re-read it all". The PostgreSQL and
// Redis notifiers call it when their listening connection comes back after
// a cut, since events published meanwhile were never received: a live view
// that re-reads on every event catches up instead of missing them for good.
func (h *Hub) Resync() {
	h.mu.Lock()
	for _, subs := range h.subs {
		for c := range subs {
			send(c, nil)
		}
	}
	h.mu.Unlock()
	if fn := h.onResync.Load(); fn != nil {
		(*fn)()
	}
}

// Publish delivers within this process, refusing an event over
// store.MaxEventBytes as every backend does.
func (h *Hub) Publish(ctx context.Context, topic string, payload []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(topic)+len(payload) > store.MaxEventBytes {
		return fmt.Errorf("notify: event of %d bytes on %q is over %d", len(payload), topic, store.MaxEventBytes)
	}
	h.Deliver(topic, payload)
	return nil
}

// PublishesInProcess marks Hub InProcess.
func (*Hub) PublishesInProcess() {}

// Notifier adapts h to store.Notifier.
func (h *Hub) Notifier() store.Notifier { return hubNotifier{h} }

type hubNotifier struct{ *Hub }

func (n hubNotifier) Subscribe(ctx context.Context, topic string) (*store.Subscription, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return n.Hub.Subscribe(ctx, topic), nil
}

// Local returns the notifier of a service given none: its events reach
// the subscribers of this service in this process, so a change made here
// wakes the views that follow it at once, and its subscriptions are Local,
// so views re-read every second for the changes other processes make.
func Local() store.Notifier { return (&Hub{Local: true}).Notifier() }

// ForService is the notifier a service given n publishes through: n's
// announcements sent from the background (Async), or Local when n is nil,
// so a service always has a notifier and its Subscribe never returns nil.
func ForService(n store.Notifier) store.Notifier {
	if n == nil {
		return Local()
	}
	return Async(n)
}

// IsLocal reports whether n is a Local notifier, whose events never reach
// another process.
func IsLocal(n store.Notifier) bool {
	h, ok := n.(hubNotifier)
	return ok && h.Hub.Local
}

// Quiet reports whether an event published on n now would reach no one:
// n is a Local notifier and nothing subscribes to it. A service skips
// building and publishing its announcements then, so a service given no
// notifier pays nothing for announcing to views no one opened.
func Quiet(n store.Notifier) bool {
	h, ok := n.(hubNotifier)
	return ok && h.Hub.Local && h.Hub.open.Load() == 0
}
