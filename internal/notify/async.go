package notify

import (
	"github.com/agorahq/agora/store"

	"context"
	"fmt"
	"sync"
	"time"
)

// Async returns a Notifier whose Publish hands the event to a background
// goroutine and returns at once, so announcing a change costs the caller
// no round trip to the backend: a take or a posted argument stays one
// round trip. Subscribe is n's.
//
// Events are published in the order they were handed over. An event equal
// to one still waiting to go out (same topic and payload) is dropped: the
// waiting one announces the same change, and goes out after it. The
// goroutine runs only while events wait. If n falls more than
// MaxBacklog events behind, new events are dropped until it catches
// up — they are hints (see Notifier), and a view re-reads on the next one.
//
// A notifier that is InProcess is returned as it is: handing its events to
// another goroutine would cost more than delivering them.
func Async(n store.Notifier) store.Notifier {
	switch n.(type) {
	case nil, *asyncNotifier, InProcess:
		return n
	}
	return &asyncNotifier{n: n, waiting: map[event]bool{}}
}

// InProcess is implemented by a Notifier whose Publish delivers within this
// process without waiting on any I/O (memstore's).
type InProcess interface {
	store.Notifier
	// PublishesInProcess marks the notifier; it does nothing.
	PublishesInProcess()
}

// MaxBacklog bounds how many events an Async notifier holds.
const MaxBacklog = 10_000

// asyncPublishTimeout bounds one background Publish.
const asyncPublishTimeout = 10 * time.Second

type event struct{ topic, payload string }

type asyncNotifier struct {
	n store.Notifier

	mu      sync.Mutex
	queue   []event
	waiting map[event]bool
	running bool
}

// Publish implements Notifier. It fails only for an event over
// MaxEventBytes, which no backend carries.
func (a *asyncNotifier) Publish(_ context.Context, topic string, payload []byte) error {
	if len(topic)+len(payload) > store.MaxEventBytes {
		return fmt.Errorf("notify: event of %d bytes on %q is over %d", len(payload), topic, store.MaxEventBytes)
	}
	e := event{topic, string(payload)}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.waiting[e] || len(a.queue) >= MaxBacklog {
		return nil
	}
	a.queue = append(a.queue, e)
	a.waiting[e] = true
	if !a.running {
		a.running = true
		go a.drain()
	}
	return nil
}

// drain publishes the waiting events in order and returns when none is
// left.
func (a *asyncNotifier) drain() {
	for {
		a.mu.Lock()
		if len(a.queue) == 0 {
			a.queue = nil // let a long backlog's array go
			a.running = false
			a.mu.Unlock()
			return
		}
		e := a.queue[0]
		a.queue = a.queue[1:]
		delete(a.waiting, e) // an equal event from now on announces a later change
		a.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), asyncPublishTimeout)
		_ = a.n.Publish(ctx, e.topic, []byte(e.payload)) // a lost hint only delays a view until its next re-read
		cancel()
	}
}

// Subscribe implements Notifier.
func (a *asyncNotifier) Subscribe(ctx context.Context, topic string) (*store.Subscription, error) {
	return a.n.Subscribe(ctx, topic)
}
