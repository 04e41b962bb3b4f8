package pgstore_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/pgstore"
)

// silentServer accepts connections and never answers, as a paused or
// wedged database does.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	return ln.Addr().String()
}

func TestUnreachableDatabaseIsUnavailable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	ln.Close() // nothing listens there now

	for name, addr := range map[string]string{"refused": closed, "silent": silentServer(t)} {
		t.Run(name, func(t *testing.T) {
			db, err := pgstore.Open("postgres://postgres@"+addr+"/test?sslmode=disable", pgstore.PoolOptions{CallTimeout: 200 * time.Millisecond})
			require.NoError(t, err)
			defer db.Close()
			_, err = pgstore.New(db).GetClaim(context.Background(), "c1")
			require.ErrorIs(t, err, store.ErrUnavailable)
		})
	}
}

func TestOpenKeepsIdleConnections(t *testing.T) {
	t.Parallel()
	db, err := pgstore.Open("postgres://postgres@127.0.0.1:1/test?sslmode=disable", pgstore.PoolOptions{MaxOpenConns: 7})
	require.NoError(t, err)
	defer db.Close()
	require.Equal(t, 7, db.Stats().MaxOpenConnections)
}
