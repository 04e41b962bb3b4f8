package redisstore_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/redisstore"
	"github.com/agorahq/agora/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// poolTimeout replaces go-redis's default of 4s: the suite's races start up
// to 1000 calls at once, which queue for a pool of 10 connections per CPU,
// and miniredis runs scripts one at a time, slowly under -race on a busy
// machine. A wait for a connection is not what the suite tests.
const poolTimeout = 30 * time.Second

// newMiniredisClient returns a client of a fresh miniredis server; both are
// closed when t ends (the client first: cleanups run last-in first-out).
func newMiniredisClient(t *testing.T) (*miniredis.Miniredis, *redis.Client) {
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), PoolTimeout: poolTimeout})
	t.Cleanup(func() { _ = c.Close() })
	return m, c
}

func TestConformanceMiniredis(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) storetest.Stores {
		m, c := newMiniredisClient(t)
		peer := redis.NewClient(&redis.Options{Addr: m.Addr(), PoolTimeout: poolTimeout})
		t.Cleanup(func() { _ = peer.Close() })
		// No CutPeer: miniredis can neither kill one client nor restart
		// while one is subscribed; the real server's run cuts the peer.
		return stores(t, redisstore.New(c), redisstore.New(peer))
	})
}

func TestConformanceRedis(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) storetest.Stores {
		c, prefix := testdb.RedisClient(t)
		peer, peerName := testdb.RedisClient(t)
		st := stores(t, redisstore.New(c, redisstore.WithPrefix(prefix)), redisstore.New(peer, redisstore.WithPrefix(prefix)))
		st.CutPeer = func(t *testing.T) { testdb.KillRedisSubscribers(t, c, peerName) }
		return st
	})
}

// stores pairs a store with a peer: the same data as another process sees it.
func stores(t *testing.T, st, peer *redisstore.Store) storetest.Stores {
	t.Cleanup(func() { _ = st.Close(); _ = peer.Close() })
	return storetest.Stores{Slots: st, Identity: st, Discussion: st, Prism: st, Arena: st, AgentChat: st, Notifier: st, Peer: peer, PeerChat: peer,
		Limiters: func(perSecond float64, burst int) (storetest.Limiter, storetest.Limiter) {
			return st.Limiter(perSecond, burst), peer.Limiter(perSecond, burst)
		}}
}

func newRedisStore(b *testing.B) slots.Store {
	c, prefix := testdb.RedisClient(b)
	return redisstore.New(c, redisstore.WithPrefix(prefix))
}

// BenchmarkTake runs against the real server, over loopback.
func BenchmarkTake(b *testing.B) { storetest.BenchmarkTake(b, newRedisStore) }

func BenchmarkDoneAndTakeNext(b *testing.B) { storetest.BenchmarkDoneAndTakeNext(b, newRedisStore) }

// BenchmarkFinishAndTakeNextSlots reports redis-µs/seat: what Redis spends
// running the finish-and-take script per seat (INFO commandstats).
func BenchmarkFinishAndTakeNextSlots(b *testing.B) {
	var c *redis.Client
	storetest.BenchmarkFinishAndTakeNextSlots(b, func(b *testing.B) slots.Store {
		var prefix string
		c, prefix = testdb.RedisClient(b)
		return redisstore.New(c, redisstore.WithPrefix(prefix))
	}, func(ctx context.Context) (time.Duration, error) { return testdb.RedisScriptTime(ctx, c) }, "redis-µs/seat")
}

func BenchmarkNextJob(b *testing.B) { storetest.BenchmarkNextJob(b, newRedisStore, 100_000) }

func BenchmarkArgue(b *testing.B) {
	storetest.BenchmarkArgue(b, func(b *testing.B) arena.Store { return newRedisStore(b).(*redisstore.Store) })
}

