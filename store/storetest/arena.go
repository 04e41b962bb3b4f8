package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/arena"
)

type arenaEnv struct {
	ctx   context.Context
	store arena.Store
	svc   *arena.Service
	peer  *arena.Service
	clock *Clock
}

func newArenaEnv(t *testing.T, newStores NewStores) *arenaEnv {
	t.Helper()
	st := newStores(t)
	if st.Arena == nil {
		t.Fatal("storetest: Stores.Arena is required")
	}
	clock := NewClock()
	return &arenaEnv{
		ctx:   context.Background(),
		store: st.Arena,
		svc:   arena.New(st.Arena, arena.WithClock(clock.Now), arena.WithNotifier(st.Notifier)),
		peer:  arena.New(st.Arena, arena.WithClock(clock.Now), arena.WithNotifier(st.Peer)),
		clock: clock,
	}
}

func (e *arenaEnv) game(t *testing.T, agents int, timeout time.Duration, tokens bool) (arena.Game, []arena.Agent) {
	t.Helper()
	g, err := e.svc.Create(e.ctx, 0, timeout)
	require.NoError(t, err)
	var out []arena.Agent
	for i := 0; i < agents; i++ {
		var tok *string
		if tokens {
			s := fmt.Sprint("token-", i)
			tok = &s
		}
		a, err := e.svc.Register(e.ctx, g.ID, fmt.Sprint("agent-", i), tok)
		require.NoError(t, err)
		out = append(out, a)
	}
	g, err = e.svc.Start(e.ctx, g.ID)
	require.NoError(t, err)
	return g, out
}

