package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

type prismEnv struct {
	ctx    context.Context
	store  prism.Store
	claims slots.ClaimStore
	slots  *slots.Service
	svc    *prism.Service
	peer   *prism.Service // another process's service on the same store
	clock  *Clock
	keys   []slots.Key
}

func newPrismEnv(t *testing.T, newStores NewStores, agents int) *prismEnv {
	t.Helper()
	st := newStores(t)
	if st.Prism == nil {
		t.Fatal("storetest: Stores.Prism is required")
	}
	clock := NewClock()
	e := &prismEnv{ctx: context.Background(), store: st.Prism, claims: st.Slots, clock: clock}
	e.slots = slots.New(st.Slots, slots.WithClock(clock.Now))
	e.svc = prism.New(st.Prism, st.Slots, prism.WithClock(clock.Now), prism.WithLease(5*time.Minute))
	e.peer = prism.New(st.Prism, st.Slots, prism.WithClock(clock.Now), prism.WithLease(5*time.Minute))
	for i := 0; i < agents; i++ {
		k, _, err := e.slots.CreateKey(e.ctx, slots.NewKey{Name: fmt.Sprint("agent-", i), Scopes: []slots.Scope{slots.ScopeCommentCreate}})
		require.NoError(t, err)
		e.keys = append(e.keys, k)
	}
	return e
}

func (e *prismEnv) claim(t *testing.T) (slots.Claim, prism.Pipeline) {
	t.Helper()
	return e.claimOn(t, e.svc)
}

// claimOn is claim with the pipeline created through svc.
func (e *prismEnv) claimOn(t *testing.T, svc *prism.Service) (slots.Claim, prism.Pipeline) {
	t.Helper()
	c, err := e.slots.CreateClaim(e.ctx, slots.NewClaim{Title: "Crows plan ahead", Body: "Corvids cache food for tomorrow."})
	require.NoError(t, err)
	p, err := svc.Init(e.ctx, c, "")
	require.NoError(t, err)
	return c, p
}

// process returns a service over the env's store, as another server
// process would have it, and the store as that service sees it, counting
// its calls.
func (e *prismEnv) process() (*prism.Service, *countingPrism) {
	c := &countingPrism{Store: e.store}
	return prism.New(c, e.claims, prism.WithClock(e.clock.Now), prism.WithLease(5*time.Minute)), c
}

// countingPrism counts the calls made to a prism.Store: one call is one
// round trip to a networked backend.
type countingPrism struct {
	prism.Store
	callCounter
}

func (c *countingPrism) PutProtocol(ctx context.Context, p prism.Protocol) error {
	c.count("PutProtocol")
	return c.Store.PutProtocol(ctx, p)
}

func (c *countingPrism) GetProtocol(ctx context.Context, id string) (prism.Protocol, error) {
	c.count("GetProtocol")
	return c.Store.GetProtocol(ctx, id)
}

func (c *countingPrism) ListProtocols(ctx context.Context) ([]prism.Protocol, error) {
	c.count("ListProtocols")
	return c.Store.ListProtocols(ctx)
}

func (c *countingPrism) CreatePipeline(ctx context.Context, p prism.Pipeline) error {
	c.count("CreatePipeline")
	return c.Store.CreatePipeline(ctx, p)
}

func (c *countingPrism) GetPipeline(ctx context.Context, claimID string) (prism.Pipeline, error) {
	c.count("GetPipeline")
	return c.Store.GetPipeline(ctx, claimID)
}

func (c *countingPrism) UpdatePipeline(ctx context.Context, next prism.Pipeline, fx prism.Effects) (prism.Pipeline, error) {
	c.count("UpdatePipeline")
	return c.Store.UpdatePipeline(ctx, next, fx)
}

func (c *countingPrism) FindWork(ctx context.Context, q prism.WorkQuery) ([]prism.WorkRef, error) {
	c.count("FindWork")
	return c.Store.FindWork(ctx, q)
}

func (c *countingPrism) LapsedPipelines(ctx context.Context, now int64) ([]string, error) {
	c.count("LapsedPipelines")
	return c.Store.LapsedPipelines(ctx, now)
}

// seated returns how many slots of the pipeline's current layer have an
// agent: the index of an agent holding nothing in that layer, when agents
// are seated in order.
func seated(p prism.Pipeline) int {
	n := 0
	for _, s := range p.Slots {
		if s.Layer == p.CurrentLayer && s.APIKeyID != "" {
			n++
		}
	}
	return n
}

