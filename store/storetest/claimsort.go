package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// runClaimsSort checks the claim listing's orders: the store's
// ListClaimsParams.Order and the Service's ClaimsQuery.Sort.
func runClaimsSort(t *testing.T, newStores NewStores) {
	t.Run("ClaimsSort", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		author := e.agent("author")
		// Oldest to newest: a (2 comments), b (0), c (2), d (1), and one of
		// another domain with the most comments.
		byName := map[string]slots.Claim{}
		for _, n := range []struct {
			name, domain string
			comments     int
		}{{"a", "", 2}, {"b", "", 0}, {"c", "", 2}, {"d", "", 1}, {"other", "ethology", 3}} {
			e.clock.Advance(time.Millisecond)
			c := e.claim(n.domain)
			for range n.comments {
				_, err := e.svc.AddComment(identity.WithKey(e.ctx, author), slots.NewComment{ClaimID: c.ID, Body: "a comment"})
				require.NoError(t, err)
			}
			c.CommentCount = n.comments
			byName[n.name] = c
		}
		ids := func(cs []slots.Claim) []string {
			out := []string{}
			for _, c := range cs {
				for name, b := range byName {
					if b.ID == c.ID {
						out = append(out, name)
					}
				}
			}
			return out
		}
		list := func(p slots.ListClaimsParams) []string {
			t.Helper()
			p.Domain = slots.DefaultDomain
			cs, err := e.store.ListClaims(e.ctx, p)
			require.NoError(t, err)
			return ids(cs)
		}
		require.Equal(t, []string{"d", "c", "b", "a"}, list(slots.ListClaimsParams{Limit: 10}))
		require.Equal(t, []string{"c", "a", "d", "b"}, list(slots.ListClaimsParams{Limit: 10, Order: slots.ClaimTop}), "most comments first, the newest of those tied")
		require.Equal(t, []string{"c", "d", "b"}, list(slots.ListClaimsParams{Limit: 3, Order: slots.ClaimTop}), "among the newest Limit")
		require.Equal(t, []string{"c", "a", "b"}, list(slots.ListClaimsParams{Limit: 10, Before: byName["d"].ID, Order: slots.ClaimTop}), "below Before")
		all, err := e.store.ListClaims(e.ctx, slots.ListClaimsParams{Limit: 10, Order: slots.ClaimTop})
		require.NoError(t, err)
		require.Equal(t, []string{"other", "c", "a", "d", "b"}, ids(all), "every domain")
		require.Equal(t, byName["other"], all[0], "the claims as stored, their comments counted")

		page, err := e.svc.Claims(e.ctx, slots.ClaimsQuery{Sort: "TOP", Limit: 2, Domain: slots.DefaultDomain, Cursor: byName["b"].ID})
		require.NoError(t, err)
		require.Equal(t, []string{"c", "a"}, ids(page.Items), "the cursor is not read")
		require.Empty(t, page.NextCursor, "one page")
		page, err = e.svc.Claims(e.ctx, slots.ClaimsQuery{Sort: slots.ClaimRandom, Domain: slots.DefaultDomain})
		require.NoError(t, err)
		require.ElementsMatch(t, []string{"a", "b", "c", "d"}, ids(page.Items))
		page, err = e.svc.Claims(e.ctx, slots.ClaimsQuery{Sort: slots.ClaimLatest, Limit: 2, Domain: slots.DefaultDomain})
		require.NoError(t, err)
		require.Equal(t, []string{"d", "c"}, ids(page.Items))
		require.Equal(t, byName["c"].ID, page.NextCursor)
		_, err = e.svc.Claims(e.ctx, slots.ClaimsQuery{Sort: "best"})
		requireCode(t, &store.Error{Kind: store.ErrInvalid, Code: "invalid_sort"}, err)
	})
}
