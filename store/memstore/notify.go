package memstore

import (
	"context"

	"github.com/agorahq/agora/internal/notify"
	"github.com/agorahq/agora/store"
)

var (
	_ store.Notifier   = (*Store)(nil)
	_ notify.InProcess = (*Store)(nil)
)

// PublishesInProcess marks Publish as delivering within this process
// without waiting, so the services publish through it directly rather than
// from a background goroutine.
func (*Store) PublishesInProcess() {}

// Publish implements store.Notifier within this process.
func (s *Store) Publish(ctx context.Context, topic string, payload []byte) error {
	return s.hub.Publish(ctx, topic, payload)
}

// Subscribe implements store.Notifier within this process.
func (s *Store) Subscribe(ctx context.Context, topic string) (*store.Subscription, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.hub.Subscribe(ctx, topic), nil
}
