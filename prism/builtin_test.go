package prism_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/memstore"
)

// TestAOPProtocolsAreTheTables pins AOP's protocols beside Prism v1: their
// layers, roles, slot counts and thresholds.
func TestAOPProtocolsAreTheTables(t *testing.T) {
	type row struct {
		layer     int
		name      string
		roles     []slots.RoleCount
		consensus int
		threshold float64
	}
	rc := func(r slots.Role, n int) []slots.RoleCount { return []slots.RoleCount{{Role: r, Count: n}} }
	for id, want := range map[string][]row{
		prism.MetaV1ID: {{0, "Meta-classify", rc(prism.RoleClassifier, 3), 3, 0.5}},
		prism.LensV1ID: {
			{1, "Framing", rc(prism.RoleFramer, 2), 2, 0.7}, {2, "Lenses", rc(prism.RoleLens, 3), 2, 0.7},
			{3, "Critique", rc(slots.RoleCritic, 3), 2, 0.6}, {4, "Revision", rc(prism.RoleReviser, 2), 2, 0.6},
			{5, "Synthesis", rc(prism.RoleSynthesizer, 2), 2, 0.7}, {6, "Summary", nil, 3, 0.6},
		},
		prism.PrismV1SoloID: {
			{1, "Framing", rc(slots.RoleContributor, 1), 1, 0.5}, {2, "Classification", rc(slots.RoleCritic, 1), 1, 0.5},
			{3, "Evidence", rc(slots.RoleSupporter, 1), 1, 0.5}, {4, "Critique", rc(slots.RoleCritic, 1), 1, 0.5},
			{5, "Defense", rc(slots.RoleDefender, 1), 1, 0.5}, {6, "Deliberation", rc(slots.RoleCritic, 1), 1, 0.5},
			{7, "Synthesis", nil, 1, 0.5},
		},
	} {
		p, ok := prism.Builtin(id)
		require.True(t, ok, id)
		require.NoError(t, p.Validate(), id)
		require.Len(t, p.Layers, len(want), id)
		for i, w := range want {
			l := p.Layers[i]
			require.Equal(t, w.layer, l.Number, id)
			require.Equal(t, w.name, l.Name, id)
			require.Equal(t, w.roles, l.WorkRoles, "%s %s", id, l.Name)
			require.Equal(t, w.consensus, l.ConsensusSlots, "%s %s", id, l.Name)
			require.InDelta(t, w.threshold, l.Threshold, 1e-9, "%s %s", id, l.Name)
		}
	}
	meta := prism.MetaV1().Layers[0]
	require.Equal(t, prism.EffectRoute, meta.Effect)
	require.Equal(t, []string{prism.PrismV1ID, prism.LensV1ID}, meta.Output["protocol"].Values)
	require.Equal(t, prism.EffectSummary, prism.LensV1().Layers[5].Effect)
	require.Equal(t, prism.EffectDomain, prism.PrismV1Solo().Layers[1].Effect)
	require.Equal(t, prism.EffectConsensus, prism.PrismV1Solo().Layers[6].Effect)
	_, ok := prism.Builtin("lens-v2")
	require.False(t, ok)
}

