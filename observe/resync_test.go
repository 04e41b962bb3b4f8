package observe_test

import (
	"context"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/pgstore"
	"github.com/agorahq/agora/store/redisstore"
)

// resyncer is a notifier that reports its reconnects.
type resyncer interface {
	store.Notifier
	OnResync(func())
}

// countsResync subscribes through n, cuts its listening connection with
// cut, and waits for agora_notifier_resyncs_total to count the reconnect.
func countsResync(t *testing.T, n resyncer, cut func()) {
	t.Helper()
	reg, m := newMetrics(t)
	n.OnResync(m.CountResyncs("b"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub, err := n.Subscribe(ctx, "topic")
	require.NoError(t, err)
	defer sub.Close()
	cut()
	require.Eventually(t, func() bool {
		return counter(t, reg, "agora_notifier_resyncs_total", map[string]string{"backend": "b"}) >= 1
	}, 15*time.Second, 20*time.Millisecond)
}

func TestResyncsCountedPostgres(t *testing.T) {
	t.Parallel()
	dsn := testdb.PostgresDSN(t)
	db, err := sqlx.Open("postgres", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	n, err := pgstore.NewNotifier(context.Background(), db, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { n.Close() })
	countsResync(t, n, func() { testdb.TerminatePostgresListeners(t, db) })
}

func TestResyncsCountedRedis(t *testing.T) {
	t.Parallel()
	c, prefix := testdb.RedisClient(t)
	st := redisstore.New(c, redisstore.WithPrefix(prefix))
	t.Cleanup(func() { _ = st.Close() })
	countsResync(t, st, func() { testdb.KillRedisSubscribers(t, c, prefix) })
}
