package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// countingClaims counts the claim reads made to a slots.Store: one call is
// one round trip to a networked backend.
type countingClaims struct {
	slots.Store
	callCounter
}

func (c *countingClaims) GetClaim(ctx context.Context, id string) (slots.Claim, error) {
	c.count("GetClaim")
	return c.Store.GetClaim(ctx, id)
}

func (c *countingClaims) ListClaims(ctx context.Context, p slots.ListClaimsParams) ([]slots.Claim, error) {
	c.count("ListClaims")
	return c.Store.ListClaims(ctx, p)
}

func (c *countingClaims) ListComments(ctx context.Context, claimID string, p slots.ListCommentsParams) ([]slots.Comment, error) {
	c.count("ListComments")
	return c.Store.ListComments(ctx, claimID, p)
}

func (c *countingClaims) PickClaim(ctx context.Context, p slots.PickClaimParams) (slots.ClaimJob, error) {
	c.count("PickClaim")
	return c.Store.PickClaim(ctx, p)
}

// runClaimJob pins Service.ClaimJob and the store's PickClaim: the pick of
// each strategy, the pool, the domain, the comment limit, the errors, and
// one round trip per job.
func runClaimJob(t *testing.T, newStores NewStores) {
	t.Run("ClaimJob", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		counted := &countingClaims{Store: e.store}
		svc := slots.New(counted, slots.WithClock(e.clock.Now))
		job := func(q slots.ClaimJobQuery) slots.ClaimJob {
			t.Helper()
			counted.take()
			j, err := svc.ClaimJob(e.ctx, q)
			require.NoError(t, err, "%+v", q)
			require.Equal(t, map[string]int{"PickClaim": 1}, counted.take(), "one round trip")
			require.NotNil(t, j.Comments, "comments are a list, never nil")
			return j
		}
		_, err := svc.ClaimJob(e.ctx, slots.ClaimJobQuery{})
		requireCode(t, slots.ErrNoClaims, err)

		// Oldest to newest: a (law, 3 comments), b (law, 1), c (physics, 3),
		// d (law, none).
		author := e.agent("author")
		claims := map[string]slots.Claim{}
		for _, n := range []struct {
			name, domain string
			comments     int
		}{{"a", "law", 3}, {"b", "law", 1}, {"c", "physics", 3}, {"d", "law", 0}} {
			c := e.claim(n.domain)
			c.CommentCount = n.comments // every one, whatever CommentLimit
			for i := range n.comments {
				m, err := e.svc.AddComment(identity.WithKey(e.ctx, author), slots.NewComment{ClaimID: c.ID, Body: fmt.Sprint(n.name, i)})
				require.NoError(t, err)
				c.UpdatedAt = m.CreatedAt
				e.clock.Advance(time.Millisecond)
			}
			claims[n.name] = c
			e.clock.Advance(time.Millisecond)
		}
		name := func(j slots.ClaimJob) string {
			for n, c := range claims {
				if c.ID == j.Claim.ID {
					require.Equal(t, c, j.Claim)
					return n
				}
			}
			t.Fatalf("unknown claim %s", j.Claim.ID)
			return ""
		}
		bodies := func(j slots.ClaimJob) []string {
			out := []string{}
			for _, c := range j.Comments {
				require.Equal(t, j.Claim.ID, c.ClaimID)
				out = append(out, c.Body)
			}
			return out
		}

		latest := job(slots.ClaimJobQuery{})
		require.Equal(t, "d", name(latest))
		require.Empty(t, latest.Comments)
		j := job(slots.ClaimJobQuery{Strategy: slots.ClaimLatest, Domain: "physics"})
		require.Equal(t, "c", name(j))
		require.Equal(t, []string{"c0", "c1", "c2"}, bodies(j), "every comment, oldest first")
		j = job(slots.ClaimJobQuery{Strategy: "Latest", Domain: "physics", CommentLimit: 2})
		require.Equal(t, []string{"c1", "c2"}, bodies(j), "the newest CommentLimit, oldest first")

		require.Equal(t, "c", name(job(slots.ClaimJobQuery{Strategy: slots.ClaimTop})), "most comments; of a and c tied, the newest")
		require.Equal(t, "a", name(job(slots.ClaimJobQuery{Strategy: "TOP", Domain: "law"})))
		require.Equal(t, "c", name(job(slots.ClaimJobQuery{Strategy: slots.ClaimTop, Pool: 2})), "among the newest Pool only")
		require.Equal(t, "d", name(job(slots.ClaimJobQuery{Strategy: slots.ClaimTop, Pool: 1})))
		require.Equal(t, "b", name(job(slots.ClaimJobQuery{Strategy: slots.ClaimTop, Pool: 2, Domain: "law"})))
		j = job(slots.ClaimJobQuery{Strategy: slots.ClaimTop, Domain: "law", CommentLimit: 1})
		require.Equal(t, []string{"a2"}, bodies(j))
		j = job(slots.ClaimJobQuery{Strategy: slots.ClaimTop, Domain: "law", CommentLimit: 1000})
		require.Equal(t, []string{"a0", "a1", "a2"}, bodies(j))

		seen := map[string]bool{}
		for range 40 {
			n := name(job(slots.ClaimJobQuery{Strategy: slots.ClaimRandom, Pool: 3}))
			require.NotEqual(t, "a", n, "a is not among the newest 3")
			seen[n] = true
		}
		require.Greater(t, len(seen), 1, "random picks vary")
		_, err = svc.ClaimJob(e.ctx, slots.ClaimJobQuery{Strategy: slots.ClaimRandom, Domain: "chemistry"})
		requireCode(t, slots.ErrNoClaims, err)

		// The store's random pick is the candidate at ⌊Random·n⌋, newest
		// first: the same on every backend.
		for _, c := range []struct {
			random float64
			pool   int
			domain string
			want   string
		}{{0, 4, "", "d"}, {0.25, 4, "", "c"}, {0.5, 4, "", "b"}, {0.99, 4, "", "a"}, {0.5, 2, "", "c"}, {0.9, 100, "law", "a"}, {0.4, 100, "law", "b"}} {
			j, err := e.store.PickClaim(e.ctx, slots.PickClaimParams{Strategy: slots.ClaimRandom, Random: c.random, Pool: c.pool, Domain: c.domain})
			require.NoError(t, err)
			require.Equal(t, c.want, name(j), "%+v", c)
			require.Empty(t, j.Comments, "no comment asked for, %+v", c)
		}
		for limit, want := range map[int][]string{-1: {}, 1: {"a2"}, 2: {"a1", "a2"}, 9: {"a0", "a1", "a2"}} {
			j, err := e.store.PickClaim(e.ctx, slots.PickClaimParams{Strategy: slots.ClaimTop, Pool: 100, Domain: "law", CommentLimit: limit})
			require.NoError(t, err)
			require.Equal(t, want, bodies(j), "the newest %d comments, oldest first", limit)
		}

		for code, q := range map[string]slots.ClaimJobQuery{
			"invalid_strategy":     {Strategy: "best"},
			"invalid_pool":         {Pool: -1},
			"invalid_commentlimit": {CommentLimit: -1},
			"invalid_text":         {Domain: "nul\x00"},
		} {
			_, err := svc.ClaimJob(e.ctx, q)
			require.ErrorIs(t, err, store.ErrInvalid, code)
			if code != "invalid_text" {
				requireCode(t, &store.Error{Kind: store.ErrInvalid, Code: code}, err)
			}
		}
	})
}
