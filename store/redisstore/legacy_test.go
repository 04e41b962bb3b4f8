package redisstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/redisstore"
)

// TestChatLegacyMessagesUpgrade: messages stored before IDs were
// store-wide (a list per conversation, a message's ID its position) are
// numbered from the store's counter on the conversation's first read or
// append, in their order, and the conversation goes on after them; two
// such conversations no longer share IDs.
func TestChatLegacyMessagesUpgrade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, c := newMiniredisClient(t)
	st := redisstore.New(c, redisstore.WithPrefix("legacy"))
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, id := range []string{"conv_a", "conv_b"} {
		require.NoError(t, st.CreateConversation(ctx, agentchat.Conversation{ID: id, Title: id, Status: agentchat.StatusIdle, CreatedAt: at, UpdatedAt: at}))
		for _, text := range []string{"one", "two"} {
			raw, err := json.Marshal(agentchat.Message{ConversationID: id, Type: agentchat.EventUser, Content: id + " " + text, CreatedAt: at})
			require.NoError(t, err)
			_, err = m.RPush("{legacy}:convmsgs:"+id, string(raw))
			require.NoError(t, err)
		}
	}

	a, err := st.ListChatMessages(ctx, "conv_a", 0)
	require.NoError(t, err)
	require.Len(t, a, 2)
	require.Equal(t, "conv_a one", a[0].Content)
	require.Equal(t, "conv_a two", a[1].Content)
	require.Equal(t, []int64{1, 2}, []int64{a[0].ID, a[1].ID})
	require.False(t, m.Exists("{legacy}:convmsgs:conv_a"), "the list is gone once moved")

	next, err := st.AppendChatMessage(ctx, agentchat.Message{ConversationID: "conv_b", Type: agentchat.EventAssistant, Content: "three", CreatedAt: at})
	require.NoError(t, err)
	b, err := st.ListChatMessages(ctx, "conv_b", 0)
	require.NoError(t, err)
	require.Len(t, b, 3)
	require.Equal(t, []int64{3, 4, 5}, []int64{b[0].ID, b[1].ID, b[2].ID}, "numbered after conv_a's, before the new message")
	require.Equal(t, "conv_b one", b[0].Content)
	require.Equal(t, next, b[2])

	require.NoError(t, st.DeleteConversation(ctx, "conv_b"))
	for _, k := range m.Keys() {
		require.NotContains(t, k, "conv_b", "a deleted conversation leaves no key")
	}
}

// TestClaimStoredWithoutSources: a claim stored before claims had sources
// (no sources field in its hash) reads back with none, and its comment,
// JSON written before times were time.Time (createdAt in Unix
// milliseconds), as it was.
func TestClaimStoredWithoutSources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, c := newMiniredisClient(t)
	st := redisstore.New(c, redisstore.WithPrefix("legacy"))
	m.HSet("{legacy}:claim:claim_old", "_id", "claim_old", "title", "Old", "body", "", "domain", "physics", "createdAt", "1")
	got, err := st.GetClaim(ctx, "claim_old")
	require.NoError(t, err)
	require.Equal(t, slots.Claim{ID: "claim_old", Title: "Old", Domain: "physics", CreatedAt: time.UnixMilli(1).UTC(), UpdatedAt: time.UnixMilli(1).UTC(), Sources: []slots.Source{}}, got,
		"no updatedAt: updated when created")

	_, err = m.RPush("{legacy}:comments:claim_old",
		`{"_id":"comment_old","claimId":"claim_old","body":"b","commentType":"draft","authorId":"key_1","agentName":"ann","createdAt":1767323045123}`)
	require.NoError(t, err)
	comments, err := st.ListComments(ctx, "claim_old", slots.ListCommentsParams{Limit: slots.MaxCommentsLimit})
	require.NoError(t, err)
	require.Equal(t, []slots.Comment{{ID: "comment_old", ClaimID: "claim_old", Body: "b", CommentType: slots.CommentDraft,
		AuthorID: "key_1", AgentName: "ann", CreatedAt: time.UnixMilli(1767323045123).UTC()}}, comments)
}

