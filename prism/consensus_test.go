package prism_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/memstore"
)

// A posted consensus record is checked as the original checks it, before
// the store is asked: its codes and messages are the original's.
func TestPostConsensusRules(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	svc := prism.New(st, st)
	c, _, err := svc.CreateClaim(ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "Crows plan ahead"}})
	require.NoError(t, err)
	agent := identity.WithKey(ctx, identity.Key{ID: "key_1", Name: "scribe"})
	num := func(v float64) *float64 { return &v }
	valid := prism.NewConsensus{ClaimID: c.ID, Summary: "They do", KeyPoints: []string{"caching"}, Confidence: num(70)}
	for name, tc := range map[string]struct {
		change  func(in *prism.NewConsensus)
		code    string
		message string
	}{
		"no summary":           {func(in *prism.NewConsensus) { in.Summary = "" }, "invalid_payload", "Missing summary or keyPoints"},
		"no key points":        {func(in *prism.NewConsensus) { in.KeyPoints = nil }, "invalid_payload", "Missing summary or keyPoints"},
		"blank summary":        {func(in *prism.NewConsensus) { in.Summary = " \n" }, "consensus_create_failed", "Summary is required"},
		"blank key points":     {func(in *prism.NewConsensus) { in.KeyPoints = []string{" ", ""} }, "consensus_create_failed", "Key points are required"},
		"no confidence":        {func(in *prism.NewConsensus) { in.Confidence = nil }, "consensus_create_failed", "Confidence is required"},
		"confidence below 0":   {func(in *prism.NewConsensus) { in.Confidence = num(-0.6) }, "consensus_create_failed", "between 0 and 100"},
		"confidence above 100": {func(in *prism.NewConsensus) { in.Confidence = num(100.5) }, "consensus_create_failed", "between 0 and 100"},
		"confidence NaN":       {func(in *prism.NewConsensus) { in.Confidence = num(math.NaN()) }, "consensus_create_failed", "between 0 and 100"},
		"confidence infinite":  {func(in *prism.NewConsensus) { in.Confidence = num(math.Inf(1)) }, "consensus_create_failed", "between 0 and 100"},
		"summary too long":     {func(in *prism.NewConsensus) { in.Summary = strings.Repeat("é", prism.MaxConsensusText+1) }, "invalid_summary", "limit"},
		"summary with NUL":     {func(in *prism.NewConsensus) { in.Summary = "a\x00b" }, "invalid_summary", "NUL"},
		"point not UTF-8":      {func(in *prism.NewConsensus) { in.KeyPoints = []string{"\xff"} }, "invalid_keyPoints", "UTF-8"},
		"too many points":      {func(in *prism.NewConsensus) { in.Dissent = make([]string, prism.MaxConsensusPoints+1) }, "invalid_dissent", "limit"},
		"question too long": {func(in *prism.NewConsensus) {
			in.OpenQuestions = []string{strings.Repeat("x", prism.MaxConsensusText+1)}
		}, "invalid_openQuestions", "limit"},
	} {
		t.Run(name, func(t *testing.T) {
			in := valid
			tc.change(&in)
			_, err := svc.PostConsensus(agent, in)
			var se *store.Error
			require.ErrorAs(t, err, &se)
			require.ErrorIs(t, err, store.ErrInvalid)
			require.Equal(t, tc.code, se.Code)
			require.Contains(t, se.Message, tc.message)
		})
	}
	recs, err := svc.ConsensusHistory(ctx, c.ID, 0)
	require.NoError(t, err)
	require.Empty(t, recs, "nothing refused was stored")

	_, err = svc.PostConsensus(ctx, valid)
	require.ErrorIs(t, err, identity.ErrMissingToken, "a record has an author")

	for in, want := range map[float64]float64{-0.5: 0, 0.49: 0, 0.49999999999999994: 0, 99.5: 100, 100.4: 100, 42: 42} {
		v := valid
		v.Confidence = num(in)
		rec, err := svc.PostConsensus(agent, v)
		require.NoError(t, err, "confidence %v", in)
		require.Equal(t, want, rec.Confidence, "confidence %v is rounded half up, as Math.round", in)
	}
}

// A recording layer whose seats gave neither a summary nor prose writes no
// record, as the original's final layer; one that did names its first
// seat as the record's author.
func TestPipelineRecordNeedsASummary(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	svc := prism.New(st, st)
	quick := prism.Protocol{ID: "quick", Name: "Quick", Layers: []prism.Layer{{Number: 1, Name: "Summary", ConsensusSlots: 1, Threshold: 0.5,
		Output: prism.Shape{"summary": {Type: prism.TypeString}}, OutputFrom: prism.OutputConsensus, Effect: prism.EffectSummary}}}
	require.NoError(t, svc.RegisterProtocol(identity.WithKey(ctx, identity.Key{ID: "admin", Scopes: []identity.Scope{identity.ScopeKeysAdmin}}), quick))
	agent := identity.Key{ID: "key_1", Name: "judge"}
	for prose, want := range map[string]bool{" ": false, "Corvids plan.": true} {
		c, _, err := svc.CreateClaim(ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "Crows plan ahead"}, Protocol: quick.ID})
		require.NoError(t, err)
		w, err := svc.TakeNextWork(identity.WithKey(ctx, agent), prism.WorkQuery{})
		require.NoError(t, err)
		require.Equal(t, c.ID, w.Claim.ID)
		conf := 0.9
		p, err := svc.Done(identity.WithKey(ctx, agent), c.ID, w.Slot.ID, prism.DoneInput{Body: prose, Confidence: &conf})
		require.NoError(t, err)
		require.Equal(t, prism.StatusComplete, p.Status)
		rec, err := svc.Consensus(ctx, c.ID)
		if !want {
			require.ErrorIs(t, err, prism.ErrConsensusNotFound, "no summary, no prose: no record")
			continue
		}
		require.NoError(t, err)
		require.Equal(t, prose, rec.Summary, "the prose, as no summary was given")
		require.Equal(t, []string{prose}, rec.KeyPoints)
		require.Equal(t, slots.Agent{KeyID: agent.ID, Name: agent.Name}, rec.Author)
	}
}
