package pgstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/pgstore"
)

// TestFinishIsHOT: a finish changes no column any index of
// agora_role_slots reads (migration 031), so PostgreSQL rewrites the row in
// place (a HOT update) instead of adding an entry to each index. Takes are
// never HOT (the slot leaves the queue's indexes), so every HOT update the
// table counts is a finish's: one by FinishSlot, the rest by a batch.
func TestFinishIsHOT(t *testing.T) {
	ctx := context.Background()
	db, _ := open(t)
	st := pgstore.New(db)
	const n = 40
	var finishes []slots.FinishParams
	for i := range n {
		claimID := fmt.Sprintf("hot_claim_%03d", i)
		require.NoError(t, st.CreateClaim(ctx, slots.Claim{ID: claimID, Title: "t", Domain: "d", CreatedAt: time.UnixMilli(1).UTC()}))
		require.NoError(t, st.AddComment(ctx, slots.Comment{ID: claimID + "_draft", ClaimID: claimID, Body: "draft", CommentType: slots.CommentDraft}))
		slotID := fmt.Sprintf("hot_slot_%03d", i)
		require.NoError(t, st.ReplaceOpenSlots(ctx, claimID, []slots.Slot{{ID: slotID, ClaimID: claimID, Role: slots.RoleCritic, Status: slots.StatusOpen, CreatedAt: time.UnixMilli(1).UTC()}}))
		key := fmt.Sprint("hot_key_", i)
		_, err := st.TakeSlot(ctx, slots.TakeParams{ClaimID: claimID, SlotID: slotID, Agent: slots.Agent{KeyID: key}, Now: time.UnixMilli(2).UTC()})
		require.NoError(t, err)
		finishes = append(finishes, slots.FinishParams{ClaimID: claimID, SlotID: slotID, KeyID: key, Now: time.UnixMilli(3).UTC(), Credit: 1})
	}
	_, err := st.FinishSlot(ctx, finishes[0])
	require.NoError(t, err)
	res, err := st.FinishSlots(ctx, finishes[1:])
	require.NoError(t, err)
	for _, r := range res {
		require.NoError(t, r.Err)
	}

	// A backend reports its counts once idle for a moment (at most a
	// second apart); ask until they are in.
	var upd, hot int64
	require.Eventually(t, func() bool {
		err := db.QueryRowContext(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
			WHERE relname = 'agora_role_slots' AND schemaname = current_schema()`).Scan(&upd, &hot)
		require.NoError(t, err)
		return upd >= 2*n
	}, 15*time.Second, 100*time.Millisecond)
	require.GreaterOrEqual(t, hot, int64(n), "of %d updates (%d takes, %d finishes), %d were HOT", upd, n, n, hot)
}

// TestClaimSlotsReadThroughHolderIndex: a claim's slots are read through
// the holder index (migration 032 folded the claim index into it), never by
// a scan of every slot, with statistics of a table of many claims.
func TestClaimSlotsReadThroughHolderIndex(t *testing.T) {
	ctx := context.Background()
	db, _ := open(t)
	_, err := db.ExecContext(ctx, `INSERT INTO agora_claims (id, title, body, domain, created_at, has_draft)
		SELECT 'claim_' || i, 't', '', 'd', 1, true FROM generate_series(1, 3000) i`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO agora_role_slots (id, claim_id, role, status, api_key_id, created_at, ready, domain, is_open)
		SELECT 'slot_' || i || '_' || r, 'claim_' || i, 'critic', 'open', NULL, 1, true, 'd', true
		FROM generate_series(1, 3000) i, generate_series(1, 3) r`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `ANALYZE agora_claims, agora_role_slots`)
	require.NoError(t, err)
	var plan []string
	require.NoError(t, db.SelectContext(ctx, &plan, `EXPLAIN `+pgstore.ListSlotsQueryForTest, "claim_7"))
	joined := strings.Join(plan, "\n")
	require.Contains(t, joined, "agora_role_slots_holder", joined)
	require.NotContains(t, joined, "Seq Scan on agora_role_slots", joined)
}
