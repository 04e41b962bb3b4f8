package server

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agorahq/agora/store/redisstore"
)

func openRedis(ctx context.Context, c backendConfig) (*backend, error) {
	opts, err := redis.ParseURL(c.url)
	if err != nil {
		return nil, fmt.Errorf("-store: %w", err)
	}
	// A store call waits for Redis no longer than -store-timeout, in all.
	opts.ReadTimeout, opts.WriteTimeout, opts.DialTimeout, opts.PoolTimeout = c.timeout, c.timeout, c.timeout, c.timeout
	client := redis.NewClient(opts)
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		return nil, fmt.Errorf("redis at %s: %w", opts.Addr, err)
	}
	st := redisstore.New(client, redisstore.WithPrefix(c.redisPrefix))
	switch d, err := st.Durability(ctx); {
	case err != nil:
		c.log.Warn("could not ask Redis what it keeps on disk; if nothing, a restart of Redis loses every key, claim and game", "err", err)
	case !d.Keeps():
		c.log.Warn("Redis keeps nothing on disk (no save, no appendonly): a restart of Redis loses every key, claim and game")
	}
	watch, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	go st.WatchForReset(watch, 5*time.Second,
		func() { c.log.Error("Redis came back empty: every key, claim, game and prompt of this store is gone") },
		func(err error) { c.log.Warn("Redis check", "err", err) })
	rate, burst := c.rate, c.burst
	return &backend{
		name:       "redis",
		slots:      st,
		identity:   st,
		discussion: st, prism: st, arena: st, agentchat: st,
		notifier: st,
		limiter:  st.Limiter(rate, burst),
		ping:     st.Ping,
		close:    func() { stopWatch(); st.Close(); client.Close() },
	}, nil
}
