package pgstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/pgstore"
)

// openAt connects to a fresh schema migrated up to version only, the
// schema of an older release.
func openAt(t *testing.T, version int) *sqlx.DB {
	t.Helper()
	db, err := pgstore.Open(testdb.PostgresDSN(t), pgstore.PoolOptions{MaxOpenConns: 4})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	require.NoError(t, pgstore.MigrateUpToForTest(context.Background(), db, version))
	return db
}

// TestMigrateChatMessageIDs: messages stored while IDs rose per
// conversation are numbered again across the store, each conversation's in
// its order, the earlier conversation's first, and new messages follow them.
func TestMigrateChatMessageIDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openAt(t, 32)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, id := range []string{"conv_late", "conv_early"} {
		created := at.Add(time.Duration(1-i) * time.Hour)
		_, err := db.ExecContext(ctx, `INSERT INTO agora_conversations (id, title, status, created_at, updated_at, last_message)
			VALUES ($1, $1, 'idle', $2, $2, 2)`, id, created)
		require.NoError(t, err)
		for n := 1; n <= 2; n++ {
			_, err := db.ExecContext(ctx, `INSERT INTO agora_chat_messages (conversation_id, id, type, content, created_at)
				VALUES ($1, $2, 'user', $3, $4)`, id, n, fmt.Sprint(id, " ", n), created)
			require.NoError(t, err)
		}
	}
	require.NoError(t, pgstore.Migrate(ctx, db))

	st := pgstore.New(db)
	early, err := st.ListChatMessages(ctx, "conv_early", 0)
	require.NoError(t, err)
	late, err := st.ListChatMessages(ctx, "conv_late", 0)
	require.NoError(t, err)
	got := map[string]int64{}
	for _, m := range append(early, late...) {
		got[m.Content] = m.ID
	}
	require.Equal(t, map[string]int64{"conv_early 1": 1, "conv_early 2": 2, "conv_late 1": 3, "conv_late 2": 4}, got)
	m, err := st.AppendChatMessage(ctx, agentchat.Message{ConversationID: "conv_early", Type: agentchat.EventAssistant, Content: "next", CreatedAt: at})
	require.NoError(t, err)
	require.EqualValues(t, 5, m.ID)
}

// TestMigrateClaimSources: a claim stored before claims had sources reads
// back with none.
func TestMigrateClaimSources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openAt(t, 32)
	_, err := db.ExecContext(ctx, `INSERT INTO agora_claims (id, title, body, domain, created_at) VALUES ('claim_old', 'Old', '', 'physics', 1)`)
	require.NoError(t, err)
	require.NoError(t, pgstore.Migrate(ctx, db))
	c, err := pgstore.New(db).GetClaim(ctx, "claim_old")
	require.NoError(t, err)
	require.Equal(t, slots.Claim{ID: "claim_old", Title: "Old", Domain: "physics", CreatedAt: time.UnixMilli(1).UTC(), UpdatedAt: time.UnixMilli(1).UTC(), Sources: []slots.Source{}}, c)
}

// TestMigrateProtocolUses: the claims stored under protocols before their
// uses were counted are counted by the migration, and claims created after
// count on from there.
func TestMigrateProtocolUses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openAt(t, 45)
	_, err := db.ExecContext(ctx, `INSERT INTO agora_claims (id, title, body, domain, created_at, protocol) VALUES
		('claim_1', 'A', '', 'd', 1, 'sim'), ('claim_2', 'B', '', 'd', 7, 'sim'), ('claim_3', 'C', '', 'd', 3, 'lens-v1'), ('claim_4', 'D', '', 'd', 9, '')`)
	require.NoError(t, err)
	require.NoError(t, pgstore.Migrate(ctx, db))
	st := pgstore.New(db)
	uses, err := st.ProtocolUses(ctx, slots.ProtocolUsesParams{Limit: 10})
	require.NoError(t, err)
	require.Equal(t, []slots.ProtocolUse{{Name: "sim", Claims: 2, LastUsedAt: time.UnixMilli(7).UTC()}, {Name: "lens-v1", Claims: 1, LastUsedAt: time.UnixMilli(3).UTC()}}, uses)
	require.NoError(t, st.CreateClaim(ctx, slots.Claim{ID: "claim_5", Title: "E", Domain: "d", CreatedAt: time.UnixMilli(11), Protocol: "lens-v1"}))
	uses, err = st.ProtocolUses(ctx, slots.ProtocolUsesParams{Name: "lens-v1"})
	require.NoError(t, err)
	require.Equal(t, []slots.ProtocolUse{{Name: "lens-v1", Claims: 2, LastUsedAt: time.UnixMilli(11).UTC()}}, uses)
}

