package redisstore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// doneValues is a finish's answer: doneFields of a slot taken at 1 ms.
func doneValues() []any {
	v := make([]any, doneFieldCount)
	v[doneRole], v[doneAgentName], v[doneTakenAt], v[doneCreatedAt] = "critic", "ann", "1", "1"
	return v
}

// jobValues is a take's answer, push_job's: slot id, its queuedFields (as
// the slot was queued), a claim's job text with one comment, its updatedAt
// and its comment count (more than the text carries).
func jobValues(id string) []any {
	return []any{id, "c1", "critic", "1", "open",
		jobTextOf("9", "c1", "title", "body", "d", "1", "", "sim", "key_1", "ann", `{"_id":"m1","claimId":"c1","body":"draft","commentType":"draft"}`), "7", "3"}
}

// jobTextOf writes items as lib.lua's job_text does.
func jobTextOf(items ...string) string {
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "%d:%s", len(it), it)
	}
	return b.String()
}

func TestReplyReadsFlatAnswers(t *testing.T) {
	t.Parallel()
	now := time.UnixMilli(5).UTC()
	finish := slots.FinishParams{ClaimID: "c1", SlotID: "s1", KeyID: "k1", Now: now}
	take := slots.TakeNextParams{Agent: slots.Agent{KeyID: "k1", Name: "ann", AvatarURL: "a.png"}, Now: now, LeaseUntil: now.Add(time.Minute)}
	var a []any
	a = append(a, "")
	a = append(a, doneValues()...)
	a = append(a, int64(1))
	a = append(a, jobValues("s2")...)
	a = append(a, "not_slot_owner")
	a = append(a, "")
	a = append(a, doneValues()...)
	a = append(a, int64(0))

	r := reply{a: a}
	f := r.finish(finish)
	require.NoError(t, f.Err)
	require.Equal(t, slots.Slot{ID: "s1", ClaimID: "c1", Role: slots.RoleCritic, Status: slots.StatusDone, APIKeyID: "k1", AgentName: "ann",
		TakenAt: time.UnixMilli(1).UTC(), DoneAt: now, CreatedAt: time.UnixMilli(1).UTC()}, f.Slot, "what the finish sent fills the rest")
	job, err := r.next(take)
	require.NoError(t, err)
	require.Equal(t, slots.Slot{ID: "s2", ClaimID: "c1", Role: slots.RoleCritic, Status: slots.StatusTaken, APIKeyID: "k1", AgentName: "ann", AgentAvatarURL: "a.png",
		TakenAt: now, CreatedAt: time.UnixMilli(1).UTC(), LeaseExpiresAt: store.Milli(now.Add(time.Minute))}, job.Slot, "what the taker sent fills the rest")
	require.Equal(t, "title", job.Claim.Title)
	require.Equal(t, "sim", job.Claim.Protocol)
	require.Equal(t, "key_1", job.Claim.AuthorID)
	require.Equal(t, "ann", job.Claim.AuthorName)
	require.Equal(t, 3, job.Claim.CommentCount, "the count the reply gives")
	require.Equal(t, time.UnixMilli(7).UTC(), job.Claim.UpdatedAt)
	require.Equal(t, []slots.Source{}, job.Claim.Sources)
	require.Len(t, job.Comments, 1)
	require.ErrorIs(t, r.finish(finish).Err, slots.ErrNotSlotOwner)
	require.Equal(t, "s1", r.finish(finish).Slot.ID)
	_, err = r.next(take)
	require.ErrorIs(t, err, slots.ErrNoJob)
	require.NoError(t, answered(&r, "test"))

	picked, err := decodeJob(jobValues("s3"), nil)
	require.NoError(t, err)
	require.Equal(t, slots.Slot{ID: "s3", ClaimID: "c1", Role: slots.RoleCritic, Status: slots.StatusOpen, CreatedAt: time.UnixMilli(1).UTC()}, picked.Slot, "a pick's slot is open")
}

