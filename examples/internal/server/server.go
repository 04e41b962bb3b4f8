// Package server is the all-in-one Agora server of examples/server and
// examples/demo: every API on one address, /api/v1 (claims,
// keys, role slots, the Prism pipeline), the arena under /api/games and
// /api/demo, /api/discussion and /api/squad-chat; the consoles; GET
// /healthz; and a front door at / naming all of them.
//
//	go run ./examples/server -addr 127.0.0.1:8080 -store memory
//	go run ./examples/server -store 'postgres://postgres@127.0.0.1:5432/agora?sslmode=disable'
//	go run ./examples/server -store redis://127.0.0.1:6379/0
//
// The admin key comes from -admin-key or AGORA_ADMIN_KEY; without either the
// server makes one up and prints it once. Use it to create agents' keys:
//
//	curl -X POST localhost:8080/api/v1/keys -H "Authorization: Bearer $ADMIN" \
//	  -d '{"name":"Skeptic-7","scopes":["comment:create"]}'
package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/agentchat/claudecli"
	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/examples/internal/bots"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/chatauth"
	"github.com/agorahq/agora/httpapi/console"
	"github.com/agorahq/agora/httpapi/mcp"
	"github.com/agorahq/agora/observe"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/pgstore"
)

// shutdownGrace is how long requests in progress have to finish once
// shutdown begins before every request's context is cancelled.
const shutdownGrace = 300 * time.Millisecond

