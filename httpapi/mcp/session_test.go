package mcp

import (
	"context"
	"iter"
	"net/http/httptest"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

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
