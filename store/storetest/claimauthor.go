package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
)

// allComments lists every comment of the claims these tests make.
var allComments = slots.ListCommentsParams{Limit: slots.MaxCommentsLimit}

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
		plain.UpdatedAt, piped.UpdatedAt = e.clock.Now(), e.clock.Now() // commented on at the last claim's time

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

	t.Run("ClaimUpdatedAt", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 1)
		key := identity.WithKey(e.ctx, e.keys[0])
		c, err := e.slots.CreateClaim(key, slots.NewClaim{Title: "Changes"})
		require.NoError(t, err)
		other, err := e.slots.CreateClaim(key, slots.NewClaim{Title: "Another"})
		require.NoError(t, err)
		require.Equal(t, c.CreatedAt, c.UpdatedAt, "created")
		reads := func(want slots.Claim, what string) {
			t.Helper()
			got, err := e.claims.GetClaim(e.ctx, want.ID)
			require.NoError(t, err)
			require.Equal(t, want, got, "%s: read by ID", what)
			listed, err := e.claims.ListClaims(e.ctx, slots.ListClaimsParams{Limit: 10})
			require.NoError(t, err)
			require.Contains(t, listed, want, "%s: listed", what)
		}
		reads(c, "as created")

		e.clock.Advance(time.Millisecond)
		m, err := e.slots.AddComment(key, slots.NewComment{ClaimID: c.ID, Body: "a draft", CommentType: "draft"})
		require.NoError(t, err)
		c.UpdatedAt, c.CommentCount = m.CreatedAt, 1
		reads(c, "commented on")
		reads(other, "another claim's comment changes nothing")

		e.clock.Advance(time.Millisecond)
		cal, err := e.slots.Calibrate(key, c.ID, []slots.NewCalibrationScore{{Domain: "ethology", Score: 100}})
		require.NoError(t, err)
		c.UpdatedAt, c.Domain = cal.CreatedAt, "ethology"
		reads(c, "calibrated")

		// Stored with an older time, a comment or calibration leaves the
		// claim's time as it is: the latest change's.
		earlier := c.CreatedAt
		require.NoError(t, e.claims.AddComment(e.ctx, slots.Comment{ID: "comment_late", ClaimID: c.ID, Body: "late", CommentType: slots.CommentAddition,
			AuthorID: e.keys[0].ID, AgentName: e.keys[0].Name, CreatedAt: earlier}))
		require.NoError(t, e.claims.AddCalibration(e.ctx, slots.Calibration{ID: "calibration_late", ClaimID: c.ID, Scores: []slots.CalibrationScore{{Domain: "ethology", Score: 100}},
			Total: 100, EditorID: e.keys[0].ID, EditorName: e.keys[0].Name, CreatedAt: earlier}))
		c.CommentCount = 2
		reads(c, "older changes")

		_, err = e.slots.ConfigureSlots(e.ctx, c.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 1}})
		require.NoError(t, err)
		job, err := e.slots.TakeNext(key, slots.JobQuery{})
		require.NoError(t, err)
		require.Equal(t, c, job.Claim, "a job's claim")
		picked, err := e.slots.ClaimJob(e.ctx, slots.ClaimJobQuery{Strategy: slots.ClaimTop})
		require.NoError(t, err)
		require.Equal(t, c, picked.Claim, "a claim job's claim")
	})

	t.Run("CommentReplies", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 1)
		key := identity.WithKey(e.ctx, e.keys[0])
		c, err := e.slots.CreateClaim(key, slots.NewClaim{Title: "Threads"})
		require.NoError(t, err)
		other, err := e.slots.CreateClaim(key, slots.NewClaim{Title: "Elsewhere"})
		require.NoError(t, err)
		first, err := e.slots.AddComment(key, slots.NewComment{ClaimID: c.ID, Body: "a draft", CommentType: "draft"})
		require.NoError(t, err)
		e.clock.Advance(time.Millisecond)
		second, err := e.slots.AddComment(key, slots.NewComment{ClaimID: c.ID, Body: "another"})
		require.NoError(t, err)
		e.clock.Advance(time.Millisecond)
		reply, err := e.slots.AddComment(key, slots.NewComment{ClaimID: c.ID, Body: "why?", CommentType: "question", ParentID: first.ID})
		require.NoError(t, err)
		require.Equal(t, first.ID, reply.ParentID)
		elsewhere, err := e.slots.AddComment(key, slots.NewComment{ClaimID: other.ID, Body: "not here"})
		require.NoError(t, err)

		for name, parent := range map[string]string{"unknown": "comment_none", "another claim's": elsewhere.ID, "not text": "a\"b<c>"} {
			_, err := e.slots.AddComment(key, slots.NewComment{ClaimID: c.ID, Body: "orphan", ParentID: parent})
			requireCode(t, slots.ErrParentNotFound, err, "%s parent", name)
		}
		stored, err := e.claims.ListComments(e.ctx, c.ID, allComments)
		require.NoError(t, err)
		require.Equal(t, []slots.Comment{first, second, reply}, stored, "the reply with its parent; nothing of the refused ones")

		// A parent whose ID JSON escapes is found as any other (IDs that
		// sort after the service's, which sort in creation order).
		odd := slots.Comment{ID: "comment_~\"<odd>&", ClaimID: c.ID, Body: "odd", CommentType: slots.CommentAddition, AuthorID: e.keys[0].ID, AgentName: e.keys[0].Name, CreatedAt: e.clock.Now()}
		require.NoError(t, e.claims.AddComment(e.ctx, odd))
		toOdd := odd
		toOdd.ID, toOdd.ParentID = "comment_~~to_odd", odd.ID
		require.NoError(t, e.claims.AddComment(e.ctx, toOdd))

		// The original's top order: the most replied to first, then the
		// newest.
		top, err := e.slots.Comments(e.ctx, c.ID, slots.CommentsParams{})
		require.NoError(t, err)
		require.Equal(t, []string{odd.ID, first.ID, toOdd.ID, reply.ID, second.ID}, commentIDs(top))
		_, err = e.slots.ConfigureSlots(e.ctx, c.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 1}})
		require.NoError(t, err)
		job, err := e.slots.NextJob(e.ctx, slots.JobQuery{})
		require.NoError(t, err)
		require.Equal(t, []slots.Comment{first, second, reply, odd, toOdd}, job.Comments, "a job's comments carry their parents")
	})

	t.Run("JobCommentsBounded", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 2)
		key := identity.WithKey(e.ctx, e.keys[0])
		c, err := e.slots.CreateClaim(key, slots.NewClaim{Title: "Talked about"})
		require.NoError(t, err)
		posted := e.postComments(t, key, c.ID, slots.JobComments+10)
		// Replies to the first comment and to the last still find them.
		for _, parent := range []slots.Comment{posted[0], posted[len(posted)-1]} {
			m, err := e.slots.AddComment(key, slots.NewComment{ClaimID: c.ID, Body: "re", CommentType: "question", ParentID: parent.ID})
			require.NoError(t, err)
			posted = append(posted, m)
			e.clock.Advance(time.Millisecond)
		}
		stored, err := e.claims.ListComments(e.ctx, c.ID, allComments)
		require.NoError(t, err)
		require.Equal(t, posted, stored, "the listing keeps every comment")
		got, err := e.claims.GetClaim(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, len(posted), got.CommentCount)

		picked, err := e.slots.ClaimJob(e.ctx, slots.ClaimJobQuery{})
		require.NoError(t, err)
		require.Equal(t, commentIDs(posted[len(posted)-slots.DefaultCommentsLimit:]), commentIDs(picked.Comments),
			"a claim job without a comment limit answers the newest DefaultCommentsLimit")
		require.Equal(t, len(posted), picked.Claim.CommentCount)

		_, err = e.slots.ConfigureSlots(e.ctx, c.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 2}})
		require.NoError(t, err)
		oldest := commentIDs(posted[:slots.JobComments])
		peek, err := e.slots.NextJob(e.ctx, slots.JobQuery{})
		require.NoError(t, err)
		require.Equal(t, oldest, commentIDs(peek.Comments), "a job carries the oldest JobComments comments")
		require.Equal(t, len(posted), peek.Claim.CommentCount, "and counts every one")
		batched, err := e.slots.TakeNext(key, slots.JobQuery{})
		require.NoError(t, err)
		require.Equal(t, oldest, commentIDs(batched.Comments), "taken in a batch")
		require.Equal(t, len(posted), batched.Claim.CommentCount)
		alone, err := slots.New(e.claims, slots.WithoutBatching()).TakeNext(identity.WithKey(e.ctx, e.keys[1]), slots.JobQuery{})
		require.NoError(t, err)
		require.Equal(t, oldest, commentIDs(alone.Comments), "taken alone")
		require.Equal(t, len(posted), alone.Claim.CommentCount)
	})

	t.Run("CommentWindows", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 1)
		key := identity.WithKey(e.ctx, e.keys[0])
		c, err := e.slots.CreateClaim(key, slots.NewClaim{Title: "Windows"})
		require.NoError(t, err)
		quiet, err := e.slots.CreateClaim(key, slots.NewClaim{Title: "No comments"})
		require.NoError(t, err)
		posted := e.postComments(t, key, c.ID, 7)
		for _, tc := range []struct {
			name string
			p    slots.ListCommentsParams
			want []slots.Comment
		}{
			{"the oldest 3", slots.ListCommentsParams{Limit: 3}, posted[:3]},
			{"the newest 3, oldest first", slots.ListCommentsParams{Limit: 3, Newest: true}, posted[4:]},
			{"the oldest, past the count", slots.ListCommentsParams{Limit: 100}, posted},
			{"the newest, past the count", slots.ListCommentsParams{Limit: 100, Newest: true}, posted},
			{"the newest 1", slots.ListCommentsParams{Limit: 1, Newest: true}, posted[6:]},
			{"none", slots.ListCommentsParams{}, nil},
			{"none, newest", slots.ListCommentsParams{Newest: true}, nil},
			{"a negative limit", slots.ListCommentsParams{Limit: -1, Newest: true}, nil},
		} {
			got, err := e.claims.ListComments(e.ctx, c.ID, tc.p)
			require.NoError(t, err, tc.name)
			require.Equal(t, commentIDs(tc.want), commentIDs(got), tc.name)
			require.Equal(t, len(tc.want), len(got), tc.name)
		}
		for _, p := range []slots.ListCommentsParams{{Limit: 5}, {Limit: 5, Newest: true}, {}} {
			got, err := e.claims.ListComments(e.ctx, quiet.ID, p)
			require.NoError(t, err, "a claim without comments, %+v", p)
			require.Empty(t, got)
			_, err = e.claims.ListComments(e.ctx, "claim_none", p)
			require.ErrorIs(t, err, slots.ErrClaimNotFound, "no claim, %+v", p)
		}
		got, err := e.claims.ListComments(e.ctx, c.ID, slots.ListCommentsParams{Limit: 2})
		require.NoError(t, err)
		require.Equal(t, posted[:2], got, "every field of a listed comment")
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
			comments, err := e.claims.ListComments(e.ctx, c.ID, allComments)
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

// commentIDs are the comments' IDs, in order.
// postComments posts n comments on claimID as the key in ctx, a
// millisecond apart, the first a draft, and returns them.
func (e *prismEnv) postComments(t *testing.T, ctx context.Context, claimID string, n int) []slots.Comment {
	t.Helper()
	var posted []slots.Comment
	for i := range n {
		kind := "addition"
		if i == 0 {
			kind = "draft"
		}
		m, err := e.slots.AddComment(ctx, slots.NewComment{ClaimID: claimID, Body: fmt.Sprint("comment ", i), CommentType: kind})
		require.NoError(t, err)
		posted = append(posted, m)
		e.clock.Advance(time.Millisecond)
	}
	return posted
}

func commentIDs(cs []slots.Comment) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}
