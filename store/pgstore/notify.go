package pgstore

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/agorahq/agora/internal/notify"
	"github.com/agorahq/agora/store"
)

// Notifier carries events between every process sharing a database with
// LISTEN/NOTIFY. Events travel on one channel per schema (so stores in
// different schemas do not hear each other) as "<topic> <base64 payload>";
// one listening connection per Notifier feeds a notify.Hub that fans them out
// in-process.
type Notifier struct {
	db       *sqlx.DB
	channel  string
	listener *pq.Listener
	hub      notify.Hub
	done     chan struct{}
	once     sync.Once
}

var _ store.Notifier = (*Notifier)(nil)

// NewNotifier publishes through db and listens on its own connection to
// dsn, which must reach the same database and schema (search_path) as db.
// Close it to release the connection.
func NewNotifier(ctx context.Context, db *sqlx.DB, dsn string) (*Notifier, error) {
	var schema string
	if err := db.GetContext(ctx, &schema, `SELECT current_schema()`); err != nil {
		return nil, interpretError(ctx, err)
	}
	n := &Notifier{db: db, channel: "agora_events_" + schema, done: make(chan struct{})}
	// Reconnect attempts back off from 100 ms to a second at most, so a
	// database that comes back is heard from within about a second.
	n.listener = pq.NewListener(dsn, 100*time.Millisecond, time.Second, nil)
	if err := n.listener.Listen(n.channel); err != nil {
		n.listener.Close()
		return nil, fmt.Errorf("pgstore: listen: %w", err)
	}
	go n.run()
	return n, nil
}

func (n *Notifier) run() {
	for {
		select {
		case <-n.done:
			return
		case ev, ok := <-n.listener.Notify:
			if !ok {
				return
			}
			if ev == nil {
				// The connection was cut and re-established: events
				// published meanwhile never arrived, so every subscriber
				// re-reads what it shows.
				n.hub.Resync()
				continue
			}
			topic, enc, ok := strings.Cut(ev.Extra, " ")
			if !ok {
				continue
			}
			payload, err := base64.StdEncoding.DecodeString(enc)
			if err == nil {
				n.hub.Deliver(topic, payload)
			}
		}
	}
}

// OnResync sets fn to be called each time the listening connection came
// back after a cut and every subscriber was told to re-read (the hub's
// Resync): what an operator counts as the notifier's reconnects. nil
// removes it.
func (n *Notifier) OnResync(fn func()) { n.hub.OnResync(fn) }

// Publish implements store.Notifier.
func (n *Notifier) Publish(ctx context.Context, topic string, payload []byte) error {
	if len(topic)+len(payload) > store.MaxEventBytes || strings.ContainsAny(topic, " \x00") {
		return fmt.Errorf("pgstore: event on %q of %d bytes is over %d bytes or has a space in its topic", topic, len(payload), store.MaxEventBytes)
	}
	_, err := n.db.ExecContext(ctx, `SELECT pg_notify($1, $2)`, n.channel, topic+" "+base64.StdEncoding.EncodeToString(payload))
	return interpretError(ctx, err)
}

// Subscribe implements store.Notifier.
func (n *Notifier) Subscribe(ctx context.Context, topic string) (*store.Subscription, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return n.hub.Subscribe(ctx, topic), nil
}

// Close stops listening and releases the connection.
func (n *Notifier) Close() error {
	var err error
	n.once.Do(func() {
		close(n.done)
		err = n.listener.Close()
	})
	return err
}