// outputFor returns valid structured output for a slot, if its layer asks.
func outputFor(l prism.Layer, phase prism.Phase, i int) json.RawMessage {
	if string(l.OutputFrom) != string(phase) {
		return nil
	}
	switch l.Number {
	case 2:
		return json.RawMessage(`{"domain":"Cognitive Ethology"}`)
	case 3:
		return json.RawMessage(`{"keyPoints":["caching"],"strength":"strong"}`)
	case 4:
		return json.RawMessage(`{"weaknesses":["small n"],"questions":["which species?"],"severity":"moderate"}`)
	case 5:
		return json.RawMessage(`{"responseToWeaknesses":["replicated"],"answeredQuestions":["scrub jays"]}`)
	case 6:
		return json.RawMessage(`{"verdict":"advance-to-synthesis","caveats":[]}`)
	case 7:
		rec := []string{"accept", "accept-with-caveats", "accept"}[i%3]
		return json.RawMessage(fmt.Sprintf(`{"summary":"summary %d","recommendation":%q}`, i, rec))
	}
	return nil
}

func conf(v float64) *float64 { return &v }

// finishPhase has distinct agents (from offset on) take and finish every
// open slot of the pipeline's current phase, with the given confidence.
func (e *prismEnv) finishPhase(t *testing.T, claimID string, offset int, confidence float64) prism.Pipeline {
	t.Helper()
	p, err := e.svc.Pipeline(e.ctx, claimID)
	require.NoError(t, err)
	open := p.OpenSlots()
	require.NotEmpty(t, open)
	l := p.Layer()
	for i, s := range open {
		agent := e.keys[offset+i]
		_, _, err := e.svc.Take(e.ctx, agent, claimID, s.ID)
		require.NoError(t, err)
		e.clock.Advance(time.Millisecond)
		p, err = e.svc.Done(e.ctx, agent, claimID, s.ID, prism.DoneInput{Body: "reasoning", Output: outputFor(l, s.Phase, i), Confidence: conf(confidence)})
		require.NoError(t, err)
	}
	return p
}

