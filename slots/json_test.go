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

// TestSlotAndClaimJSON: times travel as Unix milliseconds, a zero time as
// 0 (createdAt) or not at all (the optional ones), as before.
func TestSlotAndClaimJSON(t *testing.T) {
	t.Parallel()
	at := time.UnixMilli(1767323045123).UTC()
	open := slots.Slot{ID: "slot_1", ClaimID: "claim_1", Role: slots.RoleCritic, Status: slots.StatusOpen, CreatedAt: at}
	b, err := json.Marshal(open)
	require.NoError(t, err)
	require.Equal(t, `{"_id":"slot_1","claimId":"claim_1","role":"critic","status":"open","createdAt":1767323045123}`, string(b))

	const taken = `{"_id":"slot_1","claimId":"claim_1","role":"critic","status":"taken","apiKeyId":"key_1","agentName":"ann",` +
		`"takenAt":1767323046000,"createdAt":1767323045123,"leaseExpiresAt":1767323106000}`
	var s slots.Slot
	require.NoError(t, json.Unmarshal([]byte(taken), &s))
	require.Equal(t, time.UnixMilli(1767323046000).UTC(), s.TakenAt)
	require.True(t, s.DoneAt.IsZero())
	require.Equal(t, time.UnixMilli(1767323106000).UTC(), s.LeaseExpiresAt)
	b, err = json.Marshal(s)
	require.NoError(t, err)
	require.Equal(t, taken, string(b))

	b, err = json.Marshal(slots.Claim{ID: "claim_1", Title: "t", Domain: "d", Sources: []slots.Source{}})
	require.NoError(t, err)
	require.Equal(t, `{"_id":"claim_1","title":"t","body":"","domain":"d","sources":[],"createdAt":0}`, string(b))
	var c slots.Claim
	require.NoError(t, json.Unmarshal([]byte(`{"_id":"claim_1","createdAt":1767323045123}`), &c))
	require.Equal(t, at, c.CreatedAt)
}
