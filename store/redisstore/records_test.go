package redisstore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/slots"
)

// slotValues is a stored slot as read_slot answers it.
func slotValues(id, status string) []any {
	v := make([]any, slotFieldCount)
	v[slotID], v[slotClaimID], v[slotRole], v[slotStatus], v[slotCreatedAt] = id, "c1", "critic", status, "1700000000000"
	return v
}

func TestReplyReadsFlatAnswers(t *testing.T) {
	t.Parallel()
	claim := []any{"c1", "title", "body", "d", "1700000000000", nil}
	var a []any
	a = append(a, "")
	a = append(a, slotValues("s1", "done")...)
	a = append(a, int64(1))
	a = append(a, slotValues("s2", "taken")...)
	a = append(a, claim...)
	a = append(a, int64(1), `{"_id":"m1","claimId":"c1","body":"draft","commentType":"draft"}`)
	a = append(a, "not_slot_owner")
	a = append(a, "")
	a = append(a, slotValues("s3", "done")...)
	a = append(a, int64(0))

	r := reply{a: a}
	f := r.finish()
	require.NoError(t, f.Err)
	require.Equal(t, "s1", f.Slot.ID)
	job, err := r.next()
	require.NoError(t, err)
	require.Equal(t, "s2", job.Slot.ID)
	require.Equal(t, "title", job.Claim.Title)
	require.Equal(t, []slots.Source{}, job.Claim.Sources)
	require.Len(t, job.Comments, 1)
	require.ErrorIs(t, r.finish().Err, slots.ErrNotSlotOwner)
	require.Equal(t, "s3", r.finish().Slot.ID)
	_, err = r.next()
	require.ErrorIs(t, err, slots.ErrNoJob)
	require.NoError(t, answered(&r, "test"))
}

// A reply the scripts would never write is an error of the call, never a
// panic or a made-up answer.
func TestReplyRefusesMalformedAnswers(t *testing.T) {
	t.Parallel()
	for name, a := range map[string][]any{
		"short slot":      append([]any{""}, slotValues("s1", "done")[:5]...),
		"unknown code":    {"no_such_code"},
		"number for code": {int64(3)},
		"string for flag": append(append([]any{""}, slotValues("s1", "done")...), "1"),
		"bad time":        append([]any{""}, append(slotValues("s1", "done")[:slotCreatedAt], "soon", nil)...),
		"negative count":  append(append(append([]any{""}, slotValues("s1", "done")...), int64(1)), append(slotValues("s2", "taken"), "c1", "t", "b", "d", "1", nil, int64(-1))...),
	} {
		r := reply{a: a}
		f := r.finish()
		if f.Err == nil {
			_, _ = r.next()
		}
		err := answered(&r, "test")
		require.Error(t, err, name)
		require.True(t, strings.HasPrefix(err.Error(), "redisstore: "), "%s: %v", name, err)
	}
	r := reply{a: append(append([]any{""}, slotValues("s1", "done")...), "extra")}
	r.finish()
	require.ErrorContains(t, answered(&r, "test"), "past the last answer")
}

// Every script sees the field lists Go reads its answers by.
func TestScriptsDeclareGoFieldOrder(t *testing.T) {
	t.Parallel()
	decl := luaFields()
	require.Contains(t, decl, `local SLOT_FIELDS, S = {"_id", "claimId", "role", "status", "apiKeyId", "agentName", "agentAvatarUrl", "takenAt", "doneAt", "createdAt", "leaseExpiresAt"}`)
	require.Contains(t, decl, `["leaseExpiresAt"] = 11}`)
	require.Contains(t, decl, `local CLAIM_FIELDS, C = {"_id", "title", "body", "domain", "createdAt", "sources"}`)
	require.Contains(t, decl, "return {false, false, false, false, false, false, false, false, false, false, false} end")
}
