package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
)

// runPrismDomainRace checks that a domain a pipeline writes reaches every
// role slot of its claim, those configured while it is written included.
func runPrismDomainRace(t *testing.T, newStores NewStores) {
	t.Run("RacePipelineDomainAndConfigure", func(t *testing.T) {
		t.Parallel()
		const rounds, seats = 8, 3
		e := newPrismEnv(t, newStores, 16+seats*rounds)
		author := e.keys[15]
		for r := range rounds {
			c, _ := e.claim(t)
			_, err := e.slots.AddComment(identity.WithKey(e.ctx, author), slots.NewComment{ClaimID: c.ID, Body: "The draft.", CommentType: "draft"})
			require.NoError(t, err)
			// Layer 1, then layer 2's work and all but one of its
			// consensus seats: the last done writes the domain.
			e.finishPhase(t, c.ID, 0, 0.8)
			e.finishPhase(t, c.ID, 4, 0.8)
			e.finishPhase(t, c.ID, 0, 0.8)
			p, err := e.svc.Pipeline(e.ctx, c.ID)
			require.NoError(t, err)
			require.Equal(t, 2, p.CurrentLayer)
			open := p.OpenSlots()
			require.Len(t, open, 2)
			last := e.keys[5]
			for i, s := range open {
				agent := e.keys[4+i]
				_, _, err := e.svc.Take(identity.WithKey(e.ctx, agent), c.ID, s.ID)
				require.NoError(t, err)
				if i == 0 {
					_, err = e.svc.Done(identity.WithKey(e.ctx, agent), c.ID, s.ID, prism.DoneInput{Body: "b", Output: outputFor(p.Layer(), s.Phase, i), Confidence: conf(0.8)})
					require.NoError(t, err)
				}
			}
			var wg sync.WaitGroup
			var doneErr, configErr error
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, doneErr = e.svc.Done(identity.WithKey(e.ctx, last), c.ID, open[1].ID, prism.DoneInput{Body: "b", Output: outputFor(p.Layer(), open[1].Phase, 1), Confidence: conf(0.8)})
			}()
			go func() {
				defer wg.Done()
				_, configErr = e.slots.ConfigureSlots(e.ctx, c.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: seats}})
			}()
			wg.Wait()
			require.NoError(t, doneErr)
			require.NoError(t, configErr)
			got, err := e.slots.Claim(e.ctx, c.ID)
			require.NoError(t, err)
			require.Equal(t, "cognitive-ethology", got.Domain)
			// Every seat is offered under the claim's new domain.
			for i := range seats {
				taker := e.keys[16+r*seats+i]
				job, err := e.slots.TakeNext(identity.WithKey(e.ctx, taker), slots.JobQuery{Domain: got.Domain})
				require.NoError(t, err, "round %d, seat %d", r, i)
				require.Equal(t, c.ID, job.Claim.ID, fmt.Sprint("round ", r))
			}
		}
	})
}
