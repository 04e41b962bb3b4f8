package httpapi_test

import (
	"context"
	"os"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/jmoiron/sqlx"
	"github.com/redis/go-redis/v9"

	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/store/memstore"
	"github.com/agorahq/agora/store/pgstore"
	"github.com/agorahq/agora/store/redisstore"
	"github.com/agorahq/agora/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// backend makes fresh, isolated stores for one test.
type backend struct {
	name string
	new  func(t *testing.T) storetest.Stores
}

// backends lists every backend the HTTP tests run against: each route must
// answer the same on all of them.
func backends() []backend {
	return []backend{
		{"memstore", func(t *testing.T) storetest.Stores {
			s := memstore.New()
			return storetest.Stores{Slots: s, Discussion: s, Prism: s, Arena: s, AgentChat: s, Notifier: s, Peer: s}
		}},
		{"miniredis", func(t *testing.T) storetest.Stores {
			url := "redis://" + miniredis.RunT(t).Addr()
			return redisStores(t, redisstore.New(redisClient(t, url)), redisstore.New(redisClient(t, url)))
		}},
		{"redis", func(t *testing.T) storetest.Stores {
			c, prefix := testdb.RedisClient(t)
			peer, _ := testdb.RedisClient(t)
			return redisStores(t, redisstore.New(c, redisstore.WithPrefix(prefix)), redisstore.New(peer, redisstore.WithPrefix(prefix)))
		}},
		{"postgres", func(t *testing.T) storetest.Stores {
			dsn := testdb.PostgresDSN(t)
			db := pgDB(t, dsn)
			if err := pgstore.Migrate(context.Background(), db); err != nil {
				t.Fatal(err)
			}
			st := pgstore.New(db)
			return storetest.Stores{Slots: st, Discussion: st, Prism: st, Arena: st, AgentChat: st, Notifier: pgNotifier(t, db, dsn), Peer: pgNotifier(t, pgDB(t, dsn), dsn)}
		}},
	}
}

func pgDB(t *testing.T, dsn string) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(20)
	t.Cleanup(func() { db.Close() })
	return db
}

func pgNotifier(t *testing.T, db *sqlx.DB, dsn string) *pgstore.Notifier {
	t.Helper()
	n, err := pgstore.NewNotifier(context.Background(), db, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func redisStores(t *testing.T, st, peer *redisstore.Store) storetest.Stores {
	t.Cleanup(func() { _ = st.Close(); _ = peer.Close() })
	return storetest.Stores{Slots: st, Discussion: st, Prism: st, Arena: st, AgentChat: st, Notifier: st, Peer: peer}
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
func forEachBackend(t *testing.T, test func(t *testing.T, st storetest.Stores)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			test(t, b.new(t))
		})
	}
}
