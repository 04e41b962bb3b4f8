package server

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/agorahq/agora/store/redisstore"
)

func openRedis(ctx context.Context, url, prefix string, rate float64, burst int) (*backend, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("-store: %w", err)
	}
	client := redis.NewClient(opts)
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		return nil, fmt.Errorf("redis at %s: %w", opts.Addr, err)
	}
	st := redisstore.New(client, redisstore.WithPrefix(prefix))
	return &backend{
		name:       "redis",
		slots:      st,
		discussion: st, prism: st, arena: st, agentchat: st,
		notifier: st,
		limiter:  st.Limiter(rate, burst),
		close:    func() { st.Close(); client.Close() },
	}, nil
}
