package redisstore_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/redisstore"
)

func TestUnreachableRedisIsUnavailable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	ln.Close()

	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()

	for name, addr := range map[string]string{"refused": closed, "silent": silent.Addr().String()} {
		t.Run(name, func(t *testing.T) {
			c := redis.NewClient(&redis.Options{Addr: addr, ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond,
				DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
			defer c.Close()
			_, err := redisstore.New(c).GetClaim(context.Background(), "c1")
			require.ErrorIs(t, err, store.ErrUnavailable)
		})
	}
}
