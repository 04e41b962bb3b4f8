package redisstore_test

import (
	"context"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/redisstore"
)

// TestDropDeletesTheStoresKeysOnly: after Drop, no key of the store's
// prefix is left (its rate limiter's included) and another prefix's keys
// are untouched; on miniredis and on a real server.
func TestDropDeletesTheStoresKeysOnly(t *testing.T) {
	servers := map[string]func(t *testing.T) *redis.Client{
		"miniredis": func(t *testing.T) *redis.Client {
			c := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
			t.Cleanup(func() { c.Close() })
			return c
		},
		"redis": func(t *testing.T) *redis.Client { c, _ := testdb.RedisClient(t); return c },
	}
	for name, client := range servers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := client(t)
			ctx := context.Background()
			mine, other := testdb.UniqueName(), testdb.UniqueName()
			fill := func(prefix string) *redisstore.Store {
				st := redisstore.New(c, redisstore.WithPrefix(prefix))
				svc := slots.New(st)
				_, err := svc.CreateClaim(ctx, slots.NewClaim{Title: "t", Body: "b"})
				require.NoError(t, err)
				_, _, err = discussion.New(st).Create(ctx, discussion.NewPrompt{RequesterAgent: "Developer", PromptMessage: "?"})
				require.NoError(t, err)
				// A limiter of one request per ~17 minutes: its key outlives
				// the test (a per-second limiter's key may expire between
				// the count and Drop on a busy machine).
				ok, _, err := st.Limiter(0.001, 1).Allow(ctx, "key_1")
				require.NoError(t, err)
				require.True(t, ok)
				return st
			}
			empty, err := redisstore.New(c, redisstore.WithPrefix(mine)).Empty(ctx)
			require.NoError(t, err)
			require.True(t, empty, "a fresh prefix")
			st, kept := fill(mine), fill(other)
			empty, err = st.Empty(ctx)
			require.NoError(t, err)
			require.False(t, empty)
			count := func(prefix string) int {
				n := 0
				for _, m := range []string{"{" + prefix + "}:*", "rate:{" + prefix + "}:*"} {
					keys, err := c.Keys(ctx, m).Result()
					require.NoError(t, err)
					n += len(keys)
				}
				return n
			}
			before, otherBefore := count(mine), count(other)
			require.Greater(t, before, 3)
			n, err := st.Drop(ctx)
			require.NoError(t, err)
			require.Equal(t, before, n)
			require.Zero(t, count(mine), "every key of the dropped prefix is gone")
			empty, err = st.Empty(ctx)
			require.NoError(t, err)
			require.True(t, empty, "empty again")
			require.Equal(t, otherBefore, count(other), "the other prefix keeps its keys")
			n, err = kept.Drop(ctx) // leave the shared server as found
			require.NoError(t, err)
			require.Equal(t, otherBefore, n)
		})
	}
}
