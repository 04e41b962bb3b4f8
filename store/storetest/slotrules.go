package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// runSlotRules walks every branch of slots.Slot.Takeable and FinishError
// through the store — the single finish, the batched one and the
// finish-and-take-next, each of which a backend decides inside its atomic
// step with its own copy of the rule (SQL, Lua) — and requires the store
// to answer as the Go function does of the slot it held, so a copy that
// drifts from the rule fails here.
func runSlotRules(t *testing.T, newStores NewStores) {
	finishers := map[string]struct {
		opts   []slots.Option
		finish func(e *slotsEnv, k identity.Key, claimID, slotID string) error
	}{
		"Done": {opts: []slots.Option{slots.WithoutBatching()}, finish: func(e *slotsEnv, k identity.Key, claimID, slotID string) error {
			_, err := e.svc.Done(identity.WithKey(e.ctx, k), claimID, slotID)
			return err
		}},
		"DoneBatched": {opts: []slots.Option{slots.WithDoneBatching(0)}, finish: func(e *slotsEnv, k identity.Key, claimID, slotID string) error {
			_, err := e.svc.Done(identity.WithKey(e.ctx, k), claimID, slotID)
			return err
		}},
		"DoneAndTakeNext": {finish: func(e *slotsEnv, k identity.Key, claimID, slotID string) error {
			// No seat has this role: the take after the finish finds none.
			_, err := e.svc.DoneAndTakeNext(identity.WithKey(e.ctx, k), claimID, slotID, slots.JobQuery{Role: slots.RoleAnswerer})
			return err
		}},
	}
	for name, f := range finishers {
		t.Run("SlotRules"+name, func(t *testing.T) {
			t.Parallel()
			e := newSlotsEnv(t, newStores, append([]slots.Option{slots.WithLease(time.Minute)}, f.opts...)...)
			a, b, c := e.agent("A"), e.agent("B"), e.agent("C")
			seat := func() (string, string) {
				cl := e.claim("")
				e.draft(cl.ID)
				return cl.ID, e.configure(cl.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1})[0].ID
			}
			held := func(claimID, slotID string) slots.Slot {
				list, err := e.svc.Slots(e.ctx, claimID)
				require.NoError(t, err)
				for _, s := range list {
					if s.ID == slotID {
						return s
					}
				}
				t.Fatalf("slot %s is gone", slotID)
				return slots.Slot{}
			}
			// finish requires the store to refuse (or allow) as FinishError
			// says of the slot it holds, and that to be want.
			finish := func(k identity.Key, claimID, slotID string, want *store.Error, why string) {
				t.Helper()
				rule := held(claimID, slotID).FinishError(k.ID, e.clock.Now())
				err := f.finish(e, k, claimID, slotID)
				if want == nil {
					require.NoError(t, rule, "the rule: %s", why)
					require.NoError(t, err, why)
					return
				}
				require.Equal(t, error(want), rule, "the rule: %s", why)
				requireCode(t, want, err, why)
			}
			// take requires the store to take (or refuse) as Takeable says.
			take := func(k identity.Key, claimID, slotID string, want bool, why string) {
				t.Helper()
				require.Equal(t, want, held(claimID, slotID).Takeable(e.clock.Now()), "the rule: %s", why)
				_, err := e.svc.Take(identity.WithKey(e.ctx, k), claimID, slotID)
				if want {
					require.NoError(t, err, why)
					return
				}
				requireCode(t, slots.ErrSlotTaken, err, why)
			}

			cl, open := seat()
			finish(a, cl, open, slots.ErrSlotNotTaken, "an open slot")

			cl, sl := seat()
			take(a, cl, sl, true, "an open slot")
			take(b, cl, sl, false, "a slot under a live lease")
			finish(b, cl, sl, slots.ErrNotSlotOwner, "another key's slot")
			e.clock.Advance(time.Minute - time.Millisecond)
			take(b, cl, sl, false, "a lease 1 ms from its end")
			finish(a, cl, sl, nil, "the holder, 1 ms before the lease ends")
			finish(a, cl, sl, slots.ErrSlotNotTaken, "a done slot, by its holder")
			finish(b, cl, sl, slots.ErrNotSlotOwner, "a done slot, by another key")
			take(b, cl, sl, false, "a done slot")

			cl, sl = seat()
			take(a, cl, sl, true, "an open slot")
			e.clock.Advance(time.Minute)
			finish(b, cl, sl, slots.ErrNotSlotOwner, "a lapsed slot, by another key: ownership is checked first")
			finish(a, cl, sl, slots.ErrSlotNotTaken, "a slot whose lease ended at this very millisecond")
			take(b, cl, sl, true, "a lapsed slot, before any sweep")
			take(c, cl, sl, false, "the slot another agent took over")
			finish(a, cl, sl, slots.ErrNotSlotOwner, "the slot its lapsed holder lost")
			finish(b, cl, sl, nil, "the new holder")
		})
	}
}
