package client_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/storetest"
)

// TestArenaThroughTheClient plays a three-agent game to its end following
// the open actions, then reads it back: metadata, the list of games, the
// history of every round, the scoreboard, the feed, and the feed again as
// the game's event stream, whole and resumed.
func TestArenaThroughTheClient(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		c := setup(t, st).As("")
		game, err := c.CreateGame(ctx, client.NewGame{MinPlayers: 3})
		require.NoError(t, err)
		var agents []string
		for _, n := range []string{"Alice", "Bob", "Charlie"} {
			id, err := c.Register(ctx, game, client.NewAgent{DisplayName: n})
			require.NoError(t, err)
			agents = append(agents, id)
		}
		require.NoError(t, c.StartGame(ctx, game))
		version := int64(-1)
		for steps := 0; ; steps++ {
			require.Less(t, steps, 100, "the game did not complete")
			s, err := c.WaitState(ctx, game, version, 5*time.Second)
			require.NoError(t, err)
			version = s.Version
			if s.Status == string(arena.StatusCompleted) {
				var raw struct {
					Board struct {
						ResolutionState string `json:"resolution_state"`
					} `json:"board"`
				}
				require.NoError(t, json.Unmarshal(s.Raw, &raw), "Raw is the whole state")
				require.Equal(t, "resolved", raw.Board.ResolutionState)
				require.Equal(t, "resolved", s.Board.ResolutionState)
				require.Equal(t, "save_majority", *s.Board.SelectedBranch, "the original's page compares the branch with save_majority / save_minority")
				require.Equal(t, s.CurrentRoundNumber, s.Board.AnimationVersion, "one decision a round")
				require.Len(t, s.Board.Lost, 1)
				require.Len(t, s.Board.Survivors, 1)
				break
			}
			require.NotNil(t, s.Operator)
			require.Len(t, s.MajorityAgents, 1)
			require.Len(t, s.MinorityAgents, 1)
			require.NotContains(t, []string{s.MajorityAgents[0].ID, s.MinorityAgents[0].ID}, s.Operator.ID)
			require.Len(t, s.Scores, 3)
			for _, id := range agents {
				oa, err := c.OpenActions(ctx, game, id)
				require.NoError(t, err)
				if !oa.CanAct {
					continue
				}
				if *oa.AllowedAction == "decision" {
					require.NoError(t, c.Decide(ctx, client.Turn{GameID: game, RoundID: oa.RoundID, AgentID: id}, "save_majority"))
				} else {
					require.NoError(t, c.Argue(ctx, client.Turn{GameID: game, RoundID: oa.RoundID, AgentID: id}, "pull it"))
				}
			}
		}

		meta, err := c.Game(ctx, game)
		require.NoError(t, err)
		require.Equal(t, game, meta.ID)
		require.Equal(t, string(arena.StatusCompleted), meta.Status)
		require.Equal(t, 3, meta.MinPlayers)
		require.Equal(t, string(arena.PhaseResolved), *meta.CurrentPhase)
		done, err := c.Games(ctx, arena.StatusCompleted)
		require.NoError(t, err)
		require.Equal(t, []wire.GameSummary{{ID: game, Status: string(arena.StatusCompleted), CreatedAt: meta.CreatedAt}}, done)
		waiting, err := c.Games(ctx, arena.StatusWaiting)
		require.NoError(t, err)
		require.Empty(t, waiting)

		history, err := c.History(ctx, game)
		require.NoError(t, err)
		require.Len(t, history, meta.CurrentRoundNumber)
		for i, r := range history {
			require.Equal(t, i+1, r.RoundNumber)
			require.Equal(t, string(arena.SaveMajority), r.Decision)
			require.False(t, r.Forced)
			require.Equal(t, r.Operator, r.OperatorAgentID)
			require.NotEmpty(t, r.OperatorDisplayName)
			require.Equal(t, r.Majority, r.Survivors)
			require.Equal(t, r.Minority, r.Lost)
			require.Len(t, r.Arguments, 3*(len(r.Majority)+len(r.Minority)), "three phases of arguments")
			require.NotNil(t, r.ResolvedAt)
		}
		board, err := c.Scoreboard(ctx, game)
		require.NoError(t, err)
		require.Len(t, board.Coverage, 3)
		require.Len(t, board.Scores, 3)
		for i, cv := range board.Coverage {
			require.Equal(t, cv.AgentID, board.Scores[i].AgentID, "scores in registration order, as coverage")
			require.Equal(t, cv.DisplayName, board.Scores[i].DisplayName)
			require.True(t, cv.Complete, "%s played every role", cv.DisplayName)
			survived := 0
			for _, r := range history {
				if slices.Contains(r.Survivors, cv.AgentID) {
					survived++
				}
			}
			require.Equal(t, survived, board.Scores[i].Score)
		}

		feed, err := c.Feed(ctx, game, 1000)
		require.NoError(t, err)
		require.Greater(t, len(feed), 5)
		tail, err := c.Feed(ctx, game, 5)
		require.NoError(t, err)
		require.Equal(t, feed[:5], tail, "newest first: a limit keeps the latest items")
		require.Equal(t, "event", tail[0].Type)
		require.Equal(t, "game_completed", tail[0].Payload.Type)
		require.Equal(t, "game_completed", tail[0].Payload.EventType)
		for i := 1; i < len(feed); i++ {
			require.Equal(t, feed[i-1].Seq-1, feed[i].Seq, "newest first")
			require.False(t, feed[i].CreatedAt.After(feed[i-1].CreatedAt))
		}
		require.EqualValues(t, 1, feed[len(feed)-1].Seq)

		events, err := c.GameEvents(ctx, game, 0)
		require.NoError(t, err)
		for i, item := range slices.Backward(feed) {
			ev := receive(t, events)
			require.Equal(t, "feed", ev.Type)
			require.Equal(t, len(feed)-i, ev.Seq, "the stream is oldest first")
			require.Equal(t, item, ev.Item)
		}
		ev := receive(t, events)
		require.Equal(t, "state", ev.Type)
		require.Equal(t, version, ev.Version)
		require.Equal(t, string(arena.StatusCompleted), ev.Status)
		resumed, err := c.GameEvents(ctx, game, len(feed)-1)
		require.NoError(t, err)
		ev = receive(t, resumed)
		require.Equal(t, len(feed), ev.Seq, "only what came after")
		require.Equal(t, feed[0], ev.Item)
	})
}