// Run serves until ctx is done, then shuts down gracefully; args are the
// command line of examples/server, and every flag can also come from its
// AGORA_* environment variable (-store: AGORA_STORE). With -h it prints
// the usage and returns nil. ready, when not nil, is called with the
// address once the server listens.
func Run(ctx context.Context, args []string, stdout io.Writer, ready func(addr string)) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	storeURL := fs.String("store", "memory", "backend: memory, postgres://… or redis://…")
	adminKey := fs.String("admin-key", os.Getenv("AGORA_ADMIN_KEY"), "admin API key (default $AGORA_ADMIN_KEY, else generated); prefer the environment variable: a flag's value shows in ps to every user of the machine")
	lease := fs.Duration("lease", 0, "re-open a taken role slot not done within this time (0: never)")
	stageLease := fs.Duration("stage-lease", prism.DefaultLease, "re-open a taken Prism stage slot not done within this time (0: never)")
	rate := fs.Float64("rate", httpapi.DefaultRatePerSecond, "take/done/comment/claim-creation requests per second per key")
	burst := fs.Int("burst", httpapi.DefaultRateBurst, "burst of the per-key rate limit")
	redisPrefix := fs.String("redis-prefix", "agora", "key prefix (and hash tag) of the Redis store")
	agentDir := fs.String("agent-dir", "", "serve /agent/ (the coding-agent chat API) running the agent in this directory")
	claudePath := fs.String("claude", "claude", "the Claude Code CLI the agent runs")
	envFile := fs.String("env-file", "", "KEY=value lines added to the agent's environment")
	agentPrompt := fs.String("agent-prompt", "", "a file appended to the agent's system prompt")
	quiet := fs.Bool("quiet", false, "log errors only")
	logFormat := fs.String("log-format", "text", "the log's format: text (key=value lines) or json (one object a line); every request is a line, its request ID on each line it causes")
	logSample := fs.Uint64("log-sample", 1, "log one in N request lines of answers below 400 (every 4xx and 5xx is logged)")
	metricsOn := fs.Bool("metrics", false, "serve Prometheus metrics at /metrics (traces: the OTEL_* environment, OTEL_TRACES_EXPORTER=otlp or console)")
	storeTimeout := fs.Duration("store-timeout", pgstore.DefaultCallTimeout, "longest wait for the database in one store call; past it the request answers 503")
	pgConns := fs.Int("pg-conns", pgstore.DefaultMaxOpenConns, "PostgreSQL connections in the pool, all kept open while idle")
	batch := fs.Bool("batch", true, "coalesce concurrent role-slot takes (the one-step route) and dones into one store call each, as a batch completer does (false: each its own store call)")
	batchWait := fs.Duration("batch-wait", slots.DefaultBatchWait, "with -batch, the longest a batch waits for the callers of the last one to come back before it is written (0: none; it only gathers what arrives meanwhile)")
	maxConns := fs.Int("max-conns", 0, "most client connections held at once, streams included; when all are held, one still sending its headers or idle gives way to a newcomer, and otherwise more wait to be accepted (0: no limit)")
	allowedHosts := fs.String("allowed-hosts", os.Getenv("AGORA_ALLOWED_HOSTS"), "comma-separated Host names the server answers besides loopback ones (default $AGORA_ALLOWED_HOSTS); on a loopback -addr every other name is refused, against DNS rebinding; elsewhere, when given, only these and loopback names are answered")
	requireKeysEnv := os.Getenv("AGORA_REQUIRE_KEYS")
	requireKeys := fs.Bool("require-keys", requireKeysEnv == "1" || requireKeysEnv == "true", "require API keys (Bearer, with scopes) on the arena, discussion and squad-chat routes too, not only on /api/v1 (default $AGORA_REQUIRE_KEYS); the agent chat then needs -chat-auth or -chat-open")
	var chatAuth chatauth.Config
	chatAuth.Flags(fs, os.Getenv)
	fillerBrain := fs.String("filler-brain", bots.BrainTemplate, "how the arena's filler agents write their arguments: template or claude")
	fillerPace := fs.Duration("filler-pace", 300*time.Millisecond, "the pause before each action of an arena filler")
	if err := parseFlags(fs, args, os.LookupEnv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // -h: the usage is printed, and asking for it is no failure
		}
		return err
	}

	level := slog.LevelInfo
	if *quiet {
		level = slog.LevelError
	}
	log, err := observe.NewLogger(os.Stderr, *logFormat, level)
	if err != nil {
		return fmt.Errorf("-log-format: %w", err)
	}
	obs, err := newObservability(ctx, *metricsOn, os.Stderr)
	if err != nil {
		return err
	}
	defer obs.close(log)
	if *adminKey == "" {
		var b [24]byte
		_, _ = rand.Read(b[:])
		*adminKey = "admin-" + base64.RawURLEncoding.EncodeToString(b[:])
		fmt.Fprintf(stdout, "admin key (shown once): %s\n", *adminKey)
	}

	backend, err := openBackend(ctx, backendConfig{url: *storeURL, redisPrefix: *redisPrefix, rate: *rate, burst: *burst,
		timeout: *storeTimeout, maxConns: *pgConns, log: log})
	if err != nil {
		return err
	}
	defer backend.close()
	log.Info("store ready", "backend", backend.name)
	obs.wrap(backend, log)

	slotOpts := []slots.Option{slots.WithAdminKey(*adminKey), slots.WithLease(*lease), slots.WithNotifier(backend.notifier), slots.WithObserver(obs.services)}
	if *batch {
		slotOpts = append(slotOpts, slots.WithTakeBatching(*batchWait), slots.WithDoneBatching(*batchWait))
	} else {
		slotOpts = append(slotOpts, slots.WithoutBatching())
	}
	svc := slots.New(backend.slots, slotOpts...)
	if *lease > 0 {
		go svc.RunSweeper(ctx, min(*lease/4, time.Second), func(err error) { log.Error("lease sweep", "err", err) })
	}

	disc := discussion.New(backend.discussion, discussion.WithNotifier(backend.notifier), discussion.WithObserver(obs.services))
	go disc.RunSweeper(ctx, 5*time.Second, func(err error) { log.Error("discussion sweep", "err", err) })

	pipelines := prism.New(backend.prism, backend.slots, prism.WithLease(*stageLease), prism.WithNotifier(backend.notifier), prism.WithObserver(obs.services))
	go pipelines.RunSweeper(ctx, 5*time.Second, func(err error) { log.Error("stage lease sweep", "err", err) })

	// The routes the originals leave open take keys when the host asks.
	openOpts := []httpapi.Option{httpapi.WithLogger(log), httpapi.WithLimiter(backend.limiter)}
	if *requireKeys {
		openOpts = append(openOpts, httpapi.WithKeys(svc))
		log.Info("API keys required on every API")
	}

	mux := http.NewServeMux()
	mux.Handle("/api/v1/", httpapi.Slots(svc, httpapi.WithLogger(log), httpapi.WithLimiter(backend.limiter), httpapi.WithPrism(pipelines)))
	brain, closeBrain, err := bots.NewBrain(*fillerBrain, *claudePath)
	if err != nil {
		return err
	}
	defer closeBrain()
	games := arena.New(backend.arena, arena.WithNotifier(backend.notifier), arena.WithObserver(obs.services),
		arena.WithFillerWriter(bots.FillerWriter(brain)), arena.WithAutoFillers(ctx, *fillerPace))
	go games.RunSweeper(ctx, time.Second, func(err error) { log.Error("arena sweep", "err", err) })
	arenaAPI := httpapi.Arena(games, openOpts...)
	for _, p := range []string{"/api/games", "/api/games/", "/api/demo/", "/skill.md", "/health"} {
		mux.Handle(p, arenaAPI)
	}
	if *agentDir != "" {
		if err := chatAuth.CheckExposure(*addr); err != nil {
			return err
		}
		if *requireKeys && (chatAuth.Mode == "" || chatAuth.Mode == "none") && !chatAuth.Open {
			return errors.New("-require-keys: the agent chat takes no API keys; give it its own auth (-chat-auth) or say it is meant to be open (-chat-open)")
		}
		runner := &claudecli.Runner{Path: *claudePath, Dir: *agentDir, PromptFile: *agentPrompt,
			SystemPrompt: "You are the coding agent of this application, started by its chat. Work in the current directory.\n\n" + agentchat.TitleInstructions}
		if *envFile != "" {
			f, err := os.Open(*envFile)
			if err != nil {
				return err
			}
			runner.Env, err = claudecli.ParseEnvFile(f)
			f.Close()
			if err != nil {
				return err
			}
		}
		chat := agentchat.New(backend.agentchat, runner, agentchat.WithNotifier(backend.notifier), agentchat.WithObserver(obs.services))
		if n, err := chat.Start(ctx); err != nil {
			return err
		} else if n > 0 {
			log.Warn("agent runs left by a stopped server marked interrupted", "count", n)
		}
		defer chat.Close()
		auth, err := chatAuth.Scheme()
		if err != nil {
			return err
		}

		chatAPI := httpapi.AgentChat(chat, httpapi.WithLogger(log), httpapi.WithChatAuth(auth))
		for _, p := range []string{"/agent/", "/chat", "/chat/", "/chat.js", "/chat.css"} {
			mux.Handle(p, chatAPI)
		}
	}
	discussionAPI := httpapi.Discussion(disc, openOpts...)
	for _, p := range []string{"/api/discussion", "/api/discussion/", "/api/squad-chat", "/api/squad-chat/"} {
		mux.Handle(p, discussionAPI)
	}
	// The same services as MCP tools for agent hosts, each request's
	// Bearer key the caller, whatever -require-keys says.
	mux.Handle("/mcp", mcp.Handler(mcp.Services{Slots: svc, Prism: pipelines, Arena: games, Discussion: disc},
		mcp.Options{Limiter: backend.limiter, Logger: log}))
	pages := console.Handler()
	mux.Handle("/jobs", pages)
	mux.Handle("/squad", pages)
	mux.Handle("/device", pages)
	mux.Handle("/arena/", pages)
	mux.Handle("/console/", pages)
	door := frontDoor{backend: backend.name, ping: backend.ping, games: games, chat: *agentDir != "", metrics: *metricsOn, log: log}
	if *metricsOn {
		mux.Handle("GET /metrics", obs.metricsHandler())
	}
	mux.Handle("/", door.handler())
	mux.Handle("/healthz", httpapi.HealthHandler(backend.name, backend.ping, httpapi.WithLogger(log)))
	mux.Handle("/openapi.json", httpapi.OpenAPIHandler())

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	var connState func(net.Conn, http.ConnState)
	if *maxConns > 0 {
		limit := limitListener(ln, *maxConns)
		ln, connState = limit, limit.state
	}
	// Every request's context ends a moment after shutdown begins, so that
	// event streams and long polls, which would otherwise hold the shutdown
	// for as long as they last, end too; requests already answering finish.
	base, hangUp := context.WithCancel(context.Background())
	defer hangUp()
	srv := &http.Server{
		Handler:     obs.handler(httpapi.GuardHosts(cleanPaths(mux), *addr, strings.Split(*allowedHosts, ",")), log, *logSample),
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
	log.Info("listening", "addr", "http://"+ln.Addr().String())
	door.logPages(log, "http://"+ln.Addr().String())
	if ready != nil {
		ready(ln.Addr().String())
	}

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
