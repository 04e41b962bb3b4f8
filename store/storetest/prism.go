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

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

type prismEnv struct {
	ctx    context.Context
	store  prism.Store
	claims slots.Store
	slots  *slots.Service
	ids    *identity.Service
	svc    *prism.Service
	peer   *prism.Service // another process's service on the same store
	clock  *Clock
	keys   []identity.Key
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
	e.ids = newIdentity(st.Identity, identity.WithClock(clock.Now))
	e.svc = prism.New(st.Prism, st.Slots, prism.WithClock(clock.Now), prism.WithLease(5*time.Minute))
	e.peer = prism.New(st.Prism, st.Slots, prism.WithClock(clock.Now), prism.WithLease(5*time.Minute))
	for i := 0; i < agents; i++ {
		k, _, err := e.ids.CreateKey(identity.WithKey(e.ctx, e.ids.Admin()), identity.NewKey{Name: fmt.Sprint("agent-", i), Scopes: []identity.Scope{slots.ScopeCommentCreate}})
		require.NoError(t, err)
		e.keys = append(e.keys, k)
	}
	return e
}

func (e *prismEnv) claim(t *testing.T) (slots.Claim, prism.Pipeline) {
	t.Helper()
	return e.claimOn(t, e.svc)
}

// claimUnder creates a claim titled title whose pipeline runs protocol.
func (e *prismEnv) claimUnder(t *testing.T, title, protocol string) (slots.Claim, prism.Pipeline) {
	t.Helper()
	c, p, err := e.svc.CreateClaim(e.ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: title}, Protocol: protocol})
	require.NoError(t, err)
	return c, p
}

// claimOn is claim with the pipeline created through svc.
func (e *prismEnv) claimOn(t *testing.T, svc *prism.Service) (slots.Claim, prism.Pipeline) {
	t.Helper()
	c, p, err := svc.CreateClaim(e.ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "Crows plan ahead", Body: "Corvids cache food for tomorrow."}})
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

