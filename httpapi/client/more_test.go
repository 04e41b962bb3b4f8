package client_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/store/memstore"
)

func fullServer(t *testing.T) *client.Client {
	t.Helper()
	st := memstore.New()
	mux := http.NewServeMux()
	d := httpapi.Discussion(discussion.New(st, discussion.WithNotifier(st)))
	a := httpapi.Arena(arena.New(st, arena.WithNotifier(st)))
	for _, p := range []string{"/api/discussion", "/api/discussion/"} {
		mux.Handle(p, d)
	}
	for _, p := range []string{"/api/games", "/api/games/"} {
		mux.Handle(p, a)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return client.New(srv.URL)
}

func TestDiscussionThroughTheClient(t *testing.T) {
	ctx := context.Background()
	c := fullServer(t)
	p, err := c.AskSquad(ctx, "Developer", "What should I consider?", 2, 5)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		got, err := c.WaitForDiscussion(ctx, p.ID)
		if err == nil && len(got.CollectedContext) != 2 {
			err = fmt.Errorf("context %v", got.CollectedContext)
		}
		done <- err
	}()
	for _, agent := range []string{"Builder", "Growth"} {
		open, err := c.OpenPrompts(ctx, agent)
		require.NoError(t, err)
		require.Len(t, open, 1)
		require.NoError(t, c.Respond(ctx, open[0].ID, agent, "consider "+agent))
	}
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("WaitForDiscussion did not return")
	}
}

func TestArenaThroughTheClient(t *testing.T) {
	ctx := context.Background()
	c := fullServer(t)
	game, err := c.CreateGame(ctx, 3)
	require.NoError(t, err)
	var agents []string
	for _, n := range []string{"Alice", "Bob", "Charlie"} {
		id, err := c.Register(ctx, game, n, "")
		require.NoError(t, err)
		agents = append(agents, id)
	}
	require.NoError(t, c.StartGame(ctx, game))
	for steps := 0; steps < 100; steps++ {
		s, err := c.WaitState(ctx, game, -1, 0)
		require.NoError(t, err)
		if s.Status == "game_completed" {
			return
		}
		for _, id := range agents {
			oa, err := c.OpenActions(ctx, game, id)
			require.NoError(t, err)
			if !oa.CanAct {
				continue
			}
			if *oa.AllowedAction == "decision" {
				require.NoError(t, c.Decide(ctx, game, oa.RoundID, id, "save_majority"))
			} else {
				require.NoError(t, c.Argue(ctx, game, oa.RoundID, id, "pull it"))
			}
		}
	}
	t.Fatal("the game did not complete")
}
