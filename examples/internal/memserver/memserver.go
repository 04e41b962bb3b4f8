// Package memserver runs the whole Agora server on a fresh memory store,
// with one call of package server, for the tests of the examples that
// drive a server: the bots, the agents and the MCP command.
package memserver

import (
	"context"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/server"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/memstore"
)

// Start serves every route on a loopback port until ctx ends and returns
// the base URL, and a channel that has Serve's error once it has shut
// down; admin is the admin key, and the arena's fillers play by
// themselves as the example server's do. opts.Logger nil logs errors
// only, to stderr.
func Start(ctx context.Context, admin string, opts server.Options) (base string, done <-chan error, err error) {
	st := memstore.New()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	}
	srv, err := server.New(server.Services{
		Identity:   identity.New(st, identity.WithAdminKey(admin), identity.WithScopes(httpapi.Scopes())),
		Slots:      slots.New(st, slots.WithNotifier(st)),
		Prism:      prism.New(st, st, prism.WithNotifier(st)),
		Arena:      arena.New(st, arena.WithNotifier(st), arena.WithAutoFillers(ctx, fillerPace)),
		Discussion: discussion.New(st, discussion.WithNotifier(st)),
	}, opts)
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	return "http://" + ln.Addr().String(), served, nil
}

// fillerPace is the example server's default -filler-pace.
const fillerPace = 300 * time.Millisecond
