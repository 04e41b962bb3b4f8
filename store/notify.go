package store

import (
	"context"
	"sync"
	"time"
)

// Notifier publishes events on topics and delivers them to the subscribers
// of those topics — in one process (memstore) or in every process sharing a
// backend (PostgreSQL LISTEN/NOTIFY, Redis PUBLISH/SUBSCRIBE). Live views
// (long polls, SSE streams) are built on it.
//
// Events are hints that something changed, delivered at most once: a
// subscriber that wakes up re-reads the state it watches. Payloads are
// small (see MaxEventBytes). An empty payload, delivered as nil, may arrive
// on any topic at any time: it says events may have been lost (the
// notifier reconnected, or the subscriber fell behind and events were
// dropped after it), so the subscriber re-reads everything it shows.
type Notifier interface {
	// Publish sends payload to every current subscriber of topic.
	Publish(ctx context.Context, topic string, payload []byte) error
	// Subscribe starts delivering topic's events until the subscription is
	// closed or ctx is done. An event published after Subscribe returns is
	// delivered.
	Subscribe(ctx context.Context, topic string) (*Subscription, error)
}

// MaxEventBytes is the largest topic plus payload a Notifier must carry:
// PostgreSQL's NOTIFY takes 8,000 bytes, and its notifier base64-encodes
// the payload.
const MaxEventBytes = 4000

// Subscription receives the events of one topic on C until Close.
type Subscription struct {
	// C delivers payloads in publication order. It is closed by Close.
	C <-chan []byte
	// Local says the events come from this process only: changes that
	// other processes sharing the backend make are not announced (a
	// service given no notifier announces within its process alone), so
	// a view also re-reads every second. See Poll.
	Local bool

	close func()
	once  sync.Once
}

// NewSubscription returns a subscription delivering on c; close, called
// once by the first Close, stops delivery and closes c. A Notifier
// implementation makes its subscriptions with it.
func NewSubscription(c <-chan []byte, local bool, close func()) *Subscription {
	return &Subscription{C: c, Local: local, close: close}
}

// Close stops delivery and closes C. It is safe to call more than once.
func (s *Subscription) Close() { s.once.Do(s.close) }

// Poll is how long a view following s waits without an event before it
// re-reads what it shows anyway: a second for a Local subscription, which
// hears nothing of other processes; 30 s otherwise, only for an event the
// notifier dropped (a reconnected notifier sends the empty event itself),
// so an idle view costs the store almost nothing.
func (s *Subscription) Poll() time.Duration {
	if s.Local {
		return time.Second
	}
	return 30 * time.Second
}
