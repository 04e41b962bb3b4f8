package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// slotsEnv is one subtest's service, clock and helpers.
type slotsEnv struct {
	t     *testing.T
	ctx   context.Context
	svc   *slots.Service
	ids   *identity.Service // the agents' keys
	clock *Clock
	store slots.Store
}

func newSlotsEnv(t *testing.T, newStores NewStores, opts ...slots.Option) *slotsEnv {
	t.Helper()
	clock := NewClock()
	stores := newStores(t)
	st := stores.Slots
	svc := slots.New(st, append([]slots.Option{slots.WithClock(clock.Now)}, opts...)...)
	ids := newIdentity(stores.Identity, identity.WithClock(clock.Now))
	return &slotsEnv{t: t, ctx: context.Background(), svc: svc, ids: ids, clock: clock, store: st}
}

func (e *slotsEnv) claim(domain string) slots.Claim {
	e.t.Helper()
	c, err := e.svc.CreateClaim(e.ctx, slots.NewClaim{Title: "Claim " + domain, Body: "body", Domain: domain})
	require.NoError(e.t, err)
	return c
}

func (e *slotsEnv) agent(name string) identity.Key {
	e.t.Helper()
	k, _, err := e.ids.CreateKey(identity.WithKey(e.ctx, e.ids.Admin()), identity.NewKey{Name: name, AvatarURL: "https://example.com/" + name + ".png", Scopes: []identity.Scope{slots.ScopeCommentCreate}})
	require.NoError(e.t, err)
	return k
}

func (e *slotsEnv) draft(claimID string) {
	e.t.Helper()
	_, err := e.svc.AddComment(identity.WithKey(e.ctx, identity.Key{ID: "drafter", Name: "Drafter"}), slots.NewComment{ClaimID: claimID, Body: "a draft", CommentType: "draft"})
	require.NoError(e.t, err)
}

func (e *slotsEnv) configure(claimID string, roles ...slots.RoleCount) []slots.Slot {
	e.t.Helper()
	n, err := e.svc.ConfigureSlots(e.ctx, claimID, roles)
	require.NoError(e.t, err)
	list, err := e.svc.Slots(e.ctx, claimID)
	require.NoError(e.t, err)
	open := []slots.Slot{}
	for _, s := range list {
		if s.Status == slots.StatusOpen {
			open = append(open, s)
		}
	}
	require.Len(e.t, open, n)
	return open
}

// requireCode asserts err is the domain error want (same kind and code).
func requireCode(t *testing.T, want *store.Error, err error, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	require.ErrorIs(t, err, want.Kind, msgAndArgs...)
	var se *store.Error
	require.ErrorAs(t, err, &se, msgAndArgs...)
	require.Equal(t, want.Code, se.Code, "error %q %v", err, msgAndArgs)
}

