package testdb

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisClient returns a client of the real Redis server of RedisURL and a
// fresh key prefix for the test, which is also the client's name on the
// server (CLIENT LIST). When t ends it deletes the keys under the
// prefix's hash tag (found with SCAN: the server is shared, never flushed),
// fails if any are left, and closes the client.
func RedisClient(t testing.TB) (*redis.Client, string) {
	t.Helper()
	opts, err := redis.ParseURL(RedisURL(t))
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	// The suites' races run a thousand callers against one pool.
	opts.PoolTimeout = 30 * time.Second
	prefix := UniqueName()
	opts.ClientName = prefix // so a test can find its connections in CLIENT LIST
	c := redis.NewClient(opts)
	t.Cleanup(func() {
		defer c.Close()
		ctx := context.Background() // t's context is already done in cleanup
		for _, match := range []string{"{" + prefix + "}:*", "rate:{" + prefix + "}:*"} {
			var keys []string
			iter := c.Scan(ctx, 0, match, 1000).Iterator()
			for iter.Next(ctx) {
				keys = append(keys, iter.Val())
			}
			if err := iter.Err(); err != nil {
				t.Errorf("testdb: scan %s: %v", match, err)
				return
			}
			for len(keys) > 0 {
				n := min(len(keys), 500)
				if err := c.Unlink(ctx, keys[:n]...).Err(); err != nil {
					t.Errorf("testdb: unlink: %v", err)
					return
				}
				keys = keys[n:]
			}
			if left, _, err := c.Scan(ctx, 0, match, 1000).Result(); err == nil && len(left) > 0 {
				t.Errorf("testdb: keys left under %s: %v", match, left)
			}
		}
	})
	return c, prefix
}
