package pgstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/pgstore"
)

func TestDecodeComments(t *testing.T) {
	got, err := pgstore.DecodeComments([]byte(`[["cm_1","claim_1","a \"body\"","draft","key_1","drafter","1700000000123"]]`))
	require.NoError(t, err)
	require.Equal(t, []slots.Comment{{ID: "cm_1", ClaimID: "claim_1", Body: `a "body"`, CommentType: slots.CommentDraft,
		AuthorID: "key_1", AgentName: "drafter", CreatedAt: time.UnixMilli(1700000000123).UTC()}}, got)

	got, err = pgstore.DecodeComments([]byte(`[]`))
	require.NoError(t, err)
	require.NotNil(t, got)
	require.Empty(t, got)

	for _, bad := range []string{
		``, `{}`, `[["cm_1"]]`, `[[1,2,3,4,5,6,7]]`,
		`[["cm_1","claim_1","b","draft","key_1","drafter","soon"]]`,
		`[["cm_1","claim_1","b","draft","key_1","drafter","1","extra"]]`,
	} {
		_, err := pgstore.DecodeComments([]byte(bad))
		require.Error(t, err, bad)
	}
}

// FuzzDecodeComments: whatever the column holds, decoding answers comments
// or an error, never a panic.
func FuzzDecodeComments(f *testing.F) {
	f.Add([]byte(`[["cm_1","claim_1","body","draft","key_1","drafter","1700000000123"]]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`[[]]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := pgstore.DecodeComments(raw)
		if err == nil && got == nil {
			t.Fatal("no error and no comments")
		}
	})
}
