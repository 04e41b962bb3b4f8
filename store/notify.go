package store

import (
	"context"
	"sync"
)

// Notifier publishes events on topics and delivers them to the subscribers
// of those topics — in one process (memstore) or in every process sharing a
// backend (PostgreSQL LISTEN/NOTIFY, Redis PUBLISH/SUBSCRIBE). Live views
// (long polls, SSE streams) are built on it.
//
// Events are hints that something changed, delivered at most once: a
// subscriber that wakes up re-reads the state it watches, and a subscriber
// that is not keeping up misses events it would only have re-read for
// anyway (see Subscription). Payloads are small (see MaxEventBytes). An
// empty payload may arrive on any topic at any time: it says events may
// have been lost (the notifier reconnected, see Hub.Resync), so the
// subscriber re-reads everything it shows.
type Notifier interface {
	// Publish sends payload to every current subscriber of topic.
	Publish(ctx context.Context, topic string, payload []byte) error
	// Subscribe starts delivering topic's events until the subscription is
	// closed or ctx is done.
	Subscribe(ctx context.Context, topic string) (*Subscription, error)
}

// MaxEventBytes is the largest topic plus payload a Notifier must carry:
// PostgreSQL's NOTIFY takes 8,000 bytes, and its notifier base64-encodes
// the payload.
const MaxEventBytes = 4000

// subscriptionBuffer is how many undelivered events a subscription holds.
// When it is full a new event is dropped: the subscriber has events pending
// already, and reading them it re-reads the state the dropped one announced.
const subscriptionBuffer = 64

// Subscription receives the events of one topic on C until Close.
type Subscription struct {
	// C delivers payloads in publication order. It is closed by Close.
	C <-chan []byte

	c     chan []byte
	hub   *Hub
	topic string
	once  sync.Once
}

// Close stops delivery and closes C. It is safe to call more than once.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.hub.mu.Lock()
		delete(s.hub.subs[s.topic], s)
		if len(s.hub.subs[s.topic]) == 0 {
			delete(s.hub.subs, s.topic)
		}
		close(s.c)
		s.hub.mu.Unlock()
	})
}

// Hub fans events out to the subscriptions of this process. memstore uses
// it as its Notifier; the PostgreSQL and Redis notifiers feed it from their
// one listening connection. The zero value is ready to use.
type Hub struct {
	mu   sync.Mutex
	subs map[string]map[*Subscription]struct{}
}

// Subscribe registers a subscription to topic; it is closed when ctx is
// done or Close is called.
func (h *Hub) Subscribe(ctx context.Context, topic string) *Subscription {
	c := make(chan []byte, subscriptionBuffer)
	s := &Subscription{C: c, c: c, hub: h, topic: topic}
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[string]map[*Subscription]struct{}{}
	}
	if h.subs[topic] == nil {
		h.subs[topic] = map[*Subscription]struct{}{}
	}
	h.subs[topic][s] = struct{}{}
	h.mu.Unlock()
	if ctx.Done() != nil {
		go func() {
			<-ctx.Done()
			s.Close()
		}()
	}
	return s
}

// Deliver hands payload to every subscription of topic without blocking.
func (h *Hub) Deliver(topic string, payload []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs[topic] {
		select {
		case s.c <- payload:
		default: // full: the subscriber has a wake-up pending already
		}
	}
}

// Resync hands an empty payload to every subscription of every topic, as if
// each had been told "something changed, re-read it all". The PostgreSQL and
// Redis notifiers call it when their listening connection comes back after
// a cut, since events published meanwhile were never received: a live view
// that re-reads on every event catches up instead of missing them for good.
func (h *Hub) Resync() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, subs := range h.subs {
		for s := range subs {
			select {
			case s.c <- nil:
			default: // full: the subscriber has a wake-up pending already
			}
		}
	}
}

// Topics returns how many topics have subscribers (for tests and metrics).
func (h *Hub) Topics() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}
