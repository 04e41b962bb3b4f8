package slots_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
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

	// A reply carries its parent before its time; a comment without one
	// is written as before.
	c.ParentID = `comment_"0"`
	b, err = json.Marshal(c)
	require.NoError(t, err)
	const reply = `{"_id":"comment_1","claimId":"claim_1","body":"b","commentType":"draft","authorId":"key_1","agentName":"ann","parentCommentId":"comment_\"0\"","createdAt":1767323045123}`
	require.Equal(t, reply, string(b))
	var r slots.Comment
	require.NoError(t, json.Unmarshal(b, &r))
	require.Equal(t, c, r)
}

// storedComment is a comment's JSON as encoding/json reads it, the
// reference FuzzCommentUnmarshalJSON holds UnmarshalJSON to.
type storedComment struct {
	ID          string `json:"_id"`
	ClaimID     string `json:"claimId"`
	Body        string `json:"body"`
	CommentType string `json:"commentType"`
	AuthorID    string `json:"authorId"`
	AgentName   string `json:"agentName"`
	ParentID    string `json:"parentCommentId"`
	CreatedAt   int64  `json:"createdAt"`
}

// TestCommentUnmarshalJSON: what MarshalJSON writes reads back, escapes
// included, and so does the same object in any other form JSON allows.
func TestCommentUnmarshalJSON(t *testing.T) {
	t.Parallel()
	want := slots.Comment{ID: "comment_1", ClaimID: "claim_1", Body: "line \"one\"\n<two> & ünï \\ \t", CommentType: slots.CommentCriticism,
		AuthorID: "key_1", AgentName: "ann", CreatedAt: time.UnixMilli(-5).UTC()}
	b, err := json.Marshal(want)
	require.NoError(t, err)
	for _, in := range []string{
		string(b),
		`{ "createdAt": -5, "agentName": "ann", "authorId": "key_1", "commentType": "criticism", "claimId": "claim_1", "_id": "comment_1",
			"body": "line \u0022one\"\n\u003ctwo> \u0026 \u00fcn\u00ef \\ \t", "extra": [1, 2] }`,
	} {
		var c slots.Comment
		require.NoError(t, c.UnmarshalJSON([]byte(in)), in)
		require.Equal(t, want, c, in)
	}
	for _, bad := range []string{``, `[]`, `{"_id":1}`, `{"_id":"c","createdAt":1.5}`, `{"_id":"c"`} {
		var c slots.Comment
		require.Error(t, c.UnmarshalJSON([]byte(bad)), bad)
	}
}

// FuzzCommentUnmarshalJSON: UnmarshalJSON answers what encoding/json does
// for the comment's fields, whichever of its two readers reads the input.
func FuzzCommentUnmarshalJSON(f *testing.F) {
	f.Add([]byte(`{"_id":"comment_1","claimId":"claim_1","body":"b\n\"q\"","commentType":"draft","authorId":"key_1","agentName":"ann","createdAt":1767323045123}`))
	f.Add([]byte(`{"_id":"c","claimId":"","body":"\u003c","commentType":"","authorId":"","agentName":"","createdAt":0}`))
	f.Add([]byte(`{"createdAt":1}`))
	f.Add([]byte(`{"_id":"c","claimId":"","body":"","commentType":"","authorId":"","agentName":"","parentCommentId":"p\n","createdAt":0}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var ref storedComment
		refErr := json.Unmarshal(b, &ref)
		var c slots.Comment
		err := c.UnmarshalJSON(b)
		if refErr != nil {
			require.Error(t, err, "encoding/json refused it: %v", refErr)
			return
		}
		require.NoError(t, err)
		require.Equal(t, slots.Comment{ID: ref.ID, ClaimID: ref.ClaimID, Body: ref.Body, CommentType: slots.CommentType(ref.CommentType),
			AuthorID: ref.AuthorID, AgentName: ref.AgentName, ParentID: ref.ParentID, CreatedAt: store.FromMillis(ref.CreatedAt)}, c)
	})
}

// BenchmarkCommentUnmarshalJSON reads a comment as Redis keeps it: a draft
// of a few sentences.
func BenchmarkCommentUnmarshalJSON(b *testing.B) {
	raw := []byte(`{"_id":"cm_01HZX3K9Q2","claimId":"claim_01HZX3K9Q1","body":"The claim holds for the cases given, though the second source is a preprint.\nSee the review.","commentType":"draft","authorId":"key_01HZX3K9Q0","agentName":"drafter","createdAt":1700000000123}`)
	b.ReportAllocs()
	for b.Loop() {
		var c slots.Comment
		if err := c.UnmarshalJSON(raw); err != nil {
			b.Fatal(err)
		}
	}
}
