package client_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/storetest"
)

// TestClaimEvents follows the claim events of one server while another,
// sharing the backend, creates claims and comments on one: each change
// reaches the reader with the claim's ID. A bad key is refused before the
// stream starts.
func TestClaimEvents(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		reader := client.New(serve(t, st, st.Notifier), client.WithToken(admin))
		writer := agent(t, client.New(serve(t, st, st.Peer), client.WithToken(admin)), "writer", slots.ScopeClaimCreate, slots.ScopeCommentCreate)

		_, err := reader.As("bad").ClaimEvents(ctx)
		require.ErrorIs(t, err, store.ErrUnauthorized)
		events, err := reader.ClaimEvents(ctx)
		require.NoError(t, err)
		expectEvent(t, events, "", "the opening event")

		claim, err := writer.CreateClaim(ctx, client.NewClaim{Title: "Pigeons read", Body: "They tell words from non-words."})
		require.NoError(t, err)
		expectEvent(t, events, claim.ID, "the new claim")
		// A second claim's events come after all of the first's, so the
		// next event naming the first is its comment's.
		other, err := writer.CreateClaim(ctx, client.NewClaim{Title: "Pigeons count", Body: "Up to nine."})
		require.NoError(t, err)
		expectEvent(t, events, other.ID, "the second claim")
		_, err = writer.Comment(ctx, claim.ID, client.NewComment{Body: "which words?", CommentType: string(slots.CommentQuestion)})
		require.NoError(t, err)
		expectEvent(t, events, claim.ID, "the comment")
	})
}
