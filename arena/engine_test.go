package arena

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/ids"
	"github.com/agorahq/agora/store"
)

func testEnv() env {
	return env{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), ids: &ids.Gen{}}
}

// play registers n agents and plays the game to its end with every track
// agent arguing and the operator saving the majority, returning rounds.
func play(t *testing.T, n int) Game {
	t.Helper()
	e := testEnv()
	g, err := NewGame("g", TableMin, 0, e.now)
	require.NoError(t, err)
	for i := 0; i < n; i++ {
		_, err := g.register(fmt.Sprint("agent-", i), actor{}, e)
		require.NoError(t, err)
		if i < 2 {
			require.Equal(t, StatusWaiting, g.Status)
		}
	}
	require.Equal(t, StatusReady, g.Status)
	require.NoError(t, g.start(e))
	for rounds := 0; g.Status != StatusCompleted; rounds++ {
		require.Less(t, rounds, 2*n, "the game must end in about n rounds")
		r := g.Current()
		require.Len(t, r.Minority, 1)
		require.GreaterOrEqual(t, len(r.Majority), len(r.Minority))
		if n >= 4 {
			require.Greater(t, len(r.Majority), len(r.Minority))
		}
		for _, ph := range []Phase{Phase1, Phase2, Phase3} {
			require.Equal(t, ph, r.Phase)
			for _, id := range append(append([]string{}, r.Majority...), r.Minority...) {
				require.NoError(t, g.argue(r.ID, id, "pull the lever", e))
			}
		}
		require.Equal(t, PhaseAwaiting, r.Phase)
		require.NoError(t, g.decide(r.ID, r.Operator, SaveMajority, e))
		require.Equal(t, r.Majority, g.Appended.Rounds[r.Number-1].Survivors)
	}
	for _, c := range g.Coverage() {
		require.True(t, c.Complete, "%+v", c)
	}
	require.LessOrEqual(t, g.RoundCount, n+1)
	return g
}

func TestFullGames(t *testing.T) {
	for _, n := range []int{3, 4, 5, 7, 10} {
		t.Run(fmt.Sprint(n, " agents"), func(t *testing.T) {
			g := play(t, n)
			total := 0
			for _, s := range g.Scores {
				total += s
			}
			want := 0
			for _, r := range g.Appended.Rounds {
				want += len(r.Survivors)
			}
			require.Equal(t, want, total, "survivors score one each")
		})
	}
}

