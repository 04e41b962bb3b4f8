package server

import (
	"context"
	"fmt"

	"github.com/agorahq/agora/store/pgstore"
)

// openPostgres connects and migrates. Several servers may start at once on
// one database: Migrate serialises them.
func openPostgres(ctx context.Context, c backendConfig) (*backend, error) {
	url := c.url
	db, err := pgstore.Open(url, pgstore.PoolOptions{MaxOpenConns: c.maxConns, CallTimeout: c.timeout})
	if err != nil {
		return nil, fmt.Errorf("-store: %w", err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if err := pgstore.Migrate(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	n, err := pgstore.NewNotifier(ctx, db, url)
	if err != nil {
		db.Close()
		return nil, err
	}
	st := pgstore.New(db)
	return &backend{
		name: "postgres", slots: st, discussion: st, prism: st, arena: st, agentchat: st, notifier: n, limiter: st.Limiter(c.rate, c.burst), ping: st.Ping,
		close: func() { n.Close(); db.Close() },
	}, nil
}
