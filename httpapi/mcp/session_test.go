package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/memstore"
)

// TestSessionsAreReleased opens Streamable HTTP sessions, closes
// half of them (DELETE) and abandons the others as a client that goes
// away without a word does: the server holds each session while its client
// uses it, lets go of a closed one at once and of an abandoned one after
// Options.SessionTimeout, until it holds none.
func TestSessionsAreReleased(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mem := memstore.New()
	ids := identity.New(mem, identity.WithAdminKey("admin"))
	_, token, err := ids.CreateKey(identity.WithKey(ctx, ids.Admin()), identity.NewKey{Name: "visitor"})
	require.NoError(t, err)
	h, srv := newHandler(Services{Identity: ids, Slots: slots.New(mem)}, Options{SessionTimeout: 5 * time.Second})
	web := httptest.NewServer(h)
	defer web.Close()

	const n = 20
	clients := make([]*sdk.ClientSession, n)
	for i := range clients {
		clients[i], err = Dial(ctx, web.URL, token, web.Client())
		require.NoError(t, err)
		defer clients[i].Close()
	}
	require.Equal(t, n, count(srv.Sessions()), "one session per client")
	for _, cs := range clients {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "my_profile"})
		require.NoError(t, err)
	}

	for _, cs := range clients[:n/2] {
		require.NoError(t, cs.Close())
	}
	require.Equal(t, n/2, count(srv.Sessions()), "a closed session is released at once")

	require.Eventually(t, func() bool { return count(srv.Sessions()) == 0 }, 30*time.Second, 100*time.Millisecond,
		"the abandoned sessions are released once idle: %d left", count(srv.Sessions()))
	_, err = clients[n-1].CallTool(ctx, &sdk.CallToolParams{Name: "my_profile"})
	require.Error(t, err, "an abandoned session is gone")
	require.Zero(t, count(srv.Sessions()), "a request on a released session opens none")

	cs, err := Dial(ctx, web.URL, token, web.Client())
	require.NoError(t, err, "a new client is served")
	defer cs.Close()
	require.Equal(t, 1, count(srv.Sessions()), "only the new session is held")
}

func count[T any](seq iter.Seq[T]) int {
	n := 0
	for range seq {
		n++
	}
	return n
}

// TestSessionsPerKeyAreBounded holds a key to Options.MaxSessionsPerKey
// sessions: one more is refused with 429 too_many_sessions, as JSON,
// while another key is served; a closed session frees its place; and
// clients of one key racing to open sessions get exactly the cap between
// them.
func TestSessionsPerKeyAreBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mem := memstore.New()
	ids := identity.New(mem, identity.WithAdminKey("admin"))
	newToken := func(name string) string {
		_, token, err := ids.CreateKey(identity.WithKey(ctx, ids.Admin()), identity.NewKey{Name: name})
		require.NoError(t, err)
		return token
	}
	const limit = 3
	h, srv := newHandler(Services{Identity: ids, Slots: slots.New(mem)}, Options{MaxSessionsPerKey: limit})
	web := httptest.NewServer(h)
	defer web.Close()

	first := newToken("first")
	held := make([]*sdk.ClientSession, limit)
	for i := range held {
		cs, err := Dial(ctx, web.URL, first, web.Client())
		require.NoError(t, err)
		defer cs.Close()
		held[i] = cs
	}
	_, err := Dial(ctx, web.URL, first, web.Client())
	require.Error(t, err, "a session beyond the cap is refused")

	req, _ := http.NewRequest("POST", web.URL, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Authorization", "Bearer "+first)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := web.Client().Do(req)
	require.NoError(t, err)
	var body wire.Error
	require.NoError(t, json.NewDecoder(res.Body).Decode(&body))
	res.Body.Close()
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	require.Equal(t, "too_many_sessions", body.Error.Code)
	require.Contains(t, body.Error.Message, "3 MCP sessions")

	_, err = held[0].CallTool(ctx, &sdk.CallToolParams{Name: "my_profile"})
	require.NoError(t, err, "the sessions held are served")
	other, err := Dial(ctx, web.URL, newToken("other"), web.Client())
	require.NoError(t, err, "another key has places of its own")
	defer other.Close()

	require.NoError(t, held[0].Close())
	again, err := Dial(ctx, web.URL, first, web.Client())
	require.NoError(t, err, "a closed session frees its place")
	defer again.Close()
	require.Equal(t, limit+1, count(srv.Sessions()))

	// Round after round, each a key of its own: racing clients open
	// exactly the cap between them, and the key is refused one more
	// afterwards, so no session opened in the race went uncounted.
	for round := range 200 {
		racer := newToken(fmt.Sprint("racer-", round))
		require.Equal(t, limit, dialRace(t, web, racer, 16), "round %d: racing clients of one key open exactly the cap", round)
		_, err := Dial(ctx, web.URL, racer, web.Client())
		require.Error(t, err, "round %d: the key's sessions are all counted after the race", round)
	}
}

// dialRace has n clients of the key token dial web at once and returns
// how many opened a session; the sessions are closed when t ends.
func dialRace(t *testing.T, web *httptest.Server, token string, n int) int {
	opened := make(chan *sdk.ClientSession, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if cs, err := Dial(context.Background(), web.URL, token, web.Client()); err == nil {
				opened <- cs
			}
		})
	}
	wg.Wait()
	close(opened)
	dialed := 0
	for cs := range opened {
		dialed++
		t.Cleanup(func() { _ = cs.Close() })
	}
	return dialed
}
