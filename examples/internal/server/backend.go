package server

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

// backend is an opened store with what goes with it.
type backend struct {
	name       string
	slots      slots.Store
	identity   identity.Store
	discussion discussion.Store
	prism      prism.Store
	arena      arena.Store
	agentchat  agentchat.Store
	notifier   store.Notifier
	limiter    httpapi.Limiter
	ping       httpapi.Ping // nil: the memory store, which always answers
	close      func()
}

// backendConfig is what the command line says of the store.
type backendConfig struct {
	url         string
	redisPrefix string
	rate        float64
	burst       int
	timeout     time.Duration // how long one store call may wait for the database
	maxConns    int           // the PostgreSQL pool's size
	log         *slog.Logger
}

func openBackend(ctx context.Context, c backendConfig) (*backend, error) {
	switch {
	case c.url == "memory" || c.url == "":
		st := memstore.New()
		return &backend{name: "memory", slots: st, identity: st, discussion: st, prism: st, arena: st, agentchat: st, notifier: st, limiter: httpapi.NewLocalLimiter(c.rate, c.burst), close: func() {}}, nil
	case strings.HasPrefix(c.url, "postgres://"), strings.HasPrefix(c.url, "postgresql://"):
		return openPostgres(ctx, c)
	case strings.HasPrefix(c.url, "redis://"), strings.HasPrefix(c.url, "rediss://"):
		return openRedis(ctx, c)
	}
	return nil, fmt.Errorf("-store %q: want memory, postgres://… or redis://…", c.url)
}