// TestClaimStoredWithoutJobText: a take of a seat on a claim stored before
// claims kept their job text (no jobv field in the hash) answers the claim
// and its comments from the hash and the comments list, and writes the
// field for the takes after it; the claim's next comment extends it.
func TestClaimStoredWithoutJobText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, c := newMiniredisClient(t)
	svc := slots.New(redisstore.New(c, redisstore.WithPrefix("legacy")))
	claim, err := svc.CreateClaim(ctx, slots.NewClaim{Title: "Old: 12:34", Body: "ünïcode 3:x", Domain: "physics"})
	require.NoError(t, err)
	drafter := identity.WithKey(ctx, identity.Key{ID: "key_d", Name: "dee"})
	draft, err := svc.AddComment(drafter, slots.NewComment{ClaimID: claim.ID, Body: "draft: 1:2", CommentType: string(slots.CommentDraft)})
	require.NoError(t, err)
	_, err = svc.ConfigureSlots(ctx, claim.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 2}})
	require.NoError(t, err)
	key := "{legacy}:claim:" + claim.ID
	require.NotEmpty(t, m.HGet(key, "jobv"))
	m.HDel(key, "jobv")
	// A claim stored before claims kept their protocol has a job field of
	// one claim item fewer: nothing reads it.
	m.HSet(key, "job", "3:old")

	claim.CommentCount, claim.UpdatedAt = 1, draft.CreatedAt
	first, err := svc.TakeNext(identity.WithKey(ctx, identity.Key{ID: "key_a", Name: "ann"}), slots.JobQuery{})
	require.NoError(t, err)
	require.Equal(t, claim, first.Claim)
	want, err := svc.Comments(ctx, claim.ID, slots.CommentsParams{Sort: slots.CommentsOld, Limit: slots.MaxCommentsLimit})
	require.NoError(t, err)
	require.Equal(t, want, first.Comments)
	require.NotEmpty(t, m.HGet(key, "jobv"), "the take writes the job text")
	require.Empty(t, m.HGet(key, "job"), "and drops the older field")

	added, err := svc.AddComment(drafter, slots.NewComment{ClaimID: claim.ID, Body: "second"})
	require.NoError(t, err)
	require.NotEmpty(t, m.HGet(key, "jobv"), "the next comment extends it")
	claim.CommentCount, claim.UpdatedAt = 2, added.CreatedAt
	second, err := svc.TakeNext(identity.WithKey(ctx, identity.Key{ID: "key_b", Name: "bob"}), slots.JobQuery{})
	require.NoError(t, err)
	require.Equal(t, claim, second.Claim)
	want, err = svc.Comments(ctx, claim.ID, slots.CommentsParams{Sort: slots.CommentsOld, Limit: slots.MaxCommentsLimit})
	require.NoError(t, err)
	require.Len(t, want, 2)
	require.Equal(t, want, second.Comments)
}

// TestClaimStoredWithUncountedJobText: a claim stored before claims kept
// their author has its job text in a jobtext field, seven claim items and
// no count before them. A take answers the claim from it (no author); a
// domain write, then a comment, move it to jobv with the domain and the
// comment, and jobtext is gone.
func TestClaimStoredWithUncountedJobText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, c := newMiniredisClient(t)
	st := redisstore.New(c, redisstore.WithPrefix("legacy"))
	svc := slots.New(st)
	drafter := identity.WithKey(ctx, identity.Key{ID: "key_d", Name: "dee"})
	claim, err := svc.CreateClaim(drafter, slots.NewClaim{Title: "Old: 12:34", Domain: "physics"})
	require.NoError(t, err)
	draft, err := svc.AddComment(drafter, slots.NewComment{ClaimID: claim.ID, Body: "draft: 1:2", CommentType: string(slots.CommentDraft)})
	require.NoError(t, err)
	_, err = svc.ConfigureSlots(ctx, claim.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 3}})
	require.NoError(t, err)
	// As such a claim was stored: no author, and the job text without
	// its count or the author's items.
	key := "{legacy}:claim:" + claim.ID
	for _, f := range []string{"jobv", "authorId", "authorName"} {
		m.HDel(key, f)
	}
	raw, err := json.Marshal(draft)
	require.NoError(t, err)
	m.HSet(key, "jobtext", redisstore.JobTextOf(claim.ID, claim.Title, "", "physics", fmt.Sprint(claim.CreatedAt.UnixMilli()), "[]", "", string(raw)))
	claim.AuthorID, claim.AuthorName, claim.CommentCount, claim.UpdatedAt = "", "", 1, draft.CreatedAt

	job, err := svc.TakeNext(identity.WithKey(ctx, identity.Key{ID: "key_a", Name: "ann"}), slots.JobQuery{})
	require.NoError(t, err)
	require.Equal(t, claim, job.Claim)
	require.Equal(t, []slots.Comment{draft}, job.Comments)

	require.NoError(t, st.AddCalibration(ctx, slots.Calibration{ID: "cal_1", ClaimID: claim.ID, Scores: []slots.CalibrationScore{{Domain: "biology", Score: 100}},
		Total: 100, EditorID: "key_d", EditorName: "dee", CreatedAt: claim.CreatedAt}))
	require.Empty(t, m.HGet(key, "jobtext"), "a domain write moves the text")
	claim.Domain = "biology"
	job, err = svc.TakeNext(identity.WithKey(ctx, identity.Key{ID: "key_b", Name: "bob"}), slots.JobQuery{})
	require.NoError(t, err)
	require.Equal(t, claim, job.Claim, "with the domain written")

	second, err := svc.AddComment(drafter, slots.NewComment{ClaimID: claim.ID, Body: "second"})
	require.NoError(t, err)
	claim.CommentCount, claim.UpdatedAt = 2, second.CreatedAt
	job, err = svc.TakeNext(identity.WithKey(ctx, identity.Key{ID: "key_c", Name: "cy"}), slots.JobQuery{})
	require.NoError(t, err)
	require.Equal(t, claim, job.Claim)
	require.Equal(t, []slots.Comment{draft, second}, job.Comments)
	got, err := st.GetClaim(ctx, claim.ID)
	require.NoError(t, err)
	require.Equal(t, claim, got)
}

