package httpapi

import (
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
)

// Option configures the handlers of this package.
type Option func(*config)

type config struct {
	log     *slog.Logger
	limiter Limiter
	prism   *prism.Service
	// chatAuth guards AgentChat's API; nil leaves it open.
	chatAuth func(*http.Request) (string, bool)
}

// WithLogger sets where unexpected errors are logged; the default is
// slog.Default().
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// WithLimiter sets the per-key rate limiter of take, done and comment; the
// default is a LocalLimiter at DefaultRatePerSecond and DefaultRateBurst.
// A nil Limiter turns rate limiting off.
func WithLimiter(l Limiter) Option { return func(c *config) { c.limiter = l } }

func newConfig(opts []Option) config {
	c := config{log: slog.Default(), limiter: NewLocalLimiter(DefaultRatePerSecond, DefaultRateBurst)}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// router is a ServeMux whose every answer, unknown routes and wrong methods
// included, is JSON.
type router struct {
	config
	mux      *http.ServeMux
	patterns map[string][]string // path pattern -> methods
}

func newRouter(c config) *router {
	rt := &router{config: c, mux: http.NewServeMux(), patterns: map[string][]string{}}
	rt.mux.HandleFunc("/", rt.notFound)
	return rt
}

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) { rt.mux.ServeHTTP(w, r) }

// route describes one endpoint: who may call it and what it does.
type route struct {
	auth    *slots.Service // nil: no authentication
	scope   slots.Scope    // "": any authenticated key
	limited bool           // counts against the key's rate limit
	fn      func(w http.ResponseWriter, r *http.Request) error
}

func (rt *router) handle(method, path string, rte route) {
	rt.patterns[path] = append(rt.patterns[path], method)
	rt.mux.HandleFunc(method+" "+path, func(w http.ResponseWriter, r *http.Request) {
		if err := rt.serve(w, r, rte); err != nil {
			writeError(w, r, rt.log, err)
		}
	})
}

func (rt *router) serve(w http.ResponseWriter, r *http.Request, rte route) error {
	if rte.auth != nil {
		k, err := rte.auth.Authenticate(r.Context(), bearer(r))
		if err != nil {
			return err
		}
		if rte.scope != "" {
			if err := requireScope(k, rte.scope); err != nil {
				return err
			}
		}
		if rte.limited && rt.limiter != nil {
			ok, wait, err := rt.limiter.Allow(r.Context(), k.ID)
			if err != nil {
				return err
			}
			if !ok {
				return &rateLimitedError{retryAfter: wait}
			}
		}
		r = r.WithContext(withPrincipal(r.Context(), k))
	}
	return rte.fn(w, r)
}

// notFound answers every request no pattern matched: 405 with Allow when the
// path exists under other methods, else 404.
func (rt *router) notFound(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for path, methods := range rt.patterns {
		probe := r.Clone(r.Context())
		for _, m := range methods {
			probe.Method = m
			if _, p := rt.mux.Handler(probe); p == m+" "+path {
				allow = append(allow, m)
			}
		}
	}
	if len(allow) > 0 {
		slices.Sort(allow)
		allow = slices.Compact(allow)
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{errorDetail{"method_not_allowed", r.Method + " is not allowed here; use " + strings.Join(allow, ", ")}})
		return
	}
	writeJSON(w, http.StatusNotFound, errorBody{errorDetail{"route_not_found", "no route for " + r.Method + " " + r.URL.Path}})
}
