package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/store/redisstore"
)

func TestDurabilityReadsTheServersConfig(t *testing.T) {
	t.Parallel()
	c, prefix := testdb.RedisClient(t)
	ctx := context.Background()
	d, err := redisstore.New(c, redisstore.WithPrefix(prefix)).Durability(ctx)
	require.NoError(t, err)
	save := c.ConfigGet(ctx, "save").Val()["save"]
	aof := c.ConfigGet(ctx, "appendonly").Val()["appendonly"]
	require.Equal(t, save != "", d.Snapshots, "save %q", save)
	require.Equal(t, aof == "yes", d.AppendOnly, "appendonly %q", aof)
	require.Equal(t, d.Snapshots || d.AppendOnly, d.Keeps())
}

func TestWatchForResetNoticesLostData(t *testing.T) {
	t.Parallel()
	_, c := newMiniredisClient(t)
	st := redisstore.New(c, redisstore.WithPrefix("watched"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resets := make(chan struct{}, 10)
	done := make(chan struct{})
	go func() {
		defer close(done)
		st.WatchForReset(ctx, 10*time.Millisecond, func() { resets <- struct{}{} }, func(err error) { t.Error(err) })
	}()
	require.Eventually(t, func() bool { return c.Exists(ctx, "{watched}:marker").Val() == 1 }, 5*time.Second, 5*time.Millisecond)
	select {
	case <-resets:
		t.Fatal("a reset reported while the data is there")
	case <-time.After(100 * time.Millisecond):
	}
	require.NoError(t, c.FlushAll(ctx).Err()) // what a restart without persistence leaves
	select {
	case <-resets:
	case <-time.After(5 * time.Second):
		t.Fatal("lost data went unnoticed")
	}
	require.Eventually(t, func() bool { return c.Exists(ctx, "{watched}:marker").Val() == 1 }, 5*time.Second, 5*time.Millisecond, "the marker is written again")
	cancel()
	<-done
}
