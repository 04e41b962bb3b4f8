package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
)

// runCountOpenSlots checks CountOpenSlots against the job queue through
// every change that moves a slot in or out of it: a first draft, a
// reconfiguration, a take, a take-next, a done, a lapsed lease swept, and
// a lapsed slot taken over.
func runCountOpenSlots(t *testing.T, newStores NewStores) {
	t.Run("CountOpenSlots", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores, slots.WithLease(time.Minute))
		count := func(want int, msg string) {
			t.Helper()
			for range 2 { // a count changes nothing the next one sees
				n, err := e.store.CountOpenSlots(e.ctx)
				require.NoError(t, err, msg)
				require.Equal(t, want, n, msg)
			}
		}
		count(0, "an empty store")

		c := e.claim("")
		open := e.configure(c.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 2})
		count(0, "slots of a claim without a draft are not queued")
		e.draft(c.ID)
		count(2, "the first draft queues the claim's open slots")

		physics := e.claim("physics")
		e.draft(physics.ID)
		e.configure(physics.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1}, slots.RoleCount{Role: slots.RoleSupporter, Count: 2})
		count(5, "every domain and role")

		a, b := e.agent("A"), e.agent("B")
		_, err := e.svc.Take(identity.WithKey(e.ctx, a), c.ID, open[0].ID)
		require.NoError(t, err)
		count(4, "a take leaves the queue")
		_, err = e.svc.Take(identity.WithKey(e.ctx, b), c.ID, open[0].ID)
		requireCode(t, slots.ErrSlotTaken, err)
		count(4, "a race lost moves nothing")

		job, err := e.svc.TakeNext(identity.WithKey(e.ctx, b), slots.JobQuery{Domain: "physics"})
		require.NoError(t, err)
		count(3, "a take-next leaves the queue")
		_, err = e.svc.Done(identity.WithKey(e.ctx, b), physics.ID, job.Slot.ID)
		require.NoError(t, err)
		count(3, "a done slot was already out")

		e.configure(c.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 3})
		count(5, "a reconfiguration replaces the open slots and keeps the taken one")

		e.clock.Advance(time.Minute)
		n, err := e.svc.Sweep(e.ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		count(6, "a lapsed lease swept re-opens its slot")

		_, err = e.svc.Take(identity.WithKey(e.ctx, a), c.ID, open[0].ID)
		require.NoError(t, err)
		e.clock.Advance(time.Minute)
		_, err = e.svc.Take(identity.WithKey(e.ctx, b), c.ID, open[0].ID)
		require.NoError(t, err, "a lapsed slot taken over")
		count(5, "a lapsed slot taken over was out of the queue and stays out")

		// The count's bookkeeping leaves every remaining slot to the picks.
		taken := 0
		for _, name := range []string{"C", "D", "E", "F", "G", "H"} {
			_, err := e.svc.TakeNext(identity.WithKey(e.ctx, e.agent(name)), slots.JobQuery{})
			if err == nil {
				taken++
			}
		}
		require.Equal(t, 5, taken)
		count(0, "all taken")

		done, cancel := context.WithCancel(e.ctx)
		cancel()
		_, err = e.store.CountOpenSlots(done)
		require.ErrorIs(t, err, context.Canceled, "a done context is reported as itself")
	})
}