// RunSlots runs the slots section of the suite.
func RunSlots(t *testing.T, newStores NewStores) {
	runTakeNext(t, newStores)
	runDoneBatches(t, newStores)
	runSlotRules(t, newStores)
	runClaimJob(t, newStores)
	runClaimsSort(t, newStores)
	runCountOpenSlots(t, newStores)
	runSlotTimes(t, newStores)
	runCalibrations(t, newStores)
	t.Run("Claims", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		c := e.claim("")
		require.Equal(t, slots.DefaultDomain, c.Domain)
		require.NotEmpty(t, c.ID)
		require.Equal(t, e.clock.Now(), c.CreatedAt)
		got, err := e.svc.Claim(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, c, got)
		_, err = e.svc.Claim(e.ctx, "claim_missing")
		requireCode(t, slots.ErrClaimNotFound, err)
		require.ErrorIs(t, e.svc.Store().CreateClaim(e.ctx, c), store.ErrConflict)

		physics := e.claim("physics")
		require.Equal(t, "physics", physics.Domain)
	})

	t.Run("ClaimsPaging", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		var ids []string
		for i := 0; i < 7; i++ {
			ids = append(ids, e.claim(fmt.Sprint("d", i)).ID)
			e.clock.Advance(time.Millisecond)
		}
		var seen []string
		cursor := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 5)
			page, err := e.svc.Claims(e.ctx, slots.ClaimsQuery{Limit: 3, Cursor: cursor})
			require.NoError(t, err)
			for _, c := range page.Items {
				seen = append(seen, c.ID)
			}
			if page.NextCursor == "" {
				break
			}
			require.Len(t, page.Items, 3)
			cursor = page.NextCursor
		}
		want := make([]string, len(ids))
		for i, id := range ids {
			want[len(ids)-1-i] = id
		}
		require.Equal(t, want, seen, "newest first, each once")

		page, err := e.svc.Claims(e.ctx, slots.ClaimsQuery{Limit: 1000})
		require.NoError(t, err, "a limit above the most is the most, as the original's")
		require.Len(t, page.Items, len(ids))
		_, err = e.svc.Claims(e.ctx, slots.ClaimsQuery{Limit: -1})
		requireCode(t, &store.Error{Kind: store.ErrInvalid, Code: "invalid_limit"}, err)
	})

	t.Run("ClaimsByDomain", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		var physics []string
		for i := 0; i < 5; i++ {
			domain := []string{"physics", "biology"}[i%2]
			c := e.claim(domain)
			if domain == "physics" {
				physics = append([]string{c.ID}, physics...) // newest first
			}
			e.clock.Advance(time.Millisecond)
		}
		var seen []string
		cursor := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 4)
			page, err := e.svc.Claims(e.ctx, slots.ClaimsQuery{Limit: 2, Cursor: cursor, Domain: "physics"})
			require.NoError(t, err)
			for _, c := range page.Items {
				require.Equal(t, "physics", c.Domain)
				seen = append(seen, c.ID)
			}
			if page.NextCursor == "" {
				break
			}
			cursor = page.NextCursor
		}
		require.Equal(t, physics, seen, "one domain's claims, newest first, each once")
		page, err := e.svc.Claims(e.ctx, slots.ClaimsQuery{Domain: "chemistry"})
		require.NoError(t, err)
		require.Empty(t, page.Items)
		page, err = e.svc.Claims(e.ctx, slots.ClaimsQuery{})
		require.NoError(t, err)
		require.Len(t, page.Items, 5, "no domain: every claim")
	})

	t.Run("Comments", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		c := e.claim("")
		author := e.agent("Writer")
		first, err := e.svc.AddComment(identity.WithKey(e.ctx, author), slots.NewComment{ClaimID: c.ID, Body: "one", CommentType: "Supporting-Evidence"})
		require.NoError(t, err)
		require.Equal(t, slots.CommentSupportingEvidence, first.CommentType)
		require.Equal(t, author.ID, first.AuthorID)
		require.Equal(t, "Writer", first.AgentName)
		second, err := e.svc.AddComment(identity.WithKey(e.ctx, author), slots.NewComment{ClaimID: c.ID, Body: "two"})
		require.NoError(t, err)
		require.Equal(t, slots.CommentAddition, second.CommentType)

		list, err := e.svc.Comments(e.ctx, c.ID, slots.CommentsParams{Sort: slots.CommentsOld, Limit: slots.MaxCommentsLimit})
		require.NoError(t, err)
		require.Equal(t, []slots.Comment{first, second}, list)

		_, err = e.svc.AddComment(identity.WithKey(e.ctx, author), slots.NewComment{ClaimID: "claim_missing", Body: "x"})
		requireCode(t, slots.ErrClaimNotFound, err)
		_, err = e.svc.Comments(e.ctx, "claim_missing", slots.CommentsParams{Sort: slots.CommentsOld, Limit: slots.MaxCommentsLimit})
		requireCode(t, slots.ErrClaimNotFound, err)
		_, err = e.svc.AddComment(identity.WithKey(e.ctx, author), slots.NewComment{ClaimID: c.ID, Body: "x", CommentType: "rant"})
		require.ErrorIs(t, err, store.ErrInvalid)
		list, err = e.svc.Comments(e.ctx, c.ID, slots.CommentsParams{Sort: slots.CommentsOld, Limit: slots.MaxCommentsLimit})
		require.NoError(t, err)
		require.Len(t, list, 2, "a rejected comment is not stored")
	})

	// The original's GET /claims/{id}/comments: sort top (the default),
	// new or old; 50 by default, at most 500.
	t.Run("CommentsSortAndLimit", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		c := e.claim("")
		author := identity.WithKey(e.ctx, e.agent("Writer"))
		var made []slots.Comment
		for i := range 55 {
			cm, err := e.svc.AddComment(author, slots.NewComment{ClaimID: c.ID, Body: fmt.Sprint("comment ", i)})
			require.NoError(t, err)
			made = append(made, cm)
		}
		newest := slices.Clone(made)
		slices.Reverse(newest)
		for name, tc := range map[string]struct {
			p    slots.CommentsParams
			want []slots.Comment
		}{
			"default":        {slots.CommentsParams{}, newest[:50]},
			"top":            {slots.CommentsParams{Sort: "top", Limit: 3}, newest[:3]},
			"new, any case":  {slots.CommentsParams{Sort: "NEW", Limit: 2}, newest[:2]},
			"old":            {slots.CommentsParams{Sort: slots.CommentsOld, Limit: 4}, made[:4]},
			"above the most": {slots.CommentsParams{Sort: slots.CommentsOld, Limit: 100_000}, made},
		} {
			list, err := e.svc.Comments(e.ctx, c.ID, tc.p)
			require.NoError(t, err, name)
			require.Equal(t, tc.want, list, name)
		}
		_, err := e.svc.Comments(e.ctx, c.ID, slots.CommentsParams{Sort: "best"})
		requireCode(t, &store.Error{Kind: store.ErrInvalid, Code: "invalid_sort"}, err)
		_, err = e.svc.Comments(e.ctx, c.ID, slots.CommentsParams{Limit: -1})
		requireCode(t, &store.Error{Kind: store.ErrInvalid, Code: "invalid_limit"}, err)
		_, err = e.svc.Comments(e.ctx, "claim_missing", slots.CommentsParams{})
		requireCode(t, slots.ErrClaimNotFound, err)
	})

	t.Run("ConfigureReplacesOnlyOpenSlots", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		c := e.claim("")
		open := e.configure(c.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 2}, slots.RoleCount{Role: slots.RoleQuestioner, Count: 1}, slots.RoleCount{Role: slots.RoleSupporter, Count: 1})
		require.Len(t, open, 4)
		for _, s := range open {
			require.Equal(t, c.ID, s.ClaimID)
			require.Equal(t, e.clock.Now(), s.CreatedAt)
			require.Empty(t, s.APIKeyID)
		}
		a, b := e.agent("A"), e.agent("B")
		_, err := e.svc.Take(identity.WithKey(e.ctx, a), c.ID, open[0].ID)
		require.NoError(t, err)
		_, err = e.svc.Take(identity.WithKey(e.ctx, b), c.ID, open[1].ID)
		require.NoError(t, err)
		_, err = e.svc.Done(identity.WithKey(e.ctx, b), c.ID, open[1].ID)
		require.NoError(t, err)

		fresh := e.configure(c.ID, slots.RoleCount{Role: slots.RoleDefender, Count: 3})
		list, err := e.svc.Slots(e.ctx, c.ID)
		require.NoError(t, err)
		require.Len(t, list, 5, "1 taken + 1 done + 3 new")
		require.Equal(t, open[0].ID, list[0].ID)
		require.Equal(t, slots.StatusTaken, list[0].Status)
		require.Equal(t, open[1].ID, list[1].ID)
		require.Equal(t, slots.StatusDone, list[1].Status)
		for i, s := range fresh {
			require.Equal(t, s.ID, list[2+i].ID)
			require.Equal(t, slots.RoleDefender, s.Role)
		}
		_, err = e.svc.Take(identity.WithKey(e.ctx, e.agent("C")), c.ID, open[2].ID)
		requireCode(t, slots.ErrSlotNotFound, err)

		_, err = e.svc.ConfigureSlots(e.ctx, "claim_missing", []slots.RoleCount{{Role: slots.RoleCritic, Count: 1}})
		requireCode(t, slots.ErrClaimNotFound, err)
		_, err = e.svc.Slots(e.ctx, "claim_missing")
		requireCode(t, slots.ErrClaimNotFound, err)
	})

	t.Run("ConfigureValidation", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		c := e.claim("")
		for name, roles := range map[string][]slots.RoleCount{
			"none":         nil,
			"bad role":     {{Role: "judge", Count: 1}},
			"zero count":   {{Role: slots.RoleCritic, Count: 0}},
			"negative":     {{Role: slots.RoleCritic, Count: -1}},
			"over 20":      {{Role: slots.RoleCritic, Count: 15}, {Role: slots.RoleAnswerer, Count: 6}},
			"one too many": {{Role: slots.RoleCritic, Count: 21}},
		} {
			_, err := e.svc.ConfigureSlots(e.ctx, c.ID, roles)
			require.ErrorIs(t, err, store.ErrInvalid, name)
		}
		list, err := e.svc.Slots(e.ctx, c.ID)
		require.NoError(t, err)
		require.Empty(t, list)
		n, err := e.svc.ConfigureSlots(e.ctx, c.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 20}})
		require.NoError(t, err)
		require.Equal(t, 20, n)
	})

	t.Run("TakeAndDone", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		c := e.claim("")
		open := e.configure(c.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 2})
		a, b := e.agent("A"), e.agent("B")

		_, err := e.svc.Done(identity.WithKey(e.ctx, a), c.ID, open[0].ID)
		requireCode(t, slots.ErrSlotNotTaken, err)

		e.clock.Advance(time.Second)
		taken, err := e.svc.Take(identity.WithKey(e.ctx, a), c.ID, open[0].ID)
		require.NoError(t, err)
		require.Equal(t, slots.StatusTaken, taken.Status)
		require.Equal(t, a.ID, taken.APIKeyID)
		require.Equal(t, "A", taken.AgentName)
		require.Equal(t, a.AvatarURL, taken.AgentAvatarURL)
		require.Equal(t, e.clock.Now(), taken.TakenAt)
		require.Zero(t, taken.LeaseExpiresAt)

		_, err = e.svc.Take(identity.WithKey(e.ctx, b), c.ID, open[0].ID)
		requireCode(t, slots.ErrSlotTaken, err)
		_, err = e.svc.Take(identity.WithKey(e.ctx, a), c.ID, open[0].ID)
		requireCode(t, slots.ErrSlotTaken, err)
		_, err = e.svc.Take(identity.WithKey(e.ctx, a), c.ID, open[1].ID)
		requireCode(t, slots.ErrSlotHeld, err)
		_, err = e.svc.Take(identity.WithKey(e.ctx, a), c.ID, "slot_missing")
		requireCode(t, slots.ErrSlotNotFound, err)
		other := e.claim("")
		_, err = e.svc.Take(identity.WithKey(e.ctx, b), other.ID, open[1].ID)
		requireCode(t, slots.ErrSlotNotFound, err, "a slot is only found under its own claim")

		_, err = e.svc.Done(identity.WithKey(e.ctx, b), c.ID, open[0].ID)
		requireCode(t, slots.ErrNotSlotOwner, err)
		_, err = e.svc.Done(identity.WithKey(e.ctx, a), other.ID, open[0].ID)
		requireCode(t, slots.ErrSlotNotFound, err)
		_, err = e.svc.Done(identity.WithKey(e.ctx, a), c.ID, "slot_missing")
		requireCode(t, slots.ErrSlotNotFound, err)

		e.clock.Advance(time.Second)
		done, err := e.svc.Done(identity.WithKey(e.ctx, a), c.ID, open[0].ID)
		require.NoError(t, err)
		require.Equal(t, slots.StatusDone, done.Status)
		require.Equal(t, e.clock.Now(), done.DoneAt)
		require.Equal(t, taken.TakenAt, done.TakenAt)
		require.Equal(t, a.ID, done.APIKeyID)

		_, err = e.svc.Done(identity.WithKey(e.ctx, a), c.ID, open[0].ID)
		requireCode(t, slots.ErrSlotNotTaken, err)
		_, err = e.svc.Done(identity.WithKey(e.ctx, b), c.ID, open[0].ID)
		requireCode(t, slots.ErrNotSlotOwner, err)
		bal, err := e.svc.Balance(e.ctx, a.ID)
		require.NoError(t, err)
		require.EqualValues(t, slots.RewardRoleSlot, bal)
		bal, err = e.svc.Balance(e.ctx, b.ID)
		require.NoError(t, err)
		require.Zero(t, bal)

		_, err = e.svc.Take(identity.WithKey(e.ctx, a), c.ID, open[1].ID)
		requireCode(t, slots.ErrSlotHeld, err, "a done slot still counts as held")

		list, err := e.svc.Slots(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, done, list[0])
		require.Equal(t, slots.StatusOpen, list[1].Status)

		// One slot per agent per claim, not per store: A may take a seat elsewhere.
		more := e.configure(other.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1})
		_, err = e.svc.Take(identity.WithKey(e.ctx, a), other.ID, more[0].ID)
		require.NoError(t, err)
		_, err = e.svc.Done(identity.WithKey(e.ctx, a), other.ID, more[0].ID)
		require.NoError(t, err)
		bal, err = e.svc.Balance(e.ctx, a.ID)
		require.NoError(t, err)
		require.EqualValues(t, 2*slots.RewardRoleSlot, bal)
	})

	t.Run("ClaimSources", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		c, err := e.svc.CreateClaim(e.ctx, slots.NewClaim{Title: "Sourced", Sources: []slots.Source{
			{URL: " https://WHO.int ", Title: " Climate and health "},
			{URL: "  "},               // no URL: dropped
			{URL: "https://who.int/"}, // the same page: dropped
			{URL: "http://example.com/a?b=1#c"},
		}})
		require.NoError(t, err)
		want := []slots.Source{{URL: "https://who.int/", Title: "Climate and health"}, {URL: "http://example.com/a?b=1#c"}}
		require.Equal(t, want, c.Sources, "trimmed, canonical, without repeats")
		got, err := e.svc.Claim(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, c, got)
		page, err := e.svc.Claims(e.ctx, slots.ClaimsQuery{})
		require.NoError(t, err)
		require.Equal(t, []slots.Claim{c}, page.Items)
		// A job's claim carries them too: the agent CLIs print them.
		open := e.configure(c.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1})
		e.draft(c.ID)
		job, err := e.svc.NextJob(e.ctx, slots.JobQuery{})
		require.NoError(t, err)
		require.Equal(t, open[0].ID, job.Slot.ID)
		require.Equal(t, want, job.Claim.Sources)

		none := e.claim("")
		require.NotNil(t, none.Sources)
		require.Empty(t, none.Sources)
		got, err = e.svc.Claim(e.ctx, none.ID)
		require.NoError(t, err)
		require.Equal(t, []slots.Source{}, got.Sources, "no sources is an empty list")

		many := make([]slots.Source, slots.MaxSources+1)
		for i := range many {
			many[i].URL = fmt.Sprint("https://example.com/", i)
		}
		_, err = e.svc.CreateClaim(e.ctx, slots.NewClaim{Title: "t", Sources: many})
		require.ErrorIs(t, err, store.ErrInvalid)
		require.ErrorContains(t, err, "Too many sources (max 20)")
		for _, bad := range []string{"ftp://example.com/x", "example.com", "/relative", "https://", "mailto:a@b.c", "https://bad\x00host/"} {
			_, err = e.svc.CreateClaim(e.ctx, slots.NewClaim{Title: "t", Sources: []slots.Source{{URL: bad}}})
			require.ErrorIs(t, err, store.ErrInvalid, bad)
		}
		_, err = e.svc.CreateClaim(e.ctx, slots.NewClaim{Title: "t", Sources: []slots.Source{{URL: "https://example.com/", Title: "nul\x00"}}})
		require.ErrorIs(t, err, store.ErrInvalid)
	})

	t.Run("ConcurrentCommentsInJob", func(t *testing.T) {
		t.Parallel()
		const writers, each = 16, 4
		for round := range 3 {
			e := newSlotsEnv(t, newStores)
			c := e.claim("")
			e.draft(c.ID)
			e.configure(c.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1})
			var wg sync.WaitGroup
			errs := make(chan error, writers*each)
			for w := range writers {
				author := e.agent(fmt.Sprint("writer", w))
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						_, err := e.svc.AddComment(identity.WithKey(e.ctx, author), slots.NewComment{ClaimID: c.ID, Body: fmt.Sprint(w, "-", i)})
						errs <- err
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			list, err := e.svc.Comments(e.ctx, c.ID, slots.CommentsParams{Sort: slots.CommentsOld, Limit: slots.MaxCommentsLimit})
			require.NoError(t, err)
			require.Len(t, list, 1+writers*each, "round %d: no comment lost to a concurrent one", round)
			bodies := []string{}
			for _, m := range list {
				bodies = append(bodies, m.Body)
			}
			want := []string{"a draft"}
			for w := range writers {
				for i := range each {
					want = append(want, fmt.Sprint(w, "-", i))
				}
			}
			require.ElementsMatch(t, want, bodies, "round %d: each comment once", round)
			job, err := e.svc.NextJob(e.ctx, slots.JobQuery{})
			require.NoError(t, err)
			// More than a job carries were posted at once: it carries
			// JobComments of them, each once, in the listing's order.
			require.Len(t, job.Comments, slots.JobComments, "round %d", round)
			at := 0
			for _, m := range job.Comments {
				for at < len(list) && list[at].ID != m.ID {
					at++
				}
				require.Less(t, at, len(list), "round %d: %s is the listing's, in its order", round, m.ID)
				require.Equal(t, list[at], m)
				at++
			}
			require.Equal(t, len(list), job.Claim.CommentCount, "round %d: counted, every one", round)
		}
	})

	t.Run("JobQueueNeedsDraft", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		_, err := e.svc.NextJob(e.ctx, slots.JobQuery{})
		requireCode(t, slots.ErrNoJob, err)
		c := e.claim("")
		open := e.configure(c.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1})
		_, err = e.svc.AddComment(identity.WithKey(e.ctx, e.agent("W")), slots.NewComment{ClaimID: c.ID, Body: "not a draft", CommentType: "criticism"})
		require.NoError(t, err)
		_, err = e.svc.NextJob(e.ctx, slots.JobQuery{})
		requireCode(t, slots.ErrNoJob, err)

		e.draft(c.ID)
		job, err := e.svc.NextJob(e.ctx, slots.JobQuery{})
		require.NoError(t, err)
		require.Equal(t, open[0], job.Slot)
		c.CommentCount = 2
		require.Equal(t, c, job.Claim, "the claim, its comments counted")
		require.Len(t, job.Comments, 2)
		require.Equal(t, slots.CommentCriticism, job.Comments[0].CommentType)
		require.Equal(t, slots.CommentDraft, job.Comments[1].CommentType)

		// Slots configured after the draft are eligible at once.
		c2 := e.claim("")
		e.draft(c2.ID)
		e.draft(c2.ID)
		open2 := e.configure(c2.ID, slots.RoleCount{Role: slots.RoleAnswerer, Count: 1})
		job, err = e.svc.NextJob(e.ctx, slots.JobQuery{Role: slots.RoleAnswerer})
		require.NoError(t, err)
		require.Equal(t, open2[0].ID, job.Slot.ID)
		require.Len(t, job.Comments, 2)
	})

	t.Run("JobQueueFiltersAndOrder", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		physics, medicine := e.claim("physics"), e.claim("medicine")
		e.draft(physics.ID)
		e.draft(medicine.ID)
		p := e.configure(physics.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1}, slots.RoleCount{Role: slots.RoleQuestioner, Count: 1})
		e.clock.Advance(time.Millisecond)
		m := e.configure(medicine.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1}, slots.RoleCount{Role: slots.RoleDefender, Count: 1})

		next := func(q slots.JobQuery) string {
			t.Helper()
			job, err := e.svc.NextJob(e.ctx, q)
			require.NoError(t, err, "%+v", q)
			return job.Slot.ID
		}
		require.Equal(t, p[0].ID, next(slots.JobQuery{}))
		require.Equal(t, p[0].ID, next(slots.JobQuery{Strategy: slots.StrategyOldest}))
		require.Equal(t, p[1].ID, next(slots.JobQuery{Role: slots.RoleQuestioner}))
		require.Equal(t, m[1].ID, next(slots.JobQuery{Role: slots.RoleDefender}))
		require.Equal(t, m[0].ID, next(slots.JobQuery{Domain: "medicine"}))
		require.Equal(t, m[0].ID, next(slots.JobQuery{Domain: "medicine", Role: slots.RoleCritic}))
		_, err := e.svc.NextJob(e.ctx, slots.JobQuery{Domain: "physics", Role: slots.RoleDefender})
		requireCode(t, slots.ErrNoJob, err)
		_, err = e.svc.NextJob(e.ctx, slots.JobQuery{Domain: "law"})
		requireCode(t, slots.ErrNoJob, err)
		_, err = e.svc.NextJob(e.ctx, slots.JobQuery{Strategy: "fastest"})
		require.ErrorIs(t, err, store.ErrInvalid)
		_, err = e.svc.NextJob(e.ctx, slots.JobQuery{Role: "judge"})
		require.ErrorIs(t, err, store.ErrInvalid)

		// A taken slot leaves the queue; the next oldest takes its place.
		_, err = e.svc.Take(identity.WithKey(e.ctx, e.agent("A")), physics.ID, p[0].ID)
		require.NoError(t, err)
		require.Equal(t, p[1].ID, next(slots.JobQuery{}))
		require.Equal(t, m[0].ID, next(slots.JobQuery{Role: slots.RoleCritic}))

		// Reconfiguring removes the replaced open slots from the queue.
		fresh := e.configure(physics.ID, slots.RoleCount{Role: slots.RoleContributor, Count: 1})
		require.Equal(t, m[0].ID, next(slots.JobQuery{}))
		_, err = e.svc.NextJob(e.ctx, slots.JobQuery{Role: slots.RoleQuestioner})
		requireCode(t, slots.ErrNoJob, err)
		require.Equal(t, fresh[0].ID, next(slots.JobQuery{Role: slots.RoleContributor, Domain: "physics"}))
	})

	t.Run("JobQueueRandomIsRandom", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		ids := map[string]bool{}
		for i := 0; i < 4; i++ {
			c := e.claim("")
			e.draft(c.ID)
			for _, s := range e.configure(c.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 2}) {
				ids[s.ID] = true
			}
		}
		counts := map[string]int{}
		const draws = 400
		for i := 0; i < draws; i++ {
			job, err := e.svc.NextJob(e.ctx, slots.JobQuery{Strategy: slots.StrategyRandom})
			require.NoError(t, err)
			require.True(t, ids[job.Slot.ID])
			counts[job.Slot.ID]++
		}
		// 8 slots, 400 uniform draws: each is expected 50 times; the chance
		// that any one is drawn fewer than 15 times is below 1e-9.
		require.Len(t, counts, len(ids), "every slot is drawn")
		for id, n := range counts {
			require.GreaterOrEqual(t, n, 15, "slot %s drawn %d times of %d", id, n, draws)
		}
		filtered := map[string]bool{}
		for i := 0; i < 100; i++ {
			job, err := e.svc.NextJob(e.ctx, slots.JobQuery{Strategy: slots.StrategyRandom, Role: slots.RoleCritic, Domain: slots.DefaultDomain})
			require.NoError(t, err)
			filtered[job.Slot.ID] = true
		}
		require.Greater(t, len(filtered), 4, "filtered random picks vary too")
	})

	t.Run("JobQueueSkipsHeldClaims", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		c1, c2 := e.claim("physics"), e.claim("physics")
		e.draft(c1.ID)
		e.draft(c2.ID)
		s1 := e.configure(c1.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 2})
		e.clock.Advance(time.Millisecond)
		s2 := e.configure(c2.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 2})
		a, b := e.agent("A"), e.agent("B")
		_, err := e.svc.Take(identity.WithKey(e.ctx, a), c1.ID, s1[0].ID)
		require.NoError(t, err)

		// offered checks every filter combination for agent: the oldest pick
		// is oldest, and random picks draw every slot of eligible, nothing
		// else; with no eligible slot, both strategies say ErrNoJob.
		filters := []slots.JobQuery{{}, {Role: slots.RoleCritic}, {Domain: "physics"}, {Role: slots.RoleCritic, Domain: "physics"}}
		offered := func(agent string, oldest string, eligible ...string) {
			t.Helper()
			ctx := identity.WithKey(e.ctx, identity.Key{ID: agent})
			if agent == "" {
				ctx = e.ctx // nobody in particular
			}
			for _, q := range filters {
				job, err := e.svc.NextJob(ctx, q)
				if oldest == "" {
					requireCode(t, slots.ErrNoJob, err, "%+v", q)
					q.Strategy = slots.StrategyRandom
					_, err = e.svc.NextJob(ctx, q)
					requireCode(t, slots.ErrNoJob, err, "%+v", q)
					continue
				}
				require.NoError(t, err, "%+v", q)
				require.Equal(t, oldest, job.Slot.ID, "%+v", q)
				require.Equal(t, job.Slot.ClaimID, job.Claim.ID)
				q.Strategy = slots.StrategyRandom
				seen := map[string]bool{}
				for range 100 {
					job, err := e.svc.NextJob(ctx, q)
					require.NoError(t, err, "%+v", q)
					require.Contains(t, eligible, job.Slot.ID, "%+v", q)
					seen[job.Slot.ID] = true
				}
				require.Len(t, seen, len(eligible), "every eligible slot is drawn: %+v", q)
			}
		}

		// A holds a taken seat on c1, the oldest claim with open slots.
		offered(a.ID, s2[0].ID, s2[0].ID, s2[1].ID)
		offered(b.ID, s1[1].ID, s1[1].ID, s2[0].ID, s2[1].ID)
		offered("", s1[1].ID, s1[1].ID, s2[0].ID, s2[1].ID)

		// A done seat is held too: it is the same for A.
		_, err = e.svc.Done(identity.WithKey(e.ctx, a), c1.ID, s1[0].ID)
		require.NoError(t, err)
		offered(a.ID, s2[0].ID, s2[0].ID, s2[1].ID)
		offered(b.ID, s1[1].ID, s1[1].ID, s2[0].ID, s2[1].ID)

		// A holds a seat on every claim with open slots: no job for A.
		_, err = e.svc.Take(identity.WithKey(e.ctx, a), c2.ID, s2[0].ID)
		require.NoError(t, err)
		offered(a.ID, "")
		offered(b.ID, s1[1].ID, s1[1].ID, s2[1].ID)
		offered("", s1[1].ID, s1[1].ID, s2[1].ID)

		// A newer claim is found past both claims A holds.
		e.clock.Advance(time.Millisecond)
		c3 := e.claim("physics")
		e.draft(c3.ID)
		s3 := e.configure(c3.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1})
		offered(a.ID, s3[0].ID, s3[0].ID)
		_, err = e.svc.Take(identity.WithKey(e.ctx, a), c3.ID, s3[0].ID)
		require.NoError(t, err, "what the queue offers, the agent may take")
	})

	t.Run("JobQueueOffersAReleasedClaimAgain", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores, slots.WithLease(time.Minute))
		c1, c2 := e.claim(""), e.claim("")
		e.draft(c1.ID)
		e.draft(c2.ID)
		s1 := e.configure(c1.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 2})
		e.clock.Advance(time.Millisecond)
		s2 := e.configure(c2.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1})
		a := e.agent("A")
		_, err := e.svc.Take(identity.WithKey(e.ctx, a), c1.ID, s1[0].ID)
		require.NoError(t, err)
		next := func() string {
			t.Helper()
			job, err := e.svc.NextJob(identity.WithKey(e.ctx, a), slots.JobQuery{})
			require.NoError(t, err)
			return job.Slot.ID
		}
		require.Equal(t, s2[0].ID, next())

		// The lease lapsed but nothing re-opened the slot: the seat still
		// counts as A's, for the queue as for a take.
		e.clock.Advance(time.Minute)
		require.Equal(t, s2[0].ID, next())
		_, err = e.svc.Take(identity.WithKey(e.ctx, a), c1.ID, s1[1].ID)
		requireCode(t, slots.ErrSlotHeld, err)

		n, err := e.svc.Sweep(e.ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, s1[0].ID, next(), "after the sweep A holds nothing on c1")
		drawn := map[string]bool{}
		for range 100 {
			job, err := e.svc.NextJob(identity.WithKey(e.ctx, a), slots.JobQuery{Strategy: slots.StrategyRandom})
			require.NoError(t, err)
			drawn[job.Slot.ClaimID] = true
		}
		require.True(t, drawn[c1.ID], "c1 is drawn at random again")
		_, err = e.svc.Take(identity.WithKey(e.ctx, a), c1.ID, s1[0].ID)
		require.NoError(t, err)
	})

	t.Run("Lease", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores, slots.WithLease(time.Minute))
		c := e.claim("")
		e.draft(c.ID)
		open := e.configure(c.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 2})
		a, b := e.agent("A"), e.agent("B")

		taken, err := e.svc.Take(identity.WithKey(e.ctx, a), c.ID, open[0].ID)
		require.NoError(t, err)
		require.Equal(t, e.clock.Now().Add(time.Minute), taken.LeaseExpiresAt)
		e.clock.Advance(59 * time.Second)
		_, err = e.svc.Take(identity.WithKey(e.ctx, b), c.ID, open[0].ID)
		requireCode(t, slots.ErrSlotTaken, err)
		n, err := e.svc.Sweep(e.ctx)
		require.NoError(t, err)
		require.Zero(t, n)

		e.clock.Advance(time.Second)
		_, err = e.svc.Done(identity.WithKey(e.ctx, a), c.ID, open[0].ID)
		requireCode(t, slots.ErrSlotNotTaken, err)
		retaken, err := e.svc.Take(identity.WithKey(e.ctx, b), c.ID, open[0].ID)
		require.NoError(t, err, "a lapsed slot can be taken by another agent")
		require.Equal(t, b.ID, retaken.APIKeyID)
		_, err = e.svc.Done(identity.WithKey(e.ctx, a), c.ID, open[0].ID)
		requireCode(t, slots.ErrNotSlotOwner, err)
		// A lost its seat, so it may take the other one.
		_, err = e.svc.Take(identity.WithKey(e.ctx, a), c.ID, open[1].ID)
		require.NoError(t, err)

		e.clock.Advance(30 * time.Second)
		_, err = e.svc.Done(identity.WithKey(e.ctx, b), c.ID, open[0].ID)
		require.NoError(t, err)
		bal, err := e.svc.Balance(e.ctx, b.ID)
		require.NoError(t, err)
		require.EqualValues(t, slots.RewardRoleSlot, bal)

		// A's second take lapses; sweeping re-opens it and puts it back in the queue.
		_, err = e.svc.NextJob(e.ctx, slots.JobQuery{})
		requireCode(t, slots.ErrNoJob, err)
		e.clock.Advance(time.Minute)
		var released atomic.Int64
		concurrently(8, func(int) {
			n, err := e.svc.Sweep(e.ctx)
			if err == nil {
				released.Add(int64(n))
			}
		})
		require.EqualValues(t, 1, released.Load(), "concurrent sweeps re-open a slot once")
		list, err := e.svc.Slots(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, slots.StatusDone, list[0].Status)
		reopened := list[1]
		require.Equal(t, slots.StatusOpen, reopened.Status)
		require.Empty(t, reopened.APIKeyID)
		require.Empty(t, reopened.AgentName)
		require.Zero(t, reopened.TakenAt)
		require.Zero(t, reopened.LeaseExpiresAt)
		job, err := e.svc.NextJob(e.ctx, slots.JobQuery{})
		require.NoError(t, err)
		require.Equal(t, open[1].ID, job.Slot.ID)
		_, err = e.svc.Take(identity.WithKey(e.ctx, a), c.ID, open[1].ID)
		require.NoError(t, err, "after the sweep the agent holds nothing here")
	})

	t.Run("LeaseTakenOverWithoutLease", func(t *testing.T) {
		// A lapsed slot taken over by a service that gives no leases holds
		// no lease any more: no sweep re-opens it, and its done stands.
		t.Parallel()
		e := newSlotsEnv(t, newStores, slots.WithLease(time.Minute))
		plain := slots.New(e.store, slots.WithClock(e.clock.Now))
		c := e.claim("")
		e.draft(c.ID)
		open := e.configure(c.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1})
		a, b := e.agent("A"), e.agent("B")
		_, err := e.svc.Take(identity.WithKey(e.ctx, a), c.ID, open[0].ID)
		require.NoError(t, err)
		e.clock.Advance(2 * time.Minute)
		taken, err := plain.Take(identity.WithKey(e.ctx, b), c.ID, open[0].ID)
		require.NoError(t, err)
		require.Equal(t, b.ID, taken.APIKeyID)
		require.Zero(t, taken.LeaseExpiresAt)

		e.clock.Advance(time.Hour)
		n, err := e.svc.Sweep(e.ctx)
		require.NoError(t, err)
		require.Zero(t, n, "the old lease went with the takeover")
		list, err := e.svc.Slots(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, slots.StatusTaken, list[0].Status)
		require.Equal(t, b.ID, list[0].APIKeyID)
		require.Zero(t, list[0].LeaseExpiresAt)
		_, err = plain.Done(identity.WithKey(e.ctx, b), c.ID, open[0].ID)
		require.NoError(t, err)
	})

	t.Run("RaceManyAgentsOneSlot", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		const agents = 64
		keys := make([]identity.Key, agents)
		for i := range keys {
			keys[i] = e.agent(fmt.Sprint("racer-", i))
		}
		for rep := 0; rep < raceRepeats; rep++ {
			c := e.claim("")
			open := e.configure(c.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1})
			var wins, taken atomic.Int64
			var winner atomic.Value
			errs := make(chan error, agents)
			concurrently(agents, func(i int) {
				_, err := e.svc.Take(identity.WithKey(e.ctx, keys[i]), c.ID, open[0].ID)
				switch {
				case err == nil:
					wins.Add(1)
					winner.Store(keys[i].ID)
				case errors.Is(err, slots.ErrSlotTaken):
					taken.Add(1)
				default:
					errs <- err
				}
			})
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.EqualValues(t, 1, wins.Load(), "exactly one winner")
			require.EqualValues(t, agents-1, taken.Load())
			list, err := e.svc.Slots(e.ctx, c.ID)
			require.NoError(t, err)
			require.Equal(t, winner.Load(), list[0].APIKeyID)
		}
	})

	// Agents loop on the job queue and take what it offers, as docs/slots.md
	// tells them to, over claims with fewer seats than agents: the queue
	// never offers an agent a claim it holds (its own record of takes says
	// so), so no take is refused as held, no agent gets two seats of a
	// claim, and every seat ends up taken.
	t.Run("RaceAgentsLoopingOnTheQueue", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		const agents, claims = 32, 8
		keys := make([]identity.Key, agents)
		held := make([]map[string]bool, agents) // each agent's own record
		for i := range keys {
			keys[i] = e.agent(fmt.Sprint("looper-", i))
			held[i] = map[string]bool{}
		}
		for rep := 0; rep < raceRepeats; rep++ {
			claimIDs := e.queuedClaims(claims, slots.RoleCount{Role: slots.RoleCritic, Count: 3}, slots.RoleCount{Role: slots.RoleDefender, Count: 2})
			errs := make(chan error, agents)
			concurrently(agents, func(i int) {
				q, ctx := slots.JobQuery{}, identity.WithKey(e.ctx, keys[i])
				if i%2 == 1 {
					q.Strategy = slots.StrategyRandom
				}
				for asks := 0; ; asks++ {
					if asks > 10_000 {
						errs <- fmt.Errorf("agent %d: still asking after %d jobs", i, asks)
						return
					}
					job, err := e.svc.NextJob(ctx, q)
					if errors.Is(err, slots.ErrNoJob) {
						return
					}
					if err != nil {
						errs <- fmt.Errorf("agent %d: next job: %w", i, err)
						return
					}
					if held[i][job.Claim.ID] || job.Slot.ClaimID != job.Claim.ID {
						errs <- fmt.Errorf("agent %d was offered slot %s of claim %s, which it holds", i, job.Slot.ID, job.Claim.ID)
						return
					}
					_, err = e.svc.Take(identity.WithKey(e.ctx, keys[i]), job.Claim.ID, job.Slot.ID)
					switch {
					case err == nil:
						held[i][job.Claim.ID] = true
					case errors.Is(err, slots.ErrSlotTaken):
						// lost the race for this seat: ask again
					default:
						errs <- fmt.Errorf("agent %d: take %s: %w", i, job.Slot.ID, err)
						return
					}
				}
			})
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			for _, id := range claimIDs {
				list, err := e.svc.Slots(e.ctx, id)
				require.NoError(t, err)
				require.Len(t, list, 5)
				holders := map[string]bool{}
				for _, s := range list {
					require.Equal(t, slots.StatusTaken, s.Status, "every seat is taken")
					require.False(t, holders[s.APIKeyID], "agent %s holds two seats of %s", s.APIKeyID, id)
					holders[s.APIKeyID] = true
				}
				for i, k := range keys {
					require.Equal(t, holders[k.ID], held[i][id], "agent %d's record of %s", i, id)
				}
			}
		}
	})

	t.Run("RaceOneAgentManySlots", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		a := e.agent("greedy")
		for rep := 0; rep < raceRepeats*4; rep++ {
			c := e.claim("")
			open := e.configure(c.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 5})
			var wins, held atomic.Int64
			errs := make(chan error, len(open))
			concurrently(len(open), func(i int) {
				_, err := e.svc.Take(identity.WithKey(e.ctx, a), c.ID, open[i].ID)
				switch {
				case err == nil:
					wins.Add(1)
				case errors.Is(err, slots.ErrSlotHeld):
					held.Add(1)
				default:
					errs <- err
				}
			})
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.EqualValues(t, 1, wins.Load(), "one slot per agent per claim")
			require.EqualValues(t, 4, held.Load())
			list, err := e.svc.Slots(e.ctx, c.ID)
			require.NoError(t, err)
			n := 0
			for _, s := range list {
				if s.Status == slots.StatusTaken {
					n++
				}
			}
			require.Equal(t, 1, n)
		}
	})

	t.Run("RaceDoneRetries", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		a := e.agent("retrier")
		const retries = 1000
		for rep := 0; rep < raceRepeats; rep++ {
			c := e.claim("")
			open := e.configure(c.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1})
			_, err := e.svc.Take(identity.WithKey(e.ctx, a), c.ID, open[0].ID)
			require.NoError(t, err)
			tally := newDoneTally(retries)
			concurrently(retries, func(int) {
				_, err := e.svc.Done(identity.WithKey(e.ctx, a), c.ID, open[0].ID)
				tally.add(err)
			})
			tally.check(t)
			require.EqualValues(t, 1, tally.ok.Load(), "done succeeds once")
			require.EqualValues(t, retries-1, tally.notTaken.Load())
			bal, err := e.svc.Balance(e.ctx, a.ID)
			require.NoError(t, err)
			require.EqualValues(t, int64(rep+1)*slots.RewardRoleSlot, bal, "credited exactly once per slot")
		}
	})

	t.Run("ContextCancelled", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		c := e.claim("")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := e.svc.Claim(ctx, c.ID)
		require.ErrorIs(t, err, context.Canceled)
		_, err = e.svc.ConfigureSlots(ctx, c.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 1}})
		require.ErrorIs(t, err, context.Canceled)
		list, err := e.svc.Slots(e.ctx, c.ID)
		require.NoError(t, err)
		require.Empty(t, list)
	})
}
