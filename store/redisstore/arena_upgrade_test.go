package redisstore_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/store/redisstore"
)

// TestArenaLegacyGameUpgrades: a game stored before its feed and rounds
// had logs (both inside its document) is upgraded on its first read: its
// feed and resolved rounds move to the logs, numbered as they were, and
// the game plays on, its next items following on.
func TestArenaLegacyGameUpgrades(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, c := newMiniredisClient(t)
	st := redisstore.New(c, redisstore.WithPrefix("legacy"))
	svc := arena.New(st)
	g, err := svc.Create(ctx, 3, 0)
	require.NoError(t, err)
	for _, n := range []string{"A", "B", "C"} {
		_, err := svc.Register(ctx, g.ID, n, nil)
		require.NoError(t, err)
	}
	g, err = svc.Start(ctx, g.ID)
	require.NoError(t, err)
	first := g.Current()
	_, err = svc.Advance(ctx, g.ID, arena.ActionForceDecision)
	require.NoError(t, err)
	g, err = svc.Advance(ctx, g.ID, arena.ActionResolveRound)
	require.NoError(t, err)
	feed, err := st.FeedAfter(ctx, g.ID, 0, 100)
	require.NoError(t, err)
	rounds, err := st.ResolvedRounds(ctx, g.ID)
	require.NoError(t, err)
	require.Len(t, rounds, 1)

	// Write the game back as the old shape: rounds and feed inside the
	// document, no logs.
	var doc map[string]any
	data, err := json.Marshal(g)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &doc))
	for _, k := range []string{"round", "round_count", "ended_rounds", "last_resolved", "feed_len"} {
		delete(doc, k)
	}
	doc["rounds"] = []arena.Round{rounds[0], *g.Current()}
	doc["feed"] = feed
	data, err = json.Marshal(doc)
	require.NoError(t, err)
	m.HSet("{legacy}:game:"+g.ID, "doc", string(data))
	m.Del("{legacy}:gfeed:" + g.ID)
	m.Del("{legacy}:grounds:" + g.ID)

	fresh := arena.New(st) // a process started after the upgrade
	read, err := fresh.Game(ctx, g.ID)
	require.NoError(t, err)
	require.Equal(t, g.RoundCount, read.RoundCount)
	require.Equal(t, g.FeedLen, read.FeedLen)
	require.Equal(t, []string{first.ID}, read.EndedRounds)
	got, err := st.FeedAfter(ctx, g.ID, 0, 100)
	require.NoError(t, err)
	require.Equal(t, feed, got, "the feed moved to its log, numbered as it was")
	gotRounds, err := st.ResolvedRounds(ctx, g.ID)
	require.NoError(t, err)
	require.Equal(t, rounds, gotRounds)
	again, err := fresh.Game(ctx, g.ID)
	require.NoError(t, err)
	require.Equal(t, read, again, "upgraded once")

	r := read.Current()
	g, err = fresh.Argue(ctx, arena.ArgueParams{GameID: g.ID, RoundID: r.ID, AgentID: r.Majority[0], Text: "on we go"})
	require.NoError(t, err)
	latest, err := st.FeedLatest(ctx, g.ID, 1)
	require.NoError(t, err)
	require.Equal(t, read.FeedLen+1, latest[0].Seq)
	after, err := st.FeedAfter(ctx, g.ID, read.FeedLen, 10)
	require.NoError(t, err)
	require.Equal(t, latest, after, "Seq n at index n-1")
}
