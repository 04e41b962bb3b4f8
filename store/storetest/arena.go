package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/store"
)

type arenaEnv struct {
	ctx   context.Context
	store arena.Store
	svc   *arena.Service
	peer  *arena.Service
	clock *Clock
	// notifier is svc's, for a test that makes a service of its own
	// hearing what svc hears.
	notifier store.Notifier
}

func newArenaEnv(t *testing.T, newStores NewStores) *arenaEnv {
	t.Helper()
	st := newStores(t)
	if st.Arena == nil {
		t.Fatal("storetest: Stores.Arena is required")
	}
	clock := NewClock()
	return &arenaEnv{
		ctx:      context.Background(),
		store:    st.Arena,
		svc:      arena.New(st.Arena, arena.WithClock(clock.Now), arena.WithNotifier(st.Notifier)),
		notifier: st.Notifier,
		peer:     arena.New(st.Arena, arena.WithClock(clock.Now), arena.WithNotifier(st.Peer)),
		clock:    clock,
	}
}

func (e *arenaEnv) game(t *testing.T, agents int, timeout time.Duration, tokens bool) (arena.Game, []arena.Agent) {
	t.Helper()
	return e.gameOn(t, e.svc, agents, timeout, tokens)
}

// gameOn is game with every change made through svc.
func (e *arenaEnv) gameOn(t *testing.T, svc *arena.Service, agents int, timeout time.Duration, tokens bool) (arena.Game, []arena.Agent) {
	t.Helper()
	g, err := svc.Create(e.ctx, 0, timeout)
	require.NoError(t, err)
	var out []arena.Agent
	for i := 0; i < agents; i++ {
		var tok *string
		if tokens {
			s := fmt.Sprint("token-", i)
			tok = &s
		}
		a, err := svc.Register(e.ctx, g.ID, fmt.Sprint("agent-", i), tok)
		require.NoError(t, err)
		out = append(out, a)
	}
	g, err = svc.Start(e.ctx, g.ID)
	require.NoError(t, err)
	return g, out
}

// process returns a service over the env's store, as another server
// process would have it, and the store as that service sees it, counting
// its calls.
func (e *arenaEnv) process() (*arena.Service, *countingArena) {
	c := &countingArena{Store: e.store}
	return arena.New(c, arena.WithClock(e.clock.Now)), c
}

// countingArena counts the calls made to an arena.Store: one call is one
// round trip to a networked backend.
type countingArena struct {
	arena.Store
	callCounter
}

// callCounter counts calls by method name, for the counting stores.
type callCounter struct {
	mu    sync.Mutex
	calls map[string]int
}

func (c *callCounter) count(method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[method]++
}

// take returns the calls counted since the last take.
func (c *callCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	if out == nil {
		out = map[string]int{}
	}
	c.calls = map[string]int{}
	return out
}

func (c *countingArena) CreateGame(ctx context.Context, g arena.Game) error {
	c.count("CreateGame")
	return c.Store.CreateGame(ctx, g)
}

func (c *countingArena) GetGame(ctx context.Context, id string) (arena.Game, error) {
	c.count("GetGame")
	return c.Store.GetGame(ctx, id)
}

func (c *countingArena) ListGames(ctx context.Context, status arena.Status, limit int) ([]arena.Summary, error) {
	c.count("ListGames")
	return c.Store.ListGames(ctx, status, limit)
}

func (c *countingArena) UpdateGame(ctx context.Context, next arena.Game) (arena.Game, error) {
	c.count("UpdateGame")
	return c.Store.UpdateGame(ctx, next)
}

func (c *countingArena) FeedAfter(ctx context.Context, id string, after int64, limit int) ([]arena.FeedItem, error) {
	c.count("FeedAfter")
	return c.Store.FeedAfter(ctx, id, after, limit)
}

func (c *countingArena) FeedLatest(ctx context.Context, id string, limit int) ([]arena.FeedItem, error) {
	c.count("FeedLatest")
	return c.Store.FeedLatest(ctx, id, limit)
}

func (c *countingArena) ResolvedRounds(ctx context.Context, id string) ([]arena.Round, error) {
	c.count("ResolvedRounds")
	return c.Store.ResolvedRounds(ctx, id)
}

func (c *countingArena) OverdueGames(ctx context.Context, now time.Time) ([]string, error) {
	c.count("OverdueGames")
	return c.Store.OverdueGames(ctx, now)
}

