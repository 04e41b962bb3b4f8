package pgstore_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/store/pgstore"
)

// TestMigrateErrorSaysPgstoreOnce: a migration that fails (here: the
// search_path names no schema that exists) says which, with one
// "pgstore:" prefix.
func TestMigrateErrorSaysPgstoreOnce(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(testdb.PostgresDSN(t))
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", testdb.UniqueName()) // never made
	u.RawQuery = q.Encode()
	db, err := pgstore.Open(u.String(), pgstore.PoolOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	err = pgstore.Migrate(context.Background(), db)
	require.Error(t, err)
	require.True(t, strings.HasPrefix(err.Error(), "pgstore: migration 001_"), err.Error())
	require.Equal(t, 1, strings.Count(err.Error(), "pgstore:"), err.Error())
}