// TestClaimCommentedBeforeCommentIDs: a claim commented on before its
// comment IDs and count were kept, its job text carrying every comment,
// answers replies to any of its comments (its IDs gathered from its list
// by its next comment), counts every comment in a job, and carries its
// oldest slots.JobComments, its job text cut to them by its first take.
func TestClaimCommentedBeforeCommentIDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, st, posted, items := claimCommentedBefore(t)

	// The first take writes the job text bounded, with the count; the
	// next reads it as it is.
	for _, agent := range []string{"key_a", "key_b"} {
		job, err := st.TakeNextSlot(ctx, slots.TakeNextParams{Agent: slots.Agent{KeyID: agent, Name: agent}, Now: time.UnixMilli(100).UTC(), Next: slots.NextSlotParams{Random: -1}})
		require.NoError(t, err)
		require.Equal(t, posted[:slots.JobComments], job.Comments)
		require.Equal(t, len(posted), job.Claim.CommentCount)
		require.Equal(t, redisstore.JobTextOf(items[:len(items)-len(posted)+slots.JobComments]...), m.HGet("{legacy}:claim:claim_l", "jobv"))
		require.Equal(t, fmt.Sprint(len(posted)), m.HGet("{legacy}:claim:claim_l", "commentCount"))
	}

	require.ErrorIs(t, st.AddComment(ctx, slots.Comment{ID: "comment_x", ClaimID: "claim_l", Body: "x", CommentType: slots.CommentAddition, ParentID: "comment_none"}), slots.ErrParentNotFound)
	reply := slots.Comment{ID: "comment_r", ClaimID: "claim_l", Body: "re", CommentType: slots.CommentQuestion, ParentID: posted[0].ID, CreatedAt: time.UnixMilli(200).UTC()}
	require.NoError(t, st.AddComment(ctx, reply))
	got, err := st.ListComments(ctx, "claim_l", slots.ListCommentsParams{Limit: slots.MaxCommentsLimit})
	require.NoError(t, err)
	require.Equal(t, append(posted, reply), got)
	claim, err := st.GetClaim(ctx, "claim_l")
	require.NoError(t, err)
	require.Equal(t, len(posted)+1, claim.CommentCount)
}

// TestClaimCommentedBeforeBoundCommentedFirst: such a claim commented on
// again before any take has its job text cut by that comment, so the take
// after it carries the oldest slots.JobComments too.
func TestClaimCommentedBeforeBoundCommentedFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, st, posted, items := claimCommentedBefore(t)
	late := slots.Comment{ID: "comment_z", ClaimID: "claim_l", Body: "late", CommentType: slots.CommentAddition, CreatedAt: time.UnixMilli(200).UTC()}
	require.NoError(t, st.AddComment(ctx, late))
	require.Equal(t, redisstore.JobTextOf(items[:len(items)-len(posted)+slots.JobComments]...), m.HGet("{legacy}:claim:claim_l", "jobv"))
	job, err := st.TakeNextSlot(ctx, slots.TakeNextParams{Agent: slots.Agent{KeyID: "key_a", Name: "a"}, Now: time.UnixMilli(300).UTC(), Next: slots.NextSlotParams{Random: -1}})
	require.NoError(t, err)
	require.Equal(t, posted[:slots.JobComments], job.Comments)
	require.Equal(t, len(posted)+1, job.Claim.CommentCount)
}

