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

	got, err = pgstore.DecodeComments([]byte(`[["cm_2","claim_1","reply","answer","key_2","answerer","1700000000124","cm_1"],["cm_3","claim_1","top","addition","key_2","answerer","1700000000125",""]]`))
	require.NoError(t, err)
	require.Equal(t, []slots.Comment{{ID: "cm_2", ClaimID: "claim_1", Body: "reply", CommentType: slots.CommentAnswer,
		AuthorID: "key_2", AgentName: "answerer", ParentID: "cm_1", CreatedAt: time.UnixMilli(1700000000124).UTC()},
		{ID: "cm_3", ClaimID: "claim_1", Body: "top", CommentType: slots.CommentAddition,
			AuthorID: "key_2", AgentName: "answerer", CreatedAt: time.UnixMilli(1700000000125).UTC()}}, got, "eight texts: the eighth its parent")

	got, err = pgstore.DecodeComments([]byte(`[]`))
	require.NoError(t, err)
	require.NotNil(t, got)
	require.Empty(t, got)

	for _, bad := range []string{
		``, `{}`, `[["cm_1"]]`, `[[1,2,3,4,5,6,7]]`,
		`[["cm_1","claim_1","b","draft","key_1","drafter","soon"]]`,
		`[["cm_1","claim_1","b","draft","key_1","drafter","1","cm_0","extra"]]`,
		`[["cm_1","claim_1","b","draft","key_1","drafter","1",5]]`,
	} {
		_, err := pgstore.DecodeComments([]byte(bad))
		require.Error(t, err, bad)
	}
}

// TestDecodeCommentsByHand: the column as PostgreSQL writes it is read by
// hand, escapes included, and what readComments leaves (a \u escape,
// spaces, a null) still decodes, through encoding/json.
func TestDecodeCommentsByHand(t *testing.T) {
	row := func(body string) string {
		return `[["cm_1","claim_1",` + body + `,"draft","key_1","drafter","5"],["cm_2","claim_1","b","review","key_2","critic","6"]]`
	}
	for raw, body := range map[string]string{
		row(`"plain"`):                          "plain",
		row(`"line\nnext\t\"q\" \\ \/ \b\f\r"`): "line\nnext\t\"q\" \\ / \b\f\r",
		row(`"ünïcödé ✓"`):                      "ünïcödé ✓",
		row(`""`):                               "",
	} {
		got, ok := pgstore.ReadComments([]byte(raw))
		require.True(t, ok, raw)
		require.Len(t, got, 2)
		require.Equal(t, body, got[0].Body)
		require.Equal(t, time.UnixMilli(6).UTC(), got[1].CreatedAt)
	}
	for raw, body := range map[string]string{
		row(`"\u00e9\u0001"`): "é\x01",
		row(`"a"`) + " ":      "a",
		row(`null`):           "",
	} {
		_, ok := pgstore.ReadComments([]byte(raw))
		require.False(t, ok, raw)
		got, err := pgstore.DecodeComments([]byte(raw))
		require.NoError(t, err, raw)
		require.Equal(t, body, got[0].Body)
	}
}

// FuzzDecodeComments: whatever the column holds, decoding answers comments
// or an error, never a panic, and where readComments reads it, it reads
// what encoding/json does.
func FuzzDecodeComments(f *testing.F) {
	f.Add([]byte(`[["cm_1","claim_1","body","draft","key_1","drafter","1700000000123"]]`))
	f.Add([]byte(`[["cm_1","claim_1","a\n\"b\"\\","draft","key_1","drafter","1"],["c","c","","d","k","n","-2"]]`))
	f.Add([]byte(`[["cm_2","claim_1","reply","answer","key_1","drafter","2","cm_1"],["c","c","","d","k","n","3"]]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`[[]]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := pgstore.DecodeComments(raw)
		if err == nil && got == nil {
			t.Fatal("no error and no comments")
		}
		byHand, ok := pgstore.ReadComments(raw)
		if !ok {
			return
		}
		want, err := pgstore.UnmarshalComments(raw)
		if err != nil {
			t.Fatalf("read by hand, refused by encoding/json: %v", err)
		}
		require.Equal(t, want, byHand)
	})
}

// BenchmarkDecodeComments decodes a job's comments column as bench/ and
// the AOP agents make it: one draft of a few sentences.
func BenchmarkDecodeComments(b *testing.B) {
	raw := []byte(`[["cm_01HZX3K9Q2","claim_01HZX3K9Q1","The claim holds for the cases given, though the second source is a preprint.\nSee the review.","draft","key_01HZX3K9Q0","drafter","1700000000123"]]`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pgstore.DecodeComments(raw); err != nil {
			b.Fatal(err)
		}
	}
}
