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

// runTakeNext checks next-and-take (slots.Service.TakeNext, the store's
// TakeNextSlot): the job queue's rules with the take in one step.
func runTakeNext(t *testing.T, newStores NewStores) {
	runDoneTakeNext(t, newStores)
	t.Run("TakeNext", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores, slots.WithLease(time.Minute))
		a, b := e.agent("A"), e.agent("B")
		_, err := e.svc.TakeNext(identity.WithKey(e.ctx, a), slots.JobQuery{})
		requireCode(t, slots.ErrNoJob, err)

		first := e.claim("law")
		firstOpen := e.configure(first.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1}, slots.RoleCount{Role: slots.RoleDefender, Count: 1})
		_, err = e.svc.TakeNext(identity.WithKey(e.ctx, a), slots.JobQuery{})
		requireCode(t, slots.ErrNoJob, err, "a claim without a draft offers nothing")
		e.draft(first.ID)
		second := e.claim("art")
		e.draft(second.ID)
		secondOpen := e.configure(second.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 2})

		_, err = e.svc.TakeNext(identity.WithKey(e.ctx, a), slots.JobQuery{Strategy: "sideways"})
		requireCode(t, &store.Error{Kind: store.ErrInvalid, Code: "invalid_strategy"}, err)
		_, err = e.svc.TakeNext(identity.WithKey(e.ctx, a), slots.JobQuery{Role: "judge"})
		requireCode(t, &store.Error{Kind: store.ErrInvalid, Code: "invalid_role"}, err)
		_, err = e.svc.TakeNext(identity.WithKey(e.ctx, a), slots.JobQuery{Domain: "none"})
		requireCode(t, slots.ErrNoJob, err)

		e.clock.Advance(time.Second)
		job, err := e.svc.TakeNext(identity.WithKey(e.ctx, a), slots.JobQuery{})
		require.NoError(t, err)
		require.Equal(t, firstOpen[0].ID, job.Slot.ID, "the oldest eligible slot")
		require.Equal(t, slots.StatusTaken, job.Slot.Status)
		require.Equal(t, a.ID, job.Slot.APIKeyID, "taken for the caller")
		require.Equal(t, "A", job.Slot.AgentName)
		require.Equal(t, a.AvatarURL, job.Slot.AgentAvatarURL)
		require.Equal(t, e.clock.Now(), job.Slot.TakenAt)
		require.Equal(t, e.clock.Now().Add(time.Minute), job.Slot.LeaseExpiresAt)
		require.Equal(t, firstOpen[0].CreatedAt, job.Slot.CreatedAt)
		first.CommentCount = 1
		require.Equal(t, first, job.Claim)
		require.Len(t, job.Comments, 1)
		require.EqualValues(t, "draft", job.Comments[0].CommentType)
		list, err := e.svc.Slots(e.ctx, first.ID)
		require.NoError(t, err)
		require.Equal(t, job.Slot, list[0], "the store holds the slot as returned")

		job, err = e.svc.TakeNext(identity.WithKey(e.ctx, a), slots.JobQuery{})
		require.NoError(t, err)
		require.Equal(t, secondOpen[0].ID, job.Slot.ID, "the claim it holds is passed over")
		_, err = e.svc.TakeNext(identity.WithKey(e.ctx, a), slots.JobQuery{})
		requireCode(t, slots.ErrNoJob, err, "one seat per agent per claim")

		job, err = e.svc.TakeNext(identity.WithKey(e.ctx, b), slots.JobQuery{Role: slots.RoleDefender, Domain: "law"})
		require.NoError(t, err)
		require.Equal(t, firstOpen[1].ID, job.Slot.ID, "filters")
		job, err = e.svc.TakeNext(identity.WithKey(e.ctx, b), slots.JobQuery{Strategy: slots.StrategyRandom})
		require.NoError(t, err)
		require.Equal(t, secondOpen[1].ID, job.Slot.ID)
		_, err = e.svc.NextJob(e.ctx, slots.JobQuery{})
		requireCode(t, slots.ErrNoJob, err, "taken slots leave the queue")

		done, err := e.svc.Done(identity.WithKey(e.ctx, b), second.ID, secondOpen[1].ID)
		require.NoError(t, err)
		require.Equal(t, slots.StatusDone, done.Status)

		// A lapsed take, once released, is offered again, to another agent.
		e.clock.Advance(time.Minute)
		n, err := e.svc.Sweep(e.ctx)
		require.NoError(t, err)
		require.Equal(t, 3, n)
		c := e.agent("C")
		job, err = e.svc.TakeNext(identity.WithKey(e.ctx, c), slots.JobQuery{Role: slots.RoleCritic, Domain: "art"})
		require.NoError(t, err)
		require.Equal(t, secondOpen[0].ID, job.Slot.ID)
		require.Equal(t, c.ID, job.Slot.APIKeyID)
	})

	for name, opts := range map[string][]slots.Option{"": {slots.WithoutBatching()}, "/batched": {slots.WithTakeBatching(0)}, "/batched-wait": {slots.WithTakeBatching(time.Millisecond)}} {
		t.Run("RaceTakeNextManyAgents"+name, func(t *testing.T) {
			t.Parallel()
			raceTakeNextManyAgents(t, newSlotsEnv(t, newStores, opts...))
		})
	}
	t.Run("JobQueueSkip", func(t *testing.T) {
		t.Parallel()
		stores := newStores(t)
		st := stores.Slots
		clock := NewClock()
		svc := slots.New(st, slots.WithClock(clock.Now))
		e := &slotsEnv{t: t, ctx: t.Context(), svc: svc, ids: newIdentity(stores.Identity), clock: clock}
		ids := e.queuedClaims(3, slots.RoleCount{Role: slots.RoleCritic, Count: 2})
		var all []slots.Slot
		for _, id := range ids {
			list, err := svc.Slots(e.ctx, id)
			require.NoError(t, err)
			all = append(all, list...)
		}
		a := e.agent("A")
		_, err := svc.Take(identity.WithKey(e.ctx, a), ids[0], all[1].ID)
		require.NoError(t, err)
		open := append([]slots.Slot{all[0]}, all[2:]...) // eligible for nobody in particular
		for skip, want := range []slots.Slot{open[0], open[1], open[2], open[3], open[4], open[4]} {
			job, err := st.NextOpenSlot(e.ctx, slots.NextSlotParams{Random: -1, Skip: skip})
			require.NoError(t, err)
			require.Equal(t, want.ID, job.Slot.ID, "skip %d", skip)
		}
		job, err := st.NextOpenSlot(e.ctx, slots.NextSlotParams{Random: -1, Skip: 100})
		require.NoError(t, err)
		require.Equal(t, open[4].ID, job.Slot.ID, "fewer than skip: the youngest")
		// For A, the first claim's open seat is not eligible.
		for skip, want := range []slots.Slot{all[2], all[3], all[4]} {
			job, err := st.NextOpenSlot(e.ctx, slots.NextSlotParams{AgentKeyID: a.ID, Random: -1, Skip: skip})
			require.NoError(t, err)
			require.Equal(t, want.ID, job.Slot.ID, "agent, skip %d", skip)
		}
		job, err = st.NextOpenSlot(e.ctx, slots.NextSlotParams{Role: slots.RoleDefender, Random: -1, Skip: 1})
		requireCode(t, slots.ErrNoJob, err)
	})

	t.Run("TakeSkipIsAHint", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		st, clock := e.svc.Store(), e.clock
		ids := e.queuedClaims(3, slots.RoleCount{Role: slots.RoleCritic, Count: 2})
		open := map[string]bool{}
		for _, id := range ids {
			list, err := e.svc.Slots(e.ctx, id)
			require.NoError(t, err)
			for _, sl := range list {
				open[sl.ID] = true
			}
		}
		params := func(k identity.Key, skip int) slots.TakeNextParams {
			return slots.TakeNextParams{Next: slots.NextSlotParams{AgentKeyID: k.ID, Random: -1, Skip: skip},
				Agent: slots.Agent{KeyID: k.ID, Name: k.Name}, Now: clock.Now()}
		}
		taken := func(job slots.Job, k identity.Key) {
			t.Helper()
			require.True(t, open[job.Slot.ID], "slot %s was open", job.Slot.ID)
			delete(open, job.Slot.ID)
			require.Equal(t, slots.StatusTaken, job.Slot.Status)
			require.Equal(t, k.ID, job.Slot.APIKeyID)
		}
		// Whatever the skip, past the queue's end or not, a take gets an
		// eligible seat while one is free: alone, in a batch, after a finish.
		a, b, c := e.agent("A"), e.agent("B"), e.agent("C")
		job, err := st.TakeNextSlot(e.ctx, params(a, 4))
		require.NoError(t, err)
		taken(job, a)
		first := job
		res, err := st.TakeNextSlots(e.ctx, []slots.TakeNextParams{params(b, 100), params(c, 100)})
		require.NoError(t, err)
		for i, k := range []identity.Key{b, c} {
			require.NoError(t, res[i].Err)
			taken(res[i].Job, k)
		}
		ft, err := st.FinishAndTakeNextSlots(e.ctx, []slots.FinishTakeParams{{
			Finish: slots.FinishParams{ClaimID: first.Claim.ID, SlotID: first.Slot.ID, KeyID: a.ID, Now: clock.Now(), Credit: slots.RewardRoleSlot},
			Next:   params(a, 100),
		}})
		require.NoError(t, err)
		require.NoError(t, ft[0].Err)
		require.NoError(t, ft[0].NextErr)
		taken(ft[0].Next, a)
		// Two seats left and two takers that skip one: one past it, one
		// before it.
		require.Len(t, open, 2)
		d, f := e.agent("D"), e.agent("F")
		res, err = st.TakeNextSlots(e.ctx, []slots.TakeNextParams{params(d, 1), params(f, 1)})
		require.NoError(t, err)
		for i, k := range []identity.Key{d, f} {
			require.NoError(t, res[i].Err)
			taken(res[i].Job, k)
		}
		_, err = st.TakeNextSlot(e.ctx, params(e.agent("G"), 3))
		requireCode(t, slots.ErrNoJob, err)
	})

	t.Run("RaceTakeNextOneAgent", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		a := e.agent("greedy")
		const callers, claims = 8, 4
		for rep := 0; rep < raceRepeats; rep++ {
			want := map[string]bool{}
			for _, id := range e.queuedClaims(claims, slots.RoleCount{Role: slots.RoleCritic, Count: 4}) {
				want[id] = true
			}
			var mu sync.Mutex
			got := map[string]int{} // claim ID -> seats handed to the agent
			errs := make(chan error, callers)
			concurrently(callers, func(i int) {
				q := slots.JobQuery{}
				if i%2 == 1 {
					q.Strategy = slots.StrategyRandom
				}
				for calls := 0; calls <= claims; calls++ {
					job, err := e.svc.TakeNext(identity.WithKey(e.ctx, a), q)
					if errors.Is(err, slots.ErrNoJob) {
						return
					}
					if err != nil {
						errs <- fmt.Errorf("caller %d: take next: %w", i, err)
						return
					}
					mu.Lock()
					got[job.Claim.ID]++
					mu.Unlock()
				}
				errs <- fmt.Errorf("caller %d: more jobs than claims", i)
			})
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.Len(t, got, claims, "a seat on every claim")
			for id, n := range got {
				require.True(t, want[id])
				require.Equal(t, 1, n, "never two seats per agent per claim")
				list, err := e.svc.Slots(e.ctx, id)
				require.NoError(t, err)
				taken := 0
				for _, s := range list {
					if s.Status == slots.StatusTaken {
						taken++
					}
				}
				require.Equal(t, 1, taken, "claim %s", id)
			}
		}
	})
}

