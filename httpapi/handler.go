package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/prism"
)

// MaxBodyBytes is the largest request body any route accepts.
const MaxBodyBytes = httpjson.MaxBodyBytes

// The options of the handlers. Each handler takes its own option type, so
// an option a handler would not read does not compile with it: WithPrism
// is the Slots handler's alone, WithKeys the open routes' (Arena and
// Discussion), WithChatAuth and WithChatLook AgentChat's; WithLogger fits
// every handler and WithLimiter every handler whose routes take API keys.
type (
	// SlotsOption configures Slots: WithLogger, WithLimiter, WithPrism.
	SlotsOption interface {
		option
		slotsOption()
	}
	// ArenaOption configures Arena: WithLogger, WithLimiter, WithKeys.
	ArenaOption interface {
		option
		arenaOption()
	}
	// DiscussionOption configures Discussion: WithLogger, WithLimiter,
	// WithKeys.
	DiscussionOption interface {
		option
		discussionOption()
	}
	// ChatOption configures AgentChat: WithLogger, WithChatAuth,
	// WithChatLook.
	ChatOption interface {
		option
		chatOption()
	}
	// HealthOption configures HealthHandler: WithLogger.
	HealthOption interface {
		option
		healthOption()
	}
)

// option is what every handler option does: set its part of config.
type option interface{ apply(*config) }

type config struct {
	log     *slog.Logger
	limiter Limiter
	prism   *prism.Service
	keys    *identity.Service // nil: the originals' open routes
	chat    chatConfig        // AgentChat's auth and look
}

// KeysOption is WithKeys: an option of Arena and Discussion.
type KeysOption struct{ svc *identity.Service }

// WithKeys makes Arena or Discussion (squad chat included) require the
// Bearer API keys of svc, as the /api/v1 routes do: a request without a
// valid key is 401, one whose key lacks the route's scope 403, and writes
// count against the key's rate limit (WithLimiter). Reads need any valid
// key. With it an identity is its key: see Arena and Discussion for what
// each route then requires. Without it the routes are open, as the
// originals have them.
func WithKeys(svc *identity.Service) KeysOption { return KeysOption{svc} }

func (o KeysOption) apply(c *config) { c.keys = o.svc }
func (KeysOption) arenaOption()      {}
func (KeysOption) discussionOption() {}

// LoggerOption is WithLogger: an option of every handler.
type LoggerOption struct{ log *slog.Logger }

// WithLogger sets where unexpected errors are logged; the default is
// slog.Default().
func WithLogger(l *slog.Logger) LoggerOption { return LoggerOption{l} }

func (o LoggerOption) apply(c *config) { c.log = o.log }
func (LoggerOption) slotsOption()      {}
func (LoggerOption) arenaOption()      {}
func (LoggerOption) discussionOption() {}
func (LoggerOption) chatOption()       {}
func (LoggerOption) healthOption()     {}

// LimiterOption is WithLimiter: an option of the handlers whose routes
// take API keys, Slots, and Arena and Discussion with WithKeys.
type LimiterOption struct{ l Limiter }

// WithLimiter sets the per-key rate limiter of the writing routes (take,
// done, comment, creating claims; the arena's and discussion's writes
// under WithKeys, whose keys it counts); the default is a LocalLimiter at
// DefaultRatePerSecond and DefaultRateBurst. A nil Limiter turns rate
// limiting off.
func WithLimiter(l Limiter) LimiterOption { return LimiterOption{l} }

func (o LimiterOption) apply(c *config) { c.limiter = o.l }
func (LimiterOption) slotsOption()      {}
func (LimiterOption) arenaOption()      {}
func (LimiterOption) discussionOption() {}

// slotsOptionFunc and chatOptionFunc are the options of one handler.
type (
	slotsOptionFunc func(*config)
	chatOptionFunc  func(*config)
)

func (f slotsOptionFunc) apply(c *config) { f(c) }
func (slotsOptionFunc) slotsOption()      {}
func (f chatOptionFunc) apply(c *config)  { f(c) }
func (chatOptionFunc) chatOption()        {}

func newConfig[O option](opts []O) config {
	c := config{log: slog.Default(), limiter: NewLocalLimiter(DefaultRatePerSecond, DefaultRateBurst)}
	for _, o := range opts {
		o.apply(&c)
	}
	return c
}

// router is httpjson's Router with the /api/v1 rules on top: API keys,
// scopes and rate limits.
type router struct {
	config
	*httpjson.Router
}

func newRouter(c config) *router {
	return &router{config: c, Router: httpjson.NewRouter(c.log)}
}

// route describes one endpoint: who may call it and what it does.
type route struct {
	auth    *identity.Service // nil: no authentication
	scope   identity.Scope    // "": any authenticated key
	limited bool              // counts against the key's rate limit
	// limitCode is the code of the route's 429; empty: rate_limited.
	limitCode string
	fn        func(w http.ResponseWriter, r *http.Request) error
}

// keyed is the route fn with scope and limit when the host requires keys
// (WithKeys), else the open route of the original.
func (c config) keyed(scope identity.Scope, limited bool, fn func(http.ResponseWriter, *http.Request) error) route {
	if c.keys == nil {
		return route{fn: fn}
	}
	return route{auth: c.keys, scope: scope, limited: limited, fn: fn}
}

func (rt *router) handle(method, path string, rte route) {
	rt.Handle(method, path, func(w http.ResponseWriter, r *http.Request) error { return rt.serve(w, r, rte) })
}

// serve authenticates the request once and puts its caller in the
// context: on a route that requires keys the caller is the bearer token's
// key, which must carry the route's scope; on an open route it is the
// bearer token as presented, unverified (the arena's agent tokens).
func (rt *router) serve(w http.ResponseWriter, r *http.Request, rte route) error {
	caller := identity.Caller{Token: bearer(r)}
	if rte.auth != nil {
		k, err := rte.auth.Authenticate(r.Context(), caller.Token)
		if err != nil {
			return err
		}
		if rte.scope != "" {
			if err := k.Require(rte.scope); err != nil {
				return err
			}
		}
		if rte.limited && rt.limiter != nil {
			ok, wait, err := rt.limiter.Allow(r.Context(), k.ID)
			if err != nil {
				return err
			}
			if !ok {
				return &httpjson.RateLimited{RetryAfter: wait, Code: rte.limitCode}
			}
		}
		caller = identity.Caller{Key: k}
	}
	return rte.fn(w, r.WithContext(withCaller(r.Context(), caller)))
}
