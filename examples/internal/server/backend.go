package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/memstore"
)

// backend is an opened store with what goes with it.
type backend struct {
	name       string
	slots      slots.Store
	discussion discussion.Store
	prism      prism.Store
	arena      arena.Store
	agentchat  agentchat.Store
	notifier   store.Notifier
	limiter    httpapi.Limiter
	close      func()
}

func openBackend(ctx context.Context, url, redisPrefix string, rate float64, burst int) (*backend, error) {
	local := httpapi.NewLocalLimiter(rate, burst)
	switch {
	case url == "memory" || url == "":
		st := memstore.New()
		return &backend{name: "memory", slots: st, discussion: st, prism: st, arena: st, agentchat: st, notifier: st, limiter: local, close: func() {}}, nil
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return openPostgres(ctx, url, local)
	case strings.HasPrefix(url, "redis://"), strings.HasPrefix(url, "rediss://"):
		return openRedis(ctx, url, redisPrefix, rate, burst)
	}
	return nil, fmt.Errorf("-store %q: want memory, postgres://… or redis://…", url)
}
