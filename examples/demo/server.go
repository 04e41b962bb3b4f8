package main

import (
	"context"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/agentchat/claudecli"
	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/examples/internal/backend"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/chatauth"
	"github.com/agorahq/agora/httpapi/server"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/pgstore"
)

// demoServer is the server the demo runs in-process, as examples/server
// would with its defaults: on d's store, with admin as the admin key,
// stage leases of a minute, and, when claude is not empty, the agent
// chat running that CLI in chatDir.
type demoServer struct {
	d               data
	addr, admin     string
	requireKeys     bool
	chatDir, claude string
}

// start serves until ctx ends and returns the address it listens on and a
// channel that has Serve's error once the server has shut down and its
// store is closed.
func (s demoServer) start(ctx context.Context) (string, <-chan error, error) {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	// The chat is open (its auth "none"), so on loopback only.
	chat := chatauth.Config{Mode: "none"}
	if s.claude != "" {
		if err := chat.CheckExposure(s.addr); err != nil {
			return "", nil, err
		}
	}
	b, err := backend.Open(ctx, backend.Config{URL: s.d.url, RedisPrefix: s.d.prefix, Rate: httpapi.DefaultRatePerSecond,
		Burst: httpapi.DefaultRateBurst, Timeout: pgstore.DefaultCallTimeout, MaxConns: pgstore.DefaultMaxOpenConns, Log: log})
	if err != nil {
		return "", nil, err
	}
	svcs := server.Services{
		Identity: identity.New(b.Identity, identity.WithAdminKey(s.admin), identity.WithScopes(httpapi.Scopes())),
		Slots: slots.New(b.Slots, slots.WithNotifier(b.Notifier),
			slots.WithTakeBatching(slots.DefaultBatchWait), slots.WithDoneBatching(slots.DefaultBatchWait)),
		Prism:      prism.New(b.Prism, b.Slots, prism.WithLease(time.Minute), prism.WithNotifier(b.Notifier)),
		Arena:      arena.New(b.Arena, arena.WithNotifier(b.Notifier), arena.WithAutoFillers(ctx, 300*time.Millisecond)),
		Discussion: discussion.New(b.Discussion, discussion.WithNotifier(b.Notifier)),
	}
	if s.claude != "" {
		svcs.AgentChat = agentchat.New(b.AgentChat, &claudecli.Runner{Path: s.claude, Dir: s.chatDir,
			SystemPrompt: "You are the coding agent of this application, started by its chat. Work in the current directory.\n\n" + agentchat.TitleInstructions},
			agentchat.WithNotifier(b.Notifier))
	}
	srv, err := server.New(svcs, server.Options{Logger: log, Limiter: b.Limiter, Store: b.Name, Ping: b.Ping,
		RequireKeys: s.requireKeys, ChatAuth: chatauth.Scheme{Mode: chat.Mode}, Addr: s.addr})
	if err != nil {
		b.Close()
		return "", nil, err
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		b.Close()
		return "", nil, err
	}
	done := make(chan error, 1)
	go func() {
		err := srv.Serve(ctx, ln)
		b.Close()
		done <- err
	}()
	return ln.Addr().String(), done, nil
}