// A reply the scripts would never write is an error of the call, never a
// panic or a made-up answer.
func TestReplyRefusesMalformedAnswers(t *testing.T) {
	t.Parallel()
	badTime := doneValues()
	badTime[doneTakenAt] = "soon"
	for name, a := range map[string][]any{
		"short finish":    append([]any{""}, doneValues()[:3]...),
		"unknown code":    {"no_such_code"},
		"number for code": {int64(3)},
		"string for flag": append(append([]any{""}, doneValues()...), "1"),
		"bad time":        append([]any{""}, badTime...),
		"short job text":  append(append(append([]any{""}, doneValues()...), int64(1)), append(jobValues("s2")[:5], jobTextOf("9", "c1", "title"))...),
		"long item":       append(append(append([]any{""}, doneValues()...), int64(1)), append(jobValues("s2")[:5], "9:c1")...),
		"no length":       append(append(append([]any{""}, doneValues()...), int64(1)), append(jobValues("s2")[:5], "c1")...),
		"number for text": append(append(append([]any{""}, doneValues()...), int64(1)), append(jobValues("s2")[:5], int64(3))...),
		"number for id":   append(append(append([]any{""}, doneValues()...), int64(1)), append([]any{int64(7)}, jobValues("s2")[1:]...)...),
	} {
		r := reply{a: a}
		f := r.finish(slots.FinishParams{})
		if f.Err == nil {
			_, _ = r.next(slots.TakeNextParams{})
		}
		err := answered(&r, "test")
		require.Error(t, err, name)
		require.True(t, strings.HasPrefix(err.Error(), "redisstore: "), "%s: %v", name, err)
	}
	r := reply{a: append(append([]any{""}, doneValues()...), "extra")}
	r.finish(slots.FinishParams{})
	require.ErrorContains(t, answered(&r, "test"), "past the last answer")
}

// Every script sees the field lists Go reads its answers by.
func TestScriptsDeclareGoFieldOrder(t *testing.T) {
	t.Parallel()
	decl := luaFields()
	require.Contains(t, decl, `local function SLOT_FIELDS() return "_id", "claimId", "role", "status", "apiKeyId", "agentName", "agentAvatarUrl", "takenAt", "doneAt", "createdAt", "leaseExpiresAt" end`)
	require.Contains(t, decl, "local SLOT_FIELDS_N = 11\n")
	require.Contains(t, decl, "local S_id = 1\n")
	require.Contains(t, decl, "local S_leaseExpiresAt = 11\n")
	require.Contains(t, decl, `local function CLAIM_FIELDS() return "_id", "title", "body", "domain", "createdAt", "sources", "protocol", "authorId", "authorName" end`)
	require.Contains(t, decl, "local C_domain = 4\n")
	require.Contains(t, decl, `local function DONE_FIELDS() return "role", "agentName", "agentAvatarUrl", "takenAt", "createdAt", "leaseExpiresAt" end`)
	require.Contains(t, decl, "local D_leaseExpiresAt = 6\n")
	require.Contains(t, decl, `local function QUEUED_FIELDS() return "claimId", "role", "createdAt", "status" end`)
	require.Contains(t, decl, "local Q_status = 4\n")
}

// TestJobTextCountsItsClaimItems: a job text says how many claim items it
// holds, so one written before fields were appended (a claim's jobtext,
// seven items) reads the later ones empty, and one with more than this
// build knows skips them; the comments follow either way.
func TestJobTextCountsItsClaimItems(t *testing.T) {
	t.Parallel()
	comment := `{"_id":"m1"}`
	for _, tc := range []struct {
		name  string
		items []string
		want  []any
	}{
		{"as written now", []string{"9", "c1", "t", "b", "d", "1", "", "p", "key_1", "ann", comment}, []any{"c1", "t", "b", "d", "1", "", "p", "key_1", "ann"}},
		{"before authors", []string{"7", "c1", "t", "b", "d", "1", "", "p", comment}, []any{"c1", "t", "b", "d", "1", "", "p", nil, nil}},
		{"from a later build", []string{"11", "c1", "t", "b", "d", "1", "", "p", "key_1", "ann", "x", "y", comment}, []any{"c1", "t", "b", "d", "1", "", "p", "key_1", "ann"}},
	} {
		claim, comments, err := jobText(jobTextOf(tc.items...))
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, claim, tc.name)
		require.Equal(t, []any{comment}, comments, tc.name)
	}
	for _, bad := range []string{"", jobTextOf("c1", "t"), jobTextOf("9", "c1", "t"), jobTextOf("-1", "c1")} {
		_, _, err := jobText(bad)
		require.Error(t, err, "%q", bad)
	}
}

// FuzzJobText: whatever a claim's job field holds, reading it answers its
// items or an error, never a panic; and items written as job_text writes
// them read back as they were.
func FuzzJobText(f *testing.F) {
	f.Add("c1", "title", "ünï: 3:x", "")
	f.Add("", "", "", "12:")
	f.Add("", "", "", "1:9")
	f.Fuzz(func(t *testing.T, a, b, c, raw string) {
		items := []string{a, b, c, "d", "1", "", raw, "key_1", "ann"}
		claim, comments, err := jobText(jobTextOf(append([]string{fmt.Sprint(len(items))}, append(items, raw)...)...))
		require.NoError(t, err)
		require.Len(t, claim, claimFieldCount)
		for i, it := range items {
			require.Equal(t, it, claim[i])
		}
		require.Equal(t, []any{raw}, comments)
		if claim, _, err := jobText(raw); err == nil {
			require.Len(t, claim, claimFieldCount)
		}
	})
}