// TestKeysStayUnderPrefix runs the whole suite with many stores on one
// server, each under its own prefix, and then checks that every key the
// server holds starts with one of those hash tags: nothing is written
// outside a store's prefix, so prefixes isolate and every key of a store
// shares its Cluster slot.
func TestKeysStayUnderPrefix(t *testing.T) {
	t.Parallel()
	m, c := newMiniredisClient(t)
	var mu sync.Mutex
	namespaces := map[string]bool{"{" + redisstore.DefaultPrefix + "}:": true}
	t.Run("suite", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) storetest.Stores {
			prefix := testdb.UniqueName()
			mu.Lock()
			namespaces["{"+prefix+"}:"] = true
			mu.Unlock()
			st := redisstore.New(c, redisstore.WithPrefix(prefix))
			return stores(t, st, redisstore.New(c, redisstore.WithPrefix(prefix)))
		})
	})

	// The default prefix, and an empty one, which must not drop the hash tag.
	ctx := context.Background()
	for _, st := range []*redisstore.Store{redisstore.New(c), redisstore.New(c, redisstore.WithPrefix(""))} {
		svc := slots.New(st)
		claim, err := svc.CreateClaim(ctx, slots.NewClaim{Title: "default prefix"})
		require.NoError(t, err)
		_, err = svc.ConfigureSlots(ctx, claim.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 1}})
		require.NoError(t, err)
	}
	require.True(t, m.Exists("{agora}:claims"))

	keys := m.Keys()
	require.NotEmpty(t, keys)
	for _, k := range keys {
		// The rate limiter's keys are "rate:" and then the prefix
		// (redis_rate's naming): the same hash tag.
		ns, _, ok := strings.Cut(strings.TrimPrefix(k, "rate:"), ":")
		require.True(t, ok && namespaces[ns+":"], "key %q is outside every store's prefix", k)
	}
}

// TestCancelledContext checks every method, beyond the suite's two: a done
// context is reported as itself, whatever go-redis wraps it in.
func TestCancelledContext(t *testing.T) {
	t.Parallel()
	_, c := newMiniredisClient(t)
	st := redisstore.New(c)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := map[string]func() error{
		"CreateClaim": func() error { return st.CreateClaim(ctx, slots.Claim{ID: "claim_1"}) },
		"GetClaim":    func() error { _, err := st.GetClaim(ctx, "claim_1"); return err },
		"ListClaims":  func() error { _, err := st.ListClaims(ctx, slots.ListClaimsParams{Limit: 1}); return err },
		"AddComment":  func() error { return st.AddComment(ctx, slots.Comment{ID: "comment_1", ClaimID: "claim_1"}) },
		"ListComments": func() error {
			_, err := st.ListComments(ctx, "claim_1", slots.ListCommentsParams{Limit: 1})
			return err
		},
		"ReplaceOpenSlots": func() error {
			return st.ReplaceOpenSlots(ctx, "claim_1", []slots.Slot{{ID: "slot_1", Role: slots.RoleCritic}})
		},
		"ListSlots":    func() error { _, err := st.ListSlots(ctx, "claim_1"); return err },
		"NextOpenSlot": func() error { _, err := st.NextOpenSlot(ctx, slots.NextSlotParams{Random: -1}); return err },
		"TakeSlot": func() error {
			_, err := st.TakeSlot(ctx, slots.TakeParams{ClaimID: "claim_1", SlotID: "slot_1"})
			return err
		},
		"FinishSlot": func() error {
			_, err := st.FinishSlot(ctx, slots.FinishParams{ClaimID: "claim_1", SlotID: "slot_1"})
			return err
		},
		"ReleaseExpiredSlots": func() error { _, err := st.ReleaseExpiredSlots(ctx, time.UnixMilli(1)); return err },
		"CreateKey":           func() error { return st.CreateKey(ctx, identity.Key{ID: "key_1"}) },
		"GetKey":              func() error { _, err := st.GetKey(ctx, "key_1"); return err },
		"ListKeys":            func() error { _, err := st.ListKeys(ctx); return err },
		"RevokeKey":           func() error { return st.RevokeKey(ctx, "key_1", time.UnixMilli(1)) },
		"Balance":             func() error { _, err := st.Balance(ctx, "key_1"); return err },
	}
	for name, call := range calls {
		require.ErrorIs(t, call(), context.Canceled, name)
	}
	require.Zero(t, c.DBSize(context.Background()).Val(), "nothing was written")
}

