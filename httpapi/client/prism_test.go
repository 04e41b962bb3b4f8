package client_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/storetest"
)

// work takes the next stage slot of layer for a and submits it with
// confidence.
func work(t *testing.T, a *client.Client, layer int, confidence float64) client.Work {
	t.Helper()
	ctx := t.Context()
	w, err := a.TakeNextWork(ctx, client.WorkQuery{Layer: &layer}, 50*time.Millisecond)
	require.NoError(t, err)
	require.NoError(t, a.FinishStage(ctx, w.Claim.ID, w.Slot.ID, client.StageSubmission{Body: "notes", Confidence: &confidence}))
	return w
}

// TestPrismThroughTheClient: a new claim opens Prism v1's first layer;
// two agents' work moves it to its consensus phase.
func TestPrismThroughTheClient(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		c := setup(t, st)
		claim, err := c.CreateClaim(ctx, client.NewClaim{Title: "Bees count", Body: "Honeybees track landmarks."})
		require.NoError(t, err)
		p, err := c.Pipeline(ctx, claim.ID)
		require.NoError(t, err)
		require.Equal(t, prism.PrismV1ID, p.Protocol)
		require.Equal(t, string(prism.PhaseWork), p.Phase)
		require.Len(t, p.Layers, 7)
		require.Equal(t, "work", p.Layers[0].Phase)
		require.Len(t, p.Layers[0].Slots, 2)
		for i := 0; i < 2; i++ {
			w := work(t, agent(t, c, fmt.Sprint("w", i), slots.ScopeCommentCreate), 1, 0.9)
			require.Equal(t, claim.ID, w.Claim.ID)
			require.Equal(t, "contributor", w.Slot.Role)
		}
		p, err = c.Pipeline(ctx, claim.ID)
		require.NoError(t, err)
		require.Equal(t, string(prism.PhaseConsensus), p.Phase)
		_, err = c.Consensus(ctx, claim.ID)
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

// TestWorkQueueStrategy: the Prism work queue offers its oldest open stage
// slot every time, unless asked for strategy=random, which spreads agents
// over the eligible slots (here the four of two claims' first layers); an
// unknown strategy is invalid.
func TestWorkQueueStrategy(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		c := setup(t, st)
		first, err := c.CreateClaim(ctx, client.NewClaim{Title: "Crows count", Body: "Up to six."})
		require.NoError(t, err)
		_, err = c.CreateClaim(ctx, client.NewClaim{Title: "Crows plan", Body: "They cache for tomorrow."})
		require.NoError(t, err)
		a := agent(t, c, "worker", slots.ScopeCommentCreate)

		oldest, err := a.NextWork(ctx, client.WorkQuery{})
		require.NoError(t, err)
		require.Equal(t, first.ID, oldest.Claim.ID)
		open, err := a.PeekWork(ctx, client.WorkQuery{Layer: new(0)})
		require.NoError(t, err)
		require.False(t, open, "layer 0 is meta-v1's, which no claim here runs")
		_, err = a.TakeWork(ctx, client.WorkQuery{Layer: new(0)})
		require.ErrorIs(t, err, store.ErrNotFound)
		random := map[string]bool{}
		for i := 0; i < 30; i++ {
			w, err := a.NextWork(ctx, client.WorkQuery{Strategy: slots.StrategyOldest})
			require.NoError(t, err)
			require.Equal(t, oldest.Slot.ID, w.Slot.ID, "oldest first, every time")
			w, err = a.NextWork(ctx, client.WorkQuery{Strategy: slots.StrategyRandom})
			require.NoError(t, err)
			random[w.Slot.ID] = true
		}
		// Thirty draws among four slots all landing on one: about 1 in 10^17.
		require.Greater(t, len(random), 1, "random spreads over the open slots")
		w, err := a.TakeNextWork(ctx, client.WorkQuery{Layer: new(1), Strategy: slots.StrategyRandom}, 50*time.Millisecond)
		require.NoError(t, err)
		require.Equal(t, 1, w.Slot.Layer)

		_, err = a.NextWork(ctx, client.WorkQuery{Strategy: "newest"})
		require.ErrorIs(t, err, store.ErrInvalid)
		var e *client.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, "invalid_strategy", e.Code)
	})
}

