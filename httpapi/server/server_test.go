package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/agentchat/claudecli"
	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/server"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/memstore"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// admin is the admin key of the servers the tests start.
const admin = "admin-test"

// memoryServices are the services of a server on a fresh memory store,
// with the agent chat (its CLI missing) when chat is set.
func memoryServices(t *testing.T, chat bool) server.Services {
	st := memstore.New()
	svcs := server.Services{
		Identity:   identity.New(st, identity.WithAdminKey(admin), identity.WithScopes(httpapi.Scopes())),
		Slots:      slots.New(st, slots.WithNotifier(st)),
		Prism:      prism.New(st, st, prism.WithNotifier(st)),
		Arena:      arena.New(st, arena.WithNotifier(st)),
		Discussion: discussion.New(st, discussion.WithNotifier(st)),
	}
	if chat {
		svcs.AgentChat = agentchat.New(st, &claudecli.Runner{Path: "/nonexistent/claude", Dir: t.TempDir()}, agentchat.WithNotifier(st))
	}
	return svcs
}

// quiet logs errors only.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// serve runs the server of svcs with opts on a loopback port until the
// test ends (Serve must then return nil) and returns its base URL.
func serve(t *testing.T, svcs server.Services, opts server.Options) string {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	srv, err := server.New(svcs, opts)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		// No deadline here: a shutdown that hangs is stopped by go
		// test's -timeout, and a slow one is not a failure.
		require.NoError(t, <-done, "graceful shutdown")
	})
	return "http://" + ln.Addr().String()
}

func call(t *testing.T, method, url, token, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	var v any
	if len(data) > 0 && strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		require.NoError(t, json.Unmarshal(data, &v), string(data))
	}
	m, _ := v.(map[string]any) // a list answers no map
	return res.StatusCode, m
}

// TestNewNeedsTheServices: a server without one of its required services
// is refused, not served half.
func TestNewNeedsTheServices(t *testing.T) {
	t.Parallel()
	svcs := memoryServices(t, false)
	svcs.Prism = nil
	_, err := server.New(svcs, server.Options{})
	require.ErrorContains(t, err, "Prism")
}

// TestEveryFamilyOnOneHandler: the server, mounted as a plain handler,
// answers every route family; the agent chat only when it has one.
func TestEveryFamilyOnOneHandler(t *testing.T) {
	t.Parallel()
	base := serve(t, memoryServices(t, false), server.Options{})
	for _, r := range []struct {
		method, path, token string
		want                int
	}{
		{"GET", "/api/v1/me", admin, 200},
		{"GET", "/api/v1/protocols", admin, 200},
		{"GET", "/api/games", "", 200},
		{"GET", "/api/discussion", "", 200},
		{"GET", "/api/squad-chat", "", 200},
		{"GET", "/healthz", "", 200},
		{"GET", "/openapi.json", "", 200},
		{"GET", "/jobs", "", 200},
		{"GET", "/squad", "", 200},
		{"GET", "/device", "", 200},
		{"GET", "/skill.md", "", 200},
		{"GET", "/agent/conversations", "", 404},
		{"GET", "/metrics", "", 404},
	} {
		status, _ := call(t, r.method, base+r.path, r.token, "")
		require.Equal(t, r.want, status, "%s %s", r.method, r.path)
	}
	status, _ := call(t, "POST", base+"/mcp", "", `{}`)
	require.Equal(t, 401, status, "/mcp takes a key")
}

// TestRequireKeysClosesTheOpenRoutes: with RequireKeys the arena and
// discussion routes take the keys of Slots.
func TestRequireKeysClosesTheOpenRoutes(t *testing.T) {
	t.Parallel()
	base := serve(t, memoryServices(t, false), server.Options{RequireKeys: true})
	for _, p := range []string{"/api/games", "/api/discussion", "/api/squad-chat"} {
		status, _ := call(t, "GET", base+p, "", "")
		require.Equal(t, 401, status, p)
		status, _ = call(t, "GET", base+p, admin, "")
		require.Equal(t, 200, status, p)
	}
}

// TestStartRunsTheSweepers: a role slot whose lease lapsed is re-opened by
// the sweeper Start runs, and not before it; Stop ends it.
func TestStartRunsTheSweepers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memstore.New()
	svcs := memoryServices(t, false)
	svcs.Slots = slots.New(st, slots.WithLease(40*time.Millisecond))
	srv, err := server.New(svcs, server.Options{Logger: quiet})
	require.NoError(t, err)

	claim, err := svcs.Slots.CreateClaim(ctx, slots.NewClaim{Title: "t", Body: "b"})
	require.NoError(t, err)
	_, err = svcs.Slots.ConfigureSlots(ctx, claim.ID, []slots.RoleCount{{Role: "critic", Count: 1}})
	require.NoError(t, err)
	_, err = svcs.Slots.AddComment(identity.WithKey(ctx, svcs.Identity.Admin()), slots.NewComment{ClaimID: claim.ID, Body: "d", CommentType: "draft"})
	require.NoError(t, err)
	open := func() bool {
		ss, err := svcs.Slots.Slots(ctx, claim.ID)
		require.NoError(t, err)
		return ss[0].Status == slots.StatusOpen
	}
	ss, err := svcs.Slots.Slots(ctx, claim.ID)
	require.NoError(t, err)
	_, err = svcs.Slots.Take(identity.WithKey(ctx, svcs.Identity.Admin()), claim.ID, ss[0].ID)
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond)
	require.False(t, open(), "no sweeper before Start")

	require.NoError(t, srv.Start(ctx))
	require.Error(t, srv.Start(ctx), "a second Start")
	require.Eventually(t, open, 5*time.Second, 10*time.Millisecond)
	srv.Stop()
}

// TestServeAfterTheEnd: a context that ended before Serve began is a
// shutdown, not a failure, even where starting the agent chat needs it.
func TestServeAfterTheEnd(t *testing.T) {
	t.Parallel()
	srv, err := server.New(memoryServices(t, true), server.Options{Logger: quiet})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, srv.Serve(ctx, ln))
}
