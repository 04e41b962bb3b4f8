package memstore

import (
	"context"
	"fmt"

	"github.com/agorahq/agora/store"
)

var _ store.InProcess = (*Store)(nil)

// PublishesInProcess implements store.InProcess: Publish hands events to
// this process's subscribers without waiting, so store.Async leaves the
// Store as it is.
func (*Store) PublishesInProcess() {}

// Publish implements store.Notifier within this process.
func (s *Store) Publish(ctx context.Context, topic string, payload []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(topic)+len(payload) > store.MaxEventBytes {
		return fmt.Errorf("memstore: event of %d bytes on %q is over %d", len(payload), topic, store.MaxEventBytes)
	}
	s.hub.Deliver(topic, payload)
	return nil
}

// Subscribe implements store.Notifier within this process.
func (s *Store) Subscribe(ctx context.Context, topic string) (*store.Subscription, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.hub.Subscribe(ctx, topic), nil
}