// TestFlagsThroughTheClient: a consensus below the layer's threshold
// raises a flag, listed by Flags; a reviewer retries it (a fresh consensus
// round, which falls short again) and then advances it (the next layer
// opens). Resolving a resolved flag is a conflict.
func TestFlagsThroughTheClient(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		c := setup(t, st)
		reviewer := agent(t, c, "reviewer", prism.ScopePipelineReview)
		me, err := reviewer.Me(ctx)
		require.NoError(t, err)
		claim, err := c.CreateClaim(ctx, client.NewClaim{Title: "Ravens barter", Body: "Ravens trade tokens for food."})
		require.NoError(t, err)
		flags, err := c.Flags(ctx, claim.ID)
		require.NoError(t, err)
		require.Empty(t, flags)
		next := 0
		worker := func() *client.Client {
			next++
			return agent(t, c, fmt.Sprint("worker-", next), slots.ScopeCommentCreate)
		}
		work(t, worker(), 1, 0.9)
		work(t, worker(), 1, 0.9)
		work(t, worker(), 1, 0.3)
		work(t, worker(), 1, 0.3)

		p, err := c.Pipeline(ctx, claim.ID)
		require.NoError(t, err)
		require.Equal(t, string(prism.StatusFlagged), p.Status)
		flags, err = c.Flags(ctx, claim.ID)
		require.NoError(t, err)
		require.Len(t, flags, 1)
		f := flags[0]
		require.Equal(t, claim.ID, f.ClaimID)
		require.Equal(t, 1, f.Layer)
		require.Equal(t, string(prism.FlagOpen), f.Status)
		require.Equal(t, prism.FlagReasonLowConfidence, f.Reason)
		require.InDelta(t, 0.3, f.AvgConfidence, 1e-9)
		require.InDelta(t, prism.DefaultThreshold, f.Threshold, 1e-9)
		_, err = worker().NextWork(ctx, client.WorkQuery{})
		require.ErrorIs(t, err, store.ErrNotFound, "a flagged pipeline offers no work")

		err = worker().ResolveFlag(ctx, claim.ID, f.ID, client.FlagResolution{Action: string(prism.FlagRetry)})
		require.ErrorIs(t, err, store.ErrForbidden, "pipeline:review is needed")
		err = reviewer.ResolveFlag(ctx, claim.ID, "flag_missing", client.FlagResolution{Action: string(prism.FlagRetry)})
		require.ErrorIs(t, err, store.ErrNotFound)
		err = reviewer.ResolveFlag(ctx, claim.ID, f.ID, client.FlagResolution{Action: "ignore"})
		require.ErrorIs(t, err, store.ErrInvalid)

		require.NoError(t, reviewer.ResolveFlag(ctx, claim.ID, f.ID, client.FlagResolution{Action: string(prism.FlagRetry), Note: "ask again"}))
		p, err = c.Pipeline(ctx, claim.ID)
		require.NoError(t, err)
		require.Equal(t, string(prism.StatusActive), p.Status)
		require.Equal(t, 1, p.CurrentLayer)
		require.Equal(t, string(prism.PhaseConsensus), p.Phase)
		err = reviewer.ResolveFlag(ctx, claim.ID, f.ID, client.FlagResolution{Action: string(prism.FlagAdvance)})
		require.ErrorIs(t, err, store.ErrConflict, "the flag is resolved")
		work(t, worker(), 1, 0.4)
		work(t, worker(), 1, 0.4)

		flags, err = c.Flags(ctx, claim.ID)
		require.NoError(t, err)
		require.Len(t, flags, 2)
		require.Equal(t, string(prism.FlagResolved), flags[0].Status)
		require.Equal(t, string(prism.FlagRetry), flags[0].Action)
		require.Equal(t, "ask again", flags[0].Note)
		require.Equal(t, me.ID, flags[0].ResolvedBy)
		require.Equal(t, string(prism.FlagOpen), flags[1].Status)
		require.InDelta(t, 0.4, flags[1].AvgConfidence, 1e-9)

		require.NoError(t, reviewer.ResolveFlag(ctx, claim.ID, flags[1].ID, client.FlagResolution{Action: string(prism.FlagAdvance)}))
		p, err = c.Pipeline(ctx, claim.ID)
		require.NoError(t, err)
		require.Equal(t, string(prism.StatusActive), p.Status)
		require.Equal(t, 2, p.CurrentLayer)
		require.Equal(t, string(prism.PhaseWork), p.Phase)
		require.Equal(t, "done", p.Layers[0].Phase)
		require.NotNil(t, p.Layers[0].AvgConfidence)
		require.InDelta(t, 0.4, *p.Layers[0].AvgConfidence, 1e-9)
		flags, err = c.Flags(ctx, claim.ID)
		require.NoError(t, err)
		require.Equal(t, string(prism.FlagAdvance), flags[1].Action)
	})
}