func TestRulesAndMessages(t *testing.T) {
	e := testEnv()
	_, err := NewGame("g", MaxAgents+1, 0, e.now)
	require.ErrorIs(t, err, store.ErrInvalid)
	g, err := NewGame("g", 3, time.Minute, e.now)
	require.NoError(t, err)
	require.ErrorContains(t, g.start(e), "Not enough agents")
	tok := "s3cret"
	var ids []string
	for i := 0; i < 3; i++ {
		var by actor
		switch i {
		case 0:
			by.Token = tok
		case 2:
			by.KeyID = "key_a"
		}
		a, err := g.register(fmt.Sprint("A", i), by, e)
		require.NoError(t, err)
		ids = append(ids, a.ID)
	}
	require.NoError(t, g.checkActor(ids[0], actor{Token: tok}))
	require.ErrorIs(t, g.checkActor(ids[0], actor{Token: "wrong"}), ErrBadToken)
	require.ErrorIs(t, g.checkActor(ids[0], actor{}), ErrBadToken)
	require.NoError(t, g.checkActor(ids[1], actor{}), "no token registered, none needed")
	// With keys required, an agent is its key's alone, whatever token.
	require.NoError(t, g.checkActor(ids[2], actor{KeyID: "key_a"}))
	require.ErrorIs(t, g.checkActor(ids[2], actor{KeyID: "key_b"}), ErrNotYourAgent)
	require.ErrorIs(t, g.checkActor(ids[0], actor{KeyID: "key_a", Token: tok}), ErrNotYourAgent, "an agent of no key is no key's")
	require.ErrorIs(t, g.checkActor(ids[1], actor{KeyID: "key_a"}), ErrNotYourAgent)

	require.NoError(t, g.start(e))
	require.ErrorContains(t, g.start(e), "Game already started")
	_, err = g.register("late", actor{}, e)
	require.ErrorContains(t, err, "Game already started")
	r := g.Current()
	require.Equal(t, ids[0], r.Operator)
	require.ErrorIs(t, g.argue("round_missing", ids[1], "x", e), ErrRoundNotFound)
	require.ErrorContains(t, g.argue(r.ID, r.Operator, "x", e), "Agent not in this round as majority/minority")
	require.ErrorIs(t, g.argue(r.ID, r.Minority[0], "   ", e), store.ErrInvalid)
	require.ErrorIs(t, g.argue(r.ID, r.Minority[0], string(make([]rune, 501)), e), store.ErrInvalid)
	require.NoError(t, g.argue(r.ID, r.Minority[0], "spare them", e))
	require.ErrorContains(t, g.argue(r.ID, r.Minority[0], "again", e), "Already submitted argument this phase")
	require.ErrorContains(t, g.decide(r.ID, r.Operator, SaveMajority, e), "Not in decision phase")
	require.Equal(t, e.now.Add(time.Minute), *g.PhaseDeadline)

	// The deadline moves the phase on as next_phase would.
	late := e
	late.now = e.now.Add(time.Minute)
	require.True(t, g.sweep(late))
	require.Equal(t, Phase2, r.Phase)
	require.False(t, g.sweep(late), "the new phase has its own deadline")
	require.NoError(t, g.advance(ActionForceDecision, e))
	require.Equal(t, StatusAwaiting, g.Status)
	require.ErrorContains(t, g.decide(r.ID, r.Minority[0], SaveMajority, e), "Only operator can submit decision")
	require.ErrorContains(t, g.decide(r.ID, r.Operator, "save_nobody", e), "Decision must be save_majority or save_minority")
	require.ErrorContains(t, g.advance("explode", e), "Action must be")
	require.NoError(t, g.decide(r.ID, r.Operator, SaveMinority, e))
	require.Equal(t, []string{r.Minority[0]}, g.Appended.Rounds[0].Survivors)
	require.Equal(t, 1, g.Scores[r.Minority[0]])
	require.Equal(t, 0, g.Scores[r.Operator])
	require.Equal(t, 2, g.RoundCount, "the next round starts by itself")
	require.ErrorContains(t, g.argue(r.ID, r.Minority[0], "x", e), "Round is over")

	// An overdue decision is forced and resolved for the majority.
	r2 := g.Current()
	require.NoError(t, g.advance(ActionForceDecision, e))
	over := e
	over.now = e.now.Add(2 * time.Minute)
	require.True(t, g.sweep(over))
	require.True(t, g.Appended.Rounds[1].Forced)
	require.Equal(t, SaveMajority, g.Appended.Rounds[1].Decision)
	require.Equal(t, r2.Majority, g.Appended.Rounds[1].Survivors)
	require.ErrorContains(t, g.advance(ActionResolveRound, e), "Not awaiting decision", "a debate phase is not resolved by force")
	require.Len(t, g.Appended.Rounds, 2)
	require.NoError(t, g.advance(ActionForceDecision, e))
	require.NoError(t, g.advance(ActionResolveRound, e))
	require.True(t, g.Appended.Rounds[2].Forced)
	require.Equal(t, SaveMajority, g.Appended.Rounds[2].Decision)
}

// TestLegacyDocumentReads: a document stored with its rounds and feed
// inside (before they moved to logs) reads as the same game: the current
// round, the ended ones, the board's last decision, the agents' coverage
// and the feed's length; the game plays on from it.
func TestLegacyDocumentReads(t *testing.T) {
	e := testEnv()
	g, err := NewGame("g", TableMin, 0, e.now)
	require.NoError(t, err)
	for i := range 3 {
		_, err := g.register(fmt.Sprint("agent-", i), actor{}, e)
		require.NoError(t, err)
	}
	require.NoError(t, g.start(e))
	r := g.Current()
	require.NoError(t, g.advance(ActionForceDecision, e))
	require.NoError(t, g.advance(ActionResolveRound, e))
	want := g.Clone()
	// The old shape: every round and the whole feed inside.
	legacy := map[string]any{}
	data, err := json.Marshal(want)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &legacy))
	for _, k := range []string{"round", "round_count", "ended_rounds", "last_resolved", "feed_len"} {
		delete(legacy, k)
	}
	agents := legacy["agents"].([]any)
	for _, a := range agents {
		for _, k := range []string{"been_operator", "been_majority", "been_minority"} {
			delete(a.(map[string]any), k)
		}
	}
	legacy["rounds"] = append(append([]Round{}, g.Appended.Rounds...), *g.Current())
	legacy["feed"] = g.Appended.Feed
	data, err = json.Marshal(legacy)
	require.NoError(t, err)
	var got Game
	require.NoError(t, json.Unmarshal(data, &got))
	require.Equal(t, want.RoundCount, got.RoundCount)
	require.Equal(t, want.Round, got.Round)
	require.Equal(t, []string{r.ID}, got.EndedRounds)
	require.Equal(t, want.LastResolved, got.LastResolved)
	require.Equal(t, want.Coverage(), got.Coverage())
	require.Equal(t, want.FeedLen, got.FeedLen)
	cur := got.Current()
	require.NoError(t, got.argue(cur.ID, cur.Majority[0], "on we go", e))
	require.ErrorContains(t, got.argue(r.ID, r.Majority[0], "late", e), "Round is over")
}
