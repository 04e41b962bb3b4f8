// Package backend opens the store a URL names — memory, postgres://… or
// redis://… — with what goes with it (its notifier, rate limiter and
// ping), for the example server and the demo.
package backend

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/memstore"
)

// Backend is an opened store with what goes with it.
type Backend struct {
	Name       string           // "memory", "postgres" or "redis"
	Slots      slots.Store      // the store, as the slots service takes it
	Identity   identity.Store   // the same store, as identity takes it
	Discussion discussion.Store // the same store, as discussion takes it
	Prism      prism.Store      // the same store, as prism takes it
	Arena      arena.Store      // the same store, as arena takes it
	AgentChat  agentchat.Store  // the same store, as agentchat takes it
	Notifier   store.Notifier   // the backend's notifier, shared by every process on it
	Limiter    httpapi.Limiter  // the per-key rate limit at Config's Rate and Burst
	Ping       httpapi.Ping     // nil: the memory store, which always answers
	Close      func()           // closes the notifier and the connections; never nil
}

// Config is what the command line says of the store.
type Config struct {
	URL         string        // memory (or empty), postgres://… or redis://…
	RedisPrefix string        // the prefix of every Redis key; Redis only
	Rate        float64       // the per-key rate limit, per second
	Burst       int           // the rate limit's burst, in requests
	Timeout     time.Duration // how long one store call may wait for the database
	MaxConns    int           // the PostgreSQL pool's size
	Log         *slog.Logger  // where opening warns; not nil for PostgreSQL and Redis
}

// Open opens the store c.URL names; on PostgreSQL it makes the schema the
// DSN's search_path names when it is missing and migrates, on Redis it
// warns when Redis keeps nothing on disk and watches for a reset.
func Open(ctx context.Context, c Config) (*Backend, error) {
	switch {
	case c.URL == "memory" || c.URL == "":
		st := memstore.New()
		return &Backend{Name: "memory", Slots: st, Identity: st, Discussion: st, Prism: st, Arena: st, AgentChat: st, Notifier: st, Limiter: httpapi.NewLocalLimiter(c.Rate, c.Burst), Close: func() {}}, nil
	case strings.HasPrefix(c.URL, "postgres://"), strings.HasPrefix(c.URL, "postgresql://"):
		return openPostgres(ctx, c)
	case strings.HasPrefix(c.URL, "redis://"), strings.HasPrefix(c.URL, "rediss://"):
		return openRedis(ctx, c)
	}
	return nil, fmt.Errorf("-store %q: want memory, postgres://… or redis://…", c.URL)
}
