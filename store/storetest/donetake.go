package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// runDoneTakeNext checks finish-and-take-next (slots.Service.DoneAndTakeNext,
// the store's FinishAndTakeNextSlots) and its coalescing.
func runDoneTakeNext(t *testing.T, newStores NewStores) {
	t.Run("FinishAndTakeNextSlots", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		st, svc, clock := e.svc.Store(), e.svc, e.clock
		ids := e.queuedClaims(4, slots.RoleCount{Role: slots.RoleCritic, Count: 2}, slots.RoleCount{Role: slots.RoleDefender, Count: 1})
		keys := make([]identity.Key, 6)
		held := make([]slots.Job, len(keys))
		for i := range keys {
			keys[i] = e.agent(fmt.Sprint("finisher-", i))
			if i < 5 {
				job, err := svc.TakeNext(identity.WithKey(e.ctx, keys[i]), slots.JobQuery{})
				require.NoError(t, err)
				held[i] = job
			}
		}
		// The oldest five seats are held: the first claim's three, two of
		// the second's.
		require.Equal(t, ids[0], held[0].Claim.ID)
		require.Equal(t, ids[1], held[4].Claim.ID)

		clock.Advance(time.Second)
		now := clock.Now()
		item := func(i int, job slots.Job, role slots.Role, random float64) slots.FinishTakeParams {
			k := keys[i]
			return slots.FinishTakeParams{
				Finish: slots.FinishParams{ClaimID: job.Claim.ID, SlotID: job.Slot.ID, KeyID: k.ID, Now: now, Credit: slots.RewardRoleSlot},
				Next: slots.TakeNextParams{
					Next:  slots.NextSlotParams{Role: role, AgentKeyID: k.ID, Random: random},
					Agent: slots.Agent{KeyID: k.ID, Name: k.Name}, Now: now,
				},
			}
		}
		batch := []slots.FinishTakeParams{
			item(0, held[0], "", -1),
			item(1, held[1], "", -1),
			item(2, held[2], slots.RoleDefender, -1),
			item(3, held[3], slots.RoleDefender, -1),
			item(4, held[4], "", 0.5),
			item(5, held[0], "", -1), // not its slot: refused, no take
		}
		res, err := st.FinishAndTakeNextSlots(e.ctx, batch)
		require.NoError(t, err)
		require.Len(t, res, len(batch))
		got := map[string]bool{}
		for _, j := range held[:5] {
			got[j.Slot.ID] = true
		}
		for i, r := range res[:5] {
			require.NoError(t, r.Err, "item %d", i)
			require.Equal(t, slots.StatusDone, r.Slot.Status, "item %d", i)
			require.Equal(t, held[i].Slot.ID, r.Slot.ID)
			require.Equal(t, now, r.Slot.DoneAt)
			require.NoError(t, r.NextErr, "item %d", i)
			require.Equal(t, keys[i].ID, r.Next.Slot.APIKeyID)
			require.Equal(t, slots.StatusTaken, r.Next.Slot.Status)
			require.Equal(t, now, r.Next.Slot.TakenAt)
			require.Equal(t, r.Next.Slot.ClaimID, r.Next.Claim.ID)
			require.Len(t, r.Next.Comments, 1)
			require.NotEqual(t, held[i].Claim.ID, r.Next.Claim.ID, "item %d: never a second seat of the claim it finished", i)
			require.False(t, got[r.Next.Slot.ID], "slot %s handed out twice", r.Next.Slot.ID)
			got[r.Next.Slot.ID] = true
		}
		require.Equal(t, slots.RoleDefender, res[2].Next.Slot.Role)
		require.Equal(t, slots.RoleDefender, res[3].Next.Slot.Role)
		requireCode(t, slots.ErrNotSlotOwner, res[5].Err)
		require.Zero(t, res[5].Next)
		require.Len(t, got, 10)

		// Two seats are left; three agents finish and ask.
		var again []slots.FinishTakeParams
		for i := range 3 {
			again = append(again, item(i, res[i].Next, "", -1))
		}
		res, err = st.FinishAndTakeNextSlots(e.ctx, again)
		require.NoError(t, err)
		n := 0
		for i, r := range res {
			require.NoError(t, r.Err, "item %d", i)
			require.Equal(t, slots.StatusDone, r.Slot.Status)
			if r.NextErr == nil {
				n++
				require.False(t, got[r.Next.Slot.ID])
				got[r.Next.Slot.ID] = true
				continue
			}
			requireCode(t, slots.ErrNoJob, r.NextErr)
		}
		require.GreaterOrEqual(t, n, 1)
		require.Len(t, got, 10+n, "every seat taken once")
		for i, k := range keys {
			bal, err := svc.Balance(e.ctx, k.ID)
			require.NoError(t, err)
			want := int64(0)
			switch {
			case i < 3:
				want = 2 * slots.RewardRoleSlot
			case i < 5:
				want = slots.RewardRoleSlot
			}
			require.Equal(t, want, bal, "agent %d credited once per seat done", i)
		}
		res, err = st.FinishAndTakeNextSlots(e.ctx, nil)
		require.NoError(t, err)
		require.Empty(t, res)
	})

	// The last seats: three agents ask for their next (finishing a seat
	// first, or not) with two seats left, the older on a claim the first
	// agent holds a seat of. Both seats are handed out (the one the first
	// agent may not take goes to another), the agent left over is answered
	// ErrNoJob, and no agent is seated twice on a claim.
	lastSeats := func(t *testing.T, ask func(e *slotsEnv, keys []identity.Key, held []slots.Job, now time.Time) []slots.JobResult) {
		e := newSlotsEnv(t, newStores)
		e.queuedClaims(3, slots.RoleCount{Role: slots.RoleCritic, Count: 1})
		g := e.queuedClaims(1, slots.RoleCount{Role: slots.RoleCritic, Count: 2})[0]
		h := e.queuedClaims(1, slots.RoleCount{Role: slots.RoleCritic, Count: 1})[0]
		keys := make([]identity.Key, 3)
		held := make([]slots.Job, len(keys))
		for i := range keys {
			keys[i] = e.agent(fmt.Sprint("last-", i))
			job, err := e.svc.TakeNext(identity.WithKey(e.ctx, keys[i]), slots.JobQuery{})
			require.NoError(t, err)
			held[i] = job
		}
		seatOnG, err := e.svc.TakeNext(identity.WithKey(e.ctx, keys[0]), slots.JobQuery{})
		require.NoError(t, err)
		require.Equal(t, g, seatOnG.Claim.ID)

		e.clock.Advance(time.Second)
		res := ask(e, keys, held, e.clock.Now())
		require.Len(t, res, len(keys))
		claims := map[string]bool{}
		noJob := 0
		for i, r := range res {
			if r.Err != nil {
				requireCode(t, slots.ErrNoJob, r.Err)
				noJob++
				continue
			}
			require.Equal(t, keys[i].ID, r.Job.Slot.APIKeyID)
			require.False(t, i == 0 && r.Job.Claim.ID == g, "the first agent seated twice on the claim it holds")
			require.False(t, claims[r.Job.Claim.ID])
			claims[r.Job.Claim.ID] = true
		}
		require.Equal(t, map[string]bool{g: true, h: true}, claims, "both seats left were handed out")
		require.Equal(t, 1, noJob)
	}
	next := func(k identity.Key, now time.Time) slots.TakeNextParams {
		return slots.TakeNextParams{
			Next:  slots.NextSlotParams{AgentKeyID: k.ID, Random: -1},
			Agent: slots.Agent{KeyID: k.ID, Name: k.Name}, Now: now,
		}
	}
	t.Run("FinishAndTakeNextLastSeats", func(t *testing.T) {
		t.Parallel()
		lastSeats(t, func(e *slotsEnv, keys []identity.Key, held []slots.Job, now time.Time) []slots.JobResult {
			var batch []slots.FinishTakeParams
			for i, k := range keys {
				batch = append(batch, slots.FinishTakeParams{
					Finish: slots.FinishParams{ClaimID: held[i].Claim.ID, SlotID: held[i].Slot.ID, KeyID: k.ID, Now: now, Credit: slots.RewardRoleSlot},
					Next:   next(k, now),
				})
			}
			res, err := e.svc.Store().FinishAndTakeNextSlots(e.ctx, batch)
			require.NoError(t, err)
			out := make([]slots.JobResult, len(res))
			for i, r := range res {
				require.NoError(t, r.Err, "item %d", i)
				require.Equal(t, slots.StatusDone, r.Slot.Status, "item %d", i)
				out[i] = slots.JobResult{Job: r.Next, Err: r.NextErr}
			}
			return out
		})
	})
	t.Run("TakeNextSlotsLastSeats", func(t *testing.T) {
		t.Parallel()
		lastSeats(t, func(e *slotsEnv, keys []identity.Key, _ []slots.Job, now time.Time) []slots.JobResult {
			var batch []slots.TakeNextParams
			for _, k := range keys {
				batch = append(batch, next(k, now))
			}
			res, err := e.svc.Store().TakeNextSlots(e.ctx, batch)
			require.NoError(t, err)
			return res
		})
	})

	t.Run("DoneAndTakeNext", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores, slots.WithLease(time.Minute))
		a, b := e.agent("A"), e.agent("B")
		ids := e.queuedClaims(2, slots.RoleCount{Role: slots.RoleCritic, Count: 2})
		job, err := e.svc.TakeNext(identity.WithKey(e.ctx, a), slots.JobQuery{})
		require.NoError(t, err)
		_, err = e.svc.DoneAndTakeNext(identity.WithKey(e.ctx, a), job.Claim.ID, job.Slot.ID, slots.JobQuery{Strategy: "sideways"})
		requireCode(t, &store.Error{Kind: store.ErrInvalid, Code: "invalid_strategy"}, err)
		_, err = e.svc.DoneAndTakeNext(identity.WithKey(e.ctx, b), job.Claim.ID, job.Slot.ID, slots.JobQuery{})
		requireCode(t, slots.ErrNotSlotOwner, err)

		dn, err := e.svc.DoneAndTakeNext(identity.WithKey(e.ctx, a), job.Claim.ID, job.Slot.ID, slots.JobQuery{})
		require.NoError(t, err)
		require.Equal(t, slots.StatusDone, dn.Slot.Status)
		require.NotNil(t, dn.Next)
		require.Equal(t, ids[1], dn.Next.Claim.ID, "not the claim it just finished")
		require.Equal(t, a.ID, dn.Next.Slot.APIKeyID)
		require.Equal(t, e.clock.Now().Add(time.Minute), dn.Next.Slot.LeaseExpiresAt, "the lease of a take")

		_, err = e.svc.DoneAndTakeNext(identity.WithKey(e.ctx, a), job.Claim.ID, job.Slot.ID, slots.JobQuery{})
		requireCode(t, slots.ErrSlotNotTaken, err, "done once")
		last, err := e.svc.DoneAndTakeNext(identity.WithKey(e.ctx, a), dn.Next.Claim.ID, dn.Next.Slot.ID, slots.JobQuery{})
		require.NoError(t, err)
		require.Nil(t, last.Next, "A holds a seat of every claim")
		require.Equal(t, slots.StatusDone, last.Slot.Status)
		bal, err := e.svc.Balance(e.ctx, a.ID)
		require.NoError(t, err)
		require.EqualValues(t, 2*slots.RewardRoleSlot, bal)
	})

	for name, opts := range map[string][]slots.Option{"": {slots.WithoutBatching()}, "/batched": {slots.WithDoneBatching(0)}, "/batched-wait": {slots.WithDoneBatching(time.Millisecond), slots.WithTakeBatching(0)}} {
		t.Run("RaceDoneAndTakeNext"+name, func(t *testing.T) {
			t.Parallel()
			raceDoneAndTakeNext(t, newSlotsEnv(t, newStores, opts...))
		})
	}
}