// TestArenaAdminAndDemo: a demo game comes with three agents and is ready
// to start; an admin pushes its first round through every phase with
// Advance while its event stream follows each change; the forced round is
// in the history; the arena's errors match their sentinels.
func TestArenaAdminAndDemo(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		c := setup(t, st).As("")
		game, agents, err := c.CreateDemo(ctx)
		require.NoError(t, err)
		var names []string
		for _, a := range agents {
			require.NotEmpty(t, a.AgentID)
			names = append(names, a.DisplayName)
		}
		require.Equal(t, []string{"Alice", "Bob", "Charlie"}, names)
		meta, err := c.Game(ctx, game)
		require.NoError(t, err)
		require.Equal(t, string(arena.StatusReady), meta.Status)
		require.Nil(t, meta.CurrentPhase)
		require.Zero(t, meta.CurrentRoundNumber)
		ready, err := c.Games(ctx, arena.StatusReady)
		require.NoError(t, err)
		require.Len(t, ready, 1)
		require.Equal(t, game, ready[0].ID)
		all, err := c.Games(ctx, "")
		require.NoError(t, err)
		require.Len(t, all, 1)

		events, err := c.GameEvents(ctx, game, 0)
		require.NoError(t, err)
		// nextState reads the stream up to its next state event and returns
		// it with the feed items before it.
		nextState := func() (client.GameEvent, []wire.FeedItem) {
			t.Helper()
			var items []wire.FeedItem
			for {
				ev := receive(t, events)
				if ev.Type == "state" {
					return ev, items
				}
				items = append(items, ev.Item)
			}
		}
		first, registered := nextState()
		require.Equal(t, string(arena.StatusReady), first.Status)
		require.Len(t, registered, 3)
		for i, item := range registered {
			require.Equal(t, "agent_registered", item.Payload.Type)
			require.Equal(t, agents[i].AgentID, item.Payload.AgentID)
		}

		require.NoError(t, c.StartGame(ctx, game))
		started, items := nextState()
		require.Equal(t, string(arena.StatusPhase1), started.Status)
		require.Greater(t, started.Version, first.Version)
		require.NotEmpty(t, items)

		adv, err := c.Advance(ctx, game, arena.ActionNextPhase)
		require.NoError(t, err)
		require.Equal(t, string(arena.StatusPhase2), adv.Status)
		require.Equal(t, string(arena.Phase2), *adv.CurrentPhase)
		ev, items := nextState()
		require.Equal(t, adv.Version, ev.Version)
		require.Equal(t, "phase_changed", items[len(items)-1].Payload.Type)

		adv, err = c.Advance(ctx, game, arena.ActionForceDecision)
		require.NoError(t, err)
		require.Equal(t, string(arena.StatusAwaiting), adv.Status)
		require.Equal(t, string(arena.PhaseAwaiting), *adv.CurrentPhase)
		ev, _ = nextState()
		require.Equal(t, string(arena.StatusAwaiting), ev.Status)
		_, err = c.Advance(ctx, game, arena.ActionNextPhase)
		require.ErrorIs(t, err, store.ErrInvalid, "no debate phase to end")

		adv, err = c.Advance(ctx, game, arena.ActionResolveRound)
		require.NoError(t, err)
		require.Equal(t, string(arena.StatusPhase1), adv.Status, "the next round starts")
		ev, _ = nextState()
		require.Equal(t, adv.Version, ev.Version)
		history, err := c.History(ctx, game)
		require.NoError(t, err)
		require.Len(t, history, 1)
		require.True(t, history[0].Forced)
		require.Equal(t, string(arena.SaveMajority), history[0].Decision)
		require.Empty(t, history[0].Arguments)
		board, err := c.Scoreboard(ctx, game)
		require.NoError(t, err)
		for _, sc := range board.Scores {
			require.Equal(t, slices.Contains(history[0].Survivors, sc.AgentID), sc.Score == 1, "%+v", sc)
		}
		meta, err = c.Game(ctx, game)
		require.NoError(t, err)
		require.Equal(t, 2, meta.CurrentRoundNumber)

		_, err = c.Advance(ctx, game, "derail")
		require.ErrorIs(t, err, store.ErrInvalid)
		_, err = c.Advance(ctx, "game_missing", arena.ActionNextPhase)
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = c.Feed(ctx, game, 1001)
		require.ErrorIs(t, err, store.ErrInvalid)
		_, err = c.GameEvents(ctx, "game_missing", 0)
		require.ErrorIs(t, err, store.ErrNotFound)
		for _, read := range []func() error{
			func() error { _, err := c.Scoreboard(ctx, "game_missing"); return err },
			func() error { _, err := c.History(ctx, "game_missing"); return err },
			func() error { _, err := c.Feed(ctx, "game_missing", 0); return err },
		} {
			require.ErrorIs(t, read(), store.ErrNotFound)
		}

		// An agent registered with a token acts only with it.
		other, err := c.CreateGame(ctx, client.NewGame{MinPlayers: 3})
		require.NoError(t, err)
		dora, err := c.Register(ctx, other, client.NewAgent{DisplayName: "Dora", Token: "dora-secret"})
		require.NoError(t, err)
		err = c.Argue(ctx, client.Turn{GameID: other, RoundID: "round_missing", AgentID: dora}, "hear me")
		require.ErrorIs(t, err, store.ErrForbidden)
		err = c.As("dora-secret").Argue(ctx, client.Turn{GameID: other, RoundID: "round_missing", AgentID: dora}, "hear me")
		require.ErrorIs(t, err, store.ErrNotFound, "the token passes; the round does not exist")
		require.NoError(t, c.StartGame(ctx, other), "fillers make up min_players 3")
		empty, err := c.CreateGame(ctx, client.NewGame{MinPlayers: 3})
		require.NoError(t, err)
		require.ErrorIs(t, c.StartGame(ctx, empty), store.ErrInvalid, "a game nobody joined does not start")
	})
}