// tracks returns a round's majority then minority agents.
func tracks(r *arena.Round) []string { return append(slices.Clone(r.Majority), r.Minority...) }

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
						g = step(e.svc.Argue(e.ctx, arena.ArgueParams{GameID: g.ID, RoundID: r.ID, AgentID: id, Text: "I would pull the lever"}))
					}
					r = g.Current()
				}
				require.Equal(t, arena.PhaseAwaiting, r.Phase)
				g = step(e.svc.Decide(e.ctx, arena.DecideParams{GameID: g.ID, RoundID: r.ID, AgentID: r.Operator, Decision: arena.SaveMinority}))
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

	t.Run("ListGamesByStatus", func(t *testing.T) {
		t.Parallel()
		e := newArenaEnv(t, newStores)
		at := func() { e.clock.Advance(time.Second) } // each game a second newer
		create := func() arena.Game {
			t.Helper()
			at()
			g, err := e.svc.Create(e.ctx, 0, 0)
			require.NoError(t, err)
			return g
		}
		register := func(g arena.Game) arena.Game {
			t.Helper()
			_, err := e.svc.Register(e.ctx, g.ID, "Alice", nil)
			require.NoError(t, err)
			g, err = e.svc.Game(e.ctx, g.ID)
			require.NoError(t, err)
			return g
		}
		play := func() arena.Game {
			t.Helper()
			at()
			g, _ := e.game(t, 3, 0, false)
			return g
		}
		// Created oldest to newest, the statuses interleaved; moved is
		// created waiting and made ready after newer games were created.
		moved := create()
		w1 := create()
		r1 := register(create())
		p1 := play()
		w2 := create()
		done := play()
		for done.Status != arena.StatusCompleted {
			var err error
			done, err = e.svc.Advance(e.ctx, done.ID, arena.ActionForceDecision)
			require.NoError(t, err)
			r := done.Current()
			done, err = e.svc.Decide(e.ctx, arena.DecideParams{GameID: done.ID, RoundID: r.ID, AgentID: r.Operator, Decision: arena.SaveMajority})
			require.NoError(t, err)
		}
		r2 := register(create())
		w3 := create()
		p2 := play()
		moved = register(moved)
		require.Equal(t, arena.StatusReady, moved.Status)

		sum := func(games ...arena.Game) []arena.Summary {
			out := []arena.Summary{}
			for _, g := range games {
				out = append(out, arena.Summary{ID: g.ID, Status: g.Status, CreatedAt: g.CreatedAt})
			}
			return out
		}
		for _, c := range []struct {
			status arena.Status
			limit  int
			want   []arena.Summary
		}{
			{arena.StatusWaiting, 2, sum(w3, w2)},
			{arena.StatusWaiting, 10, sum(w3, w2, w1)},
			{arena.StatusReady, 1, sum(r2)},
			{arena.StatusReady, 10, sum(r2, r1, moved)},
			{arena.StatusPhase1, 1, sum(p2)},
			{arena.StatusPhase1, 2, sum(p2, p1)},
			{arena.StatusCompleted, 10, sum(done)},
			{arena.StatusAwaiting, 10, sum()},
			{"", 3, sum(p2, w3, r2)},
			{"", 100, sum(p2, w3, r2, done, w2, p1, r1, w1, moved)},
		} {
			got, err := e.store.ListGames(e.ctx, c.status, c.limit)
			require.NoError(t, err)
			require.Equal(t, c.want, got, "store: %q limit %d, newest first", c.status, c.limit)
			got, err = e.svc.List(e.ctx, c.status, c.limit)
			require.NoError(t, err)
			require.Equal(t, c.want, got, "service: %q limit %d, newest first", c.status, c.limit)
		}
		all, err := e.svc.List(e.ctx, arena.StatusWaiting, 0)
		require.NoError(t, err)
		require.Equal(t, sum(w3, w2, w1), all, "no limit: the service's default")
		_, err = e.svc.List(e.ctx, "bogus", 10)
		requireCode(t, &store.Error{Kind: store.ErrInvalid, Code: "invalid_status"}, err)
	})

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
				// Half argue through another process, whose remembered game
				// is stale from the start.
				svc := []*arena.Service{e.svc, e.peer}[i%2]
				next, err := svc.Argue(e.ctx, arena.ArgueParams{GameID: g.ID, RoundID: r.ID, AgentID: track[i], Text: fmt.Sprint("argument ", i)})
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
			g, err := e.svc.Argue(e.ctx, arena.ArgueParams{GameID: g.ID, RoundID: r.ID, AgentID: last, Text: "last"})
			require.NoError(t, err)
			require.Equal(t, arena.Phase2, g.Current().Phase)
			require.Len(t, g.Current().Arguments, 21, "every argument stored once")
			changes := 0
			feed, err := e.store.FeedAfter(e.ctx, g.ID, 0, 10000)
			require.NoError(t, err)
			for i, it := range feed {
				require.EqualValues(t, i+1, it.Seq, "the feed numbered without gaps or repeats")
				if it.Type == "event" && it.Payload.Type == "phase_changed" {
					changes++
				}
			}
			require.Equal(t, 1, changes)
		}
	})

	t.Run("LogsAppendWithTheSave", func(t *testing.T) {
		t.Parallel()
		e := newArenaEnv(t, newStores)
		g, _ := e.game(t, 3, 0, false)
		stored, err := e.store.GetGame(e.ctx, g.ID)
		require.NoError(t, err)
		require.Empty(t, stored.Appended, "a stored game has nothing appended")
		feed, err := e.store.FeedAfter(e.ctx, g.ID, 0, 1000)
		require.NoError(t, err)
		require.Len(t, feed, int(stored.FeedLen), "registrations, the start and the round: every item once")
		for i, it := range feed {
			require.EqualValues(t, i+1, it.Seq)
		}
		latest, err := e.store.FeedLatest(e.ctx, g.ID, 2)
		require.NoError(t, err)
		require.Equal(t, []arena.FeedItem{feed[len(feed)-1], feed[len(feed)-2]}, latest, "newest first")
		tail, err := e.store.FeedAfter(e.ctx, g.ID, stored.FeedLen-1, 10)
		require.NoError(t, err)
		require.Equal(t, feed[len(feed)-1:], tail)
		none, err := e.store.FeedAfter(e.ctx, g.ID, stored.FeedLen, 10)
		require.NoError(t, err)
		require.Empty(t, none)
		rounds, err := e.store.ResolvedRounds(e.ctx, g.ID)
		require.NoError(t, err)
		require.Empty(t, rounds)

		// A save refused by compare-and-set appends nothing; one that
		// passes appends its items and rounds in the same step.
		next := stored.Clone()
		next.Version = stored.Version + 5
		extra := arena.FeedItem{ID: "evt_x", Type: "event", Payload: &arena.Payload{Type: "test"}, CreatedAt: stored.CreatedAt, Seq: stored.FeedLen + 1}
		next.FeedLen++
		next.Appended = arena.Appended{Feed: []arena.FeedItem{extra}, Rounds: []arena.Round{{ID: "round_x", Number: 1, Decision: arena.SaveMajority}}}
		_, err = e.store.UpdateGame(e.ctx, next)
		require.ErrorIs(t, err, arena.ErrVersionConflict)
		after, err := e.store.FeedAfter(e.ctx, g.ID, 0, 1000)
		require.NoError(t, err)
		require.Equal(t, feed, after, "nothing appended by a refused save")
		rounds, err = e.store.ResolvedRounds(e.ctx, g.ID)
		require.NoError(t, err)
		require.Empty(t, rounds)
		next.Version = stored.Version + 1
		_, err = e.store.UpdateGame(e.ctx, next)
		require.NoError(t, err)
		latest, err = e.store.FeedLatest(e.ctx, g.ID, 1)
		require.NoError(t, err)
		require.Equal(t, []arena.FeedItem{extra}, latest)
		rounds, err = e.store.ResolvedRounds(e.ctx, g.ID)
		require.NoError(t, err)
		require.Len(t, rounds, 1)
		require.Equal(t, "round_x", rounds[0].ID)

		for _, read := range []func() error{
			func() error { _, err := e.store.FeedAfter(e.ctx, "game_missing", 0, 10); return err },
			func() error { _, err := e.store.FeedLatest(e.ctx, "game_missing", 10); return err },
			func() error { _, err := e.store.ResolvedRounds(e.ctx, "game_missing"); return err },
		} {
			require.ErrorIs(t, read(), arena.ErrGameNotFound)
		}
	})

	t.Run("DocumentDoesNotGrowWithTheGame", func(t *testing.T) {
		t.Parallel()
		e := newArenaEnv(t, newStores)
		g, _ := e.game(t, 6, 0, false)
		size := func() int {
			cur, err := e.store.GetGame(e.ctx, g.ID)
			require.NoError(t, err)
			data, err := json.Marshal(cur)
			require.NoError(t, err)
			return len(data)
		}
		first := map[int]int{} // round -> document size at its first argument
		var err error
		for g.Status != arena.StatusCompleted {
			r := g.Current()
			for _, ph := range []arena.Phase{arena.Phase1, arena.Phase2, arena.Phase3} {
				for _, id := range tracks(r) {
					g, err = e.svc.Argue(e.ctx, arena.ArgueParams{GameID: g.ID, RoundID: r.ID, AgentID: id, Text: strings.Repeat("a long argument ", 20) + string(ph)})
					require.NoError(t, err)
					if _, ok := first[r.Number]; !ok {
						first[r.Number] = size()
					}
				}
			}
			g, err = e.svc.Decide(e.ctx, arena.DecideParams{GameID: g.ID, RoundID: r.ID, AgentID: r.Operator, Decision: arena.SaveMajority})
			require.NoError(t, err)
		}
		feed, err := e.store.FeedLatest(e.ctx, g.ID, 1)
		require.NoError(t, err)
		require.Greater(t, feed[0].Seq, int64(100), "a feed of over 100 items")
		last := g.RoundCount
		require.GreaterOrEqual(t, last, 6)
		// Between the second round and the last the document grows by the
		// ended rounds' IDs only, never by the feed or past arguments.
		require.Less(t, first[last]-first[2], 64*last, "document sizes by round: %v", first)
	})

	runVersioned(t, arenaGames(newStores))

	t.Run("CreateGameRefusesATakenID", func(t *testing.T) {
		t.Parallel()
		e := newArenaEnv(t, newStores)
		g, _ := e.game(t, 3, 0, false)
		stored, err := e.store.GetGame(e.ctx, g.ID)
		require.NoError(t, err)
		again := stored.Clone()
		again.Version = 1
		again.Status = arena.StatusWaiting
		again.Agents = nil
		err = e.store.CreateGame(e.ctx, again)
		require.ErrorIs(t, err, arena.ErrGameExists)
		require.ErrorIs(t, err, store.ErrConflict)
		after, err := e.store.GetGame(e.ctx, g.ID)
		require.NoError(t, err)
		require.Equal(t, stored, after, "the game is as it was")
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
		_, err := e.svc.Argue(e.ctx, arena.ArgueParams{GameID: g.ID, RoundID: r.ID, AgentID: id, Text: "no token"})
		require.ErrorIs(t, err, arena.ErrBadToken)
		_, err = e.svc.Argue(identity.NewContext(e.ctx, identity.Caller{Token: "token-wrong"}), arena.ArgueParams{GameID: g.ID, RoundID: r.ID, AgentID: id, Text: "wrong token"})
		require.ErrorIs(t, err, arena.ErrBadToken)
		_, err = e.svc.Argue(identity.NewContext(e.ctx, identity.Caller{Token: tok}), arena.ArgueParams{GameID: g.ID, RoundID: r.ID, AgentID: id, Text: "right token"})
		require.NoError(t, err)
		_, err = e.svc.Argue(identity.NewContext(e.ctx, identity.Caller{Token: tok}), arena.ArgueParams{GameID: "game_missing", RoundID: r.ID, AgentID: id, Text: "x"})
		require.ErrorIs(t, err, arena.ErrGameNotFound)
	})

	t.Run("KeyedAgents", func(t *testing.T) {
		t.Parallel()
		e := newArenaEnv(t, newStores)
		g, err := e.svc.Create(e.ctx, 0, 0)
		require.NoError(t, err)
		keyOf := map[string]string{}
		for i := 0; i < 3; i++ {
			key := fmt.Sprint("key_", i)
			a, err := e.svc.Register(identity.WithKey(e.ctx, identity.Key{ID: key}), g.ID, fmt.Sprint("agent-", i), nil)
			require.NoError(t, err)
			require.Equal(t, key, a.KeyID)
			keyOf[a.ID] = key
		}
		// The binding is stored: another process reads it and enforces it.
		stored, err := e.peer.Game(e.ctx, g.ID)
		require.NoError(t, err)
		for _, a := range stored.Agents {
			require.Equal(t, keyOf[a.ID], a.KeyID)
		}
		g, err = e.peer.Start(e.ctx, g.ID)
		require.NoError(t, err)
		r := g.Current()
		for _, a := range g.Agents {
			require.Equal(t, keyOf[a.ID], a.KeyID, "kept through the start")
		}
		id := r.Minority[0]
		for _, svc := range []*arena.Service{e.svc, e.peer} {
			_, err = svc.Argue(identity.WithKey(e.ctx, identity.Key{ID: keyOf[r.Majority[0]]}), arena.ArgueParams{GameID: g.ID, RoundID: r.ID, AgentID: id, Text: "as another key's agent"})
			require.ErrorIs(t, err, arena.ErrNotYourAgent)
			require.ErrorIs(t, err, store.ErrForbidden)
		}
		_, err = e.peer.Argue(e.ctx, arena.ArgueParams{GameID: g.ID, RoundID: r.ID, AgentID: id, Text: "without a key"})
		require.NoError(t, err, "a server without keys leaves the agent open")
		g, err = e.svc.Argue(identity.WithKey(e.ctx, identity.Key{ID: keyOf[r.Majority[0]]}), arena.ArgueParams{GameID: g.ID, RoundID: r.ID, AgentID: r.Majority[0], Text: "my own"})
		require.NoError(t, err)
		g, err = e.svc.Advance(e.ctx, g.ID, arena.ActionForceDecision)
		require.NoError(t, err)
		_, err = e.peer.Decide(identity.WithKey(e.ctx, identity.Key{ID: keyOf[id]}), arena.DecideParams{GameID: g.ID, RoundID: r.ID, AgentID: r.Operator, Decision: arena.SaveMajority})
		require.ErrorIs(t, err, arena.ErrNotYourAgent)
		g, err = e.peer.Decide(identity.WithKey(e.ctx, identity.Key{ID: keyOf[r.Operator]}), arena.DecideParams{GameID: g.ID, RoundID: r.ID, AgentID: r.Operator, Decision: arena.SaveMajority})
		require.NoError(t, err)
		require.NotEqual(t, r.ID, g.Current().ID, "the decision resolved the round")

		// The demo's agents are the key that made it.
		_, agents, err := e.svc.Demo(identity.WithKey(e.ctx, identity.Key{ID: "key_admin"}))
		require.NoError(t, err)
		require.Len(t, agents, 3)
		for _, a := range agents {
			require.Equal(t, "key_admin", a.KeyID)
		}
	})

	t.Run("WaitWakesAcrossProcesses", func(t *testing.T) {
		t.Parallel()
		e := newArenaEnv(t, newStores)
		// The waiter hears of the peer's change through the notifier
		// alone: a subscription shared across processes re-reads only
		// every 30 s, past this test's deadline, so a notifier that does
		// not carry the change fails it.
		n, subscribed := watched(e.notifier)
		waiter := arena.New(e.store, arena.WithClock(e.clock.Now), arena.WithNotifier(n))
		g, err := e.svc.Create(e.ctx, 0, 0)
		require.NoError(t, err)
		done := make(chan arena.Game, 1)
		go func() {
			got, err := waiter.Wait(e.ctx, g.ID, g.Version, 20*time.Second)
			if err != nil {
				t.Error(err)
			}
			done <- got
		}()
		<-subscribed
		_, err = e.peer.Register(e.ctx, g.ID, "Alice", nil)
		require.NoError(t, err)
		select {
		case got := <-done:
			require.Equal(t, g.Version+1, got.Version)
		case <-time.After(15 * time.Second):
			t.Fatal("Wait did not wake")
		}
		same, err := e.svc.Wait(e.ctx, g.ID, g.Version+1, 50*time.Millisecond)
		require.NoError(t, err)
		require.Equal(t, g.Version+1, same.Version, "unchanged after the wait")
		_, err = e.svc.Wait(e.ctx, "game_missing", 1, time.Second)
		require.True(t, errors.Is(err, arena.ErrGameNotFound))
	})
}