// claimCommentedBefore stores claim_l as the release before bounded job
// texts wrote it: slots.JobComments+5 comments, every one in its job text,
// no count and no comment IDs; and two open slots. It returns the comments
// and the job text's items.
func claimCommentedBefore(t *testing.T) (*miniredis.Miniredis, *redisstore.Store, []slots.Comment, []string) {
	t.Helper()
	ctx := context.Background()
	m, c := newMiniredisClient(t)
	st := redisstore.New(c, redisstore.WithPrefix("legacy"))
	require.NoError(t, st.CreateClaim(ctx, slots.Claim{ID: "claim_l", Title: "L", Domain: "d", CreatedAt: time.UnixMilli(1).UTC()}))
	var posted []slots.Comment
	items := []string{"9", "claim_l", "L", "", "d", "1", "[]", "", "", ""}
	for i := range slots.JobComments + 5 {
		cm := slots.Comment{ID: fmt.Sprintf("comment_%03d", i), ClaimID: "claim_l", Body: fmt.Sprint("c", i), CommentType: slots.CommentAddition, CreatedAt: time.UnixMilli(int64(10 + i)).UTC()}
		if i == 0 {
			cm.CommentType = slots.CommentDraft
		}
		posted = append(posted, cm)
		raw, err := json.Marshal(cm)
		require.NoError(t, err)
		_, err = m.RPush("{legacy}:comments:claim_l", string(raw))
		require.NoError(t, err)
		items = append(items, string(raw))
	}
	m.HSet("{legacy}:claim:claim_l", "jobv", redisstore.JobTextOf(items...), "hasDraft", "1")
	require.NoError(t, st.ReplaceOpenSlots(ctx, "claim_l", []slots.Slot{
		{ID: "slot_l", ClaimID: "claim_l", Role: slots.RoleCritic, Status: slots.StatusOpen, CreatedAt: time.UnixMilli(2).UTC()},
		{ID: "slot_m", ClaimID: "claim_l", Role: slots.RoleCritic, Status: slots.StatusOpen, CreatedAt: time.UnixMilli(3).UTC()}}))
	return m, st, posted, items
}

// TestProtocolUsesOfOlderStores: claims stored by a release without the
// protocol names' ranking (with the names index, or older, without it)
// are ranked by the first listing, once, and claims created after go on
// from there; a listing reads the ranking, not every name.
func TestProtocolUsesOfOlderStores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, older := range []struct {
		name string
		drop []string
	}{
		{"names indexed, not ranked", []string{"{old}:claims:protocols:rank", "{old}:claims:protocols:ranks", "{old}:claims:protocols:ranked"}},
		{"names not indexed", []string{"{old}:claims:protocols:rank", "{old}:claims:protocols:ranks", "{old}:claims:protocols:ranked",
			"{old}:claims:protocols", "{old}:claims:protocols:indexed"}},
	} {
		m, c := newMiniredisClient(t)
		st := redisstore.New(c, redisstore.WithPrefix("old"))
		create := func(id, protocol string, created time.Time) {
			t.Helper()
			require.NoError(t, st.CreateClaim(ctx, slots.Claim{ID: id, Title: id, Domain: slots.DefaultDomain, Sources: []slots.Source{}, CreatedAt: created, Protocol: protocol}))
		}
		// 1,201 names: more than two of the ranking's pages of 500.
		for i := range 1201 {
			create(fmt.Sprintf("claim_%05d", i), fmt.Sprintf("p%04d", i), at.Add(time.Duration(i)*time.Millisecond))
		}
		create("claim_x1", "p0007", at.Add(time.Hour))
		create("claim_x2", "p0007", at.Add(2*time.Hour))
		create("claim_x3", "p0003", at.Add(time.Hour))
		for _, k := range older.drop {
			m.Del(k)
		}

		got, err := st.ProtocolUses(ctx, slots.ProtocolUsesParams{Limit: 3})
		require.NoError(t, err, older.name)
		require.Equal(t, []slots.ProtocolUse{
			{Name: "p0007", Claims: 3, LastUsedAt: at.Add(2 * time.Hour)},
			{Name: "p0003", Claims: 2, LastUsedAt: at.Add(time.Hour)},
			{Name: "p1200", Claims: 1, LastUsedAt: at.Add(1200 * time.Millisecond)},
		}, got, older.name)
		require.True(t, m.Exists("{old}:claims:protocols:ranked"), older.name)
		all, err := st.ProtocolUses(ctx, slots.ProtocolUsesParams{Limit: 5000})
		require.NoError(t, err)
		require.Len(t, all, 1201, older.name)
		require.True(t, slices.IsSortedFunc(all, slots.CompareProtocolUses), older.name)

		create("claim_y", "p0003", at.Add(3*time.Hour))
		create("claim_z", "new one", at.Add(4*time.Hour))
		got, err = st.ProtocolUses(ctx, slots.ProtocolUsesParams{Limit: 2})
		require.NoError(t, err)
		require.Equal(t, []slots.ProtocolUse{
			{Name: "p0003", Claims: 3, LastUsedAt: at.Add(3 * time.Hour)},
			{Name: "p0007", Claims: 3, LastUsedAt: at.Add(2 * time.Hour)},
		}, got, older.name)
		one, err := st.ProtocolUses(ctx, slots.ProtocolUsesParams{Name: "new one"})
		require.NoError(t, err)
		require.Equal(t, []slots.ProtocolUse{{Name: "new one", Claims: 1, LastUsedAt: at.Add(4 * time.Hour)}}, one, older.name)
	}
}