func TestClientIsTheOneGiven(t *testing.T) {
	t.Parallel()
	_, c := newMiniredisClient(t)
	require.Same(t, c, redisstore.New(c).Client())
}

func ExampleNew() {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		panic(err)
	}
	defer m.Close()
	client := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer client.Close()

	ctx := context.Background()
	svc := slots.New(redisstore.New(client, redisstore.WithPrefix("example")))
	claim, err := svc.CreateClaim(ctx, slots.NewClaim{Title: "Water boils at 100 °C at sea level"})
	if err != nil {
		panic(err)
	}
	if _, err := svc.ConfigureSlots(ctx, claim.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 1}}); err != nil {
		panic(err)
	}
	drafter := identity.Key{ID: "key_drafter", Name: "Drafter"}
	if _, err := svc.AddComment(identity.WithKey(ctx, drafter), slots.NewComment{ClaimID: claim.ID, Body: "A draft.", CommentType: "draft"}); err != nil {
		panic(err)
	}
	job, err := svc.NextJob(ctx, slots.JobQuery{Role: slots.RoleCritic})
	if err != nil {
		panic(err)
	}
	taken, err := svc.Take(identity.WithKey(ctx, identity.Key{ID: "key_a", Name: "Skeptic-7"}), claim.ID, job.Slot.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(taken.Status, taken.AgentName)
	_, err = svc.Take(identity.WithKey(ctx, identity.Key{ID: "key_b", Name: "Late"}), claim.ID, job.Slot.ID)
	fmt.Println(err)
	// Output:
	// taken Skeptic-7
	// slot is already taken
}

func BenchmarkNextWork(b *testing.B) {
	storetest.BenchmarkNextWork(b, func(b *testing.B) storetest.Stores {
		st := newRedisStore(b).(*redisstore.Store)
		return storetest.Stores{Slots: st, Identity: st, Prism: st}
	}, 100_000)
}

func BenchmarkStageTake(b *testing.B) {
	storetest.BenchmarkStageTake(b, func(b *testing.B) storetest.Stores {
		st := newRedisStore(b).(*redisstore.Store)
		return storetest.Stores{Slots: st, Identity: st, Prism: st}
	})
}

func BenchmarkArgueLongGame(b *testing.B) {
	storetest.BenchmarkArgueLongGame(b, func(b *testing.B) arena.Store { return newRedisStore(b).(*redisstore.Store) }, 30, 50)
}

// TestKeyNamesIndexedOnce: keys stored before names were indexed still
// hold their names: the first key created indexes them.
func TestKeyNamesIndexedOnce(t *testing.T) {
	t.Parallel()
	m, c := newMiniredisClient(t)
	st := redisstore.New(c)
	ctx := context.Background()
	require.NoError(t, st.CreateKey(ctx, identity.Key{ID: "key_1", Name: "old", Scopes: []identity.Scope{}}))
	dropped := 0
	for _, k := range m.Keys() {
		if strings.HasSuffix(k, "keynames") {
			m.Del(k)
			dropped++
		}
	}
	require.Equal(t, 1, dropped, "the names index")
	err := st.CreateKey(ctx, identity.Key{ID: "key_2", Name: "old", Scopes: []identity.Scope{}})
	require.ErrorIs(t, err, identity.ErrKeyNameTaken)
	require.NoError(t, st.CreateKey(ctx, identity.Key{ID: "key_3", Name: "new", Scopes: []identity.Scope{}}))
}