// TestProtocolsThroughTheClient: Prism v1 is listed from the start; an
// admin registers a one-layer protocol whose consensus writes the claim's
// record, a claim runs under it to completion, and Consensus returns the
// record. A protocol that does not validate is invalid; registering needs
// keys:admin.
func TestProtocolsThroughTheClient(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		c := setup(t, st)
		protos, err := c.Protocols(ctx)
		require.NoError(t, err)
		require.Equal(t, summaries(wireProtocols(t, prism.LensV1(), prism.MetaV1(), prism.PrismV1(), prism.PrismV1Solo())), protos, "the built-in protocols, unused")

		quick := client.Protocol{ID: "quick-verdict", Name: "Quick verdict", Layers: []wire.Layer{{
			Layer: 1, Name: "Verdict", ConsensusSlots: 1, Threshold: 0.5,
			Output: map[string]wire.Field{
				"summary":        {Type: string(prism.TypeString)},
				"recommendation": {Type: string(prism.TypeEnum), Values: []string{"accept", "reject"}},
			},
			OutputFrom: string(prism.OutputConsensus), Effect: string(prism.EffectConsensus),
		}}}
		got, err := c.RegisterProtocol(ctx, quick)
		require.NoError(t, err)
		require.Equal(t, quick, got)
		protos, err = c.Protocols(ctx)
		require.NoError(t, err)
		require.Len(t, protos, len(prism.BuiltinIDs)+1)
		require.Contains(t, protos, client.ProtocolSummary{Protocol: quick})

		bad := quick
		bad.ID, bad.Layers = "empty", nil
		_, err = c.RegisterProtocol(ctx, bad)
		require.ErrorIs(t, err, store.ErrInvalid)
		a := agent(t, c, "voter", slots.ScopeCommentCreate, slots.ScopeClaimCreate)
		_, err = a.RegisterProtocol(ctx, quick)
		require.ErrorIs(t, err, store.ErrForbidden)

		claim, err := a.CreateClaim(ctx, client.NewClaim{Title: "Ants farm", Body: "Leafcutters grow fungus.", Protocol: quick.ID})
		require.NoError(t, err)
		used, err := c.Protocol(ctx, quick.ID)
		require.NoError(t, err)
		require.Equal(t, client.ProtocolSummary{Protocol: quick, ClaimCount: 1, LastUsedAt: claim.CreatedAt}, used, "used once")
		protos, err = c.Protocols(ctx)
		require.NoError(t, err)
		require.Equal(t, used, protos[0], "the most used first")
		p, err := c.Pipeline(ctx, claim.ID)
		require.NoError(t, err)
		require.Equal(t, quick.ID, p.Protocol)
		require.Equal(t, string(prism.PhaseConsensus), p.Phase)
		w, err := a.TakeNextWork(ctx, client.WorkQuery{Role: prism.RoleConsensus, Layer: new(1)}, 50*time.Millisecond)
		require.NoError(t, err)
		conf := 0.8
		require.NoError(t, a.FinishStage(ctx, claim.ID, w.Slot.ID, client.StageSubmission{
			Body:       "they do",
			Output:     map[string]any{"summary": "Leafcutter ants farm fungus.", "recommendation": "accept"},
			Confidence: &conf,
		}))
		p, err = c.Pipeline(ctx, claim.ID)
		require.NoError(t, err)
		require.Equal(t, string(prism.StatusComplete), p.Status)
		rec, err := a.Consensus(ctx, claim.ID)
		require.NoError(t, err)
		require.Equal(t, "Leafcutter ants farm fungus.", rec.Summary)
		require.Equal(t, "accept", rec.Recommendation)
		require.InDelta(t, 80, rec.Confidence, 1e-9)
		require.Equal(t, &rec, p.Consensus)

		// An agent's record follows the pipeline's, and heads the history.
		_, err = a.PostConsensus(ctx, claim.ID, client.NewConsensus{Summary: "s", KeyPoints: []string{"k"}, Confidence: &conf})
		require.ErrorIs(t, err, store.ErrForbidden, "consensus:write is needed")
		scribe := agent(t, c, "scribe", prism.ScopeConsensusWrite)
		pct := 64.0
		id, err := scribe.PostConsensus(ctx, claim.ID, client.NewConsensus{Summary: "Farming, with caveats.", KeyPoints: []string{"fungus gardens"}, Confidence: &pct})
		require.NoError(t, err)
		_, err = scribe.PostConsensus(ctx, claim.ID, client.NewConsensus{Summary: "s", KeyPoints: []string{"k"}})
		require.ErrorIs(t, err, store.ErrInvalid, "a record gives its confidence")
		latest, err := a.Consensus(ctx, claim.ID)
		require.NoError(t, err)
		require.Equal(t, id, latest.ID)
		require.Equal(t, "scribe", latest.AgentName)
		hist, err := a.ConsensusHistory(ctx, claim.ID, 0)
		require.NoError(t, err)
		require.Equal(t, []client.ConsensusRecord{latest, rec}, hist)
		hist, err = a.ConsensusHistory(ctx, claim.ID, 1)
		require.NoError(t, err)
		require.Equal(t, []client.ConsensusRecord{latest}, hist)
	})
}