// arenaGames describes games to the compare-and-set contract
// (runVersioned).
func arenaGames(newStores NewStores) versioned[arena.Game] {
	return versioned[arena.Game]{
		kind:       "Game",
		action:     "Argue",
		conflict:   arena.ErrVersionConflict,
		notFound:   arena.ErrGameNotFound,
		missingID:  "game_missing",
		version:    func(g arena.Game) int64 { return g.Version },
		setVersion: func(g *arena.Game, v int64) { g.Version = v },
		setID:      func(g *arena.Game, id string) { g.ID = id },
		clone:      arena.Game.Clone,
		mark: func(g *arena.Game, i int) {
			g.Status, g.PhaseDeadline, g.AnimationCount = arena.StatusCompleted, nil, i
		},
		marked: func(g arena.Game) int {
			if g.Status != arena.StatusCompleted {
				return -1
			}
			return g.AnimationCount
		},
		stored: func(t *testing.T) storedAggregate[arena.Game] {
			e := newArenaEnv(t, newStores)
			g, _ := e.game(t, 3, time.Minute, false)
			return storedAggregate[arena.Game]{
				id:  g.ID,
				get: e.store.GetGame,
				save: func(ctx context.Context, next arena.Game, _ string) (arena.Game, error) {
					return e.store.UpdateGame(ctx, next)
				},
			}
		},
		play: func(t *testing.T, creator int) aggregatePlay[arena.Game] { return newArenaPlay(t, newStores, creator) },
	}
}

