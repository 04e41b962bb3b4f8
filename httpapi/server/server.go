// Package server assembles the whole Agora server in one call, from
// services the host built: /api/v1 (claims, keys, role slots, the Prism
// pipeline), the arena under /api/games and /api/demo, /api/discussion and
// /api/squad-chat, the agent chat under /agent/ and /chat when the host
// runs one, /mcp, the consoles, GET /healthz, GET /openapi.json, GET
// /metrics when the host asks, and a front door at / naming all of them;
// behind the request log, metrics and spans of package observe, a Host
// check against DNS rebinding, and refusals of unclean paths. Serve runs
// it on a listener with the sweepers, until its context ends.
//
//	st := memstore.New()
//	srv, err := server.New(server.Services{
//		Identity:   identity.New(st, identity.WithAdminKey(admin), identity.WithScopes(httpapi.Scopes())),
//		Slots:      slots.New(st, slots.WithNotifier(st)),
//		Prism:      prism.New(st, st, prism.WithNotifier(st)),
//		Arena:      arena.New(st, arena.WithNotifier(st)),
//		Discussion: discussion.New(st, discussion.WithNotifier(st)),
//	}, server.Options{Addr: "127.0.0.1:8080"})
//	err = srv.ListenAndServe(ctx) // until ctx ends, then a graceful shutdown
//
// It is a package of its own, not part of httpapi, because it mounts the
// MCP edge (httpapi/mcp), which imports httpapi.
package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/chatauth"
	"github.com/agorahq/agora/httpapi/console"
	"github.com/agorahq/agora/httpapi/mcp"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/observe"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
)

// Services are the domain services the server serves, built by the host
// on its stores with its own options.
type Services struct {
	// Identity holds the API keys and device logins every keyed route and
	// /mcp check. Required.
	Identity *identity.Service
	// Slots serves /api/v1, claims, comments and role slots. Required.
	Slots *slots.Service
	// Prism adds the pipeline's routes to /api/v1. Required.
	Prism *prism.Service
	// Arena serves /api/games and /api/demo; its fillers play by
	// themselves when it was built with arena.WithAutoFillers. Required.
	Arena *arena.Service
	// Discussion serves /api/discussion and /api/squad-chat. Required.
	Discussion *discussion.Service
	// AgentChat, when not nil, serves the coding agent's chat under
	// /agent/ and /chat, guarded by Options.ChatAuth.
	AgentChat *agentchat.Service
}

// Options are what a host chooses beyond its services; the zero value
// serves every route open as the originals have them, logging to
// slog.Default().
type Options struct {
	// Logger receives unexpected errors, the sweepers' errors, the
	// start-up lines and one line per request; nil is slog.Default().
	Logger *slog.Logger
	// LogSample, when above 1, logs one in LogSample request lines of
	// answers below 400; every 4xx and 5xx is logged.
	LogSample uint64
	// Limiter is the per-key rate limit of the writing routes and MCP
	// tools, one budget per key across both; nil is an
	// httpapi.LocalLimiter at the package's defaults.
	Limiter httpapi.Limiter
	// Store names the backend on /healthz and the front door ("memory",
	// "postgres", "redis"); empty is "memory".
	Store string
	// Ping asks the store whether it answers, for /healthz and the front
	// door; nil always answers.
	Ping httpapi.Ping
	// RequireKeys makes the arena, discussion and squad-chat routes
	// require API keys as /api/v1 does (httpapi.WithKeys); the agent chat
	// takes none, and keeps ChatAuth.
	RequireKeys bool
	// ChatAuth guards the agent chat's API; the zero Scheme leaves it
	// open (see chatauth.Config.CheckExposure).
	ChatAuth chatauth.Scheme
	// Metrics, when not nil, counts requests, times them and counts open
	// streams; Tracer, when not nil, starts a span per request (see
	// observe.HTTPOptions). Wrap the stores with observe.NewStores for
	// theirs.
	Metrics *observe.Metrics
	Tracer  trace.TracerProvider // see Metrics
	// MetricsHandler, when not nil, is served at GET /metrics (typically
	// promhttp.HandlerFor on the registry Metrics was made on) and named
	// on the front door.
	MetricsHandler http.Handler
	// Addr is the address the server listens on, and AllowedHosts the
	// Host names it answers besides loopback ones: see
	// httpapi.GuardHosts, the defence against DNS rebinding.
	Addr         string
	AllowedHosts []string // see Addr
	// MaxConns, when above zero, is the most connections Serve holds at
	// once, streams included; when all are held, one still sending its
	// headers or idle gives way to a newcomer, and more wait to be
	// accepted.
	MaxConns int
}