// raceDoneAndTakeNext: 24 agents work through 10 claims of 5 seats each,
// TakeNext once and then DoneAndTakeNext until no seat is left for them,
// half oldest-first and half at random, repeated: every seat taken once
// and done once, never two seats per agent per claim, each credited once.
func raceDoneAndTakeNext(t *testing.T, e *slotsEnv) {
	const agents, claims, seats = 24, 10, 5
	keys := make([]identity.Key, agents)
	for i := range keys {
		keys[i] = e.agent(fmt.Sprint("worker-", i))
	}
	for rep := 0; rep < raceRepeats; rep++ {
		claimIDs := e.queuedClaims(claims, slots.RoleCount{Role: slots.RoleCritic, Count: 3}, slots.RoleCount{Role: slots.RoleDefender, Count: 2})
		var mu sync.Mutex
		got := map[string]string{} // slot ID -> the agent it was handed to
		done := map[string]int{}   // slot ID -> dones that succeeded
		errs := make(chan error, agents)
		handed := func(i int, job slots.Job, mine map[string]bool) error {
			if mine[job.Claim.ID] || job.Slot.ClaimID != job.Claim.ID || job.Slot.APIKeyID != keys[i].ID || job.Slot.Status != slots.StatusTaken {
				return fmt.Errorf("agent %d was handed slot %s of claim %s (%s, held by %s)", i, job.Slot.ID, job.Claim.ID, job.Slot.Status, job.Slot.APIKeyID)
			}
			mine[job.Claim.ID] = true
			mu.Lock()
			defer mu.Unlock()
			if prev, ok := got[job.Slot.ID]; ok {
				return fmt.Errorf("slot %s handed to agent %s and agent %d", job.Slot.ID, prev, i)
			}
			got[job.Slot.ID] = keys[i].ID
			return nil
		}
		concurrently(agents, func(i int) {
			q := slots.JobQuery{}
			if i%2 == 1 {
				q.Strategy = slots.StrategyRandom
			}
			mine := map[string]bool{}
			job, err := e.svc.TakeNext(identity.WithKey(e.ctx, keys[i]), q)
			if errors.Is(err, slots.ErrNoJob) {
				return
			}
			if err == nil {
				err = handed(i, job, mine)
			}
			for calls := 0; err == nil; calls++ {
				if calls > claims {
					err = fmt.Errorf("agent %d: a job on more claims than there are", i)
					break
				}
				var dn slots.DoneNext
				dn, err = e.svc.DoneAndTakeNext(identity.WithKey(e.ctx, keys[i]), job.Claim.ID, job.Slot.ID, q)
				if err != nil {
					err = fmt.Errorf("agent %d: done and take next: %w", i, err)
					break
				}
				if dn.Slot.ID != job.Slot.ID || dn.Slot.Status != slots.StatusDone {
					err = fmt.Errorf("agent %d: done answered %+v for %s", i, dn.Slot, job.Slot.ID)
					break
				}
				mu.Lock()
				done[job.Slot.ID]++
				mu.Unlock()
				if dn.Next == nil {
					return
				}
				job = *dn.Next
				err = handed(i, job, mine)
			}
			errs <- err
		})
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Len(t, got, claims*seats, "every seat handed out once")
		require.Len(t, done, claims*seats, "every seat done")
		for id, n := range done {
			require.Equal(t, 1, n, "slot %s done once", id)
		}
		for _, id := range claimIDs {
			list, err := e.svc.Slots(e.ctx, id)
			require.NoError(t, err)
			holders := map[string]bool{}
			for _, s := range list {
				require.Equal(t, slots.StatusDone, s.Status, "every seat is done")
				require.Equal(t, got[s.ID], s.APIKeyID, "by the agent it was handed to")
				require.False(t, holders[s.APIKeyID], "agent %s holds two seats of %s", s.APIKeyID, id)
				holders[s.APIKeyID] = true
			}
		}
	}
	var total int64
	for _, k := range keys {
		bal, err := e.svc.Balance(e.ctx, k.ID)
		require.NoError(t, err)
		total += bal
	}
	require.EqualValues(t, raceRepeats*claims*seats*slots.RewardRoleSlot, total, "credited once per seat")
}