// RunArena runs the arena section of the suite.
func RunArena(t *testing.T, newStores NewStores) {
	for _, n := range []int{3, 4, 7} {
		t.Run(fmt.Sprintf("FullGame%dAgents", n), func(t *testing.T) {
			t.Parallel()
			e := newArenaEnv(t, newStores)
			g, _ := e.game(t, n, 0, false)
			version := g.Version
			step := func(next arena.Game, err error) arena.Game {
				t.Helper()
				require.NoError(t, err)
				require.Equal(t, version+1, next.Version, "every change raises the version by one")
				version = next.Version
				return next
			}
			for g.Status != arena.StatusCompleted {
				r := g.Current()
				require.LessOrEqual(t, r.Number, n+1)
				for range 3 {
					for _, id := range append(slices.Clone(r.Majority), r.Minority...) {
						g = step(e.svc.Argue(e.ctx, g.ID, r.ID, id, "", "I would pull the lever"))
					}
					r = g.Current()
				}
				require.Equal(t, arena.PhaseAwaiting, r.Phase)
				g = step(e.svc.Decide(e.ctx, g.ID, r.ID, r.Operator, "", arena.SaveMinority))
			}
			stored, err := e.svc.Game(e.ctx, g.ID)
			require.NoError(t, err)
			require.Equal(t, g.Version, stored.Version)
			for _, c := range stored.Coverage() {
				require.True(t, c.Complete, "%+v", c)
			}
			list, err := e.svc.List(e.ctx, arena.StatusCompleted, 10)
			require.NoError(t, err)
			require.Equal(t, []arena.Summary{{ID: g.ID, Status: arena.StatusCompleted, CreatedAt: g.CreatedAt}}, list)
		})
	}

	t.Run("RaceTwentyArguing", func(t *testing.T) {
		t.Parallel()
		e := newArenaEnv(t, newStores)
		for rep := 0; rep < raceRepeats; rep++ {
			g, _ := e.game(t, 22, 0, false) // operator, minority and twenty on the majority track
			r := g.Current()
			track := append(slices.Clone(r.Majority), r.Minority...)
			require.Len(t, track, 21)
			track = track[:20]
			var mu sync.Mutex
			var versions []int64
			concurrently(len(track), func(i int) {
				next, err := e.svc.Argue(e.ctx, g.ID, r.ID, track[i], "", fmt.Sprint("argument ", i))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				versions = append(versions, next.Version)
				mu.Unlock()
			})
			slices.Sort(versions)
			for i, v := range versions {
				require.Equal(t, g.Version+int64(i)+1, v, "versions rise by one without gaps")
			}
			// The last of the 21 moves the phase on, once.
			last := append(slices.Clone(r.Majority), r.Minority...)[20]
			g, err := e.svc.Argue(e.ctx, g.ID, r.ID, last, "", "last")
			require.NoError(t, err)
			require.Equal(t, arena.Phase2, g.Current().Phase)
			require.Len(t, g.Current().Arguments, 21, "every argument stored once")
			changes := 0
			for _, it := range g.Feed {
				if it.Type == "event" && it.Payload["type"] == "phase_changed" {
					changes++
				}
			}
			require.Equal(t, 1, changes)
		}
	})

	t.Run("UpdateGameConflictHandsBackStored", func(t *testing.T) {
		t.Parallel()
		e := newArenaEnv(t, newStores)
		g, _ := e.game(t, 3, time.Minute, false)
		stored, err := e.store.GetGame(e.ctx, g.ID)
		require.NoError(t, err)
		require.Equal(t, g.Version, stored.Version)

		// A save from a stale version, and one from a version not yet
		// reached: each fails and hands back the stored game.
		for _, version := range []int64{g.Version, g.Version - 1, g.Version + 2} {
			next := stored.Clone()
			next.Version = version
			next.Status = arena.StatusCompleted
			cur, err := e.store.UpdateGame(e.ctx, next)
			require.ErrorIs(t, err, arena.ErrVersionConflict, "version %d", version)
			require.Equal(t, stored, cur, "version %d: the stored game, as GetGame returns it", version)
		}
		again, err := e.store.GetGame(e.ctx, g.ID)
		require.NoError(t, err)
		require.Equal(t, stored, again, "a failed save changes nothing")

		next := stored.Clone()
		next.Version++
		next.Status = arena.StatusCompleted
		next.PhaseDeadline = nil
		_, err = e.store.UpdateGame(e.ctx, next)
		require.NoError(t, err)
		saved, err := e.store.GetGame(e.ctx, g.ID)
		require.NoError(t, err)
		require.Equal(t, next.Version, saved.Version)
		require.Equal(t, arena.StatusCompleted, saved.Status)
		// The one that lost to it is handed back the new game.
		lost := stored.Clone()
		lost.Version++
		cur, err := e.store.UpdateGame(e.ctx, lost)
		require.ErrorIs(t, err, arena.ErrVersionConflict)
		require.Equal(t, saved, cur)

		missing := stored.Clone()
		missing.ID = "game_missing"
		missing.Version = 2
		_, err = e.store.UpdateGame(e.ctx, missing)
		require.ErrorIs(t, err, arena.ErrGameNotFound)
	})

	t.Run("RaceUpdateGameHandsBackWinner", func(t *testing.T) {
		t.Parallel()
		e := newArenaEnv(t, newStores)
		g, _ := e.game(t, 3, 0, false)
		for rep := 0; rep < raceRepeats; rep++ {
			base, err := e.store.GetGame(e.ctx, g.ID)
			require.NoError(t, err)
			var saved atomic.Int64
			concurrently(16, func(i int) {
				next := base.Clone()
				next.Version++
				next.AnimationCount = i
				cur, err := e.store.UpdateGame(e.ctx, next)
				switch {
				case err == nil:
					saved.Add(1)
				case !errors.Is(err, arena.ErrVersionConflict):
					t.Error(err)
				case cur.Version != base.Version+1:
					// A loser that waited for the winner's save must see it,
					// not the game as it was when the loser started.
					t.Errorf("a conflict handed back version %d, the stored one is %d", cur.Version, base.Version+1)
				}
			})
			require.EqualValues(t, 1, saved.Load())
		}
	})

	t.Run("DeadlineSweepsRace", func(t *testing.T) {
		t.Parallel()
		e := newArenaEnv(t, newStores)
		g, _ := e.game(t, 3, time.Minute, false)
		n, err := e.svc.Sweep(e.ctx)
		require.NoError(t, err)
		require.Zero(t, n)
		e.clock.Advance(time.Minute)
		var swept atomic.Int64
		concurrently(8, func(int) {
			n, err := e.svc.Sweep(e.ctx)
			if err != nil {
				t.Error(err)
			}
			swept.Add(int64(n))
		})
		require.EqualValues(t, 1, swept.Load(), "two sweepers never advance one phase twice")
		got, err := e.svc.Game(e.ctx, g.ID)
		require.NoError(t, err)
		require.Equal(t, arena.Phase2, got.Current().Phase)
		require.Equal(t, g.Version+1, got.Version)
	})

	t.Run("Tokens", func(t *testing.T) {
		t.Parallel()
		e := newArenaEnv(t, newStores)
		g, agents := e.game(t, 3, 0, true)
		r := g.Current()
		id := r.Minority[0]
		var tok string
		for i, a := range agents {
			if a.ID == id {
				tok = fmt.Sprint("token-", i)
			}
		}
		_, err := e.svc.Argue(e.ctx, g.ID, r.ID, id, "", "no token")
		require.ErrorIs(t, err, arena.ErrBadToken)
		_, err = e.svc.Argue(e.ctx, g.ID, r.ID, id, "token-wrong", "wrong token")
		require.ErrorIs(t, err, arena.ErrBadToken)
		_, err = e.svc.Argue(e.ctx, g.ID, r.ID, id, tok, "right token")
		require.NoError(t, err)
		_, err = e.svc.Argue(e.ctx, "game_missing", r.ID, id, tok, "x")
		require.ErrorIs(t, err, arena.ErrGameNotFound)
	})

	t.Run("WaitWakesAcrossProcesses", func(t *testing.T) {
		t.Parallel()
		e := newArenaEnv(t, newStores)
		g, err := e.svc.Create(e.ctx, 0, 0)
		require.NoError(t, err)
		done := make(chan arena.Game, 1)
		go func() {
			got, err := e.svc.WaitChange(e.ctx, g.ID, g.Version, 20*time.Second)
			if err != nil {
				t.Error(err)
			}
			done <- got
		}()
		time.Sleep(200 * time.Millisecond)
		_, err = e.peer.Register(e.ctx, g.ID, "Alice", nil)
		require.NoError(t, err)
		select {
		case got := <-done:
			require.Equal(t, g.Version+1, got.Version)
		case <-time.After(15 * time.Second):
			t.Fatal("WaitChange did not wake")
		}
		same, err := e.svc.WaitChange(e.ctx, g.ID, g.Version+1, 50*time.Millisecond)
		require.NoError(t, err)
		require.Equal(t, g.Version+1, same.Version, "unchanged after the wait")
		_, err = e.svc.WaitChange(e.ctx, "game_missing", 1, time.Second)
		require.True(t, errors.Is(err, arena.ErrGameNotFound))
	})
}
