package backend

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agorahq/agora/store/redisstore"
)

func openRedis(ctx context.Context, c Config) (*Backend, error) {
	opts, err := redis.ParseURL(c.URL)
	if err != nil {
		return nil, fmt.Errorf("-store: %w", err)
	}
	// A store call waits for Redis no longer than -store-timeout, in all.
	opts.ReadTimeout, opts.WriteTimeout, opts.DialTimeout, opts.PoolTimeout = c.Timeout, c.Timeout, c.Timeout, c.Timeout
	client := redis.NewClient(opts)
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		return nil, fmt.Errorf("redis at %s: %w", opts.Addr, err)
	}
	st := redisstore.New(client, redisstore.WithPrefix(c.RedisPrefix))
	switch d, err := st.Durability(ctx); {
	case err != nil:
		c.Log.Warn("could not ask Redis what it keeps on disk; if nothing, a restart of Redis loses every key, claim and game", "err", err)
	case !d.Keeps():
		c.Log.Warn("Redis keeps nothing on disk (no save, no appendonly): a restart of Redis loses every key, claim and game")
	}
	watch, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	go st.WatchForReset(watch, 5*time.Second,
		func() { c.Log.Error("Redis came back empty: every key, claim, game and prompt of this store is gone") },
		func(err error) { c.Log.Warn("Redis check", "err", err) })
	return &Backend{
		Name: "redis", Slots: st, Identity: st, Discussion: st, Prism: st, Arena: st, AgentChat: st, Notifier: st,
		Limiter: st.Limiter(c.Rate, c.Burst), Ping: st.Ping,
		Close: func() { stopWatch(); st.Close(); client.Close() },
	}, nil
}