func (c *countingPrism) CreateClaimPipeline(ctx context.Context, claim slots.Claim, p prism.Pipeline) error {
	c.count("CreateClaimPipeline")
	return c.Store.CreateClaimPipeline(ctx, claim, p)
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

func (c *countingPrism) LapsedPipelines(ctx context.Context, now time.Time) ([]string, error) {
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
	switch l.Effect {
	case prism.EffectRoute: // meta-v1's classifiers: two of three vote lens-v1
		return json.RawMessage(fmt.Sprintf(`{"protocol":%q,"domain":"Social Philosophy"}`, []string{prism.LensV1ID, prism.LensV1ID, prism.PrismV1ID}[i%3]))
	case prism.EffectSummary: // lens-v1's summary: a summary, one with a recommendation, prose alone
		return []json.RawMessage{json.RawMessage(`{"summary":"map 0"}`), json.RawMessage(`{"summary":"map 1","recommendation":"needs-more-evidence"}`), nil}[i%3]
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
		_, _, err := e.svc.Take(identity.WithKey(e.ctx, agent), claimID, s.ID)
		require.NoError(t, err)
		e.clock.Advance(time.Millisecond)
		p, err = e.svc.Done(identity.WithKey(e.ctx, agent), claimID, s.ID, prism.DoneInput{Body: "reasoning", Output: outputFor(l, s.Phase, i), Confidence: conf(confidence)})
		require.NoError(t, err)
	}
	return p
}

// RunPrism runs the Prism pipeline section of the suite.
func RunPrism(t *testing.T, newStores NewStores) {
	runPrismTakeNext(t, newStores)
	runPrismCreateClaim(t, newStores)
	runPipelineTimes(t, newStores)
	runConsensus(t, newStores)
	runClaimProtocols(t, newStores)
	runClaimAuthors(t, newStores)
	runPrismDomainRace(t, newStores)
	t.Run("FullRunToComplete", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		c, p := e.claim(t)
		require.Equal(t, prism.StatusActive, p.Status)
		require.Equal(t, 1, p.CurrentLayer)
		require.Equal(t, prism.PhaseWork, p.Phase)
		require.Len(t, p.OpenSlots(), 2)
		stored, err := e.svc.Pipeline(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, p.Version, stored.Version, "stored with its claim")
		require.Equal(t, store.Milli(c.CreatedAt), stored.CreatedAt, "created with its claim, to the millisecond")
		require.Equal(t, stored.CreatedAt, stored.UpdatedAt)

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
		require.Equal(t, "summary 0\n\n---\n\nsummary 1\n\n---\n\nsummary 2", p.Consensus.Summary, "every synthesis's summary, joined, as the original's")
		done, err := e.svc.Pipeline(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, stored.CreatedAt, done.CreatedAt, "a change keeps when it was created")
		require.True(t, done.UpdatedAt.After(done.CreatedAt), "and moves when it was changed")
		require.Equal(t, 80.0, p.Consensus.Confidence, "a whole percentage")
		claim, err := e.slots.Claim(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, "cognitive-ethology", claim.Domain, "layer 2 wrote the normalised domain")
		for domain, want := range map[string]int{"cognitive-ethology": 1, c.Domain: 0} {
			page, err := e.slots.Claims(e.ctx, slots.ClaimsQuery{Domain: domain})
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
		_, err = e.svc.NextWork(identity.WithKey(e.ctx, e.keys[0]), prism.WorkQuery{})
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
		_, err := e.svc.NextWork(identity.WithKey(e.ctx, a), prism.WorkQuery{Phase: prism.PhaseConsensus})
		require.ErrorIs(t, err, slots.ErrNoJob, "layer 3 is in its work phase")
		_, err = e.svc.NextWork(identity.WithKey(e.ctx, a), prism.WorkQuery{Phase: prism.PhaseWork, Role: prism.RoleConsensus})
		require.ErrorIs(t, err, slots.ErrNoJob)
		w, err := e.svc.NextWork(identity.WithKey(e.ctx, a), prism.WorkQuery{Phase: prism.PhaseWork})
		require.NoError(t, err)
		require.Equal(t, 3, w.Slot.Layer)
		require.Equal(t, prism.PhaseWork, w.Slot.Phase)
		_, _, err = e.svc.Take(identity.WithKey(e.ctx, a), c.ID, w.Slot.ID)
		require.NoError(t, err)

		// Layer 3 asks for {keyPoints, strength}, but its effect reads none:
		// prose alone is accepted, a wrong shape still refused when given.
		_, err = e.svc.Done(identity.WithKey(e.ctx, a), c.ID, w.Slot.ID, prism.DoneInput{Body: "prose", Output: json.RawMessage(`{"topic":"x"}`)})
		require.ErrorIs(t, err, store.ErrInvalid)
		_, err = e.svc.Done(identity.WithKey(e.ctx, a), c.ID, w.Slot.ID, prism.DoneInput{Body: "prose", AgentModel: strings.Repeat("m", prism.MaxAgentModelLen+1)})
		require.ErrorIs(t, err, store.ErrInvalid)
		_, err = e.svc.Done(identity.WithKey(e.ctx, a), c.ID, w.Slot.ID, prism.DoneInput{Body: "prose", OutputSignature: "bad\x00"})
		require.ErrorIs(t, err, store.ErrInvalid)
		// a registered its signing key: it is kept beside the signature.
		require.NoError(t, e.ids.RegisterSigningKey(identity.WithKey(e.ctx, a), "0xpoi_a"))
		a, err = e.ids.Store().GetKey(e.ctx, a.ID)
		require.NoError(t, err)
		_, err = e.svc.Done(identity.WithKey(e.ctx, a), c.ID, w.Slot.ID, prism.DoneInput{Body: "supporting prose", AgentModel: "sonnet-4.6", OutputSignature: "MEUCIQ=="})
		require.NoError(t, err)
		w2, err := e.svc.NextWork(identity.WithKey(e.ctx, b), prism.WorkQuery{Phase: prism.PhaseWork})
		require.NoError(t, err)
		_, _, err = e.svc.Take(identity.WithKey(e.ctx, b), c.ID, w2.Slot.ID)
		require.NoError(t, err)
		_, err = e.svc.Done(identity.WithKey(e.ctx, b), c.ID, w2.Slot.ID, prism.DoneInput{Output: outputFor(prism.PrismV1().Layers[2], prism.PhaseWork, 0)})
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
		require.Equal(t, "0xpoi_a", got.SigningKeyAddress, "the signing key the signature was made with")
		require.Empty(t, structured.SigningKeyAddress, "no signature, no signing key")
		require.Empty(t, got.Output)
		require.JSONEq(t, `{"keyPoints":["caching"],"strength":"strong"}`, string(structured.Output))
	})

	t.Run("ReleaseHeld", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 4)
		c1, p1 := e.claim(t)
		c2, p2 := e.claim(t)
		a, b := e.keys[0], e.keys[1]
		_, _, err := e.svc.Take(identity.WithKey(e.ctx, a), c1.ID, p1.OpenSlots()[0].ID)
		require.NoError(t, err)
		_, _, err = e.svc.Take(identity.WithKey(e.ctx, a), c2.ID, p2.OpenSlots()[0].ID)
		require.NoError(t, err)
		_, _, err = e.svc.Take(identity.WithKey(e.ctx, b), c2.ID, p2.OpenSlots()[1].ID)
		require.NoError(t, err)
		// a finished one of its slots: a done slot stays done.
		_, err = e.svc.Done(identity.WithKey(e.ctx, a), c2.ID, p2.OpenSlots()[0].ID, prism.DoneInput{Body: "framing"})
		require.NoError(t, err)
		n, err := e.peer.ReleaseHeld(identity.WithKey(e.ctx, a)) // another process sees the same
		require.NoError(t, err)
		require.Equal(t, 1, n)
		n, err = e.svc.ReleaseHeld(identity.WithKey(e.ctx, a))
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
		_, _, err = e.svc.Take(identity.WithKey(e.ctx, e.keys[2]), c1.ID, p1.OpenSlots()[0].ID)
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
		_, err := e.svc.Done(identity.WithKey(e.ctx, a), c.ID, s.ID, prism.DoneInput{})
		require.ErrorIs(t, err, slots.ErrSlotNotTaken)
		_, _, err = e.svc.Take(identity.WithKey(e.ctx, a), c.ID, s.ID)
		require.NoError(t, err)
		_, _, err = e.svc.Take(identity.WithKey(e.ctx, b), c.ID, s.ID)
		require.ErrorIs(t, err, slots.ErrSlotTaken)
		_, _, err = e.svc.Take(identity.WithKey(e.ctx, a), c.ID, p.OpenSlots()[1].ID)
		require.ErrorIs(t, err, prism.ErrLayerHeld)
		_, err = e.svc.Done(identity.WithKey(e.ctx, b), c.ID, s.ID, prism.DoneInput{Output: outputFor(p.Layer(), prism.PhaseWork, 0)})
		require.ErrorIs(t, err, slots.ErrNotSlotOwner)
		before, err := e.svc.Pipeline(e.ctx, c.ID)
		require.NoError(t, err)
		for name, in := range map[string]prism.DoneInput{
			"no output":      {},
			"wrong shape":    {Output: json.RawMessage(`{"topic":"x"}`)},
			"empty slug":     {Output: json.RawMessage(`{"domain":"!!!"}`)},
			"confidence > 1": {Output: outputFor(p.Layer(), prism.PhaseWork, 0), Confidence: conf(1.5)},
			"confidence < 0": {Output: outputFor(p.Layer(), prism.PhaseWork, 0), Confidence: conf(-0.1)},
			// Text no backend can keep alike: PostgreSQL's jsonb refuses
			// a NUL, and JSON turns bytes that are not UTF-8 into U+FFFD.
			"NUL in the body":         {Body: "a\x00b", Output: outputFor(p.Layer(), prism.PhaseWork, 0)},
			"body not UTF-8":          {Body: "a\xffb", Output: outputFor(p.Layer(), prism.PhaseWork, 0)},
			"NUL in the output":       {Output: json.RawMessage(`{"domain":"Cognitive Ethology","note":"a\u0000b"}`)},
			"NUL in an output field":  {Output: json.RawMessage(`{"domain":"Cognitive\u0000Ethology"}`)},
			"unpaired high surrogate": {Output: json.RawMessage(`{"domain":"Cognitive Ethology \ud83d"}`)},
			"unpaired low surrogate":  {Output: json.RawMessage(`{"domain":"Cognitive Ethology \ude00!"}`)},
		} {
			_, err := e.svc.Done(identity.WithKey(e.ctx, a), c.ID, s.ID, in)
			require.ErrorIs(t, err, store.ErrInvalid, name)
		}
		after, err := e.svc.Pipeline(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, before.Version, after.Version, "a refused done changes nothing")
		kept := json.RawMessage(`{"domain":"Cognitive Ethology \\u0000 \ud83d\ude00 \u00e9"}`)
		after, err = e.svc.Done(identity.WithKey(e.ctx, a), c.ID, s.ID, prism.DoneInput{Body: "é \\u0000", Output: kept})
		require.NoError(t, err, "an escaped backslash before u0000 and a surrogate pair are text like any")
		after, err = e.svc.Pipeline(e.ctx, c.ID)
		require.NoError(t, err)
		for _, sl := range after.Slots {
			if sl.ID == s.ID {
				require.JSONEq(t, string(kept), string(sl.Output), "kept")
				require.Equal(t, "é \\u0000", sl.Body)
			}
		}
		_, err = e.svc.Done(identity.WithKey(e.ctx, a), c.ID, "stage_missing", prism.DoneInput{})
		require.ErrorIs(t, err, slots.ErrSlotNotFound)
		_, _, err = e.svc.Take(identity.WithKey(e.ctx, a), "claim_missing", s.ID)
		require.ErrorIs(t, err, slots.ErrSlotNotFound)
	})

	t.Run("FlagAndBothResolutions", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		reviewer := identity.Key{ID: "reviewer", Name: "Reviewer"}
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

			_, err := e.svc.ResolveFlag(identity.WithKey(e.ctx, reviewer), prism.ResolveFlagParams{ClaimID: c.ID, FlagID: f.ID, Action: "ignore", Note: ""})
			require.ErrorIs(t, err, store.ErrInvalid)
			_, err = e.svc.ResolveFlag(identity.WithKey(e.ctx, reviewer), prism.ResolveFlagParams{ClaimID: c.ID, FlagID: "flag_missing", Action: action, Note: ""})
			require.ErrorIs(t, err, prism.ErrFlagNotFound)
			_, err = e.svc.ResolveFlag(identity.WithKey(e.ctx, reviewer), prism.ResolveFlagParams{ClaimID: c.ID, FlagID: f.ID, Action: action, Note: strings.Repeat("x", prism.MaxNoteLen+1)})
			require.ErrorIs(t, err, store.ErrInvalid)
			for _, bad := range []string{"a\x00b", "a\xffb"} {
				_, err = e.svc.ResolveFlag(identity.WithKey(e.ctx, reviewer), prism.ResolveFlagParams{ClaimID: c.ID, FlagID: f.ID, Action: action, Note: bad})
				require.ErrorIs(t, err, store.ErrInvalid, "a note %q", bad)
			}
			note := strings.Repeat("x", prism.MaxNoteLen-len("looked fine")) + "looked fine"
			p, err = e.svc.ResolveFlag(identity.WithKey(e.ctx, reviewer), prism.ResolveFlagParams{ClaimID: c.ID, FlagID: f.ID, Action: action, Note: "\n  " + note + "  \n"})
			require.NoError(t, err, "the note is measured trimmed")
			require.Equal(t, prism.StatusActive, p.Status)
			require.Equal(t, prism.FlagResolved, p.Flags[0].Status)
			require.Equal(t, note, p.Flags[0].Note)
			_, err = e.svc.ResolveFlag(identity.WithKey(e.ctx, reviewer), prism.ResolveFlagParams{ClaimID: c.ID, FlagID: f.ID, Action: action, Note: ""})
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
				_, _, err := e.svc.Take(identity.WithKey(e.ctx, e.keys[8+i]), c.ID, s.ID)
				require.NoError(t, err)
			}
			var failed atomic.Int64
			concurrently(len(open), func(i int) {
				// Half finish through another process, whose remembered
				// pipeline is stale from the start.
				svc := []*prism.Service{e.svc, e.peer}[i%2]
				if _, err := svc.Done(identity.WithKey(e.ctx, e.keys[8+i]), c.ID, open[i].ID, prism.DoneInput{Confidence: conf(0.9)}); err != nil {
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
				_, _, err := e.svc.Take(identity.WithKey(e.ctx, e.keys[0]), c.ID, open[i].ID)
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
				if _, _, err := svc.Take(identity.WithKey(e.ctx, e.keys[i]), c.ID, left[0].ID); err == nil {
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
		taken, _, err := e.svc.Take(identity.WithKey(e.ctx, a), c.ID, s.ID)
		require.NoError(t, err)
		require.Equal(t, e.clock.Now().Add(5*time.Minute), taken.LeaseExpiresAt)
		e.clock.Advance(5 * time.Minute)
		_, err = e.svc.Done(identity.WithKey(e.ctx, a), c.ID, s.ID, prism.DoneInput{})
		require.ErrorIs(t, err, slots.ErrSlotNotTaken, "a late done is refused")
		n, err := e.svc.Sweep(e.ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		n, err = e.svc.Sweep(e.ctx)
		require.NoError(t, err)
		require.Zero(t, n)
		w, err := e.svc.NextWork(identity.WithKey(e.ctx, b), prism.WorkQuery{Layer: new(1)})
		require.NoError(t, err)
		require.Equal(t, c.ID, w.Claim.ID)
		_, _, err = e.svc.Take(identity.WithKey(e.ctx, b), c.ID, s.ID)
		require.NoError(t, err, "the re-opened seat can be taken")
	})

	runVersioned(t, prismPipelines(newStores))

	t.Run("NextWork", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		_, err := e.svc.NextWork(identity.WithKey(e.ctx, e.keys[0]), prism.WorkQuery{})
		require.ErrorIs(t, err, slots.ErrNoJob)
		c1, p1 := e.claim(t)
		e.clock.Advance(time.Millisecond)
		c2, _ := e.claim(t)
		w, err := e.svc.NextWork(identity.WithKey(e.ctx, e.keys[0]), prism.WorkQuery{})
		require.NoError(t, err)
		require.Equal(t, c1.ID, w.Claim.ID, "oldest first")
		require.Equal(t, p1.OpenSlots()[0].ID, w.Slot.ID)
		_, _, err = e.svc.Take(identity.WithKey(e.ctx, e.keys[0]), c1.ID, w.Slot.ID)
		require.NoError(t, err)
		w, err = e.svc.NextWork(identity.WithKey(e.ctx, e.keys[0]), prism.WorkQuery{})
		require.NoError(t, err)
		require.Equal(t, c2.ID, w.Claim.ID, "not a layer where the agent holds a slot")
		w, err = e.svc.NextWork(identity.WithKey(e.ctx, e.keys[1]), prism.WorkQuery{Role: "contributor", Layer: new(1), Domain: slots.DefaultDomain})
		require.NoError(t, err)
		require.Equal(t, c1.ID, w.Claim.ID)
		_, err = e.svc.NextWork(identity.WithKey(e.ctx, e.keys[1]), prism.WorkQuery{Role: "critic"})
		require.ErrorIs(t, err, slots.ErrNoJob)
		_, err = e.svc.NextWork(identity.WithKey(e.ctx, e.keys[1]), prism.WorkQuery{Layer: new(2)})
		require.ErrorIs(t, err, slots.ErrNoJob)
		got := map[string]bool{}
		for i := 0; i < 50; i++ {
			w, err := e.svc.NextWork(identity.WithKey(e.ctx, e.keys[1]), prism.WorkQuery{Strategy: slots.StrategyRandom})
			require.NoError(t, err)
			got[w.Slot.ID] = true
		}
		require.Greater(t, len(got), 1, "random picks vary")
		for code, q := range map[string]prism.WorkQuery{
			"invalid_strategy": {Strategy: "sideways"},
			"invalid_type":     {Phase: "review"},
			"invalid_layer":    {Layer: new(-1)},
		} {
			want := &store.Error{Kind: store.ErrInvalid, Code: code}
			_, err = e.svc.NextWork(identity.WithKey(e.ctx, e.keys[1]), q)
			requireCode(t, want, err)
			_, err = e.svc.TakeNextWork(identity.WithKey(e.ctx, e.keys[1]), q)
			requireCode(t, want, err)
		}
	})

	t.Run("NextWorkPastSlotsItSkips", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		// 17 claims in layer 1's consensus: 34 open consensus slots, every
		// one in a layer where agents 0 and 1 did the work, older than
		// the work slots of the claim created after them.
		var older []string
		for range 17 {
			c, _ := e.claim(t)
			e.finishPhase(t, c.ID, 0, 0.8)
			older = append(older, c.ID)
		}
		e.clock.Advance(time.Millisecond)
		fresh, p := e.claim(t)
		reader := identity.WithKey(e.ctx, identity.Key{ID: "reader"})
		w, err := e.svc.NextWork(reader, prism.WorkQuery{})
		require.NoError(t, err)
		require.Equal(t, older[0], w.Claim.ID, "oldest first")
		require.Equal(t, prism.PhaseConsensus, w.Slot.Phase)
		for _, strategy := range []slots.Strategy{slots.StrategyOldest, slots.StrategyRandom} {
			w, err = e.svc.NextWork(reader, prism.WorkQuery{Phase: prism.PhaseWork, Strategy: strategy})
			require.NoError(t, err, "%s: a work slot behind the consensus slots", strategy)
			require.Equal(t, fresh.ID, w.Claim.ID)
			require.Equal(t, prism.PhaseWork, w.Slot.Phase)
			w, err = e.svc.NextWork(identity.WithKey(e.ctx, e.keys[0]), prism.WorkQuery{Strategy: strategy})
			require.NoError(t, err, "%s: a slot past those of layers the agent holds", strategy)
			require.Equal(t, fresh.ID, w.Claim.ID)
		}
		w, err = e.svc.TakeNextWork(identity.WithKey(e.ctx, e.keys[1]), prism.WorkQuery{})
		require.NoError(t, err)
		require.Equal(t, fresh.ID, w.Claim.ID)
		require.Equal(t, e.keys[1].ID, w.Slot.APIKeyID)
		w, err = e.svc.TakeNextWork(identity.WithKey(e.ctx, e.keys[0]), prism.WorkQuery{Phase: prism.PhaseWork})
		require.NoError(t, err)
		require.Equal(t, fresh.ID, w.Claim.ID)
		require.Contains(t, []string{p.OpenSlots()[0].ID, p.OpenSlots()[1].ID}, w.Slot.ID)
		_, err = e.svc.NextWork(identity.WithKey(e.ctx, e.keys[0]), prism.WorkQuery{})
		require.ErrorIs(t, err, slots.ErrNoJob, "every open slot is in a layer the agent holds")
		_, err = e.svc.NextWork(reader, prism.WorkQuery{Phase: prism.PhaseWork})
		require.ErrorIs(t, err, slots.ErrNoJob, "no work slot is open")
	})

	t.Run("Protocols", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 4)
		ps, err := e.svc.Protocols(e.ctx)
		require.NoError(t, err)
		require.Equal(t, []prism.Protocol{prism.LensV1(), prism.MetaV1(), prism.PrismV1(), prism.PrismV1Solo()}, ps,
			"the built-in protocols are seeded on first use")
		for _, id := range prism.BuiltinIDs {
			b, _ := prism.Builtin(id)
			require.ErrorIs(t, e.svc.RegisterProtocol(e.ctx, b), store.ErrConflict, "%s is built in", id)
		}
		quick := prism.Protocol{ID: "quick", Name: "Quick", Layers: []prism.Layer{
			{Number: 1, Name: "Vote", ConsensusSlots: 1, Threshold: 0.5, Effect: prism.EffectNone},
		}}
		require.NoError(t, e.svc.RegisterProtocol(e.ctx, quick))
		require.ErrorIs(t, e.svc.RegisterProtocol(e.ctx, prism.Protocol{ID: "bad"}), store.ErrInvalid)
		c, p, err := e.svc.CreateClaim(e.ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "quick"}, Protocol: "quick"})
		require.NoError(t, err)
		require.Equal(t, prism.PhaseConsensus, p.Phase, "a layer without work starts in consensus")
		p = e.finishPhase(t, c.ID, 0, 0.6)
		require.Equal(t, prism.StatusComplete, p.Status)
		_, p, err = e.svc.CreateClaim(e.ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "other"}, Protocol: "missing"})
		require.NoError(t, err, "a protocol no one registered runs the default, as the original's")
		require.Equal(t, prism.PrismV1ID, p.Protocol.ID)
	})

	t.Run("MetaRoutesToLens", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		c, p := e.claimUnder(t, "What if cities had no cars?", prism.MetaV1ID)
		require.Equal(t, 0, p.CurrentLayer, "meta-classify is layer 0")
		require.Equal(t, prism.PhaseWork, p.Phase)
		for _, s := range p.OpenSlots() {
			require.Equal(t, string(prism.RoleClassifier), s.Role)
		}
		require.Len(t, p.OpenSlots(), 3)
		w, err := e.svc.NextWork(identity.WithKey(e.ctx, e.keys[0]), prism.WorkQuery{Role: string(prism.RoleClassifier)})
		require.NoError(t, err, "a classifier's slot is found by its role")
		require.Equal(t, 0, w.Slot.Layer)
		e.finishPhase(t, c.ID, 0, 0.8)
		p = e.finishPhase(t, c.ID, 8, 0.6)
		require.Equal(t, prism.LensV1ID, p.Protocol.ID, "two of three classifiers voted lens-v1")
		require.Equal(t, prism.StatusActive, p.Status)
		require.Equal(t, 1, p.CurrentLayer)
		require.Equal(t, prism.PhaseWork, p.Phase)
		require.Equal(t, "social-philosophy", p.Domain)
		claim, err := e.slots.Claim(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, "social-philosophy", claim.Domain, "the route wrote the voted domain to the claim")
		roles := map[int]string{1: "framer", 2: "lens", 3: "critic", 4: "reviser", 5: "synthesizer"}
		for layer := 1; layer <= 6; layer++ {
			p, err = e.svc.Pipeline(e.ctx, c.ID)
			require.NoError(t, err)
			require.Equal(t, layer, p.CurrentLayer)
			if p.Layer().WorkSlots() > 0 {
				require.Equal(t, roles[layer], p.OpenSlots()[0].Role)
				e.finishPhase(t, c.ID, 0, 0.8)
			}
			p = e.finishPhase(t, c.ID, 8, 0.8)
		}
		require.Equal(t, prism.StatusComplete, p.Status)
		require.Equal(t, "map 0\n\n---\n\nmap 1", p.Consensus.Summary, "the summary layer's record: the summaries given")
		require.Equal(t, "needs-more-evidence", p.Consensus.Recommendation, "no verdict of its own: the one a summary gave")
		require.Equal(t, 80.0, p.Consensus.Confidence, "a whole percentage")
		var meta int
		for _, s := range p.Slots {
			if s.Layer == 0 {
				meta++
				require.Equal(t, slots.StatusDone, s.Status)
			}
		}
		require.Equal(t, 6, meta, "meta-classify's slots stay on the pipeline")
	})

	// A query for layer 0 keeps meta-v1's meta-classify slots, as the
	// original's ?layer=0 does; no layer is any layer.
	t.Run("LayerZeroIsALayer", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		older, _ := e.claimUnder(t, "Crows plan ahead", prism.PrismV1ID)
		e.clock.Advance(time.Millisecond)
		meta, _ := e.claimUnder(t, "What if cities had no cars?", prism.MetaV1ID)
		agent := identity.WithKey(e.ctx, e.keys[0])
		for name, q := range map[string]prism.WorkQuery{
			"layer 0":            {Layer: new(0)},
			"layer 0, work":      {Layer: new(0), Phase: prism.PhaseWork},
			"layer 0, its role":  {Layer: new(0), Role: string(prism.RoleClassifier)},
			"layer 0, at random": {Layer: new(0), Strategy: slots.StrategyRandom},
		} {
			w, err := e.svc.NextWork(agent, q)
			require.NoError(t, err, name)
			require.Equal(t, meta.ID, w.Claim.ID, name)
			require.Equal(t, 0, w.Slot.Layer, name)
		}
		for name, q := range map[string]prism.WorkQuery{"any layer": {}, "layer 1": {Layer: new(1)}} {
			w, err := e.svc.NextWork(agent, q)
			require.NoError(t, err, name)
			require.Equal(t, older.ID, w.Claim.ID, "%s: the oldest claim's slot", name)
			require.Equal(t, 1, w.Slot.Layer, name)
		}
		_, err := e.svc.NextWork(agent, prism.WorkQuery{Layer: new(0), Phase: prism.PhaseConsensus})
		require.ErrorIs(t, err, slots.ErrNoJob, "layer 0's consensus is not open yet")

		for i := range 3 {
			w, err := e.svc.TakeNextWork(identity.WithKey(e.ctx, e.keys[i]), prism.WorkQuery{Layer: new(0)})
			require.NoError(t, err)
			require.Equal(t, meta.ID, w.Claim.ID)
			require.Equal(t, 0, w.Slot.Layer)
		}
		_, err = e.svc.TakeNextWork(identity.WithKey(e.ctx, e.keys[3]), prism.WorkQuery{Layer: new(0)})
		require.ErrorIs(t, err, slots.ErrNoJob, "layer 0's three seats are taken; layer 1's work is not layer 0's")
		_, err = e.svc.NextWork(identity.WithKey(e.ctx, e.keys[3]), prism.WorkQuery{Layer: new(0)})
		require.ErrorIs(t, err, slots.ErrNoJob)
		w, err := e.svc.NextWork(identity.WithKey(e.ctx, e.keys[3]), prism.WorkQuery{})
		require.NoError(t, err)
		require.Equal(t, older.ID, w.Claim.ID)
	})

	t.Run("DomainReachesRoleSlotJobs", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		c, _, err := e.svc.CreateClaim(e.ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "Crows: they plan ahead", Body: "Corvids — 12:30 — cache food."}})
		require.NoError(t, err)
		_, err = e.slots.ConfigureSlots(e.ctx, c.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 3}})
		require.NoError(t, err)
		_, err = e.slots.AddComment(identity.WithKey(e.ctx, e.keys[15]), slots.NewComment{ClaimID: c.ID, Body: "a draft", CommentType: "draft"})
		require.NoError(t, err)
		job, err := e.slots.NextJob(e.ctx, slots.JobQuery{})
		require.NoError(t, err)
		require.Equal(t, slots.DefaultDomain, job.Claim.Domain)
		for range 2 { // framing, then classification, which writes the domain
			e.finishPhase(t, c.ID, 0, 0.8)
			e.finishPhase(t, c.ID, 8, 0.8)
		}
		const domain = "cognitive-ethology"
		p, err := e.svc.Pipeline(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, 3, p.CurrentLayer, "the change that wrote the domain was the pipeline's last")
		for name, q := range map[string]slots.JobQuery{"unfiltered": {}, "by domain": {Domain: domain}, "at random": {Strategy: slots.StrategyRandom}} {
			job, err = e.slots.NextJob(e.ctx, q)
			require.NoError(t, err, name)
			require.Equal(t, domain, job.Claim.Domain, "%s: a role slot's job carries the claim's domain as the layer wrote it", name)
			want := c
			want.Domain, want.CommentCount, want.UpdatedAt = domain, 1, p.UpdatedAt
			require.Equal(t, want, job.Claim, "%s: and the rest of the claim as it was, updated when the domain was written", name)
			require.Len(t, job.Comments, 1)
		}
		job, err = e.slots.TakeNext(identity.WithKey(e.ctx, e.keys[14]), slots.JobQuery{Domain: domain})
		require.NoError(t, err)
		require.Equal(t, domain, job.Claim.Domain, "a take's job too")
		done, err := e.slots.DoneAndTakeNext(identity.WithKey(e.ctx, e.keys[14]), c.ID, job.Slot.ID, slots.JobQuery{})
		require.NoError(t, err)
		require.Nil(t, done.Next, "the agent holds the claim's only seat it may have")
		job, err = e.slots.TakeNext(identity.WithKey(e.ctx, e.keys[13]), slots.JobQuery{})
		require.NoError(t, err)
		require.Equal(t, domain, job.Claim.Domain)
	})

	t.Run("MetaRoutesToPrismAndSolo", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		c, p := e.claimUnder(t, "Crows plan ahead", prism.MetaV1ID)
		for i, s := range p.OpenSlots() {
			_, _, err := e.svc.Take(identity.WithKey(e.ctx, e.keys[i]), c.ID, s.ID)
			require.NoError(t, err)
			vote := []string{prism.PrismV1ID, prism.LensV1ID, prism.PrismV1ID}[i]
			_, err = e.svc.Done(identity.WithKey(e.ctx, e.keys[i]), c.ID, s.ID, prism.DoneInput{Body: "factual", Confidence: conf(0.9),
				Output: json.RawMessage(fmt.Sprintf(`{"protocol":%q,"domain":"Cognitive Ethology"}`, vote))})

			require.NoError(t, err)
		}
		p = e.finishPhase(t, c.ID, 8, 0.5)
		require.Equal(t, prism.PrismV1ID, p.Protocol.ID)
		require.Equal(t, 1, p.CurrentLayer)
		require.Len(t, p.OpenSlots(), 2, "Prism v1's framing: two contributors")
		require.Equal(t, "cognitive-ethology", p.Domain)

		// prism-v1-solo: one work and one consensus slot a layer, passing
		// at 0.5.
		solo, _ := e.claimUnder(t, "Solo", prism.PrismV1SoloID)
		var err error
		for layer := 1; layer <= 7; layer++ {
			p, err = e.svc.Pipeline(e.ctx, solo.ID)
			require.NoError(t, err)
			require.Equal(t, layer, p.CurrentLayer)
			require.Len(t, p.OpenSlots(), 1)
			if p.Phase == prism.PhaseWork {
				p = e.finishPhase(t, solo.ID, 0, 0.55)
				require.Len(t, p.OpenSlots(), 1)
			}
			p = e.finishPhase(t, solo.ID, 8, 0.55)
		}
		require.Equal(t, prism.StatusComplete, p.Status, "0.55 passes every layer at 0.5")
		require.Equal(t, "accept", p.Consensus.Recommendation)
		require.Equal(t, "cognitive-ethology", p.Domain)
	})
}

