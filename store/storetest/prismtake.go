package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
)

// runPrismTakeNext checks prism.Service.TakeNextWork: the next stage slot
// found and taken in one call, with NextWork's filters, exact under a
// crowd.
func runPrismTakeNext(t *testing.T, newStores NewStores) {
	t.Run("TakeNextWork", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 3)
		a, b := e.keys[0], e.keys[1]
		_, err := e.svc.TakeNextWork(identity.WithKey(e.ctx, a), prism.WorkQuery{})
		require.ErrorIs(t, err, slots.ErrNoJob)
		c1, p1 := e.claim(t)
		e.clock.Advance(time.Millisecond)
		c2, _ := e.claim(t)

		shown, err := e.svc.NextWork(identity.WithKey(e.ctx, a), prism.WorkQuery{})
		require.NoError(t, err)
		w, err := e.svc.TakeNextWork(identity.WithKey(e.ctx, a), prism.WorkQuery{})
		require.NoError(t, err)
		require.Equal(t, c1.ID, w.Claim.ID, "oldest first")
		require.Equal(t, shown.Slot.ID, w.Slot.ID, "alone, the slot NextWork shows")
		require.Equal(t, p1.OpenSlots()[0].ID, w.Slot.ID)
		require.Equal(t, slots.StatusTaken, w.Slot.Status)
		require.Equal(t, a.ID, w.Slot.APIKeyID)
		require.Equal(t, e.clock.Now().Add(5*time.Minute), w.Slot.LeaseExpiresAt)
		require.Equal(t, a.ID, w.Pipeline.Slots[slotIndex(t, w.Pipeline, w.Slot.ID)].APIKeyID, "the pipeline as taken")
		stored, err := e.svc.Pipeline(e.ctx, c1.ID)
		require.NoError(t, err)
		require.Equal(t, a.ID, stored.Slots[slotIndex(t, stored, w.Slot.ID)].APIKeyID)

		w, err = e.svc.TakeNextWork(identity.WithKey(e.ctx, a), prism.WorkQuery{})
		require.NoError(t, err)
		require.Equal(t, c2.ID, w.Claim.ID, "not a layer where the agent holds a slot")
		_, err = e.svc.TakeNextWork(identity.WithKey(e.ctx, a), prism.WorkQuery{})
		require.ErrorIs(t, err, slots.ErrNoJob, "a slot in layer 1 of both")

		_, err = e.svc.TakeNextWork(identity.WithKey(e.ctx, b), prism.WorkQuery{Role: "critic"})
		require.ErrorIs(t, err, slots.ErrNoJob)
		_, err = e.svc.TakeNextWork(identity.WithKey(e.ctx, b), prism.WorkQuery{Layer: new(2)})
		require.ErrorIs(t, err, slots.ErrNoJob)
		_, err = e.svc.TakeNextWork(identity.WithKey(e.ctx, b), prism.WorkQuery{Phase: prism.PhaseConsensus})
		require.ErrorIs(t, err, slots.ErrNoJob)
		w, err = e.svc.TakeNextWork(identity.WithKey(e.ctx, b), prism.WorkQuery{Role: "contributor", Layer: new(1), Domain: slots.DefaultDomain, Phase: prism.PhaseWork})
		require.NoError(t, err)
		require.Equal(t, c1.ID, w.Claim.ID)
		require.Equal(t, "contributor", w.Slot.Role)
		require.Equal(t, b.ID, w.Slot.APIKeyID)
	})

	t.Run("RaceTakeNextWork", func(t *testing.T) {
		t.Parallel()
		const agents, claims = 24, 4
		e := newPrismEnv(t, newStores, agents)
		for rep := 0; rep < raceRepeats; rep++ {
			open := map[string]string{} // slot ID -> claim ID
			var ids []string
			for range claims {
				c, p := e.claim(t)
				ids = append(ids, c.ID)
				for _, s := range p.OpenSlots() {
					open[s.ID] = c.ID
				}
			}
			var mu sync.Mutex
			got := map[string]string{} // slot ID -> agent
			errs := make(chan error, agents)
			concurrently(agents, func(i int) {
				svc := []*prism.Service{e.svc, e.peer}[i%2]
				mine := map[string]bool{}
				for calls := 0; ; calls++ {
					if calls > claims {
						errs <- fmt.Errorf("agent %d: a slot on more claims than there are", i)
						return
					}
					w, err := svc.TakeNextWork(identity.WithKey(e.ctx, e.keys[i]), prism.WorkQuery{Layer: new(1)})
					if errors.Is(err, slots.ErrNoJob) {
						return
					}
					if err != nil {
						errs <- fmt.Errorf("agent %d: %w", i, err)
						return
					}
					if mine[w.Claim.ID] || w.Slot.APIKeyID != e.keys[i].ID || open[w.Slot.ID] != w.Claim.ID {
						errs <- fmt.Errorf("agent %d handed slot %s of %s (held by %s)", i, w.Slot.ID, w.Claim.ID, w.Slot.APIKeyID)
						return
					}
					mine[w.Claim.ID] = true
					mu.Lock()
					if prev, ok := got[w.Slot.ID]; ok {
						errs <- fmt.Errorf("slot %s handed to %s and agent %d", w.Slot.ID, prev, i)
					}
					got[w.Slot.ID] = e.keys[i].ID
					mu.Unlock()
				}
			})
			close(errs)
			for err := range errs {
				require.NoError(t, err, "no caller sees a race it lost")
			}
			require.Len(t, got, len(open), "every open slot handed out once")
			for _, id := range ids {
				p, err := e.svc.Pipeline(e.ctx, id)
				require.NoError(t, err)
				holders := map[string]bool{}
				for _, s := range p.Slots {
					if s.Layer != 1 || s.Phase != prism.PhaseWork {
						continue
					}
					require.Equal(t, got[s.ID], s.APIKeyID, "slot %s held by the agent it was handed to", s.ID)
					require.False(t, holders[s.APIKeyID], "two slots of one layer for %s", s.APIKeyID)
					holders[s.APIKeyID] = true
				}
			}
		}
	})
}

// slotIndex is the index of the slot id in p.Slots.
func slotIndex(t *testing.T, p prism.Pipeline, id string) int {
	t.Helper()
	for i, s := range p.Slots {
		if s.ID == id {
			return i
		}
	}
	t.Fatalf("slot %s not in the pipeline", id)
	return -1
}
