package pgstore_test

import (
	"context"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/pgstore"
	"github.com/agorahq/agora/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// open connects to a fresh schema of its own and migrates it.
func open(t testing.TB) (*sqlx.DB, string) {
	t.Helper()
	return openDSN(t, testdb.PostgresDSN(t))
}

// openDSN opens a pool on dsn and migrates it.
func openDSN(t testing.TB, dsn string) (*sqlx.DB, string) {
	t.Helper()
	db, err := pgstore.Open(dsn, pgstore.PoolOptions{MaxOpenConns: 20})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	require.NoError(t, pgstore.Migrate(context.Background(), db))
	return db, dsn
}

func notifier(t testing.TB, db *sqlx.DB, dsn string) *pgstore.Notifier {
	t.Helper()
	n, err := pgstore.NewNotifier(context.Background(), db, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { n.Close() })
	return n
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, conformanceStores(testdb.PostgresDSN))
}

// TestConformanceICU runs the suite on a database whose text sorts by ICU's
// en-US rules, unlike its bytes ("alpha" before "Zeta", "bb" before "b-c"),
// as many servers' default collation does: every order a store answers is
// byte-wise there too, as on the other backends. It runs before the
// parallel tests, so the two suites never share the server's connections.
func TestConformanceICU(t *testing.T) {
	base := testdb.PostgresDatabase(t, "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'")
	storetest.Run(t, conformanceStores(func(t testing.TB) string { return testdb.PostgresSchemaDSN(t, base) }))
}

// conformanceStores makes each case's stores in a schema of its own, from
// schemaDSN.
func conformanceStores(schemaDSN func(testing.TB) string) storetest.NewStores {
	return func(t *testing.T) storetest.Stores {
		db, dsn := openDSN(t, schemaDSN(t))
		st := pgstore.New(db)
		t.Cleanup(func() { requireQueueColumns(t, db) })
		// The peer is another process: its own pool and listener. Its pool
		// is bounded as open's is: a race of many callers on an unbounded
		// one took more connections than the server allows.
		peerDB, err := pgstore.Open(dsn, pgstore.PoolOptions{MaxOpenConns: 20})
		require.NoError(t, err)
		t.Cleanup(func() { peerDB.Close() })
		return storetest.Stores{Slots: st, Identity: st, Discussion: st, Prism: st, Arena: st, AgentChat: st, Notifier: notifier(t, db, dsn), Peer: notifier(t, peerDB, dsn), PeerChat: pgstore.New(peerDB),
			CutPeer: func(t *testing.T) { testdb.TerminatePostgresListeners(t, db) },
			Limiters: func(perSecond float64, burst int) (storetest.Limiter, storetest.Limiter) {
				return st.Limiter(perSecond, burst), pgstore.New(peerDB).Limiter(perSecond, burst)
			}}
	}
}

// requireQueueColumns checks that every slot's is_open and lease_due, which
// the statements changing a slot's status or lease write beside it
// (migration 038), say what they were generated as before: run after every
// conformance test, whatever its writes.
func requireQueueColumns(t *testing.T, db *sqlx.DB) {
	t.Helper()
	var bad []string
	require.NoError(t, db.Select(&bad, `SELECT id FROM agora_role_slots
		WHERE is_open IS DISTINCT FROM (status = 'open')
			OR lease_due IS DISTINCT FROM (CASE WHEN status = 'taken' AND lease_expires_at <> 0 THEN lease_expires_at END)`))
	require.Empty(t, bad, "slots whose queue columns disagree with their status or lease")
}

func TestMigrateIsIdempotentAndSafeConcurrently(t *testing.T) {
	t.Parallel()
	dsn := testdb.PostgresDSN(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := sqlx.Open("postgres", dsn)
			if err != nil {
				errs <- err
				return
			}
			defer db.Close()
			errs <- pgstore.Migrate(ctx, db)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	db, err := sqlx.Open("postgres", dsn)
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, pgstore.Migrate(ctx, db), "a second run changes nothing")
	var versions []int
	require.NoError(t, db.SelectContext(ctx, &versions, `SELECT version FROM agora_migrations ORDER BY version`))
	var want []int
	files, err := fs.ReadDir(pgstore.Migrations, ".")
	require.NoError(t, err)
	for _, f := range files {
		n, err := strconv.Atoi(strings.SplitN(f.Name(), "_", 2)[0])
		require.NoError(t, err)
		want = append(want, n)
	}
	require.Equal(t, want, versions, "each migration recorded once")
}

