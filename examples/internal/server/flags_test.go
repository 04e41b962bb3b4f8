package server

import (
	"bytes"
	"context"
	"database/sql"
	"flag"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/testdb"
)

// TestFlagsFromEnvironment: every flag can come from AGORA_<NAME>, the
// command line wins, and a value a flag refuses names its variable.
func TestFlagsFromEnvironment(t *testing.T) {
	t.Parallel()
	env := map[string]string{"AGORA_STORE": "redis://example:6379/0", "AGORA_ADDR": "127.0.0.1:9999", "AGORA_BATCH_WAIT": "2ms", "AGORA_BATCH": "true"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	store := fs.String("store", "memory", "")
	addr := fs.String("addr", "127.0.0.1:8080", "")
	wait := fs.Duration("batch-wait", 0, "")
	batch := fs.Bool("batch", false, "")
	quiet := fs.Bool("quiet", false, "")
	require.NoError(t, parseFlags(fs, []string{"-addr", "127.0.0.1:7777"}, lookup))
	require.Equal(t, "redis://example:6379/0", *store)
	require.Equal(t, "127.0.0.1:7777", *addr, "the command line wins")
	require.Equal(t, 2*time.Millisecond, *wait)
	require.True(t, *batch)
	require.False(t, *quiet)

	env["AGORA_BATCH_WAIT"] = "soon"
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	fs.Duration("batch-wait", 0, "")
	err := parseFlags(fs, nil, lookup)
	require.ErrorContains(t, err, "AGORA_BATCH_WAIT")

	var usage bytes.Buffer
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(&usage)
	fs.String("store", "memory", "the backend")
	require.ErrorIs(t, parseFlags(fs, []string{"-h"}, lookup), flag.ErrHelp)
	require.Contains(t, usage.String(), "AGORA_STORE")
}

// TestHelpIsNoFailure: -h prints the usage and Run returns nil, so the
// command exits 0.
func TestHelpIsNoFailure(t *testing.T) {
	t.Parallel()
	require.NoError(t, Run(context.Background(), []string{"-h"}, &bytes.Buffer{}, nil))
	require.Error(t, Run(context.Background(), []string{"-no-such-flag"}, &bytes.Buffer{}, nil))
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
		b, err := openBackend(context.Background(), backendConfig{url: u.String(), rate: 10, burst: 10, timeout: 10 * time.Second, maxConns: 2,
			log: slog.New(slog.NewTextHandler(&logs, nil))})
		require.NoError(t, err)
		b.close()
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