// effectDomain is the domain the effects of the suite's pipeline saves
// write to their claim.
const effectDomain = "effect-domain"

// prismPipelines describes pipelines to the compare-and-set contract
// (runVersioned).
func prismPipelines(newStores NewStores) versioned[prism.Pipeline] {
	return versioned[prism.Pipeline]{
		kind:       "Pipeline",
		action:     "StageTake",
		conflict:   prism.ErrVersionConflict,
		notFound:   prism.ErrPipelineNotFound,
		missingID:  "claim_missing",
		version:    func(p prism.Pipeline) int64 { return p.Version },
		setVersion: func(p *prism.Pipeline, v int64) { p.Version = v },
		setID:      func(p *prism.Pipeline, id string) { p.ClaimID = id },
		clone:      prism.Pipeline.Clone,
		mark: func(p *prism.Pipeline, i int) {
			p.Status, p.UpdatedAt = prism.StatusFlagged, store.FromMillis(int64(i))
		},
		marked: func(p prism.Pipeline) int {
			if p.Status != prism.StatusFlagged {
				return -1
			}
			return int(store.Millis(p.UpdatedAt))
		},
		stored: func(t *testing.T) storedAggregate[prism.Pipeline] {
			e := newPrismEnv(t, newStores, 16)
			c, _ := e.claim(t)
			e.finishPhase(t, c.ID, 0, 0.9)
			credited := e.keys[15] // nobody else's credits
			return storedAggregate[prism.Pipeline]{
				id:  c.ID,
				get: e.store.GetPipeline,
				save: func(ctx context.Context, next prism.Pipeline, tag string) (prism.Pipeline, error) {
					fx := prism.Effects{Credits: []prism.Credit{{KeyID: credited.ID, Amount: 1, Ref: "stage_" + tag}}, Domain: effectDomain}
					return e.store.UpdatePipeline(ctx, next, fx)
				},
				applied: func(t *testing.T) int64 {
					b, err := e.slots.Balance(e.ctx, credited.ID)
					require.NoError(t, err)
					claim, err := e.slots.Claim(e.ctx, c.ID)
					require.NoError(t, err)
					require.Equal(t, b > 0, claim.Domain == effectDomain, "the domain is written with the save that lands, and only then")
					return b
				},
			}
		},
		play: func(t *testing.T, creator int) aggregatePlay[prism.Pipeline] {
			return newPrismPlay(t, newStores, creator)
		},
	}
}

