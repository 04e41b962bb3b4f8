// Package testbackend gives tests fresh, isolated stores on every backend
// Agora has — memory, miniredis, a real Redis server and a real PostgreSQL
// server — so that a test of what is built on the stores (the HTTP routes,
// the Go client) proves the same behaviour on all of them.
//
// Only tests import it. The real servers come from internal/testdb, so a
// test package that uses this one stops the servers testdb started with
//
//	func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }
package testbackend

import (
	"context"
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

// Backend is one store implementation: Name names it in subtests, New
// makes stores isolated from every other call's (a new memory store, key
// prefix or schema) and registers their cleanup with t.
type Backend struct {
	Name string              // "memstore", "miniredis", "redis" or "postgres"
	New  storetest.NewStores // fresh, isolated stores, cleaned up with t
}

// All lists every backend: memstore, miniredis, redis and postgres. The
// real servers' tests skip when no server is available, and fail instead
// when CI=true (see internal/testdb).
func All() []Backend {
	return []Backend{
		{"memstore", func(t *testing.T) storetest.Stores {
			s := memstore.New()
			return storetest.Stores{Slots: s, Identity: s, Discussion: s, Prism: s, Arena: s, AgentChat: s, Notifier: s, Peer: s,
				Limiters: func(perSecond float64, burst int) (storetest.Limiter, storetest.Limiter) {
					return s.Limiter(perSecond, burst), s.Limiter(perSecond, burst)
				}}
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
			st, peerDB := pgstore.New(db), pgDB(t, dsn)
			return storetest.Stores{Slots: st, Identity: st, Discussion: st, Prism: st, Arena: st, AgentChat: st, Notifier: pgNotifier(t, db, dsn), Peer: pgNotifier(t, peerDB, dsn),
				Limiters: func(perSecond float64, burst int) (storetest.Limiter, storetest.Limiter) {
					return st.Limiter(perSecond, burst), pgstore.New(peerDB).Limiter(perSecond, burst)
				}}
		}},
	}
}

// Each runs test once per backend, each in a parallel subtest named after
// the backend and given fresh stores.
func Each(t *testing.T, test func(t *testing.T, st storetest.Stores)) {
	t.Helper()
	for _, b := range All() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			test(t, b.New(t))
		})
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
	return storetest.Stores{Slots: st, Identity: st, Discussion: st, Prism: st, Arena: st, AgentChat: st, Notifier: st, Peer: peer,
		Limiters: func(perSecond float64, burst int) (storetest.Limiter, storetest.Limiter) {
			return st.Limiter(perSecond, burst), peer.Limiter(perSecond, burst)
		}}
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