// Server is the whole server: an http.Handler of every route, and, with
// Start or Serve, the sweepers that re-open lapsed leases and time out
// prompts.
type Server struct {
	svcs    Services
	opts    Options
	log     *slog.Logger
	handler http.Handler
	door    frontDoor

	mu      sync.Mutex
	started bool
	stop    context.CancelFunc
	sweeps  sync.WaitGroup
}

// New assembles the server from svcs; it serves nothing until mounted or
// Serve is called. It refuses Services without one of the required
// services.
func New(svcs Services, opts Options) (*Server, error) {
	if svcs.Identity == nil || svcs.Slots == nil || svcs.Prism == nil || svcs.Arena == nil || svcs.Discussion == nil {
		return nil, errors.New("server: Services needs Identity, Slots, Prism, Arena and Discussion")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Limiter == nil {
		opts.Limiter = httpapi.NewLocalLimiter(httpapi.DefaultRatePerSecond, httpapi.DefaultRateBurst)
	}
	if opts.Store == "" {
		opts.Store = "memory"
	}
	s := &Server{svcs: svcs, opts: opts, log: opts.Logger}
	log, limit := httpapi.WithLogger(opts.Logger), httpapi.WithLimiter(opts.Limiter)

	mux := http.NewServeMux()
	mux.Handle("/api/v1/", httpapi.Slots(svcs.Slots, svcs.Identity, log, limit, httpapi.WithPrism(svcs.Prism)))
	// The routes the originals leave open take keys when the host asks.
	arenaOpts := []httpapi.ArenaOption{log, limit}
	discussionOpts := []httpapi.DiscussionOption{log, limit}
	if opts.RequireKeys {
		keys := httpapi.WithKeys(svcs.Identity)
		arenaOpts, discussionOpts = append(arenaOpts, keys), append(discussionOpts, keys)
	}
	arenaAPI := httpapi.Arena(svcs.Arena, arenaOpts...)
	for _, p := range []string{"/api/games", "/api/games/", "/api/demo/", "/skill.md", "/health"} {
		mux.Handle(p, arenaAPI)
	}
	discussionAPI := httpapi.Discussion(svcs.Discussion, discussionOpts...)
	for _, p := range []string{"/api/discussion", "/api/discussion/", "/api/squad-chat", "/api/squad-chat/"} {
		mux.Handle(p, discussionAPI)
	}
	if svcs.AgentChat != nil {
		chatAPI := httpapi.AgentChat(svcs.AgentChat, log, httpapi.WithChatAuth(opts.ChatAuth))
		for _, p := range []string{"/agent/", "/chat", "/chat/", "/chat.js", "/chat.css"} {
			mux.Handle(p, chatAPI)
		}
	}
	// The same services as MCP tools for agent hosts, each request's
	// Bearer key the caller, whatever RequireKeys says.
	mux.Handle("/mcp", mcp.Handler(mcp.Services{Identity: svcs.Identity, Slots: svcs.Slots, Prism: svcs.Prism, Arena: svcs.Arena, Discussion: svcs.Discussion},
		mcp.Options{Limiter: opts.Limiter, Logger: opts.Logger}))
	pages := console.Handler()
	for _, p := range []string{"/jobs", "/squad", "/device", "/arena/", "/console/"} {
		mux.Handle(p, pages)
	}
	if opts.MetricsHandler != nil {
		mux.Handle("GET /metrics", opts.MetricsHandler)
	}
	s.door = frontDoor{backend: opts.Store, ping: opts.Ping, games: svcs.Arena, chat: svcs.AgentChat != nil,
		metrics: opts.MetricsHandler != nil, log: opts.Logger}
	mux.Handle("/", s.door.handler())
	mux.Handle("/healthz", httpapi.HealthHandler(opts.Store, opts.Ping, log))
	mux.Handle("/openapi.json", httpapi.OpenAPIHandler())

	s.handler = observe.Handler(httpapi.GuardHosts(cleanPaths(mux), opts.Addr, opts.AllowedHosts),
		observe.HTTPOptions{Log: opts.Logger, SampleOK: opts.LogSample, Metrics: opts.Metrics, Tracer: opts.Tracer})
	if opts.RequireKeys {
		opts.Logger.Info("API keys required on every API")
	}
	return s, nil
}

// ServeHTTP serves every route of the server.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// The sweepers' intervals: how soon a lapsed stage lease, a timed-out
// prompt and an arena phase past its deadline are seen to.
const (
	stageSweep      = 5 * time.Second
	discussionSweep = 5 * time.Second
	arenaSweep      = time.Second
)

// Start marks the agent runs a stopped server left running as interrupted
// (with an AgentChat), then runs the sweepers in the background until ctx
// ends or Stop: the role-slot lease sweeper when Slots has a lease, the
// stage-lease, prompt-timeout and arena sweepers always. Serve calls it;
// a host mounting the server on its own http.Server calls it before
// serving. A second Start is refused.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("server: already started")
	}
	if chat := s.svcs.AgentChat; chat != nil {
		n, err := chat.Start(ctx)
		if err != nil {
			return err
		}
		if n > 0 {
			s.log.Warn("agent runs left by a stopped server marked interrupted", "count", n)
		}
	}
	s.started = true
	ctx, s.stop = context.WithCancel(ctx)
	sweep := func(name string, run func(context.Context, time.Duration, func(error)), every time.Duration) {
		s.sweeps.Add(1)
		go func() {
			defer s.sweeps.Done()
			run(ctx, every, func(err error) { s.log.Error(name, "err", err) })
		}()
	}
	if lease := s.svcs.Slots.Lease(); lease > 0 {
		sweep("lease sweep", s.svcs.Slots.RunSweeper, min(lease/4, time.Second))
	}
	sweep("discussion sweep", s.svcs.Discussion.RunSweeper, discussionSweep)
	sweep("stage lease sweep", s.svcs.Prism.RunSweeper, stageSweep)
	sweep("arena sweep", s.svcs.Arena.RunSweeper, arenaSweep)
	return nil
}

