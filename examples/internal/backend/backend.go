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
	Name       string // "memory", "postgres" or "redis"
	Slots      slots.Store
	Identity   identity.Store
	Discussion discussion.Store
	Prism      prism.Store
	Arena      arena.Store
	AgentChat  agentchat.Store
	Notifier   store.Notifier
	Limiter    httpapi.Limiter
	Ping       httpapi.Ping // nil: the memory store, which always answers
	Close      func()
}

// Config is what the command line says of the store.
type Config struct {
	URL         string // memory (or empty), postgres://… or redis://…
	RedisPrefix string
	Rate        float64 // the per-key rate limit, per second
	Burst       int
	Timeout     time.Duration // how long one store call may wait for the database
	MaxConns    int           // the PostgreSQL pool's size
	Log         *slog.Logger
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
