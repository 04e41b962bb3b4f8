package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
)

// runSlotTimes: every backend keeps the times of claims, comments, slots
// and keys in milliseconds and gives them back in UTC (store.FromMillis), so a
// time a service returns equals the one a later read returns, and a time
// finer than a millisecond or in another zone reads back alike everywhere.
func runSlotTimes(t *testing.T, newStores NewStores) {
	t.Run("TimesInMilliseconds", func(t *testing.T) {
		t.Parallel()
		// Half a millisecond and more past a whole one, an hour east of UTC.
		clock := &Clock{now: time.Date(2026, 1, 2, 4, 4, 5, 123_456_789, time.FixedZone("X", 3600))}
		want := time.Date(2026, 1, 2, 3, 4, 5, 123_000_000, time.UTC)
		stores := newStores(t)
		svc := slots.New(stores.Slots, slots.WithClock(clock.Now), slots.WithLease(time.Minute))
		ids := newIdentity(stores.Identity, identity.WithClock(clock.Now))
		ctx := context.Background()

		k, _, err := ids.CreateKey(identity.WithKey(ctx, ids.Admin()), identity.NewKey{Name: "A", Scopes: []identity.Scope{slots.ScopeCommentCreate}})
		require.NoError(t, err)
		require.Equal(t, want, k.CreatedAt)
		c, err := svc.CreateClaim(ctx, slots.NewClaim{Title: "Claim"})
		require.NoError(t, err)
		require.Equal(t, want, c.CreatedAt)
		m, err := svc.AddComment(identity.WithKey(ctx, k), slots.NewComment{ClaimID: c.ID, Body: "a draft", CommentType: "draft"})
		require.NoError(t, err)
		require.Equal(t, want, m.CreatedAt)
		_, err = svc.ConfigureSlots(ctx, c.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 1}})
		require.NoError(t, err)
		job, err := svc.TakeNext(identity.WithKey(ctx, k), slots.JobQuery{})
		require.NoError(t, err)
		require.Equal(t, want, job.Slot.CreatedAt)
		require.Equal(t, want, job.Slot.TakenAt)
		require.Equal(t, want.Add(time.Minute), job.Slot.LeaseExpiresAt)
		c.CommentCount = 1
		require.Equal(t, c, job.Claim, "the claim as created, its comment counted")
		require.Equal(t, []slots.Comment{m}, job.Comments, "the comment as added")
		list, err := svc.Slots(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, []slots.Slot{job.Slot}, list, "the slot as taken")

		// A store given a time finer than a millisecond keeps the millisecond.
		require.NoError(t, stores.Identity.RevokeKey(ctx, k.ID, clock.Now()))
		got, err := stores.Identity.GetKey(ctx, k.ID)
		require.NoError(t, err)
		require.Equal(t, want, got.RevokedAt)
		done, err := stores.Slots.FinishSlot(ctx, slots.FinishParams{ClaimID: c.ID, SlotID: job.Slot.ID, KeyID: k.ID, Now: clock.Now().Add(time.Second), Credit: 1})
		require.NoError(t, err)
		require.Equal(t, want.Add(time.Second), done.DoneAt)
		list, err = stores.Slots.ListSlots(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, []slots.Slot{done}, list)
	})
}

// runPipelineTimes: a pipeline's times, written by the store directly
// (not through a service, which stamps milliseconds already), read back in
// milliseconds and in UTC on every backend, as PostgreSQL and Redis store
// them.
func runPipelineTimes(t *testing.T, newStores NewStores) {
	t.Run("PipelineTimesInMilliseconds", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 0)
		_, p := e.claim(t)
		fine := time.Date(2026, 1, 2, 4, 4, 5, 123_456_789, time.FixedZone("X", 3600))
		want := time.Date(2026, 1, 2, 3, 4, 5, 123_000_000, time.UTC)
		require.NotEmpty(t, p.Slots)
		p.Slots[0].TakenAt, p.Slots[0].LeaseExpiresAt, p.Slots[0].CreatedAt = fine, fine.Add(time.Minute), fine
		p.Flags = append(p.Flags, prism.Flag{ID: "flag_times", ClaimID: p.ClaimID, Layer: 1, Status: prism.FlagOpen, CreatedAt: fine})
		p.UpdatedAt = fine
		p.Version++
		_, err := e.store.UpdatePipeline(e.ctx, p, prism.Effects{})
		require.NoError(t, err)

		got, err := e.store.GetPipeline(e.ctx, p.ClaimID)
		require.NoError(t, err)
		sl := got.Slots[0]
		require.Equal(t, want, sl.TakenAt)
		require.Equal(t, want.Add(time.Minute), sl.LeaseExpiresAt)
		require.Equal(t, want, sl.CreatedAt)
		require.True(t, sl.DoneAt.IsZero(), "a zero time stays zero")
		require.Equal(t, want, got.Flags[len(got.Flags)-1].CreatedAt)
		require.True(t, got.Flags[len(got.Flags)-1].ResolvedAt.IsZero())
		require.Equal(t, want, got.UpdatedAt)
	})
}
