package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/agorahq/agora/internal/httpjson"
)

// Health is the answer of GET /healthz.
type Health struct {
	// Status is "ok" when the store answered, else "unavailable".
	Status string `json:"status"`
	// Store names the backend: "memory", "postgres", "redis", or what the
	// host called it.
	Store string `json:"store"`
	// Message says, on a 503, what did not answer; the driver's own words
	// (hosts, ports) are logged, never answered.
	Message string `json:"message,omitempty"`
}

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
	rt := httpjson.NewRouter(c.log)
	rt.Handle(http.MethodGet, "/healthz", func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Cache-Control", "no-store")
		if ping != nil {
			ctx, cancel := context.WithTimeout(r.Context(), HealthTimeout)
			defer cancel()
			if err := ping(ctx); err != nil {
				c.log.WarnContext(r.Context(), "health check: the store did not answer", "store", name, "err", err)
				w.Header().Set("Retry-After", strconv.Itoa(int(httpjson.UnavailableRetryAfter/time.Second)))
				httpjson.Write(w, http.StatusServiceUnavailable, Health{Status: HealthUnavailable, Store: name, Message: "the store did not answer"})
				return nil
			}
		}
		httpjson.Write(w, http.StatusOK, Health{Status: HealthOK, Store: name})
		return nil
	})
	return rt
}
