package pgstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/store/pgstore"
)

// TestJobQueuePlanWithStaleStatistics checks the job queue's plans when the
// planner's statistics were taken while the queue was empty, or while every
// slot was done (what autovacuum sees between bursts of work), and a few
// thousand slots have been queued since: each pick an index serves in order
// must still read that index in order and stop at its LIMIT, never collect
// every open slot with a bitmap scan and sort them (milliseconds per pick);
// and a finish must find its slots through the primary key, never hash
// them against a scan of the table.
// Unlike TestJobQueueUsesIndexes, no scan is disabled: the plans are the
// planner's own.
func TestJobQueuePlanWithStaleStatistics(t *testing.T) {
	t.Parallel()
	for _, before := range []string{"empty", "done"} {
		t.Run(before, func(t *testing.T) {
			t.Parallel()
			db, _ := open(t)
			ctx := context.Background()
			// fill queues n slots with status, each on a claim of its own,
			// half of them critics of law and half defenders of physics.
			fill := func(from, n int, status string) {
				_, err := db.ExecContext(ctx, `INSERT INTO agora_claims (id, title, body, domain, created_at, has_draft)
					SELECT 'claim_' || lpad(i::text, 8, '0'), 't', '', (ARRAY['law', 'physics'])[i % 2 + 1], 1, true
					FROM generate_series($1::int, $1::int + $2::int - 1) i`, from, n)
				require.NoError(t, err)
				_, err = db.ExecContext(ctx, `INSERT INTO agora_role_slots (id, claim_id, role, status, api_key_id, created_at, ready, domain, is_open)
					SELECT 'slot_' || lpad(i::text, 8, '0'), 'claim_' || lpad(i::text, 8, '0'), (ARRAY['critic', 'defender'])[i % 2 + 1],
						$3, CASE WHEN $3 = 'open' THEN NULL ELSE 'key_' || i % 8 END, 1, true, (ARRAY['law', 'physics'])[i % 2 + 1], $3 = 'open'
					FROM generate_series($1::int, $1::int + $2::int - 1) i`, from, n, status)
				require.NoError(t, err)
			}
			if before == "done" {
				fill(0, 3000, "done")
			}
			_, err := db.ExecContext(ctx, `ANALYZE agora_claims, agora_role_slots, agora_comments`)
			require.NoError(t, err)
			fill(10_000, 3000, "open")

			checked := 0
			for _, q := range pgstore.JobQueueQueriesForTest() {
				if !q.InOrder {
					continue
				}
				checked++
				var plan []string
				require.NoError(t, db.SelectContext(ctx, &plan, `EXPLAIN `+q.SQL, q.Args...))
				joined := strings.Join(plan, "\n")
				// The pick's scans are aliased q (q_1, … where the plan has several).
				require.NotRegexp(t, `Bitmap Heap Scan on agora_role_slots q\w* `, joined, "%s:\n%s", q.Name, joined)
				require.NotRegexp(t, `Sort Key: q\w*\.id COLLATE "C"\n`, joined+"\n", "%s:\n%s", q.Name, joined)
				// Nor a finish's lookup of its slots by a scan of the table.
				require.NotContains(t, joined, "Seq Scan on agora_role_slots", "%s:\n%s", q.Name, joined)
				require.Regexp(t, `Index Scan using agora_role_slots_q\w* on agora_role_slots q`, joined, "%s:\n%s", q.Name, joined)
			}
			require.Greater(t, checked, 10)
		})
	}
}