// TestMigrateSigningKeys: a key stored before keys had signing keys has
// none, and can register one.
func TestMigrateSigningKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openAt(t, 32)
	_, err := db.ExecContext(ctx, `INSERT INTO agora_keys (id, name, avatar_url, scopes, hash, created_at) VALUES ('key_old', 'Old', '', '{}', '\x00', 1)`)
	require.NoError(t, err)
	require.NoError(t, pgstore.Migrate(ctx, db))
	st := pgstore.New(db)
	k, err := st.GetKey(ctx, "key_old")
	require.NoError(t, err)
	require.Empty(t, k.SigningKeyAddress)
	require.NoError(t, st.SetSigningKey(ctx, "key_old", "0xpoi_old"))
	k, err = st.GetKey(ctx, "key_old")
	require.NoError(t, err)
	require.Equal(t, "0xpoi_old", k.SigningKeyAddress)
}

// TestMigrateErrorSaysPgstoreOnce: a migration that fails (here: the
// search_path names no schema that exists) says which, with one
// "pgstore:" prefix.
func TestMigrateErrorSaysPgstoreOnce(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(testdb.PostgresDSN(t))
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", testdb.UniqueName()) // never made
	u.RawQuery = q.Encode()
	db, err := pgstore.Open(u.String(), pgstore.PoolOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	err = pgstore.Migrate(context.Background(), db)
	require.Error(t, err)
	require.True(t, strings.HasPrefix(err.Error(), "pgstore: migration 001_"), err.Error())
	require.Equal(t, 1, strings.Count(err.Error(), "pgstore:"), err.Error())
}

// TestMigrateQueueColumnsWritten: the slots of a database from before
// migration 038, when is_open and lease_due were generated, keep their
// values, and the queue works on them: the open slot is taken, the lapsed
// lease reopens its slot, a finish clears the lease.
func TestMigrateQueueColumnsWritten(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openAt(t, 37)
	_, err := db.ExecContext(ctx, `INSERT INTO agora_claims (id, title, body, domain, created_at, has_draft) VALUES ('claim_q', 'Q', '', 'd', 1, true)`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO agora_role_slots (id, claim_id, role, status, api_key_id, created_at, ready, domain, lease_expires_at, taken_at) VALUES
		('slot_1', 'claim_q', 'critic', 'open', NULL, 1, true, 'd', 0, 0),
		('slot_2', 'claim_q', 'critic', 'taken', 'key_a', 1, true, 'd', 5000, 1000),
		('slot_3', 'claim_q', 'critic', 'taken', 'key_b', 1, true, 'd', 0, 1000),
		('slot_4', 'claim_q', 'critic', 'done', 'key_c', 1, true, 'd', 0, 1000)`)
	require.NoError(t, err)
	require.NoError(t, pgstore.Migrate(ctx, db))
	requireQueueColumns(t, db)
	var due []sql.NullInt64
	require.NoError(t, db.SelectContext(ctx, &due, `SELECT lease_due FROM agora_role_slots ORDER BY id`))
	require.Equal(t, []sql.NullInt64{{}, {Int64: 5000, Valid: true}, {}, {}}, due)

	st := pgstore.New(db)
	at := time.UnixMilli(6000).UTC()
	job, err := st.TakeNextSlot(ctx, slots.TakeNextParams{Agent: slots.Agent{KeyID: "key_d", Name: "d"}, Now: at, Next: slots.NextSlotParams{Random: -1}})
	require.NoError(t, err)
	require.Equal(t, "slot_1", job.Slot.ID)
	n, err := st.ReleaseExpiredSlots(ctx, at)
	require.NoError(t, err)
	require.Equal(t, 1, n, "slot_2's lease lapsed at 5000")
	open, err := st.CountOpenSlots(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, open)
	_, err = st.FinishSlot(ctx, slots.FinishParams{ClaimID: "claim_q", SlotID: "slot_3", KeyID: "key_b", Now: at, Credit: 10})
	require.NoError(t, err)
	requireQueueColumns(t, db)
}

// TestMigrateClaimComments: comments stored before claims kept their own
// come back with each job and from ListComments, oldest first by ID
// whatever order they were inserted in, and a comment added after the
// migration joins them.
func TestMigrateClaimComments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openAt(t, 38)
	_, err := db.ExecContext(ctx, `INSERT INTO agora_claims (id, title, body, domain, created_at, has_draft) VALUES
		('claim_c', 'C', '', 'd', 1, true), ('claim_none', 'N', '', 'd', 2, false)`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO agora_comments (id, claim_id, body, comment_type, author_id, agent_name, created_at) VALUES
		('comment_2', 'claim_c', 'second, "quoted"', 'critique', 'key_b', 'b', 20),
		('comment_1', 'claim_c', 'first: ünïcode', 'draft', 'key_a', 'a', 10)`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO agora_role_slots (id, claim_id, role, status, api_key_id, created_at, ready, domain, lease_expires_at, taken_at, is_open)
		VALUES ('slot_1', 'claim_c', 'critic', 'open', NULL, 1, true, 'd', 0, 0, true)`)
	require.NoError(t, err)
	require.NoError(t, pgstore.Migrate(ctx, db))

	st := pgstore.New(db)
	want := []slots.Comment{
		{ID: "comment_1", ClaimID: "claim_c", Body: "first: ünïcode", CommentType: slots.CommentDraft, AuthorID: "key_a", AgentName: "a", CreatedAt: time.UnixMilli(10).UTC()},
		{ID: "comment_2", ClaimID: "claim_c", Body: `second, "quoted"`, CommentType: "critique", AuthorID: "key_b", AgentName: "b", CreatedAt: time.UnixMilli(20).UTC()},
	}
	job, err := st.TakeNextSlot(ctx, slots.TakeNextParams{Agent: slots.Agent{KeyID: "key_d", Name: "d"}, Now: time.UnixMilli(30).UTC(), Next: slots.NextSlotParams{Random: -1}})
	require.NoError(t, err)
	require.Equal(t, "slot_1", job.Slot.ID)
	require.Equal(t, want, job.Comments)
	none, err := st.ListComments(ctx, "claim_none", slots.ListCommentsParams{Limit: slots.MaxCommentsLimit})
	require.NoError(t, err)
	require.Empty(t, none)

	added := slots.Comment{ID: "comment_0", ClaimID: "claim_c", Body: "late", CommentType: "critique", AuthorID: "key_d", AgentName: "d", CreatedAt: time.UnixMilli(40).UTC()}
	require.NoError(t, st.AddComment(ctx, added))
	got, err := st.ListComments(ctx, "claim_c", slots.ListCommentsParams{Limit: slots.MaxCommentsLimit})
	require.NoError(t, err)
	require.Equal(t, append([]slots.Comment{added}, want...), got, "by ID, as before the migration")
}

// TestMigrateJobComments: a claim commented on more than slots.JobComments
// times before migration 049 counts every comment, its jobs carry the
// oldest JobComments, and its listing and next comment see every one.
func TestMigrateJobComments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openAt(t, 48)
	st := pgstore.New(db)
	require.NoError(t, st.CreateClaim(ctx, slots.Claim{ID: "claim_m", Title: "M", Domain: "d", CreatedAt: time.UnixMilli(1).UTC()}))
	var posted []slots.Comment
	for i := range slots.JobComments + 10 {
		c := slots.Comment{ID: fmt.Sprintf("comment_%03d", i), ClaimID: "claim_m", Body: fmt.Sprint("c", i), CommentType: slots.CommentAddition, CreatedAt: time.UnixMilli(int64(10 + i)).UTC()}
		if i == 0 {
			c.CommentType = slots.CommentDraft
		}
		posted = append(posted, c)
		// The statement of the release before: the whole column again.
		_, err := db.ExecContext(ctx, `INSERT INTO agora_comments (id, claim_id, body, comment_type, author_id, agent_name, created_at, parent_id) VALUES ($1, $2, $3, $4, '', '', $5, '')`,
			c.ID, c.ClaimID, c.Body, string(c.CommentType), c.CreatedAt.UnixMilli())
		require.NoError(t, err)
		_, err = db.ExecContext(ctx, `UPDATE agora_claims c SET has_draft = true, comments = to_json(ARRAY(SELECT ARRAY[m.id, m.claim_id, m.body, m.comment_type, m.author_id, m.agent_name, m.created_at::text, m.parent_id]
			FROM agora_comments m WHERE m.claim_id = c.id ORDER BY m.id)) WHERE c.id = 'claim_m'`)
		require.NoError(t, err)
	}
	require.NoError(t, pgstore.Migrate(ctx, db))

	claim, err := st.GetClaim(ctx, "claim_m")
	require.NoError(t, err)
	require.Equal(t, len(posted), claim.CommentCount)
	require.NoError(t, st.ReplaceOpenSlots(ctx, "claim_m", []slots.Slot{{ID: "slot_m", ClaimID: "claim_m", Role: slots.RoleCritic, Status: slots.StatusOpen, CreatedAt: time.UnixMilli(2).UTC()}}))
	job, err := st.TakeNextSlot(ctx, slots.TakeNextParams{Agent: slots.Agent{KeyID: "key_d", Name: "d"}, Now: time.UnixMilli(100).UTC(), Next: slots.NextSlotParams{Random: -1}})
	require.NoError(t, err)
	require.Equal(t, posted[:slots.JobComments], job.Comments)
	require.Equal(t, len(posted), job.Claim.CommentCount)

	late := slots.Comment{ID: "comment_999", ClaimID: "claim_m", Body: "late", CommentType: slots.CommentAddition, ParentID: posted[len(posted)-1].ID, CreatedAt: time.UnixMilli(200).UTC()}
	require.NoError(t, st.AddComment(ctx, late))
	got, err := st.ListComments(ctx, "claim_m", slots.ListCommentsParams{Limit: slots.MaxCommentsLimit})
	require.NoError(t, err)
	require.Equal(t, append(posted, late), got)
	claim, err = st.GetClaim(ctx, "claim_m")
	require.NoError(t, err)
	require.Equal(t, len(posted)+1, claim.CommentCount)
}
