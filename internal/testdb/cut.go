package testdb

import (
	"context"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/redis/go-redis/v9"
)

// KillRedisSubscribers kills, through c, the subscribing connections of
// the clients named name (RedisClient names each client after its
// prefix), as a network fault would, and fails t when there is none.
func KillRedisSubscribers(t testing.TB, c *redis.Client, name string) {
	t.Helper()
	ctx := context.Background()
	list, err := c.ClientList(ctx).Result()
	if err != nil {
		t.Fatalf("testdb: CLIENT LIST: %v", err)
	}
	killed := 0
	for _, line := range strings.Split(list, "\n") {
		fields := map[string]string{}
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			fields[k] = v
		}
		if fields["name"] == name && fields["sub"] != "0" && fields["sub"] != "" {
			if err := c.Do(ctx, "CLIENT", "KILL", "ID", fields["id"]).Err(); err != nil {
				t.Fatalf("testdb: CLIENT KILL: %v", err)
			}
			killed++
		}
	}
	if killed == 0 {
		t.Fatalf("testdb: no subscribing connection named %s", name)
	}
}

// TerminatePostgresListeners ends the listening connections of the
// pgstore notifiers of db's schema, as a database restart would, and
// fails t when there is none.
func TerminatePostgresListeners(t testing.TB, db *sqlx.DB) {
	t.Helper()
	var n int
	if err := db.Get(&n, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE query = 'LISTEN "agora_events_' || current_schema() || '"'`); err != nil {
		t.Fatalf("testdb: terminating listeners: %v", err)
	}
	if n == 0 {
		t.Fatal("testdb: no listening connection to cut")
	}
}