// newPrismPlay starts a Prism v1 pipeline played by two processes, taking
// and finishing its seats with agents in order.
func newPrismPlay(t *testing.T, newStores NewStores, creator int) aggregatePlay[prism.Pipeline] {
	e := newPrismEnv(t, newStores, 16)
	a, callsA := e.process()
	b, callsB := e.process()
	procs := []*prism.Service{a, b}
	calls := [2]*callCounter{&callsA.callCounter, &callsB.callCounter}
	var c slots.Claim
	if creator < 0 {
		c, _ = e.claim(t)
	} else {
		c, _ = e.claimOn(t, procs[creator])
	}
	keys := map[string]identity.Key{}
	for _, k := range e.keys {
		keys[k.ID] = k
	}
	stored := func(t *testing.T) prism.Pipeline {
		p, err := e.svc.Pipeline(e.ctx, c.ID)
		require.NoError(t, err)
		return p
	}
	// taken returns the first seat of the current phase taken and not done.
	taken := func(p prism.Pipeline) (prism.StageSlot, bool) {
		for _, s := range p.Slots {
			if s.Layer == p.CurrentLayer && s.Phase == p.Phase && s.Status == slots.StatusTaken {
				return s, true
			}
		}
		return prism.StageSlot{}, false
	}
	takes, dones := 0, 0
	done := func(t *testing.T, p int, s prism.StageSlot, l prism.Layer) (prism.Pipeline, error) {
		got, err := procs[p].Done(identity.WithKey(e.ctx, keys[s.APIKeyID]), c.ID, s.ID, prism.DoneInput{Body: "reasoning", Output: outputFor(l, s.Phase, dones), Confidence: conf(0.9)})
		if err == nil {
			dones++
		}
		return got, err
	}
	return aggregatePlay[prism.Pipeline]{
		calls:  calls,
		stored: stored,
		move: func(t *testing.T, p int) prism.Pipeline {
			cur := stored(t)
			if open := cur.OpenSlots(); len(open) > 0 {
				_, got, err := procs[p].Take(identity.WithKey(e.ctx, e.keys[seated(cur)]), c.ID, open[0].ID)
				require.NoError(t, err)
				takes++
				return got
			}
			s, ok := taken(cur)
			require.True(t, ok, "a seat open or taken")
			got, err := done(t, p, s, cur.Layer())
			require.NoError(t, err)
			return got
		},
		refuse: func(t *testing.T, p int) {
			cur := stored(t)
			s, ok := taken(cur)
			require.True(t, ok, "a seat taken")
			_, _, err := procs[p].Take(identity.WithKey(e.ctx, e.keys[seated(cur)]), c.ID, s.ID)
			require.ErrorIs(t, err, slots.ErrSlotTaken)
		},
		stage: func(p prism.Pipeline) string { return fmt.Sprint(p.Status, " ", p.CurrentLayer, " ", p.Phase) },
		over:  func(p prism.Pipeline) bool { return p.Status == prism.StatusComplete },
		staleTail: func(t *testing.T) {
			// A done on a stale copy: the second process finishes the seat
			// the first process's service gave, and the stored pipeline
			// credits it once.
			cur := stored(t)
			s, ok := taken(cur)
			require.True(t, ok)
			p, err := done(t, 1, s, cur.Layer())
			require.NoError(t, err)
			require.Equal(t, cur.Version+1, p.Version)
			_, err = done(t, 0, s, cur.Layer())
			require.ErrorIs(t, err, slots.ErrSlotNotTaken, "valid on the first's copy, where the seat is still taken")
		},
		landedOnce: func(t *testing.T) {
			// Every take and done stored once, every done credited once.
			cur := stored(t)
			seats, finished := 0, 0
			want := map[string]int64{}
			for _, s := range cur.Slots {
				if s.APIKeyID != "" {
					seats++
				}
				if s.Status == slots.StatusDone {
					finished++
					reward := int64(prism.RewardWork)
					if s.Phase == prism.PhaseConsensus {
						reward = prism.RewardConsensus
					}
					want[s.APIKeyID] += reward
				}
			}
			require.Equal(t, takes, seats, "every take stored once")
			require.Equal(t, dones, finished, "every done stored once")
			for _, k := range e.keys {
				b, err := e.slots.Balance(e.ctx, k.ID)
				require.NoError(t, err)
				require.Equal(t, want[k.ID], b, "%s: every done credited once", k.Name)
			}
			if cur.Status == prism.StatusComplete {
				work, cons := 0, 0
				for _, l := range prism.PrismV1().Layers {
					work += l.WorkSlots()
					cons += l.ConsensusSlots
				}
				require.Equal(t, 2*(work+cons), takes+dones, "every slot taken and done once")
			}
		},
	}
}
