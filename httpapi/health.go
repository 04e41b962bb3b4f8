package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/internal/httpjson"
)

// Health is the answer of GET /healthz (wire.StoreHealth).
type Health = wire.StoreHealth

// The values of Health.Status.
const (
	HealthOK          = "ok"
	HealthUnavailable = "unavailable"
)

// HealthTimeout is the longest GET /healthz waits for the store's ping.
const HealthTimeout = 2 * time.Second

// A Ping asks the store whether it answers: nil when it does. For
// PostgreSQL, pgstore's (*Store).DB().PingContext; for Redis, a function
// calling Ping on the redisstore's Client(); the memory store always
// answers (a nil Ping).
type Ping func(ctx context.Context) error

// HealthHandler serves GET /healthz for a store named name: 200
// {"status":"ok","store":name} when ping returns nil within HealthTimeout,
// else 503 {"status":"unavailable",…} with Retry-After. A nil ping always
// answers ok. Mount it at "/healthz".
func HealthHandler(name string, ping Ping, opts ...HealthOption) http.Handler {
	c := newConfig(opts)
	h := &healthAPI{name: name, ping: ping, log: c.log}
	rt := newRouter(c)
	rt.mount(h.routes(), nil, nil)
	return rt
}

// healthAPI answers GET /healthz for one store.
type healthAPI struct {
	name string
	ping Ping
	log  *slog.Logger
}

// routes is the table of the health route: it mounts its handler and
// describes it in the OpenAPI document.
func (h *healthAPI) routes() []operation {
	return []operation{
		{id: "getHealth", method: "GET", path: "/healthz", tag: tagHealth, summary: "Whether the store answers", auth: public, status: 200, resp: Health{}, other: map[int]any{503: Health{}}, fn: h.serve},
	}
}

func (h *healthAPI) serve(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Cache-Control", "no-store")
	if h.ping != nil {
		ctx, cancel := context.WithTimeout(r.Context(), HealthTimeout)
		defer cancel()
		if err := h.ping(ctx); err != nil {
			h.log.WarnContext(r.Context(), "health check: the store did not answer", "store", h.name, "err", err)
			w.Header().Set("Retry-After", strconv.Itoa(int(httpjson.UnavailableRetryAfter/time.Second)))
			httpjson.Write(w, http.StatusServiceUnavailable, Health{Status: HealthUnavailable, Store: h.name, Message: "the store did not answer"})
			return nil
		}
	}
	httpjson.Write(w, http.StatusOK, Health{Status: HealthOK, Store: h.name})
	return nil
}
