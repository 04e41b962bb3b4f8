package observe_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/observe"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/storetest"
)

// finishLayer has fresh agents take and finish the open slots of p's
// current layer, each with confidence conf, until the pipeline leaves the
// layer or is flagged.
func finishLayer(t *testing.T, claims *slots.Service, pipelines *prism.Service, p prism.Pipeline, conf float64) prism.Pipeline {
	t.Helper()
	ctx := context.Background()
	layer := p.CurrentLayer
	for i := 0; p.CurrentLayer == layer && p.Status == prism.StatusActive; i++ {
		require.Less(t, i, 50, "the layer never ends")
		var slot *prism.StageSlot
		for j, s := range p.Slots {
			if s.Status == slots.StatusOpen && s.Layer == p.CurrentLayer && s.Phase == p.Phase && (s.Phase == prism.PhaseWork || s.Round == p.Round) {
				slot = &p.Slots[j]
				break
			}
		}
		require.NotNil(t, slot, "an open slot in layer %d", layer)
		agent := identity.WithKey(ctx, identity.Key{ID: fmt.Sprint("key-", p.ClaimID, "-", i), Name: fmt.Sprint("agent-", p.ClaimID, "-", i), Scopes: []identity.Scope{slots.ScopeCommentCreate}})
		_, _, err := pipelines.Take(agent, p.ClaimID, slot.ID)
		require.NoError(t, err)
		p, err = pipelines.Done(agent, p.ClaimID, slot.ID, prism.DoneInput{Body: "the claim, framed", Confidence: &conf})
		require.NoError(t, err)
	}
	return p
}

// TestDomainEventsOnEveryBackend drives Prism and the arena through
// services observed by observe.Services on every backend and reads the
// counters back: layers advanced and flags raised, arena actions, games
// by status and long polls open.
func TestDomainEventsOnEveryBackend(t *testing.T) {
	t.Parallel()
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := context.Background()
		reg, m := newMetrics(t)
		obs := observe.NewServices(m, nil)
		value := func(name string, labels map[string]string) float64 {
			s := series(t, reg, name, labels)
			switch {
			case s == nil:
				return 0
			case s.GetGauge() != nil:
				return s.GetGauge().GetValue()
			}
			return s.GetCounter().GetValue()
		}

		// Prism: a claim whose first layer agrees moves on (a layer
		// advanced); one whose consensus is unsure is flagged (a flag
		// raised, no layer), until a reviewer advances it (a layer).
		claims := slots.New(st.Slots, slots.WithObserver(obs))
		pipelines := prism.New(st.Prism, st.Slots, prism.WithObserver(obs))
		start := func() prism.Pipeline {
			_, p, err := pipelines.CreateClaim(ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "Crows plan for tomorrow"}})
			require.NoError(t, err)
			return p
		}
		layers := func() float64 { return value("agora_prism_layers_advanced_total", nil) }
		flags := func() float64 {
			return value("agora_prism_flags_raised_total", map[string]string{"reason": prism.FlagReasonLowConfidence})
		}
		sure := finishLayer(t, claims, pipelines, start(), 0.9)
		require.Equal(t, prism.StatusActive, sure.Status)
		require.Equal(t, 1.0, layers())
		require.Equal(t, 0.0, flags())
		unsure := finishLayer(t, claims, pipelines, start(), 0.1)
		require.Equal(t, prism.StatusFlagged, unsure.Status)
		require.Equal(t, 1.0, layers(), "a flagged layer has not advanced")
		require.Equal(t, 1.0, flags())
		reviewer := identity.WithKey(ctx, identity.Key{ID: "key-reviewer", Name: "reviewer", Scopes: []identity.Scope{prism.ScopePipelineReview}})
		advanced, err := pipelines.ResolveFlag(reviewer, prism.ResolveFlagParams{ClaimID: unsure.ClaimID, FlagID: unsure.Flags[0].ID, Action: prism.FlagAdvance, Note: "good enough"})
		require.NoError(t, err)
		require.Greater(t, advanced.CurrentLayer, unsure.CurrentLayer)
		require.Equal(t, 2.0, layers())
		require.Equal(t, 1.0, flags())

		// The arena: each action saved is counted, and each status a game
		// enters.
		games := arena.New(st.Arena, arena.WithObserver(obs))
		actions := func(a string) float64 { return value("agora_arena_actions_total", map[string]string{"action": a}) }
		entered := func(s arena.Status) float64 {
			return value("agora_arena_games_total", map[string]string{"status": string(s)})
		}
		g, err := games.Create(ctx, 0, 0)
		require.NoError(t, err)
		require.Equal(t, 1.0, entered(arena.StatusWaiting))
		_, err = games.Register(ctx, g.ID, "ada", nil)
		require.NoError(t, err)
		_, err = games.Register(ctx, "g-missing", "bob", nil)
		require.Error(t, err)
		require.Equal(t, 1.0, actions("register"), "a refused action is not counted")
		started, err := games.Start(ctx, g.ID)
		require.NoError(t, err)
		require.Equal(t, 1.0, actions("start"))
		require.Equal(t, 1.0, entered(started.Status))
		next, err := games.Advance(ctx, g.ID, arena.ActionNextPhase)
		require.NoError(t, err)
		require.NotEqual(t, started.Status, next.Status)
		require.Equal(t, 1.0, actions("advance"))
		require.Equal(t, 1.0, entered(next.Status))

		// A long poll is open while it waits, and no more once answered.
		polls := func() float64 { return value("agora_long_polls_open", nil) }
		answered := make(chan error, 1)
		go func() {
			_, err := games.Wait(ctx, g.ID, next.Version, 20*time.Second)
			answered <- err
		}()
		require.Eventually(t, func() bool { return polls() == 1 }, 10*time.Second, 5*time.Millisecond)
		_, err = games.Advance(ctx, g.ID, arena.ActionNextPhase)
		require.NoError(t, err)
		require.NoError(t, <-answered)
		require.Equal(t, 0.0, polls())
		require.Equal(t, 2.0, actions("advance"))
	})
}