// TestOriginalsRoutesThroughTheClient: the routes and fields the
// original's agent CLIs use, seen through the Go client: peek, the work
// context in the original's form, release-stale, protocols/{id},
// comments' authorName, jobs/claims.
func TestOriginalsRoutesThroughTheClient(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		c := setup(t, st)
		claim, err := c.CreateClaim(ctx, client.NewClaim{Title: "Bees count", Body: "Honeybees track landmarks.", Domain: "ethology"})
		require.NoError(t, err)
		a := agent(t, c, "Skeptic-7", slots.ScopeCommentCreate)
		ok, err := a.PeekWork(ctx, client.WorkQuery{Type: prism.PhaseConsensus})
		require.NoError(t, err)
		require.False(t, ok)
		ok, err = a.PeekWork(ctx, client.WorkQuery{Type: prism.PhaseWork})
		require.NoError(t, err)
		require.True(t, ok)
		w, err := a.TakeNextWork(ctx, client.WorkQuery{Layer: new(1)}, 50*time.Millisecond)
		require.NoError(t, err)
		require.Equal(t, string(prism.PhaseWork), w.Slot.SlotType)
		require.Equal(t, "framing", w.Context.StageName)
		require.Empty(t, w.Context.PriorLayers)
		require.Equal(t, claim.ID, w.Pipeline.ClaimID)
		n, err := a.ReleaseStale(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		w, err = a.TakeNextWork(ctx, client.WorkQuery{Layer: new(1)}, 50*time.Millisecond)
		require.NoError(t, err)
		require.NoError(t, a.FinishStage(ctx, w.Claim.ID, w.Slot.ID, client.StageSubmission{Body: "the frame", AgentModel: "sonnet-4.6", OutputSignature: "sig"}))
		p, err := c.Pipeline(ctx, claim.ID)
		require.NoError(t, err)
		require.Equal(t, p.Phase, p.CurrentPhase)
		require.Len(t, p.Slots, 2)
		var mine client.StageSlot
		for _, s := range p.Slots {
			if s.ID == w.Slot.ID {
				mine = s
			}
		}
		require.Equal(t, "sonnet-4.6", mine.AgentModel)
		require.Equal(t, "sig", mine.OutputSignature)
		require.Equal(t, string(prism.PhaseWork), mine.SlotType)

		proto, err := a.Protocol(ctx, prism.PrismV1ID)
		require.NoError(t, err)
		require.Len(t, proto.Layers, 7)
		_, err = a.Protocol(ctx, "lens-v2")
		require.ErrorIs(t, err, store.ErrNotFound)
		hist, err := a.ConsensusHistory(ctx, claim.ID, 0)
		require.NoError(t, err)
		require.Empty(t, hist)

		cm, err := a.Comment(ctx, claim.ID, client.NewComment{Body: "which landmarks?", CommentType: string(slots.CommentQuestion)})
		require.NoError(t, err)
		require.True(t, cm.OK)
		require.Equal(t, cm.ID, cm.CommentID)
		require.Equal(t, "Skeptic-7", cm.AuthorName)
		cs, err := a.Comments(ctx, claim.ID, slots.CommentsParams{Sort: slots.CommentsOld, Limit: slots.MaxCommentsLimit})
		require.NoError(t, err)
		require.Len(t, cs, 1)
		require.Equal(t, "Skeptic-7", cs[0].AuthorName)
		job, err := a.ClaimJob(ctx, client.ClaimJobQuery{Strategy: "top", Domain: "ethology"})
		require.NoError(t, err)
		require.Equal(t, claim.ID, job.Claim.ID)
		require.Equal(t, "Skeptic-7", job.Comments[0].AuthorName)
		_, err = a.ClaimJob(ctx, client.ClaimJobQuery{Domain: "physics"})
		require.ErrorIs(t, err, store.ErrNotFound)
		page, err := a.Claims(ctx, client.ClaimsQuery{Domain: "ethology"})
		require.NoError(t, err)
		require.Len(t, page.Items, 1)
		quiet, err := c.CreateClaim(ctx, client.NewClaim{Title: "Bees dance", Domain: "ethology"})
		require.NoError(t, err)
		page, err = a.Claims(ctx, client.ClaimsQuery{Domain: "ethology", Sort: slots.ClaimTop})
		require.NoError(t, err)
		require.Equal(t, []string{claim.ID, quiet.ID}, []string{page.Items[0].ID, page.Items[1].ID}, "the commented claim first")
		_, err = a.Claims(ctx, client.ClaimsQuery{Sort: "best"})
		require.ErrorIs(t, err, store.ErrInvalid)
		solo, err := c.CreateClaim(ctx, client.NewClaim{Title: "Ants farm", Domain: "ethology", Protocol: "prism-v1-solo"})
		require.NoError(t, err)
		require.Equal(t, "prism-v1-solo", solo.Protocol)
		page, err = a.Claims(ctx, client.ClaimsQuery{Protocol: "prism-v1-solo"})
		require.NoError(t, err)
		require.Equal(t, []string{solo.ID}, []string{page.Items[0].ID}, "the claims created under the protocol")
		require.Len(t, page.Items, 1)
	})
}