// Stop ends the sweepers Start began and waits for them, then stops the
// agent chat's run, if any. It does nothing before Start.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		return
	}
	s.stop()
	s.sweeps.Wait()
	if s.svcs.AgentChat != nil {
		s.svcs.AgentChat.Close()
	}
	s.started = false
}

// shutdownGrace is how long requests in progress have to finish once
// shutdown begins before every request's context is cancelled.
const shutdownGrace = 300 * time.Millisecond

// shutdownTimeout bounds the whole graceful shutdown.
const shutdownTimeout = 10 * time.Second

// ListenAndServe listens on Options.Addr (empty: ":http", as net/http
// has it) and serves there as Serve does.
func (s *Server) ListenAndServe(ctx context.Context) error {
	addr := s.opts.Addr
	if addr == "" {
		addr = ":http"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln)
}

// Serve starts the server (Start), serves ln until ctx ends, then shuts
// down gracefully: requests in progress have a moment to finish, then
// every request's context is cancelled, so that event streams and long
// polls end too; and it stops (Stop). It logs the address and the pages
// served. It returns nil after a shutdown (ctx may end before it
// begins), else the error that ended it; it closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := s.Start(ctx); err != nil {
		ln.Close()
		if ctx.Err() != nil {
			return nil // shut down before it began
		}
		return err
	}
	defer s.Stop()
	var connState func(net.Conn, http.ConnState)
	if s.opts.MaxConns > 0 {
		limit := limitListener(ln, s.opts.MaxConns)
		ln, connState = limit, limit.state
	}
	base, hangUp := context.WithCancel(context.Background())
	defer hangUp()
	srv := &http.Server{
		Handler:     s,
		BaseContext: func(net.Listener) context.Context { return base },
		// A slow client cannot hold a connection: headers within 10 s, the
		// whole (at most 1 MiB) body within 30 s, the answer written within
		// 90 s (the longest long poll is 60 s, plus the store's deadline);
		// event streams lift the read and write deadlines for themselves.
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      90 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ConnState:         connState,
	}
	srv.RegisterOnShutdown(func() { time.AfterFunc(shutdownGrace, hangUp) })
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	url := "http://" + ln.Addr().String()
	s.log.Info("listening", "addr", url)
	s.door.logPages(s.log, url)

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down")
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
