package redisstore

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/agorahq/agora/internal/notify"
	"github.com/agorahq/agora/store"
)

var _ store.Notifier = (*Store)(nil)

// notifier carries events between processes on one Redis channel per store,
// "{prefix}:events", each message "<topic>\x00<payload>". One subscription
// connection per Store feeds a notify.Hub that fans events out in-process, so
// a thousand watchers cost one connection, not a thousand.
type notifier struct {
	mu     sync.Mutex
	pubsub *redis.PubSub
	hub    notify.Hub
}

func (s *Store) eventsChannel() string { return s.key("events") }

// Publish implements store.Notifier: every process subscribed through a
// Store with the same prefix receives the event.
func (s *Store) Publish(ctx context.Context, topic string, payload []byte) error {
	if len(topic)+len(payload) > store.MaxEventBytes {
		return fmt.Errorf("redisstore: event of %d bytes on %q is over %d", len(payload), topic, store.MaxEventBytes)
	}
	msg := make([]byte, 0, len(topic)+1+len(payload))
	msg = append(append(append(msg, topic...), 0), payload...)
	if err := s.client.Publish(ctx, s.eventsChannel(), msg).Err(); err != nil {
		return interpretError(ctx, err, nil)
	}
	return nil
}

// Subscribe implements store.Notifier. The first call opens the store's
// subscription connection and waits until Redis confirms it, so an event
// published after Subscribe returns is delivered.
func (s *Store) Subscribe(ctx context.Context, topic string) (*store.Subscription, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := s.events
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.pubsub == nil {
		ps := s.client.Subscribe(context.WithoutCancel(ctx), s.eventsChannel())
		if _, err := ps.Receive(ctx); err != nil {
			_ = ps.Close()
			return nil, interpretError(ctx, err, nil)
		}
		n.pubsub = ps
		go func() {
			// go-redis re-subscribes by itself after a cut connection; the
			// confirmation it then receives tells that events published
			// meanwhile were lost, so every subscriber re-reads.
			for m := range ps.ChannelWithSubscriptions() {
				switch m := m.(type) {
				case *redis.Subscription:
					if m.Kind == "subscribe" {
						n.hub.Resync()
					}
				case *redis.Message:
					topic, payload, ok := bytes.Cut([]byte(m.Payload), []byte{0})
					if ok {
						n.hub.Deliver(string(topic), payload)
					}
				}
			}
		}()
	}
	return n.hub.Subscribe(ctx, topic), nil
}

// OnResync sets fn to be called each time the subscription connection came
// back after a cut and every subscriber was told to re-read: what an
// operator counts as the notifier's reconnects. nil removes it.
func (s *Store) OnResync(fn func()) { s.events.hub.OnResync(fn) }

// Close releases the store's subscription connection, if Subscribe opened
// one. The client itself stays open: it belongs to the caller.
func (s *Store) Close() error {
	s.events.mu.Lock()
	defer s.events.mu.Unlock()
	if s.events.pubsub == nil {
		return nil
	}
	err := s.events.pubsub.Close()
	s.events.pubsub = nil
	return err
}