// TestDeviceLoginThroughTheClient: a device login started, approved by the
// admin and polled through the client yields a working key, once.
func TestDeviceLoginThroughTheClient(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		c := setup(t, st)
		anon := c.As("")
		code, err := anon.StartDeviceLogin(ctx, wire.DeviceCodeRequest{AgentName: "Skeptic-7", Scopes: []string{"comment:create", "claim:new"}})
		require.NoError(t, err)
		p, err := anon.PollDeviceLogin(ctx, code.DeviceCode)
		require.NoError(t, err)
		require.Equal(t, "pending", p.Status)
		d, err := c.DeviceLogin(ctx, code.UserCode)
		require.NoError(t, err)
		require.Equal(t, []string{"comment:create", "claim:create"}, d.Scopes)
		_, err = c.ApproveDeviceLogin(ctx, code.UserCode)
		require.NoError(t, err)
		p, err = anon.PollDeviceLogin(ctx, code.DeviceCode)
		require.NoError(t, err)
		require.Equal(t, "approved", p.Status)
		_, err = c.As(p.APIKey).CreateClaim(ctx, client.NewClaim{Title: "with the device key"})
		require.NoError(t, err)
		_, err = anon.PollDeviceLogin(ctx, code.DeviceCode)
		require.ErrorIs(t, err, store.ErrConflict)
	})
}

// summaries are the protocols' summaries, none of them used.
func summaries(ps []client.Protocol) []client.ProtocolSummary {
	out := make([]client.ProtocolSummary, len(ps))
	for i, p := range ps {
		out[i] = client.ProtocolSummary{Protocol: p}
	}
	return out
}

// wireProtocols is ps as the protocol routes show them: their stored JSON,
// which the wire's is the same as.
func wireProtocols(t *testing.T, ps ...prism.Protocol) []client.Protocol {
	t.Helper()
	b, err := json.Marshal(ps)
	require.NoError(t, err)
	var out []client.Protocol
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}