// TestRouteAndSummaryRules: a route layer must be its protocol's last and
// not route to itself; layers are numbered from 0 or 1; a summary layer's
// record falls back to the consensus prose when nobody gave a summary; a
// flagged meta-classify advanced by a reviewer routes all the same.
func TestRouteAndSummaryRules(t *testing.T) {
	meta := prism.MetaV1()
	twice := meta.Clone()
	twice.ID = "twice"
	twice.Layers = append(twice.Layers, prism.Layer{Number: 1, Name: "After", ConsensusSlots: 1, Threshold: 0.5, Effect: prism.EffectNone})
	require.ErrorContains(t, twice.Validate(), "must be the last layer")
	self := meta.Clone()
	self.Layers[0].Output["protocol"] = prism.Field{Type: prism.TypeEnum, Values: []string{prism.MetaV1ID}}
	require.ErrorContains(t, self.Validate(), "routes to its own protocol")
	two := prism.Protocol{ID: "two", Name: "Two", Layers: []prism.Layer{{Number: 2, Name: "x", ConsensusSlots: 1, Effect: prism.EffectNone}}}
	require.ErrorIs(t, two.Validate(), store.ErrInvalid)
	odd := prism.Protocol{ID: "odd", Name: "Odd", Layers: []prism.Layer{{Number: 1, Name: "x", WorkRoles: []slots.RoleCount{{Role: "wizard", Count: 1}}, ConsensusSlots: 1, Effect: prism.EffectNone}}}
	require.ErrorContains(t, odd.Validate(), `invalid role "wizard"`)

	ctx := context.Background()
	st := memstore.New()
	svc := prism.New(st, st)
	var keys []identity.Key
	for i := range 12 {
		keys = append(keys, identity.Key{ID: fmt.Sprint("key_a", i), Name: fmt.Sprint("a", i)})
	}
	finish := func(claimID string, offset int, out func(i int) json.RawMessage, confidence float64) prism.Pipeline {
		t.Helper()
		p, err := svc.Pipeline(ctx, claimID)
		require.NoError(t, err)
		for i, s := range p.OpenSlots() {
			_, _, err := svc.Take(identity.WithKey(ctx, keys[offset+i]), claimID, s.ID)
			require.NoError(t, err)
			p, err = svc.Done(identity.WithKey(ctx, keys[offset+i]), claimID, s.ID, prism.DoneInput{Body: "prose " + string(rune('a'+i)), Output: out(i), Confidence: &confidence})
			require.NoError(t, err)
		}
		return p
	}
	none := func(int) json.RawMessage { return nil }

	// meta-classify falls below 0.5, a reviewer advances it: the route
	// applies.
	c, _, err := svc.CreateClaim(ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "What if?"}, Protocol: prism.MetaV1ID})
	require.NoError(t, err)
	_, err = svc.Done(identity.WithKey(ctx, keys[0]), c.ID, "stage_missing", prism.DoneInput{})
	require.Error(t, err)
	finish(c.ID, 0, func(int) json.RawMessage { return json.RawMessage(`{"protocol":"lens-v1","domain":"ethics"}`) }, 0.9)
	p := finish(c.ID, 6, none, 0.3)
	require.Equal(t, prism.StatusFlagged, p.Status)
	p, err = svc.ResolveFlag(identity.WithKey(ctx, keys[0]), prism.ResolveFlagParams{ClaimID: c.ID, FlagID: p.Flags[0].ID, Action: prism.FlagAdvance, Note: "fine"})
	require.NoError(t, err)
	require.Equal(t, prism.LensV1ID, p.Protocol.ID)
	require.Equal(t, 1, p.CurrentLayer)
	require.Equal(t, "ethics", p.Domain)

	// lens-v1's summary with prose alone: the prose is the summary.
	for p.CurrentLayer < 6 {
		finish(c.ID, 0, none, 0.9)
		p = finish(c.ID, 6, none, 0.9)
	}
	p = finish(c.ID, 6, none, 0.9)
	require.Equal(t, prism.StatusComplete, p.Status)
	require.Equal(t, "prose a\n\n---\n\nprose b\n\n---\n\nprose c", p.Consensus.Summary)
	require.Empty(t, p.Consensus.Recommendation, "no verdict")

	// meta-classify's work needs its protocol and domain.
	c2, p, err := svc.CreateClaim(ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "Another"}, Protocol: prism.MetaV1ID})
	require.NoError(t, err)
	s := p.OpenSlots()[0]
	_, _, err = svc.Take(identity.WithKey(ctx, keys[0]), c2.ID, s.ID)
	require.NoError(t, err)
	for _, bad := range []string{``, `{"domain":"x"}`, `{"protocol":"prism-v2","domain":"x"}`} {
		_, err = svc.Done(identity.WithKey(ctx, keys[0]), c2.ID, s.ID, prism.DoneInput{Body: "x", Output: json.RawMessage(bad)})
		require.ErrorIs(t, err, store.ErrInvalid, bad)
	}
}