// TestGamePhaseTimeout: a game created with a phase timeout has a phase
// deadline: once it has passed, the sweeper every server runs moves the
// debate on without an argument, while a game created without one waits
// for its agents. A timeout over a day, or under zero, is invalid.
func TestGamePhaseTimeout(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		c := setup(t, st).As("")
		start := func(g client.NewGame) string {
			t.Helper()
			id, err := c.CreateGame(ctx, g)
			require.NoError(t, err)
			for _, n := range []string{"Alice", "Bob", "Charlie"} {
				_, err := c.Register(ctx, id, client.NewAgent{DisplayName: n})
				require.NoError(t, err)
			}
			require.NoError(t, c.StartGame(ctx, id))
			return id
		}
		timed := start(client.NewGame{PhaseTimeout: time.Minute})
		untimed := start(client.NewGame{})
		// sweep runs a sweep over the server's stores, as the server's
		// sweeper would, with the clock set ahead by ahead.
		sweep := func(ahead time.Duration) int {
			t.Helper()
			games := arena.New(st.Arena, arena.WithNotifier(st.Notifier), arena.WithClock(func() time.Time { return time.Now().Add(ahead) }))
			n, err := games.Sweep(ctx)
			require.NoError(t, err)
			return n
		}
		phase := func(game string) arena.Phase {
			t.Helper()
			meta, err := c.Game(ctx, game)
			require.NoError(t, err)
			require.NotNil(t, meta.CurrentPhase)
			return arena.Phase(*meta.CurrentPhase)
		}
		meta, err := c.Game(ctx, timed)
		require.NoError(t, err)
		require.Equal(t, 60, meta.PhaseTimeoutS)
		require.NotNil(t, meta.PhaseDeadline)
		require.WithinDuration(t, time.Now().Add(time.Minute), *meta.PhaseDeadline, 10*time.Second)
		meta, err = c.Game(ctx, untimed)
		require.NoError(t, err)
		require.Zero(t, meta.PhaseTimeoutS)
		require.Nil(t, meta.PhaseDeadline)
		require.Zero(t, sweep(50*time.Second), "the deadline is a minute away")
		require.Equal(t, arena.Phase1, phase(timed))
		require.Equal(t, 1, sweep(61*time.Second), "the timed game's deadline has passed")
		require.Equal(t, arena.Phase2, phase(timed))
		require.Equal(t, arena.Phase1, phase(untimed), "no deadline, no move")
		feed, err := c.Feed(ctx, timed, 1)
		require.NoError(t, err)
		require.Len(t, feed, 1)
		require.Equal(t, &wire.EventPayload{Type: "phase_changed", EventType: "phase_changed", Phase: string(arena.Phase2)}, feed[0].Payload)

		for _, d := range []time.Duration{25 * time.Hour, -500 * time.Millisecond} {
			_, err := c.CreateGame(ctx, client.NewGame{PhaseTimeout: d})
			require.ErrorIs(t, err, store.ErrInvalid, d)
			var e *client.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, "invalid_phase_timeout", e.Code)
		}
	})
}
