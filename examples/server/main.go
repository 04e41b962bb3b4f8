// Command server runs every Agora API on one address: /api/v1 (claims,
// keys, role slots, the Prism pipeline), the arena under /api/games and
// /api/demo, /api/discussion and /api/squad-chat, /mcp, the consoles,
// /healthz and /openapi.json, and with -agent-dir the coding-agent chat
// under /agent/ and /chat. It is flags around one call: it opens the
// store, builds the services on it and serves them with
// github.com/agorahq/agora/httpapi/server.
//
//	go run ./examples/server -addr 127.0.0.1:8080 -store memory
//	go run ./examples/server -store 'postgres://postgres@127.0.0.1:5432/agora?sslmode=disable'
//	go run ./examples/server -store redis://127.0.0.1:6379/0
//
// Every flag can also come from its environment variable, AGORA_ and the
// flag's name (-store: AGORA_STORE, -batch-wait: AGORA_BATCH_WAIT); the
// command line wins, and -h lists them all. The admin key comes from
// AGORA_ADMIN_KEY (or -admin-key, which other users can read in ps);
// without either the server makes one up and prints it once. On
// PostgreSQL it makes the schema the DSN's search_path names when it is
// missing, and logs the migrations it applies. See docs/operations.md.
package main

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
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/agentchat/claudecli"
	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/examples/internal/backend"
	"github.com/agorahq/agora/examples/internal/bots"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/chatauth"
	"github.com/agorahq/agora/httpapi/server"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/observe"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/pgstore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

// run serves until ctx is done, then shuts down gracefully; args are the
// command line. With -h it prints the usage and returns nil. ready, when
// not nil, is called with the address once the server listens.
func run(ctx context.Context, args []string, stdout io.Writer, ready func(addr string)) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	storeURL := fs.String("store", "memory", "backend: memory, postgres://… or redis://…")
	adminKey := fs.String("admin-key", os.Getenv("AGORA_ADMIN_KEY"), "admin API key (default $AGORA_ADMIN_KEY, else generated); prefer the environment variable: a flag's value shows in ps to every user of the machine")
	lease := fs.Duration("lease", 0, "re-open a taken role slot not done within this time (0: never)")
	stageLease := fs.Duration("stage-lease", prism.DefaultLease, "re-open a taken Prism stage slot not done within this time (0: never)")
	rate := fs.Float64("rate", httpapi.DefaultRatePerSecond, "take/done/comment/claim-creation requests per second per key (0: no limit)")
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
	if !(*rate >= 0) {
		return fmt.Errorf("-rate %v: want requests a second, 0 or more (0: no limit)", *rate)
	}
	var chatScheme chatauth.Scheme
	if *agentDir != "" {
		if err := chatAuth.CheckExposure(*addr); err != nil {
			return err
		}
		if *requireKeys && (chatAuth.Mode == "" || chatAuth.Mode == "none") && !chatAuth.Open {
			return errors.New("-require-keys: the agent chat takes no API keys; give it its own auth (-chat-auth) or say it is meant to be open (-chat-open)")
		}
		var err error
		if chatScheme, err = chatAuth.Scheme(); err != nil {
			return err
		}
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

	// The stores.
	b, err := backend.Open(ctx, backend.Config{URL: *storeURL, RedisPrefix: *redisPrefix, Rate: *rate, Burst: *burst,
		Timeout: *storeTimeout, MaxConns: *pgConns, Log: log})
	if err != nil {
		return err
	}
	defer b.Close()
	log.Info("store ready", "backend", b.Name)
	obs.wrap(b, log)

	// The services.
	slotOpts := []slots.Option{slots.WithLease(*lease), slots.WithNotifier(b.Notifier), slots.WithObserver(obs.services)}
	if *batch {
		slotOpts = append(slotOpts, slots.WithTakeBatching(*batchWait), slots.WithDoneBatching(*batchWait))
	} else {
		slotOpts = append(slotOpts, slots.WithoutBatching())
	}
	brain, closeBrain, err := bots.NewBrain(*fillerBrain, *claudePath)
	if err != nil {
		return err
	}
	defer closeBrain()
	svcs := server.Services{
		Identity:   identity.New(b.Identity, identity.WithAdminKey(*adminKey), identity.WithScopes(httpapi.Scopes()), identity.WithObserver(obs.services)),
		Slots:      slots.New(b.Slots, slotOpts...),
		Prism:      prism.New(b.Prism, b.Slots, prism.WithLease(*stageLease), prism.WithNotifier(b.Notifier), prism.WithObserver(obs.services)),
		Arena:      arena.New(b.Arena, arena.WithNotifier(b.Notifier), arena.WithObserver(obs.services), arena.WithFillerWriter(bots.FillerWriter(brain)), arena.WithAutoFillers(ctx, *fillerPace)),
		Discussion: discussion.New(b.Discussion, discussion.WithNotifier(b.Notifier), discussion.WithObserver(obs.services)),
	}
	if *agentDir != "" {
		runner := &claudecli.Runner{Path: *claudePath, Dir: *agentDir, PromptFile: *agentPrompt,
			SystemPrompt: "You are the coding agent of this application, started by its chat. Work in the current directory.\n\n" + agentchat.TitleInstructions}
		if *envFile != "" {
			if runner.Env, err = readEnvFile(*envFile); err != nil {
				return err
			}
		}
		svcs.AgentChat = agentchat.New(b.AgentChat, runner, agentchat.WithNotifier(b.Notifier), agentchat.WithObserver(obs.services))
	}

	// The one call.
	srv, err := server.New(svcs, server.Options{
		Logger: log, LogSample: *logSample, Limiter: b.Limiter, Store: b.Name, Ping: b.Ping,
		RequireKeys: *requireKeys, ChatAuth: chatScheme,
		Metrics: obs.metrics, Tracer: obs.tracerProvider(), MetricsHandler: obs.metricsHandler(),
		Addr: *addr, AllowedHosts: strings.Split(*allowedHosts, ","), MaxConns: *maxConns,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(ln.Addr().String())
	}
	return srv.Serve(ctx, ln)
}

// readEnvFile reads the KEY=value lines of -env-file.
func readEnvFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return claudecli.ParseEnvFile(f)
}

// envPrefix starts the name of the environment variable each flag can be
// set by: -store is AGORA_STORE, -batch-wait AGORA_BATCH_WAIT.
const envPrefix = "AGORA_"

// envName is the environment variable of the flag named name.
func envName(name string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// parseFlags sets each flag of fs from its environment variable (envName)
// when that is set, then parses args, which win over the environment. It
// returns flag.ErrHelp for -h and -help.
func parseFlags(fs *flag.FlagSet, args []string, lookup func(string) (string, bool)) error {
	usage := fs.Usage
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Every flag can also be set by its environment variable, %sNAME (-store: %s, -batch-wait: %s);\nthe command line wins.\n", envPrefix, envName("store"), envName("batch-wait"))
		usage()
	}
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		v, ok := lookup(envName(f.Name))
		if !ok || err != nil {
			return
		}
		if e := f.Value.Set(v); e != nil {
			err = fmt.Errorf("%s=%q: %w", envName(f.Name), v, e)
		}
	})
	if err != nil {
		return err
	}
	return fs.Parse(args)
}
