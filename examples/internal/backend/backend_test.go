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

// TestPostgresMakesItsSchema: a search_path naming a schema that does not
// exist is made, as the demo makes its own, the migrations applied are
// logged, and a second start finds the schema up to date.
func TestPostgresMakesItsSchema(t *testing.T) {
	t.Parallel()
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
