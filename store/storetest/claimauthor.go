package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
)

// runClaimAuthors checks what a claim says of who made it and of its
// comments, as the original's claims do: its author (slots.Claim's
// AuthorID and AuthorName, the key that created it) and its CommentCount,
// on every read of a claim — by ID, listed, picked for a claim job, and as
// a role slot's job.
func runClaimAuthors(t *testing.T, newStores NewStores) {
	t.Run("ClaimAuthorAndComments", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 2)
		writer, critic := e.keys[0], e.keys[1]
		plain, err := e.slots.CreateClaim(identity.WithKey(e.ctx, writer), slots.NewClaim{Title: "By a key"})
		require.NoError(t, err)
		require.Equal(t, writer.ID, plain.AuthorID, "the key that created it")
		require.Equal(t, writer.Name, plain.AuthorName)
		require.Zero(t, plain.CommentCount)
		e.clock.Advance(time.Millisecond)
		piped, _, err := e.svc.CreateClaim(identity.WithKey(e.ctx, critic), prism.NewClaim{NewClaim: slots.NewClaim{Title: "With a pipeline"}})
		require.NoError(t, err)
		require.Equal(t, critic.ID, piped.AuthorID, "a claim with a pipeline too")
		require.Equal(t, critic.Name, piped.AuthorName)
		e.clock.Advance(time.Millisecond)
		anon, err := e.slots.CreateClaim(e.ctx, slots.NewClaim{Title: "From Go, without a key"})
		require.NoError(t, err)
		require.Empty(t, anon.AuthorID+anon.AuthorName, "no key, no author")

		for i := range 3 {
			kind := "criticism"
			if i == 0 {
				kind = "draft"
			}
			_, err := e.slots.AddComment(identity.WithKey(e.ctx, critic), slots.NewComment{ClaimID: piped.ID, Body: fmt.Sprint("comment ", i), CommentType: kind})
			require.NoError(t, err)
		}
		_, err = e.slots.AddComment(identity.WithKey(e.ctx, writer), slots.NewComment{ClaimID: plain.ID, Body: "one"})
		require.NoError(t, err)
		plain.CommentCount, piped.CommentCount = 1, 3

		for _, want := range []slots.Claim{plain, piped, anon} {
			got, err := e.claims.GetClaim(e.ctx, want.ID)
			require.NoError(t, err)
			require.Equal(t, want, got, "read by ID")
		}
		listed, err := e.claims.ListClaims(e.ctx, slots.ListClaimsParams{Limit: 10})
		require.NoError(t, err)
		require.Equal(t, []slots.Claim{anon, piped, plain}, listed, "listed, newest first")
		listed, err = e.claims.ListClaims(e.ctx, slots.ListClaimsParams{Limit: 10, Order: slots.ClaimTop})
		require.NoError(t, err)
		require.Equal(t, []slots.Claim{piped, plain, anon}, listed, "listed, most commented first")
		picked, err := e.slots.ClaimJob(e.ctx, slots.ClaimJobQuery{Strategy: slots.ClaimTop, CommentLimit: 1})
		require.NoError(t, err)
		require.Equal(t, piped, picked.Claim, "a claim job counts every comment, whatever it answers of them")
		require.Len(t, picked.Comments, 1)

		_, err = e.slots.ConfigureSlots(e.ctx, plain.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 1}})
		require.NoError(t, err)
		_, err = e.slots.AddComment(identity.WithKey(e.ctx, writer), slots.NewComment{ClaimID: plain.ID, Body: "a draft", CommentType: "draft"})
		require.NoError(t, err)
		plain.CommentCount = 2
		job, err := e.slots.TakeNext(identity.WithKey(e.ctx, critic), slots.JobQuery{Role: slots.RoleCritic})
		require.NoError(t, err)
		require.Equal(t, plain, job.Claim, "a role slot's job")
		work, err := e.svc.NextWork(identity.WithKey(e.ctx, writer), prism.WorkQuery{})
		require.NoError(t, err)
		require.Equal(t, piped, work.Claim, "a pipeline seat's work")
	})

	t.Run("RaceCommentsCounted", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 1)
		peer := slots.New(e.claims, slots.WithClock(e.clock.Now))
		// Comments posted at once from two processes while others read
		// the claim: every read counts at most what was posted, and the
		// count at the end is every comment, on every read.
		for rep := range raceRepeats {
			c, err := e.slots.CreateClaim(identity.WithKey(e.ctx, e.keys[0]), slots.NewClaim{Title: fmt.Sprint("Race ", rep)})
			require.NoError(t, err)
			const posters, each = 16, 3
			concurrently(posters+4, func(i int) {
				if i >= posters {
					for range 5 {
						got, err := e.claims.GetClaim(e.ctx, c.ID)
						if err != nil {
							t.Error(err)
							return
						}
						if got.CommentCount < 0 || got.CommentCount > posters*each {
							t.Errorf("read %d comments of at most %d", got.CommentCount, posters*each)
						}
					}
					return
				}
				svc := e.slots
				if i%2 == 1 {
					svc = peer
				}
				for j := range each {
					if _, err := svc.AddComment(identity.WithKey(e.ctx, e.keys[0]), slots.NewComment{ClaimID: c.ID, Body: fmt.Sprint(i, "/", j)}); err != nil {
						t.Error(err)
						return
					}
				}
			})
			comments, err := e.claims.ListComments(e.ctx, c.ID)
			require.NoError(t, err)
			require.Len(t, comments, posters*each)
			got, err := e.claims.GetClaim(e.ctx, c.ID)
			require.NoError(t, err)
			require.Equal(t, posters*each, got.CommentCount, "read by ID")
			listed, err := e.claims.ListClaims(e.ctx, slots.ListClaimsParams{Limit: 1})
			require.NoError(t, err)
			require.Equal(t, []slots.Claim{got}, listed, "listed")
		}
	})
}
