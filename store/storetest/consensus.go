package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// runConsensus checks the consensus records agents post
// (prism.Store.AddConsensus, ConsensusRecords) and how they list beside a
// pipeline's own record.
func runConsensus(t *testing.T, newStores NewStores) {
	post := func(t *testing.T, e *prismEnv, svc *prism.Service, agent identity.Key, claimID, summary string) prism.ConsensusRecord {
		t.Helper()
		rec, err := svc.PostConsensus(identity.WithKey(e.ctx, agent), prism.NewConsensus{ClaimID: claimID, Summary: summary,
			KeyPoints: []string{" point of " + summary + " ", " "}, Dissent: []string{"dissent"}, Confidence: conf(71.5)})
		require.NoError(t, err)
		return rec
	}
	t.Run("ConsensusPostedAndListed", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 2)
		c, _ := e.claim(t)
		_, err := e.svc.Consensus(e.ctx, c.ID)
		require.ErrorIs(t, err, prism.ErrConsensusNotFound, "none before a record")
		recs, err := e.svc.ConsensusHistory(e.ctx, c.ID, 0)
		require.NoError(t, err)
		require.Empty(t, recs)

		var posted []prism.ConsensusRecord
		for i := range 3 {
			e.clock.Advance(time.Millisecond)
			posted = append(posted, post(t, e, e.svc, e.keys[i%2], c.ID, fmt.Sprint("summary ", i)))
		}
		first := posted[0]
		require.True(t, strings.HasPrefix(first.ID, "consensus_"), first.ID)
		require.Equal(t, []string{"point of summary 0"}, first.KeyPoints, "trimmed, blanks dropped")
		require.Equal(t, []string{"dissent"}, first.Dissent)
		require.Nil(t, first.OpenQuestions)
		require.Equal(t, 72.0, first.Confidence, "rounded half up")
		require.Equal(t, e.keys[0].ID, first.Author.KeyID)
		require.Equal(t, e.keys[0].Name, first.Author.Name)

		// Another process reads them from the store, newest first.
		recs, err = e.peer.ConsensusHistory(e.ctx, c.ID, 0)
		require.NoError(t, err)
		require.Equal(t, []prism.ConsensusRecord{posted[2], posted[1], posted[0]}, recs, "as stored, to the millisecond")
		recs, err = e.peer.ConsensusHistory(e.ctx, c.ID, 2)
		require.NoError(t, err)
		require.Equal(t, []prism.ConsensusRecord{posted[2], posted[1]}, recs)
		latest, err := e.peer.Consensus(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, posted[2], latest)

		// A record returned is the caller's: changing it changes no other.
		recs[0].KeyPoints[0] = "changed"
		again, err := e.peer.Consensus(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, "point of summary 2", again.KeyPoints[0])

		other, _ := e.claim(t)
		recs, err = e.svc.ConsensusHistory(e.ctx, other.ID, 0)
		require.NoError(t, err)
		require.Empty(t, recs, "records are the claim's own")
	})
	t.Run("ConsensusUnknownClaim", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 1)
		_, err := e.svc.PostConsensus(identity.WithKey(e.ctx, e.keys[0]), prism.NewConsensus{ClaimID: "claim_missing", Summary: "s", KeyPoints: []string{"k"}, Confidence: conf(50)})
		require.ErrorIs(t, err, slots.ErrClaimNotFound)
		_, err = e.svc.ConsensusHistory(e.ctx, "claim_missing", 0)
		require.ErrorIs(t, err, slots.ErrClaimNotFound)
		_, err = e.svc.Consensus(e.ctx, "claim_missing")
		require.ErrorIs(t, err, slots.ErrClaimNotFound)

		// The store alone: nothing stored for an unknown claim.
		err = e.store.AddConsensus(e.ctx, "claim_missing", prism.ConsensusRecord{ID: "consensus_x", Summary: "s", CreatedAt: e.clock.Now()})
		require.ErrorIs(t, err, slots.ErrClaimNotFound)
		recs, err := e.store.ConsensusRecords(e.ctx, "claim_missing", 10)
		require.NoError(t, err)
		require.Empty(t, recs)
	})
	t.Run("ConsensusBesideThePipelines", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 16)
		c, _ := e.claim(t)
		e.clock.Advance(time.Millisecond)
		before := post(t, e, e.svc, e.keys[0], c.ID, "early")
		p, err := e.svc.Pipeline(e.ctx, c.ID)
		require.NoError(t, err)
		require.Nil(t, p.Consensus, "a posted record is not the pipeline's")
		for p.Status != prism.StatusComplete {
			if p.Phase == prism.PhaseWork {
				p = e.finishPhase(t, c.ID, 0, 0.8)
			}
			p = e.finishPhase(t, c.ID, 8, 0.8)
		}
		own, ok := p.ConsensusRecord()
		require.True(t, ok)
		require.True(t, strings.HasPrefix(own.ID, "consensus_"), own.ID)
		require.Equal(t, []string{"reasoning", "reasoning", "reasoning"}, own.KeyPoints, "the synthesis seats' prose")
		require.Equal(t, p.UpdatedAt, own.CreatedAt, "written by the change that completed the pipeline")
		require.Equal(t, slots.Agent{KeyID: e.keys[8].ID, Name: e.keys[8].Name}, own.Author, "the synthesis's first seat, as the original's")

		e.clock.Advance(time.Millisecond)
		after := post(t, e, e.peer, e.keys[1], c.ID, "late")
		recs, err := e.svc.ConsensusHistory(e.ctx, c.ID, 0)
		require.NoError(t, err)
		require.Equal(t, []prism.ConsensusRecord{after, own, before}, recs, "newest first, the pipeline's among them")
		recs, err = e.svc.ConsensusHistory(e.ctx, c.ID, 2)
		require.NoError(t, err)
		require.Equal(t, []prism.ConsensusRecord{after, own}, recs)
		latest, err := e.svc.Consensus(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, after, latest)
	})
	t.Run("RaceToPostConsensus", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 1)
		for range raceRepeats {
			c, _ := e.claim(t)
			const n = 24
			errs := make([]error, n)
			concurrently(n, func(i int) {
				svc := e.svc
				if i%2 == 1 {
					svc = e.peer
				}
				_, errs[i] = svc.PostConsensus(identity.WithKey(e.ctx, e.keys[0]), prism.NewConsensus{ClaimID: c.ID, Summary: fmt.Sprint("s", i), KeyPoints: []string{"k"}, Confidence: conf(50)})
			})
			require.NoError(t, errors.Join(errs...))
			recs, err := e.svc.ConsensusHistory(e.ctx, c.ID, prism.MaxConsensusHistory)
			require.NoError(t, err)
			require.Len(t, recs, n, "every record kept")
			seen := map[string]bool{}
			for _, r := range recs {
				require.False(t, seen[r.Summary], "listed once: %s", r.Summary)
				seen[r.Summary] = true
			}
		}
	})
	t.Run("ConsensusHistoryLimits", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 1)
		c, _ := e.claim(t)
		for i := range prism.MaxConsensusHistory + 1 {
			err := e.store.AddConsensus(e.ctx, c.ID, prism.ConsensusRecord{ID: fmt.Sprint("consensus_", 1000+i), Summary: fmt.Sprint(i), KeyPoints: []string{"k"}, CreatedAt: store.Milli(e.clock.Now())})
			require.NoError(t, err)
		}
		for limit, want := range map[int]int{0: prism.DefaultConsensusHistory, -1: prism.DefaultConsensusHistory, 1: 1, 1000: prism.MaxConsensusHistory} {
			recs, err := e.svc.ConsensusHistory(e.ctx, c.ID, limit)
			require.NoError(t, err)
			require.Len(t, recs, want, "limit %d", limit)
			require.Equal(t, fmt.Sprint(prism.MaxConsensusHistory), recs[0].Summary, "newest first")
		}
		for _, limit := range []int{0, -1} {
			recs, err := e.store.ConsensusRecords(e.ctx, c.ID, limit)
			require.NoError(t, err)
			require.Empty(t, recs, "the store lists no more than it is asked for: limit %d", limit)
		}
	})
}
