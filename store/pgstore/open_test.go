package pgstore_test

import (
	"context"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/batch"
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

// TestParallelismIsThePool: a Store says its pool's bound on connections
// is how many calls it carries out at once (store.Parallel), so that a
// Service's batches in flight stay within the pool; an unbounded pool
// says nothing.
func TestParallelismIsThePool(t *testing.T) {
	t.Parallel()
	db, err := pgstore.Open("postgres://agora@"+silentServer(t)+"/agora?sslmode=disable", pgstore.PoolOptions{MaxOpenConns: 3})
	require.NoError(t, err)
	defer db.Close()
	st := pgstore.New(db)
	require.Equal(t, 3, store.ParallelismOf(st))
	require.Equal(t, min(runtime.GOMAXPROCS(0), 4), batch.Procs(st), "the batches in flight of a kind: at most one more than the pool")
	db.SetMaxOpenConns(0)
	require.Zero(t, store.ParallelismOf(st))
	require.Equal(t, runtime.GOMAXPROCS(0), batch.Procs(st))
}
