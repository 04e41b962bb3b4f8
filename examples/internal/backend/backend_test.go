package backend_test

import (
	"bytes"
	"context"
	"database/sql"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/examples/internal/backend"
	"github.com/agorahq/agora/internal/testdb"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// TestOpenRefusesOtherStores: a URL of no known backend is refused with
// what is wanted.
func TestOpenRefusesOtherStores(t *testing.T) {
	t.Parallel()
	_, err := backend.Open(context.Background(), backend.Config{URL: "mysql://x"})
	require.ErrorContains(t, err, "want memory")
}

// schemaURL is the test database's DSN with a search_path naming a new
// schema, and the schema, dropped when t ends.
func schemaURL(t *testing.T) (*url.URL, string) {
	t.Helper()
	dsn := testdb.PostgresDSN(t)
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	schema := testdb.UniqueName()
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	t.Cleanup(func() {
		db, err := sql.Open("postgres", dsn)
		if err == nil {
			_, _ = db.Exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE")
			db.Close()
		}
	})
	return u, schema
}

// TestPostgresMakesItsSchema: a search_path naming a schema that does not
// exist is made, as the demo makes its own, the migrations applied are
// logged, and a second start finds the schema up to date.
func TestPostgresMakesItsSchema(t *testing.T) {
	t.Parallel()
	u, schema := schemaURL(t)

	start := func() string {
		var logs bytes.Buffer
		b, err := backend.Open(context.Background(), backend.Config{URL: u.String(), Rate: 10, Burst: 10, Timeout: 10 * time.Second, MaxConns: 2,
			Log: slog.New(slog.NewTextHandler(&logs, nil))})
		require.NoError(t, err)
		b.Close()
		return logs.String()
	}
	logs := start()
	require.Contains(t, logs, "schema created")
	require.Contains(t, logs, "schema="+schema)
	require.Contains(t, logs, "migrations applied")
	require.Contains(t, logs, "first=001_slots.sql")
	logs = start()
	require.NotContains(t, logs, "schema created")
	require.Contains(t, logs, "schema up to date")
	require.False(t, strings.Contains(logs, "migrations applied"))
}

// TestPostgresMigrationsOutlastTheStoreTimeout: a server that starts while
// another holds the migrations (a long one on a big table) waits for them,
// however short its -store-timeout, which bounds the serving pool's reads.
func TestPostgresMigrationsOutlastTheStoreTimeout(t *testing.T) {
	t.Parallel()
	u, _ := schemaURL(t)
	db, err := sql.Open("postgres", testdb.PostgresDSN(t))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	const migrationLock = 0x61676f7261 // pgstore's
	_, err = tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock)
	require.NoError(t, err)
	held := 2 * time.Second
	go func() {
		time.Sleep(held)
		_ = tx.Rollback()
	}()
	b, err := backend.Open(ctx, backend.Config{URL: u.String(), Rate: 10, Burst: 10, Timeout: 500 * time.Millisecond, MaxConns: 2,
		Log: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))})
	require.NoError(t, err, "the start waits for the migrations")
	b.Close()
}