// queuedClaims creates n claims with a draft and the roles' open slots, and
// returns their IDs.
func (e *slotsEnv) queuedClaims(n int, roles ...slots.RoleCount) []string {
	e.t.Helper()
	var ids []string
	for range n {
		c := e.claim("")
		e.draft(c.ID)
		e.configure(c.ID, roles...)
		ids = append(ids, c.ID)
	}
	return ids
}

// raceTakeNextManyAgents: 32 agents loop TakeNext on 8 claims of 5 seats
// until the queue is empty, repeated: every seat handed out once, never two
// per agent per claim.
func raceTakeNextManyAgents(t *testing.T, e *slotsEnv) {
	const agents, claims, seats = 32, 8, 5
	keys := make([]identity.Key, agents)
	for i := range keys {
		keys[i] = e.agent(fmt.Sprint("taker-", i))
	}
	for rep := 0; rep < raceRepeats; rep++ {
		claimIDs := e.queuedClaims(claims, slots.RoleCount{Role: slots.RoleCritic, Count: 3}, slots.RoleCount{Role: slots.RoleDefender, Count: 2})
		var mu sync.Mutex
		got := map[string]string{} // slot ID -> the agent it was handed to
		errs := make(chan error, agents)
		concurrently(agents, func(i int) {
			q := slots.JobQuery{}
			if i%2 == 1 {
				q.Strategy = slots.StrategyRandom
			}
			mine := map[string]bool{}
			for calls := 0; ; calls++ {
				if calls > claims {
					errs <- fmt.Errorf("agent %d: a job on more claims than there are", i)
					return
				}
				job, err := e.svc.TakeNext(identity.WithKey(e.ctx, keys[i]), q)
				if errors.Is(err, slots.ErrNoJob) {
					return
				}
				if err != nil {
					errs <- fmt.Errorf("agent %d: take next: %w", i, err)
					return
				}
				if mine[job.Claim.ID] || job.Slot.ClaimID != job.Claim.ID || job.Slot.APIKeyID != keys[i].ID {
					errs <- fmt.Errorf("agent %d was handed slot %s of claim %s, which it holds", i, job.Slot.ID, job.Claim.ID)
					return
				}
				mine[job.Claim.ID] = true
				mu.Lock()
				if prev, ok := got[job.Slot.ID]; ok {
					errs <- fmt.Errorf("slot %s handed to agent %s and agent %d", job.Slot.ID, prev, i)
				}
				got[job.Slot.ID] = keys[i].ID
				mu.Unlock()
			}
		})
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Len(t, got, claims*seats, "every seat handed out once")
		for _, id := range claimIDs {
			list, err := e.svc.Slots(e.ctx, id)
			require.NoError(t, err)
			holders := map[string]bool{}
			for _, s := range list {
				require.Equal(t, slots.StatusTaken, s.Status, "every seat is taken")
				require.Equal(t, got[s.ID], s.APIKeyID, "held by the agent it was handed to")
				require.False(t, holders[s.APIKeyID], "agent %s holds two seats of %s", s.APIKeyID, id)
				holders[s.APIKeyID] = true
			}
		}
	}
}
