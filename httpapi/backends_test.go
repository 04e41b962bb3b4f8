package httpapi_test

import (
	"os"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/memstore"
	"github.com/agorahq/agora/store/redisstore"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// backend makes a fresh, isolated slots.Store for one test.
type backend struct {
	name string
	new  func(t *testing.T) slots.Store
}

// backends lists every backend the HTTP tests run against: each route must
// answer the same on all of them.
func backends() []backend {
	return []backend{
		{"memstore", func(t *testing.T) slots.Store { return memstore.New() }},
		{"miniredis", func(t *testing.T) slots.Store {
			return redisstore.New(redisClient(t, "redis://"+miniredis.RunT(t).Addr()))
		}},
		{"redis", func(t *testing.T) slots.Store {
			c, prefix := testdb.RedisClient(t)
			return redisstore.New(c, redisstore.WithPrefix(prefix))
		}},
	}
}

func redisClient(t *testing.T, url string) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	return c
}

// forEachBackend runs test once per backend, in parallel.
func forEachBackend(t *testing.T, test func(t *testing.T, st slots.Store)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			test(t, b.new(t))
		})
	}
}
