package storetest

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// runDoneBatches checks FinishSlots and the Service's coalesced dones.
func runDoneBatches(t *testing.T, newStores NewStores) {
	t.Run("FinishSlots", func(t *testing.T) {
		t.Parallel()
		stores := newStores(t)
		st := stores.Slots
		clock := NewClock()
		svc := slots.New(st, slots.WithClock(clock.Now), slots.WithLease(time.Minute))
		e := &slotsEnv{t: t, ctx: t.Context(), svc: svc, ids: newIdentity(stores.Identity), clock: clock}
		a, b := e.agent("A"), e.agent("B")
		ids := e.queuedClaims(3, slots.RoleCount{Role: slots.RoleCritic, Count: 2})
		var mine []slots.Slot
		var third slots.Slot
		for _, id := range ids[:2] {
			job, err := svc.TakeNext(identity.WithKey(e.ctx, a), slots.JobQuery{})
			require.NoError(t, err)
			require.Equal(t, id, job.Claim.ID)
			mine = append(mine, job.Slot)
		}
		clock.Advance(30 * time.Second)
		job, err := svc.TakeNext(identity.WithKey(e.ctx, b), slots.JobQuery{})
		require.NoError(t, err)
		theirs := job.Slot
		open, err := svc.Slots(e.ctx, ids[2])
		require.NoError(t, err)
		job, err = svc.TakeNext(identity.WithKey(e.ctx, a), slots.JobQuery{})
		require.NoError(t, err)
		third = job.Slot                // A's seat on the third claim, taken at +30 s
		clock.Advance(31 * time.Second) // A's first two leases lapsed; the third has not

		now := clock.Now()
		fin := func(sl slots.Slot, k identity.Key) slots.FinishParams {
			return slots.FinishParams{ClaimID: sl.ClaimID, SlotID: sl.ID, KeyID: k.ID, Now: now, Credit: slots.RewardRoleSlot}
		}
		batch := []slots.FinishParams{
			fin(third, a),   // done
			fin(theirs, a),  // not the owner
			fin(open[1], a), // open: not taken
			{ClaimID: ids[0], SlotID: "slot_missing", KeyID: a.ID, Now: now, Credit: 10},
			{ClaimID: ids[1], SlotID: mine[0].ID, KeyID: a.ID, Now: now, Credit: 10}, // another claim's slot
			fin(mine[1], a), // the lease lapsed
			fin(theirs, b),  // done
		}
		res, err := st.FinishSlots(e.ctx, batch)
		require.NoError(t, err)
		require.Len(t, res, len(batch))
		require.NoError(t, res[0].Err)
		require.Equal(t, slots.StatusDone, res[0].Slot.Status)
		require.Equal(t, now, res[0].Slot.DoneAt)
		require.Equal(t, third.ID, res[0].Slot.ID)
		requireCode(t, slots.ErrNotSlotOwner, res[1].Err)
		requireCode(t, slots.ErrSlotNotTaken, res[2].Err)
		requireCode(t, slots.ErrSlotNotFound, res[3].Err)
		requireCode(t, slots.ErrSlotNotFound, res[4].Err)
		requireCode(t, slots.ErrSlotNotTaken, res[5].Err)
		require.NoError(t, res[6].Err)
		require.Equal(t, b.ID, res[6].Slot.APIKeyID)

		// Again, with a slot named twice: one done, once credited.
		res, err = st.FinishSlots(e.ctx, []slots.FinishParams{fin(third, a), fin(theirs, b), fin(theirs, b)})
		require.NoError(t, err)
		for _, r := range res {
			requireCode(t, slots.ErrSlotNotTaken, r.Err)
		}
		for k, want := range map[string]int64{a.ID: slots.RewardRoleSlot, b.ID: slots.RewardRoleSlot} {
			bal, err := svc.Balance(e.ctx, k)
			require.NoError(t, err)
			require.Equal(t, want, bal, "credited once per slot done")
		}
		res, err = st.FinishSlots(e.ctx, nil)
		require.NoError(t, err)
		require.Empty(t, res)
	})

	// A batch of distinct slots, refusals among them, is served as one
	// (a slot named twice sends the whole batch item by item): each
	// refusal says why, and a refused finish takes nothing.
	t.Run("RefusedInOneBatch", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores, slots.WithLease(time.Minute))
		st, svc, clock := e.svc.Store(), e.svc, e.clock
		a, b := e.agent("A"), e.agent("B")
		ids := e.queuedClaims(6, slots.RoleCount{Role: slots.RoleCritic, Count: 2})
		take := func(k identity.Key) slots.Slot {
			job, err := svc.TakeNext(identity.WithKey(e.ctx, k), slots.JobQuery{})
			require.NoError(t, err)
			return job.Slot
		}
		lapsed := []slots.Slot{take(a), take(a), take(a)} // claims 0, 1 and 2
		clock.Advance(30 * time.Second)
		theirs, fresh := take(b), take(a) // claim 0's second seat; claim 3's first
		require.Equal(t, ids[3], fresh.ClaimID)
		open, err := svc.Slots(e.ctx, ids[4])
		require.NoError(t, err)
		clock.Advance(31 * time.Second) // the first three leases lapsed
		now := clock.Now()
		fin := func(sl slots.Slot, k identity.Key) slots.FinishParams {
			return slots.FinishParams{ClaimID: sl.ClaimID, SlotID: sl.ID, KeyID: k.ID, Now: now, Credit: slots.RewardRoleSlot}
		}
		res, err := st.FinishSlots(e.ctx, []slots.FinishParams{
			fin(fresh, a),
			fin(theirs, a),
			fin(open[0], a),
			{ClaimID: ids[0], SlotID: "slot_missing", KeyID: a.ID, Now: now, Credit: 10},
			{ClaimID: ids[1], SlotID: lapsed[0].ID, KeyID: a.ID, Now: now, Credit: 10}, // another claim's slot
			fin(lapsed[1], a),
		})
		require.NoError(t, err)
		require.Len(t, res, 6)
		require.NoError(t, res[0].Err)
		require.Equal(t, slots.StatusDone, res[0].Slot.Status)
		for i, want := range []*store.Error{slots.ErrNotSlotOwner, slots.ErrSlotNotTaken, slots.ErrSlotNotFound, slots.ErrSlotNotFound, slots.ErrSlotNotTaken} {
			requireCode(t, want, res[i+1].Err, "item %d", i+1)
		}

		next := func(f slots.FinishParams, k identity.Key) slots.FinishTakeParams {
			return slots.FinishTakeParams{Finish: f, Next: slots.TakeNextParams{
				Next:  slots.NextSlotParams{AgentKeyID: k.ID, Random: -1},
				Agent: slots.Agent{KeyID: k.ID, Name: k.Name}, Now: now,
			}}
		}
		both, err := st.FinishAndTakeNextSlots(e.ctx, []slots.FinishTakeParams{
			next(fin(theirs, b), b),
			next(fin(lapsed[2], a), a),
			next(fin(open[1], b), b),
			next(slots.FinishParams{ClaimID: ids[0], SlotID: "slot_missing", KeyID: a.ID, Now: now, Credit: 10}, a),
		})
		require.NoError(t, err)
		require.Len(t, both, 4)
		require.NoError(t, both[0].Err)
		require.Equal(t, slots.StatusDone, both[0].Slot.Status)
		require.NoError(t, both[0].NextErr)
		require.Equal(t, b.ID, both[0].Next.Slot.APIKeyID)
		requireCode(t, slots.ErrSlotNotTaken, both[1].Err)
		requireCode(t, slots.ErrSlotNotTaken, both[2].Err)
		requireCode(t, slots.ErrSlotNotFound, both[3].Err)
		for i, r := range both[1:] {
			require.Zero(t, r.Next, "item %d: a refused finish takes nothing", i+1)
		}
	})

	t.Run("TakeNextSlots", func(t *testing.T) {
		t.Parallel()
		stores := newStores(t)
		st := stores.Slots
		clock := NewClock()
		svc := slots.New(st, slots.WithClock(clock.Now))
		e := &slotsEnv{t: t, ctx: t.Context(), svc: svc, ids: newIdentity(stores.Identity), clock: clock}
		ids := e.queuedClaims(3, slots.RoleCount{Role: slots.RoleCritic, Count: 2}, slots.RoleCount{Role: slots.RoleDefender, Count: 1})
		keys := make([]identity.Key, 8)
		for i := range keys {
			keys[i] = e.agent(fmt.Sprint("batch-", i))
		}
		// keys[0] holds a seat of the first claim: the oldest slots are
		// not its to take.
		first, err := svc.TakeNext(identity.WithKey(e.ctx, keys[0]), slots.JobQuery{})
		require.NoError(t, err)
		require.Equal(t, ids[0], first.Claim.ID)

		now := clock.Now()
		take := func(k identity.Key, role slots.Role, random float64) slots.TakeNextParams {
			return slots.TakeNextParams{
				Next:  slots.NextSlotParams{Role: role, AgentKeyID: k.ID, Random: random},
				Agent: slots.Agent{KeyID: k.ID, Name: k.Name}, Now: now,
			}
		}
		batch := []slots.TakeNextParams{
			take(keys[0], "", -1),
			take(keys[1], "", -1),
			take(keys[2], "", -1),
			take(keys[3], slots.RoleDefender, -1),
			take(keys[4], slots.RoleDefender, -1),
			take(keys[5], "", 0.5),
		}
		res, err := st.TakeNextSlots(e.ctx, batch)
		require.NoError(t, err)
		require.Len(t, res, len(batch))
		got := map[string]bool{first.Slot.ID: true}
		for i, r := range res {
			require.NoError(t, r.Err, "item %d", i)
			require.Equal(t, batch[i].Agent.KeyID, r.Job.Slot.APIKeyID, "item %d", i)
			require.Equal(t, slots.StatusTaken, r.Job.Slot.Status)
			require.Equal(t, now, r.Job.Slot.TakenAt)
			require.Equal(t, r.Job.Slot.ClaimID, r.Job.Claim.ID)
			require.Len(t, r.Job.Comments, 1)
			require.False(t, got[r.Job.Slot.ID], "slot %s handed out twice", r.Job.Slot.ID)
			got[r.Job.Slot.ID] = true
		}
		require.NotEqual(t, ids[0], res[0].Job.Claim.ID, "not a claim the agent holds")
		require.Equal(t, slots.RoleDefender, res[3].Job.Slot.Role)
		require.Equal(t, slots.RoleDefender, res[4].Job.Slot.Role)

		// Two seats are left; three agents ask.
		res, err = st.TakeNextSlots(e.ctx, []slots.TakeNextParams{take(keys[6], "", -1), take(keys[7], "", -1), take(keys[0], slots.RoleDefender, -1)})
		require.NoError(t, err)
		n := 0
		for _, r := range res {
			if r.Err == nil {
				n++
				require.False(t, got[r.Job.Slot.ID])
				got[r.Job.Slot.ID] = true
				continue
			}
			requireCode(t, slots.ErrNoJob, r.Err)
		}
		require.Len(t, got, 9, "every seat taken once")
		require.GreaterOrEqual(t, n, 2)
		for _, id := range ids {
			list, err := svc.Slots(e.ctx, id)
			require.NoError(t, err)
			holders := map[string]bool{}
			for _, sl := range list {
				require.Equal(t, slots.StatusTaken, sl.Status)
				require.False(t, holders[sl.APIKeyID], "two seats of %s for %s", id, sl.APIKeyID)
				holders[sl.APIKeyID] = true
			}
		}
	})

	for _, wait := range []time.Duration{0, time.Millisecond} {
		t.Run(fmt.Sprint("RaceDoneBatching/wait=", wait), func(t *testing.T) {
			t.Parallel()
			e := newSlotsEnv(t, newStores, slots.WithDoneBatching(wait))
			const agents, claims, retries = 16, 6, 3
			keys := make([]identity.Key, agents)
			for i := range keys {
				keys[i] = e.agent(fmt.Sprint("finisher-", i))
			}
			for rep := 0; rep < raceRepeats; rep++ {
				e.queuedClaims(claims, slots.RoleCount{Role: slots.RoleCritic, Count: 4})
				held := make([][]slots.Job, agents)
				concurrently(agents, func(i int) {
					for {
						job, err := e.svc.TakeNext(identity.WithKey(e.ctx, keys[i]), slots.JobQuery{})
						if err != nil {
							return
						}
						held[i] = append(held[i], job)
					}
				})
				var seats atomic.Int64
				tally := newDoneTally(agents * claims * retries)
				concurrently(agents*retries, func(n int) {
					i := n % agents
					for _, job := range held[i] {
						if n < agents {
							seats.Add(1)
						}
						_, err := e.svc.Done(identity.WithKey(e.ctx, keys[i]), job.Claim.ID, job.Slot.ID)
						tally.add(err)
					}
				})
				tally.check(t)
				require.EqualValues(t, claims*4, seats.Load(), "every seat was taken")
				require.Equal(t, seats.Load(), tally.ok.Load(), "each seat done once")
				require.Equal(t, seats.Load()*(retries-1), tally.notTaken.Load(), "every other done refused")
			}
			var total int64
			for _, k := range keys {
				bal, err := e.svc.Balance(e.ctx, k.ID)
				require.NoError(t, err)
				total += bal
			}
			require.EqualValues(t, raceRepeats*claims*4*slots.RewardRoleSlot, total, "credited once per seat")
		})
	}
}

// doneTally counts concurrent Done answers: done, refused as not taken, and
// any other error, which fails the test.
type doneTally struct {
	ok, notTaken atomic.Int64
	errs         chan error
}

func newDoneTally(calls int) *doneTally { return &doneTally{errs: make(chan error, calls)} }

func (d *doneTally) add(err error) {
	switch {
	case err == nil:
		d.ok.Add(1)
	case errors.Is(err, slots.ErrSlotNotTaken):
		d.notTaken.Add(1)
	default:
		d.errs <- err
	}
}

// check fails t on any other error; call it when every Done returned.
func (d *doneTally) check(t *testing.T) {
	t.Helper()
	close(d.errs)
	for err := range d.errs {
		require.NoError(t, err)
	}
}