// TestJobQueueUsesIndexes checks the plans: every job-queue query can be
// answered from a partial index of open slots, never a scan of the table,
// and an agent's query finds the claims it holds through the holder index.
// With a test-sized table the planner would rightly prefer a scan, so scans
// are disabled for the EXPLAIN; BenchmarkNextJob shows the cost stays flat
// at 100k claims, where the planner picks the index by itself.
func TestJobQueueUsesIndexes(t *testing.T) {
	t.Parallel()
	db, _ := open(t)
	ctx := context.Background()
	svc := slots.New(pgstore.New(db))
	for i := 0; i < 200; i++ {
		c, err := svc.CreateClaim(ctx, slots.NewClaim{Title: "t", Domain: []string{"physics", "law"}[i%2]})
		require.NoError(t, err)
		_, err = svc.ConfigureSlots(ctx, c.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 2}, {Role: slots.RoleDefender, Count: 1}})
		require.NoError(t, err)
		if i%3 == 0 {
			_, err = svc.AddComment(identity.WithKey(ctx, identity.Key{ID: "k"}), slots.NewComment{ClaimID: c.ID, Body: "d", CommentType: "draft"})
			require.NoError(t, err)
		}
	}
	_, err := db.ExecContext(ctx, `ANALYZE agora_role_slots`)
	require.NoError(t, err)

	conn, err := db.Connx(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, `SET enable_seqscan = off`)
	require.NoError(t, err)
	for _, q := range pgstore.JobQueueQueriesForTest() {
		var plan []string
		require.NoError(t, conn.SelectContext(ctx, &plan, `EXPLAIN `+q.SQL, q.Args...))
		joined := ""
		for _, l := range plan {
			joined += l + "\n"
		}
		require.NotContains(t, joined, "Seq Scan on agora_role_slots", "%s:\n%s", q.Name, joined)
		require.Contains(t, joined, "agora_role_slots_", q.Name)
		if q.Agent {
			// One probe of the holder index per candidate, by both columns:
			// never a read of every seat the agent holds.
			require.Contains(t, joined, "agora_role_slots_holder", "%s:\n%s", q.Name, joined)
			require.Regexp(t, `Index Cond: \(\(claim_id = q\w*\.claim_id\) AND \(api_key_id = `, joined, q.Name)
			require.NotContains(t, joined, "Anti Join", "%s:\n%s", q.Name, joined)
		}
	}
}

func newBenchStore(b *testing.B) slots.Store {
	db, _ := open(b)
	return pgstore.New(db)
}

func BenchmarkTake(b *testing.B) { storetest.BenchmarkTake(b, newBenchStore) }

func BenchmarkDoneAndTakeNext(b *testing.B) { storetest.BenchmarkDoneAndTakeNext(b, newBenchStore) }

// BenchmarkFinishAndTakeNextSlots reports pg-µs/seat: the CPU time of every
// local postgres process per seat (testdb.PostgresCPU; a server elsewhere
// reports none).
func BenchmarkFinishAndTakeNextSlots(b *testing.B) {
	var cpu storetest.ServerTime
	if _, err := testdb.PostgresCPU(); err == nil {
		cpu = func(context.Context) (time.Duration, error) { return testdb.PostgresCPU() }
	}
	storetest.BenchmarkFinishAndTakeNextSlots(b, newBenchStore, cpu, "pg-µs/seat")
}

func BenchmarkNextJob(b *testing.B) { storetest.BenchmarkNextJob(b, newBenchStore, 100_000) }

func BenchmarkArgue(b *testing.B) {
	storetest.BenchmarkArgue(b, func(b *testing.B) arena.Store { return newBenchStore(b).(*pgstore.Store) })
}

func BenchmarkNextWork(b *testing.B) {
	storetest.BenchmarkNextWork(b, func(b *testing.B) storetest.Stores {
		st := newBenchStore(b).(*pgstore.Store)
		return storetest.Stores{Slots: st, Identity: st, Prism: st}
	}, 100_000)
}

func BenchmarkStageTake(b *testing.B) {
	storetest.BenchmarkStageTake(b, func(b *testing.B) storetest.Stores {
		st := newBenchStore(b).(*pgstore.Store)
		return storetest.Stores{Slots: st, Identity: st, Prism: st}
	})
}

func BenchmarkArgueLongGame(b *testing.B) {
	storetest.BenchmarkArgueLongGame(b, func(b *testing.B) arena.Store { return newBenchStore(b).(*pgstore.Store) }, 30, 50)
}

// BenchmarkLimiterAllow is what the shared rate limit adds to each limited
// request (take, done, comment) on PostgreSQL: one statement on one row,
// the keys spread over 64 agents as BenchmarkTake's are.
func BenchmarkLimiterAllow(b *testing.B) {
	db, _ := open(b)
	l := pgstore.New(db).Limiter(1e9, 1e9)
	ctx := context.Background()
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		key := "key_" + strconv.Itoa(int(n.Add(1)%64))
		for pb.Next() {
			if ok, _, err := l.Allow(ctx, key); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
}

// TestKeyNamesMigration: a database whose keys share names from before
// names were unique migrates: the younger keys are renamed, and from then
// on a duplicate name is refused.
func TestKeyNamesMigration(t *testing.T) {
	t.Parallel()
	db, _ := open(t)
	ctx := context.Background()
	_, err := db.ExecContext(ctx, `DROP INDEX agora_keys_name; DELETE FROM agora_migrations WHERE version = 34;
		INSERT INTO agora_keys (id, name, avatar_url, scopes, hash, created_at) VALUES
		('key_1', 'dupname', '', '{}', '', 1), ('key_2', 'dupname', '', '{}', '', 2), ('key_3', 'solo', '', '{}', '', 3)`)
	require.NoError(t, err)
	require.NoError(t, pgstore.Migrate(ctx, db))
	st := pgstore.New(db)
	keys, err := st.ListKeys(ctx)
	require.NoError(t, err)
	names := []string{}
	for _, k := range keys {
		names = append(names, k.Name)
	}
	require.Equal(t, []string{"dupname", "dupname (key_2)", "solo"}, names)
	require.ErrorIs(t, st.CreateKey(ctx, identity.Key{ID: "key_4", Name: "solo", Scopes: []identity.Scope{}, Hash: []byte{1}}), identity.ErrKeyNameTaken)
}