// newArenaPlay starts a game of four agents played by two processes.
func newArenaPlay(t *testing.T, newStores NewStores, creator int) aggregatePlay[arena.Game] {
	const agents = 4
	e := newArenaEnv(t, newStores)
	a, callsA := e.process()
	b, callsB := e.process()
	procs := []*arena.Service{a, b}
	calls := [2]*callCounter{&callsA.callCounter, &callsB.callCounter}
	var g arena.Game
	if creator < 0 {
		g, _ = e.game(t, agents, 0, false)
	} else {
		g, _ = e.gameOn(t, procs[creator], agents, 0, false)
		require.Equal(t, map[string]int{"CreateGame": 1, "UpdateGame": 1 + agents}, calls[creator].take(),
			"each change follows this process's own: no read")
	}
	stored := func(t *testing.T) arena.Game {
		cur, err := e.store.GetGame(e.ctx, g.ID)
		require.NoError(t, err)
		return cur
	}
	current := func(t *testing.T) *arena.Round {
		cur := stored(t)
		return cur.Current()
	}
	arguments := 0
	move := func(t *testing.T, p int) arena.Game {
		r := current(t)
		var got arena.Game
		var err error
		if r.Phase == arena.PhaseAwaiting {
			got, err = procs[p].Decide(e.ctx, arena.DecideParams{GameID: g.ID, RoundID: r.ID, AgentID: r.Operator, Decision: arena.SaveMajority})
		} else {
			id := tracks(r)[len(r.ArguedThisPhase())]
			got, err = procs[p].Argue(e.ctx, arena.ArgueParams{GameID: g.ID, RoundID: r.ID, AgentID: id, Text: fmt.Sprint("argument ", arguments)})
			arguments++
		}
		require.NoError(t, err)
		return got
	}
	return aggregatePlay[arena.Game]{
		calls:  calls,
		stored: stored,
		move:   move,
		refuse: func(t *testing.T, p int) {
			r := current(t)
			argued := r.ArguedThisPhase()
			require.NotEmpty(t, argued)
			_, err := procs[p].Argue(e.ctx, arena.ArgueParams{GameID: g.ID, RoundID: r.ID, AgentID: argued[0], Text: "again"})
			require.ErrorContains(t, err, "Already submitted argument this phase")
		},
		stage: func(g arena.Game) string {
			return fmt.Sprint(g.Status, " ", g.Current().Number, " ", g.Current().Phase)
		},
		over: func(g arena.Game) bool { return g.Status == arena.StatusCompleted },
		staleTail: func(t *testing.T) {
			// The decision: the first process's remembered game is in
			// phase 2, the stored one awaits the operator after the second
			// finishes the debate.
			for current(t).Phase != arena.PhaseAwaiting {
				move(t, 1)
			}
			r := g.Current()
			done, err := a.Decide(e.ctx, arena.DecideParams{GameID: g.ID, RoundID: r.ID, AgentID: r.Operator, Decision: arena.SaveMinority})
			require.NoError(t, err, "Not in decision phase on the stale game only")
			require.Equal(t, 1, done.LastResolved.Number)
			require.Equal(t, arena.SaveMinority, done.LastResolved.Decision)
		},
		landedOnce: func(t *testing.T) {
			// Every argument stored exactly once.
			cur := stored(t)
			total := 0
			if cur.Current().Decision == "" { // a decided round is among the resolved ones
				total = len(cur.Current().Arguments)
			}
			resolved, err := e.store.ResolvedRounds(e.ctx, g.ID)
			require.NoError(t, err)
			for _, r := range resolved {
				total += len(r.Arguments)
			}
			require.Equal(t, arguments, total, "every argument stored exactly once")
		},
	}
}
