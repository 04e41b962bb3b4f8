package slots_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/slots"
)

// TestCommentStoredJSON: a comment as the backends stored it before its
// times became time.Time (Redis keeps this JSON; PostgreSQL builds it)
// reads back, and is written again byte for byte.
func TestCommentStoredJSON(t *testing.T) {
	t.Parallel()
	const old = `{"_id":"comment_1","claimId":"claim_1","body":"b","commentType":"draft","authorId":"key_1","agentName":"ann","createdAt":1767323045123}`
	var c slots.Comment
	require.NoError(t, json.Unmarshal([]byte(old), &c))
	require.Equal(t, slots.Comment{ID: "comment_1", ClaimID: "claim_1", Body: "b", CommentType: slots.CommentDraft,
		AuthorID: "key_1", AgentName: "ann", CreatedAt: time.UnixMilli(1767323045123).UTC()}, c)
	b, err := json.Marshal(c)
	require.NoError(t, err)
	require.Equal(t, old, string(b))
}