// RunPrism runs the Prism pipeline section of the suite.
func RunPrism(t *testing.T, newStores NewStores) {
	runPrismTakeNext(t, newStores)
	t.Run("FullRunToComplete", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		c, p := e.claim(t)
		require.Equal(t, prism.StatusActive, p.Status)
		require.Equal(t, 1, p.CurrentLayer)
		require.Equal(t, prism.PhaseWork, p.Phase)
		require.Len(t, p.OpenSlots(), 2)
		again, err := e.svc.Init(e.ctx, c, "")
		require.NoError(t, err)
		require.Equal(t, p.Version, again.Version, "Init is idempotent")

		for layer := 1; layer <= 7; layer++ {
			p, err = e.svc.Pipeline(e.ctx, c.ID)
			require.NoError(t, err)
			require.Equal(t, layer, p.CurrentLayer)
			if p.Layer().WorkSlots() > 0 {
				require.Equal(t, prism.PhaseWork, p.Phase)
				p = e.finishPhase(t, c.ID, 0, 0.8)
				require.Equal(t, prism.PhaseConsensus, p.Phase, "layer %d", layer)
				require.Equal(t, layer, p.CurrentLayer)
			}
			p = e.finishPhase(t, c.ID, 8, 0.8)
		}
		require.Equal(t, prism.StatusComplete, p.Status)
		require.NotNil(t, p.Consensus)
		require.Equal(t, "accept", p.Consensus.Recommendation)
		require.Equal(t, "summary 0", p.Consensus.Summary)
		require.InDelta(t, 80, p.Consensus.Confidence, 1e-9)
		claim, err := e.slots.Claim(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, "cognitive-ethology", claim.Domain, "layer 2 wrote the normalised domain")
		for domain, want := range map[string]int{"cognitive-ethology": 1, c.Domain: 0} {
			page, err := e.slots.ListClaims(e.ctx, slots.ClaimsQuery{Domain: domain})
			require.NoError(t, err)
			require.Len(t, page.Items, want, "the claim is listed under its new domain only (%s)", domain)
		}

		// Rewards: every agent did one work and one consensus slot per layer.
		var total int64
		for _, k := range e.keys {
			b, err := e.slots.Balance(e.ctx, k.ID)
			require.NoError(t, err)
			total += b
		}
		work, cons := 0, 0
		for _, l := range prism.PrismV1().Layers {
			work += l.WorkSlots()
			cons += l.ConsensusSlots
		}
		require.EqualValues(t, work*prism.RewardWork+cons*prism.RewardConsensus, total)
		_, err = e.svc.NextWork(e.ctx, e.keys[0], prism.WorkQuery{})
		require.ErrorIs(t, err, slots.ErrNoJob, "a complete pipeline offers no work")
	})

	t.Run("ProseOnlyLayersAndSubmissionFields", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		c, _ := e.claim(t)
		for range 2 {
			e.finishPhase(t, c.ID, 0, 0.9)
			e.finishPhase(t, c.ID, 8, 0.9)
		}
		a, b := e.keys[0], e.keys[1]
		_, err := e.svc.NextWork(e.ctx, a, prism.WorkQuery{Phase: prism.PhaseConsensus})
		require.ErrorIs(t, err, slots.ErrNoJob, "layer 3 is in its work phase")
		_, err = e.svc.NextWork(e.ctx, a, prism.WorkQuery{Phase: prism.PhaseWork, Role: prism.RoleConsensus})
		require.ErrorIs(t, err, slots.ErrNoJob)
		w, err := e.svc.NextWork(e.ctx, a, prism.WorkQuery{Phase: prism.PhaseWork})
		require.NoError(t, err)
		require.Equal(t, 3, w.Slot.Layer)
		require.Equal(t, prism.PhaseWork, w.Slot.Phase)
		_, _, err = e.svc.Take(e.ctx, a, c.ID, w.Slot.ID)
		require.NoError(t, err)

		// Layer 3 asks for {keyPoints, strength}, but its effect reads none:
		// prose alone is accepted, a wrong shape still refused when given.
		_, err = e.svc.Done(e.ctx, a, c.ID, w.Slot.ID, prism.DoneInput{Body: "prose", Output: json.RawMessage(`{"topic":"x"}`)})
		require.ErrorIs(t, err, store.ErrInvalid)
		_, err = e.svc.Done(e.ctx, a, c.ID, w.Slot.ID, prism.DoneInput{Body: "prose", AgentModel: strings.Repeat("m", prism.MaxAgentModelLen+1)})
		require.ErrorIs(t, err, store.ErrInvalid)
		_, err = e.svc.Done(e.ctx, a, c.ID, w.Slot.ID, prism.DoneInput{Body: "prose", OutputSignature: "bad\x00"})
		require.ErrorIs(t, err, store.ErrInvalid)
		_, err = e.svc.Done(e.ctx, a, c.ID, w.Slot.ID, prism.DoneInput{Body: "supporting prose", AgentModel: "sonnet-4.6", OutputSignature: "MEUCIQ=="})
		require.NoError(t, err)
		w2, err := e.svc.NextWork(e.ctx, b, prism.WorkQuery{Phase: prism.PhaseWork})
		require.NoError(t, err)
		_, _, err = e.svc.Take(e.ctx, b, c.ID, w2.Slot.ID)
		require.NoError(t, err)
		_, err = e.svc.Done(e.ctx, b, c.ID, w2.Slot.ID, prism.DoneInput{Output: outputFor(prism.PrismV1().Layers[2], prism.PhaseWork, 0)})
		require.NoError(t, err, "the structured form is still accepted")

		p, err := e.svc.Pipeline(e.ctx, c.ID) // read back from the store
		require.NoError(t, err)
		var got, structured prism.StageSlot
		for _, s := range p.Slots {
			switch s.ID {
			case w.Slot.ID:
				got = s
			case w2.Slot.ID:
				structured = s
			}
		}
		require.Equal(t, "supporting prose", got.Body)
		require.Equal(t, "sonnet-4.6", got.AgentModel)
		require.Equal(t, "MEUCIQ==", got.OutputSignature)
		require.Empty(t, got.Output)
		require.JSONEq(t, `{"keyPoints":["caching"],"strength":"strong"}`, string(structured.Output))
	})

	t.Run("ReleaseHeld", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 4)
		c1, p1 := e.claim(t)
		c2, p2 := e.claim(t)
		a, b := e.keys[0], e.keys[1]
		_, _, err := e.svc.Take(e.ctx, a, c1.ID, p1.OpenSlots()[0].ID)
		require.NoError(t, err)
		_, _, err = e.svc.Take(e.ctx, a, c2.ID, p2.OpenSlots()[0].ID)
		require.NoError(t, err)
		_, _, err = e.svc.Take(e.ctx, b, c2.ID, p2.OpenSlots()[1].ID)
		require.NoError(t, err)
		// a finished one of its slots: a done slot stays done.
		_, err = e.svc.Done(e.ctx, a, c2.ID, p2.OpenSlots()[0].ID, prism.DoneInput{Body: "framing"})
		require.NoError(t, err)
		n, err := e.peer.ReleaseHeld(e.ctx, a) // another process sees the same
		require.NoError(t, err)
		require.Equal(t, 1, n)
		n, err = e.svc.ReleaseHeld(e.ctx, a)
		require.NoError(t, err)
		require.Zero(t, n, "nothing left to release")
		p, err := e.svc.Pipeline(e.ctx, c1.ID)
		require.NoError(t, err)
		require.Len(t, p.OpenSlots(), 2, "a's slot of claim 1 is open again")
		p, err = e.svc.Pipeline(e.ctx, c2.ID)
		require.NoError(t, err)
		held := map[string]slots.Status{}
		for _, s := range p.Slots {
			held[s.APIKeyID] = s.Status
		}
		require.Equal(t, slots.StatusDone, held[a.ID])
		require.Equal(t, slots.StatusTaken, held[b.ID], "another agent's slot is left alone")
		_, _, err = e.svc.Take(e.ctx, e.keys[2], c1.ID, p1.OpenSlots()[0].ID)
		require.NoError(t, err, "the released slot can be taken")
	})

	t.Run("DoneValidation", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		c, _ := e.claim(t)
		e.finishPhase(t, c.ID, 0, 0.9)
		p := e.finishPhase(t, c.ID, 8, 0.9) // layer 2 opens
		require.Equal(t, 2, p.CurrentLayer)
		s := p.OpenSlots()[0]
		a, b := e.keys[10], e.keys[11]
		_, err := e.svc.Done(e.ctx, a, c.ID, s.ID, prism.DoneInput{})
		require.ErrorIs(t, err, slots.ErrSlotNotTaken)
		_, _, err = e.svc.Take(e.ctx, a, c.ID, s.ID)
		require.NoError(t, err)
		_, _, err = e.svc.Take(e.ctx, b, c.ID, s.ID)
		require.ErrorIs(t, err, slots.ErrSlotTaken)
		_, _, err = e.svc.Take(e.ctx, a, c.ID, p.OpenSlots()[1].ID)
		require.ErrorIs(t, err, prism.ErrLayerHeld)
		_, err = e.svc.Done(e.ctx, b, c.ID, s.ID, prism.DoneInput{Output: outputFor(p.Layer(), prism.PhaseWork, 0)})
		require.ErrorIs(t, err, slots.ErrNotSlotOwner)
		before, err := e.svc.Pipeline(e.ctx, c.ID)
		require.NoError(t, err)
		for name, in := range map[string]prism.DoneInput{
			"no output":      {},
			"wrong shape":    {Output: json.RawMessage(`{"topic":"x"}`)},
			"empty slug":     {Output: json.RawMessage(`{"domain":"!!!"}`)},
			"confidence > 1": {Output: outputFor(p.Layer(), prism.PhaseWork, 0), Confidence: conf(1.5)},
			"confidence < 0": {Output: outputFor(p.Layer(), prism.PhaseWork, 0), Confidence: conf(-0.1)},
		} {
			_, err := e.svc.Done(e.ctx, a, c.ID, s.ID, in)
			require.ErrorIs(t, err, store.ErrInvalid, name)
		}
		after, err := e.svc.Pipeline(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, before.Version, after.Version, "a refused done changes nothing")
		_, err = e.svc.Done(e.ctx, a, c.ID, "stage_missing", prism.DoneInput{})
		require.ErrorIs(t, err, slots.ErrSlotNotFound)
		_, _, err = e.svc.Take(e.ctx, a, "claim_missing", s.ID)
		require.ErrorIs(t, err, slots.ErrSlotNotFound)
	})

	t.Run("FlagAndBothResolutions", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		reviewer := slots.Key{ID: "reviewer", Name: "Reviewer"}
		for _, action := range []prism.FlagAction{prism.FlagRetry, prism.FlagAdvance} {
			c, _ := e.claim(t)
			for layer := 1; layer <= 2; layer++ {
				e.finishPhase(t, c.ID, 0, 0.9)
				e.finishPhase(t, c.ID, 8, 0.9)
			}
			e.finishPhase(t, c.ID, 0, 0.9)
			p := e.finishPhase(t, c.ID, 8, 0.5) // layer 3's consensus falls short
			require.Equal(t, prism.StatusFlagged, p.Status)
			require.Equal(t, 3, p.CurrentLayer)
			require.Len(t, p.Flags, 1)
			f := p.Flags[0]
			require.Equal(t, prism.FlagReasonLowConfidence, f.Reason)
			require.Equal(t, 3, f.Layer)
			require.InDelta(t, 0.5, f.AvgConfidence, 1e-9)
			require.InDelta(t, 0.7, f.Threshold, 1e-9)
			require.Empty(t, p.OpenSlots(), "a flagged pipeline offers no work")

			_, err := e.svc.ResolveFlag(e.ctx, reviewer, c.ID, f.ID, "ignore", "")
			require.ErrorIs(t, err, store.ErrInvalid)
			_, err = e.svc.ResolveFlag(e.ctx, reviewer, c.ID, "flag_missing", action, "")
			require.ErrorIs(t, err, prism.ErrFlagNotFound)
			p, err = e.svc.ResolveFlag(e.ctx, reviewer, c.ID, f.ID, action, "looked fine")
			require.NoError(t, err)
			require.Equal(t, prism.StatusActive, p.Status)
			require.Equal(t, prism.FlagResolved, p.Flags[0].Status)
			_, err = e.svc.ResolveFlag(e.ctx, reviewer, c.ID, f.ID, action, "")
			require.ErrorIs(t, err, prism.ErrFlagResolved)
			if action == prism.FlagAdvance {
				require.Equal(t, 4, p.CurrentLayer)
				require.Equal(t, prism.PhaseWork, p.Phase)
				continue
			}
			require.Equal(t, 3, p.CurrentLayer)
			require.Equal(t, prism.PhaseConsensus, p.Phase)
			require.Equal(t, 2, p.Round)
			require.Len(t, p.OpenSlots(), 2, "a fresh consensus phase")
			p = e.finishPhase(t, c.ID, 12, 0.9)
			require.Equal(t, 4, p.CurrentLayer, "the retried consensus passes")
		}
	})

	t.Run("RaceConsensusFinishesTogether", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		repeats := 200
		if testing.Short() {
			repeats = 20
		}
		for rep := 0; rep < repeats; rep++ {
			c, _ := e.claim(t)
			e.finishPhase(t, c.ID, 0, 0.9)
			p, err := e.svc.Pipeline(e.ctx, c.ID)
			require.NoError(t, err)
			open := p.OpenSlots()
			for i, s := range open {
				_, _, err := e.svc.Take(e.ctx, e.keys[8+i], c.ID, s.ID)
				require.NoError(t, err)
			}
			var failed atomic.Int64
			concurrently(len(open), func(i int) {
				// Half finish through another process, whose remembered
				// pipeline is stale from the start.
				svc := []*prism.Service{e.svc, e.peer}[i%2]
				if _, err := svc.Done(e.ctx, e.keys[8+i], c.ID, open[i].ID, prism.DoneInput{Confidence: conf(0.9)}); err != nil {
					failed.Add(1)
				}
			})
			require.Zero(t, failed.Load())
			p, err = e.svc.Pipeline(e.ctx, c.ID)
			require.NoError(t, err)
			require.Equal(t, 2, p.CurrentLayer, "the layer advanced")
			require.Equal(t, prism.PhaseWork, p.Phase)
			n := 0
			for _, s := range p.Slots {
				if s.Layer == 2 {
					n++
				}
			}
			require.Equal(t, 2, n, "layer 2 opened exactly once")
		}
	})

	t.Run("RaceOneSlotPerLayer", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		for rep := 0; rep < raceRepeats*4; rep++ {
			c, p := e.claim(t)
			open := p.OpenSlots()
			var wins, held atomic.Int64
			concurrently(len(open), func(i int) {
				_, _, err := e.svc.Take(e.ctx, e.keys[0], c.ID, open[i].ID)
				switch {
				case err == nil:
					wins.Add(1)
				case errors.Is(err, prism.ErrLayerHeld):
					held.Add(1)
				}
			})
			require.EqualValues(t, 1, wins.Load())
			require.EqualValues(t, len(open)-1, held.Load())
			// Sixteen agents (the first already seated) race for the seat left.
			p, err := e.svc.Pipeline(e.ctx, c.ID)
			require.NoError(t, err)
			left := p.OpenSlots()
			require.Len(t, left, 1)
			var won atomic.Int64
			concurrently(16, func(i int) {
				svc := []*prism.Service{e.svc, e.peer}[i%2]
				if _, _, err := svc.Take(e.ctx, e.keys[i], c.ID, left[0].ID); err == nil {
					won.Add(1)
				}
			})
			require.EqualValues(t, 1, won.Load())
			p, err = e.svc.Pipeline(e.ctx, c.ID)
			require.NoError(t, err)
			taken := 0
			for _, s := range p.Slots {
				if s.APIKeyID != "" {
					taken++
				}
			}
			require.Equal(t, 2, taken, "each seat went to one agent, one seat per agent")
		}
	})

	t.Run("LeaseExpiry", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		c, p := e.claim(t)
		s := p.OpenSlots()[0]
		a, b := e.keys[0], e.keys[1]
		taken, _, err := e.svc.Take(e.ctx, a, c.ID, s.ID)
		require.NoError(t, err)
		require.Equal(t, e.clock.Now().Add(5*time.Minute).UnixMilli(), taken.LeaseExpiresAt)
		e.clock.Advance(5 * time.Minute)
		_, err = e.svc.Done(e.ctx, a, c.ID, s.ID, prism.DoneInput{})
		require.ErrorIs(t, err, slots.ErrSlotNotTaken, "a late done is refused")
		n, err := e.svc.Sweep(e.ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		n, err = e.svc.Sweep(e.ctx)
		require.NoError(t, err)
		require.Zero(t, n)
		w, err := e.svc.NextWork(e.ctx, b, prism.WorkQuery{Layer: 1})
		require.NoError(t, err)
		require.Equal(t, c.ID, w.Claim.ID)
		_, _, err = e.svc.Take(e.ctx, b, c.ID, s.ID)
		require.NoError(t, err, "the re-opened seat can be taken")
	})

	t.Run("UpdatePipelineConflictHandsBackStored", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		c, _ := e.claim(t)
		e.finishPhase(t, c.ID, 0, 0.9)
		stored, err := e.store.GetPipeline(e.ctx, c.ID)
		require.NoError(t, err)
		agent := e.keys[12]
		fx := prism.Effects{Credits: []prism.Credit{{KeyID: agent.ID, Amount: 7, Ref: "stage_x"}}, Domain: "refused-domain"}

		// A save from a stale version, and one from a version not yet
		// reached: each fails, applies none of its effects and hands back
		// the stored pipeline.
		for _, version := range []int64{stored.Version, stored.Version - 1, stored.Version + 2} {
			next := stored.Clone()
			next.Version = version
			next.Status = prism.StatusFlagged
			cur, err := e.store.UpdatePipeline(e.ctx, next, fx)
			require.ErrorIs(t, err, prism.ErrVersionConflict, "version %d", version)
			require.Equal(t, stored, cur, "version %d: the stored pipeline, as GetPipeline returns it", version)
		}
		again, err := e.store.GetPipeline(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, stored, again, "a failed save changes nothing")
		b, err := e.slots.Balance(e.ctx, agent.ID)
		require.NoError(t, err)
		require.Zero(t, b, "a failed save credits nothing")
		claim, err := e.slots.Claim(e.ctx, c.ID)
		require.NoError(t, err)
		require.NotEqual(t, fx.Domain, claim.Domain, "a failed save writes no domain")

		next := stored.Clone()
		next.Version++
		next.Status = prism.StatusFlagged
		_, err = e.store.UpdatePipeline(e.ctx, next, fx)
		require.NoError(t, err)
		saved, err := e.store.GetPipeline(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, next.Version, saved.Version)
		require.Equal(t, prism.StatusFlagged, saved.Status)
		b, err = e.slots.Balance(e.ctx, agent.ID)
		require.NoError(t, err)
		require.EqualValues(t, 7, b, "the save that lands credits once")
		// The one that lost to it is handed back the new pipeline.
		lost := stored.Clone()
		lost.Version++
		cur, err := e.store.UpdatePipeline(e.ctx, lost, fx)
		require.ErrorIs(t, err, prism.ErrVersionConflict)
		require.Equal(t, saved, cur)
		b, err = e.slots.Balance(e.ctx, agent.ID)
		require.NoError(t, err)
		require.EqualValues(t, 7, b)

		missing := stored.Clone()
		missing.ClaimID = "claim_missing"
		missing.Version = 2
		_, err = e.store.UpdatePipeline(e.ctx, missing, prism.Effects{})
		require.ErrorIs(t, err, prism.ErrPipelineNotFound)
	})

	t.Run("RaceUpdatePipelineHandsBackWinner", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		c, _ := e.claim(t)
		for rep := 0; rep < raceRepeats; rep++ {
			base, err := e.store.GetPipeline(e.ctx, c.ID)
			require.NoError(t, err)
			var saved atomic.Int64
			concurrently(16, func(i int) {
				next := base.Clone()
				next.Version++
				next.UpdatedAt = int64(i)
				fx := prism.Effects{Credits: []prism.Credit{{KeyID: e.keys[0].ID, Amount: 1, Ref: fmt.Sprint("stage_", rep, "_", i)}}}
				cur, err := e.store.UpdatePipeline(e.ctx, next, fx)
				switch {
				case err == nil:
					saved.Add(1)
				case !errors.Is(err, prism.ErrVersionConflict):
					t.Error(err)
				case cur.Version != base.Version+1:
					// A loser that waited for the winner's save must see it,
					// not the pipeline as it was when the loser started.
					t.Errorf("a conflict handed back version %d, the stored one is %d", cur.Version, base.Version+1)
				}
			})
			require.EqualValues(t, 1, saved.Load())
		}
		b, err := e.slots.Balance(e.ctx, e.keys[0].ID)
		require.NoError(t, err)
		require.EqualValues(t, raceRepeats, b, "only the winners credited")
	})

	t.Run("StageTakeIsOneRoundTrip", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		a, calls := e.process()
		c, p := e.claimOn(t, a)
		calls.take()
		for i, s := range p.OpenSlots() {
			var err error
			_, p, err = a.Take(e.ctx, e.keys[i], c.ID, s.ID)
			require.NoError(t, err)
			require.Equal(t, map[string]int{"UpdatePipeline": 1}, calls.take(), "a take is one round trip")
			p, err = a.Done(e.ctx, e.keys[i], c.ID, s.ID, prism.DoneInput{Body: "reasoning", Confidence: conf(0.9)})
			require.NoError(t, err)
			require.Equal(t, map[string]int{"UpdatePipeline": 1}, calls.take(), "a done is one round trip")
		}
		require.Equal(t, prism.PhaseConsensus, p.Phase)
		cons := p.OpenSlots()
		require.Len(t, cons, 2)

		// Another process moves the pipeline on: the first's remembered
		// pipeline is stale, the save fails and hands back the stored
		// pipeline, the next save lands; still no read.
		_, _, err := e.peer.Take(e.ctx, e.keys[8], c.ID, cons[0].ID)
		require.NoError(t, err)
		_, p, err = a.Take(e.ctx, e.keys[9], c.ID, cons[1].ID)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"UpdatePipeline": 2}, calls.take())
		require.Empty(t, p.OpenSlots())
		// Having found its pipeline stale, the process reads first; this
		// take is refused by the stored pipeline: one read, no save.
		_, _, err = a.Take(e.ctx, e.keys[10], c.ID, cons[1].ID)
		require.ErrorIs(t, err, slots.ErrSlotTaken)
		require.Equal(t, map[string]int{"GetPipeline": 1}, calls.take())
		// The read found the remembered pipeline current: one round trip
		// again, the layer's passing and its credits included.
		_, err = a.Done(e.ctx, e.keys[9], c.ID, cons[1].ID, prism.DoneInput{Confidence: conf(0.9)})
		require.NoError(t, err)
		require.Equal(t, map[string]int{"UpdatePipeline": 1}, calls.take())
		p, err = a.Done(e.ctx, e.keys[8], c.ID, cons[0].ID, prism.DoneInput{Confidence: conf(0.9)})
		require.NoError(t, err)
		require.Equal(t, map[string]int{"UpdatePipeline": 1}, calls.take())
		require.Equal(t, 2, p.CurrentLayer)
		for i, k := range e.keys[:2] {
			b, err := e.slots.Balance(e.ctx, k.ID)
			require.NoError(t, err)
			require.EqualValues(t, prism.RewardWork, b, "agent %d", i)
		}
		for i, k := range e.keys[8:10] {
			b, err := e.slots.Balance(e.ctx, k.ID)
			require.NoError(t, err)
			require.EqualValues(t, prism.RewardConsensus, b, "agent %d", 8+i)
		}
	})

	t.Run("TwoProcessesAlternate", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		a, callsA := e.process()
		b, callsB := e.process()
		procs := []*prism.Service{a, b}
		calls := []*countingPrism{callsA, callsB}
		c, p := e.claim(t)
		version, changes := p.Version, 0
		var taken prism.StageSlot
		var agent slots.Key
		for p.Status != prism.StatusComplete {
			i := changes % 2
			var err error
			if taken.ID == "" {
				agent = e.keys[seated(p)]
				taken, p, err = procs[i].Take(e.ctx, agent, c.ID, p.OpenSlots()[0].ID)
			} else {
				l := p.Layer()
				p, err = procs[i].Done(e.ctx, agent, c.ID, taken.ID, prism.DoneInput{Body: "reasoning", Output: outputFor(l, taken.Phase, 0), Confidence: conf(0.9)})
				taken = prism.StageSlot{}
			}
			require.NoError(t, err, "change %d", changes)
			require.Equal(t, version+1, p.Version, "change %d lands once", changes)
			version = p.Version
			// The other process made the last change: never more than the
			// read and save of a process remembering nothing. Each process
			// finds its pipeline stale once (a save refused, handing back
			// the stored pipeline, or a change its copy refused), then
			// reads first: no whole pipeline sent in vain.
			n := calls[i].take()
			require.Equal(t, 2, n["GetPipeline"]+n["UpdatePipeline"], "change %d: %v", changes, n)
			if changes >= 4 {
				require.Equal(t, map[string]int{"GetPipeline": 1, "UpdatePipeline": 1}, n, "change %d", changes)
			}
			changes++
		}
		stored, err := e.svc.Pipeline(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, version, stored.Version)
		work, cons := 0, 0
		for _, l := range prism.PrismV1().Layers {
			work += l.WorkSlots()
			cons += l.ConsensusSlots
		}
		require.Equal(t, 2*(work+cons), changes, "every slot taken and done once")
		var total int64
		for _, k := range e.keys {
			b, err := e.slots.Balance(e.ctx, k.ID)
			require.NoError(t, err)
			total += b
		}
		require.EqualValues(t, work*prism.RewardWork+cons*prism.RewardConsensus, total, "every done credited exactly once")
	})

	t.Run("StalePipelineNeverDecides", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		a, callsA := e.process()
		b, callsB := e.process()
		c, p := e.claimOn(t, a)
		work := p.OpenSlots()
		require.Len(t, work, 2)
		_, _, err := a.Take(e.ctx, e.keys[0], c.ID, work[0].ID)
		require.NoError(t, err)
		_, err = a.Done(e.ctx, e.keys[0], c.ID, work[0].ID, prism.DoneInput{Confidence: conf(0.9)})
		require.NoError(t, err)
		// b finishes the work phase; a still remembers it with work[1] open.
		_, _, err = b.Take(e.ctx, e.keys[1], c.ID, work[1].ID)
		require.NoError(t, err)
		moved, err := b.Done(e.ctx, e.keys[1], c.ID, work[1].ID, prism.DoneInput{Confidence: conf(0.9)})
		require.NoError(t, err)
		require.Equal(t, prism.PhaseConsensus, moved.Phase)
		cons := moved.OpenSlots()
		callsA.take()
		callsB.take()

		// Refused on a's stale pipeline (it has no consensus slots yet),
		// valid on the stored one: it lands.
		_, got, err := a.Take(e.ctx, e.keys[8], c.ID, cons[0].ID)
		require.NoError(t, err)
		require.Equal(t, moved.Version+1, got.Version)
		require.Equal(t, map[string]int{"GetPipeline": 1, "UpdatePipeline": 1}, callsA.take())

		// Valid on b's stale pipeline (cons[0] open), refused on the
		// stored one: the stored pipeline's error, and nothing saved.
		_, _, err = b.Take(e.ctx, e.keys[9], c.ID, cons[0].ID)
		require.ErrorIs(t, err, slots.ErrSlotTaken)
		require.Equal(t, map[string]int{"UpdatePipeline": 1}, callsB.take(), "the failed save handed back the stored pipeline")
		stored, err := e.store.GetPipeline(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, got.Version, stored.Version)

		// A done on a stale copy: b finishes the seat a's service gave
		// agent 8, and the stored pipeline credits it once.
		p, err = b.Done(e.ctx, e.keys[8], c.ID, cons[0].ID, prism.DoneInput{Confidence: conf(0.9)})
		require.NoError(t, err)
		require.Equal(t, stored.Version+1, p.Version)
		_, err = a.Done(e.ctx, e.keys[8], c.ID, cons[0].ID, prism.DoneInput{Confidence: conf(0.9)})
		require.ErrorIs(t, err, slots.ErrSlotNotTaken, "valid on a's copy, where the seat is still taken")
		bal, err := e.slots.Balance(e.ctx, e.keys[8].ID)
		require.NoError(t, err)
		require.EqualValues(t, prism.RewardConsensus, bal)
	})

	t.Run("NextWork", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		_, err := e.svc.NextWork(e.ctx, e.keys[0], prism.WorkQuery{})
		require.ErrorIs(t, err, slots.ErrNoJob)
		c1, p1 := e.claim(t)
		e.clock.Advance(time.Millisecond)
		c2, _ := e.claim(t)
		w, err := e.svc.NextWork(e.ctx, e.keys[0], prism.WorkQuery{})
		require.NoError(t, err)
		require.Equal(t, c1.ID, w.Claim.ID, "oldest first")
		require.Equal(t, p1.OpenSlots()[0].ID, w.Slot.ID)
		_, _, err = e.svc.Take(e.ctx, e.keys[0], c1.ID, w.Slot.ID)
		require.NoError(t, err)
		w, err = e.svc.NextWork(e.ctx, e.keys[0], prism.WorkQuery{})
		require.NoError(t, err)
		require.Equal(t, c2.ID, w.Claim.ID, "not a layer where the agent holds a slot")
		w, err = e.svc.NextWork(e.ctx, e.keys[1], prism.WorkQuery{Role: "contributor", Layer: 1, Domain: slots.DefaultDomain})
		require.NoError(t, err)
		require.Equal(t, c1.ID, w.Claim.ID)
		_, err = e.svc.NextWork(e.ctx, e.keys[1], prism.WorkQuery{Role: "critic"})
		require.ErrorIs(t, err, slots.ErrNoJob)
		_, err = e.svc.NextWork(e.ctx, e.keys[1], prism.WorkQuery{Layer: 2})
		require.ErrorIs(t, err, slots.ErrNoJob)
		got := map[string]bool{}
		for i := 0; i < 50; i++ {
			w, err := e.svc.NextWorkRandom(e.ctx, e.keys[1], prism.WorkQuery{})
			require.NoError(t, err)
			got[w.Slot.ID] = true
		}
		require.Greater(t, len(got), 1, "random picks vary")
	})

	t.Run("Protocols", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 4)
		ps, err := e.svc.Protocols(e.ctx)
		require.NoError(t, err)
		require.Len(t, ps, 1)
		require.Equal(t, prism.PrismV1(), ps[0], "Prism v1 is seeded on first use")
		quick := prism.Protocol{ID: "quick", Name: "Quick", Layers: []prism.Layer{
			{Number: 1, Name: "Vote", ConsensusSlots: 1, Threshold: 0.5, Effect: prism.EffectNone},
		}}
		require.NoError(t, e.svc.RegisterProtocol(e.ctx, quick))
		require.ErrorIs(t, e.svc.RegisterProtocol(e.ctx, prism.Protocol{ID: "bad"}), store.ErrInvalid)
		c, err := e.slots.CreateClaim(e.ctx, slots.NewClaim{Title: "quick"})
		require.NoError(t, err)
		p, err := e.svc.Init(e.ctx, c, "quick")
		require.NoError(t, err)
		require.Equal(t, prism.PhaseConsensus, p.Phase, "a layer without work starts in consensus")
		p = e.finishPhase(t, c.ID, 0, 0.6)
		require.Equal(t, prism.StatusComplete, p.Status)
		_, err = e.svc.Init(e.ctx, slots.Claim{ID: "claim_other"}, "missing")
		require.ErrorIs(t, err, prism.ErrProtocolNotFound)
	})
}
