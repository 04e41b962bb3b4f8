package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/redisstore"
)

// A batch whose agents ask different indexes (all, a role, a domain) takes
// each slot once, and a slot taken leaves all four of its indexes by the
// time the script answers (the other three in one ZREM each at its end):
// no index keeps an entry for a slot no longer open. Both a batch of takes
// and a batch of finishes with takes, on miniredis and the real server.
func TestBatchLeavesNoIndexEntryBehind(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"miniredis", "redis"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var c *redis.Client
			prefix := testdb.UniqueName()
			if name == "miniredis" {
				_, c = newMiniredisClient(t)
			} else {
				c, prefix = testdb.RedisClient(t)
			}
			st := redisstore.New(c, redisstore.WithPrefix(prefix))
			svc := slots.New(st)
			var claims []string
			for i := range 8 {
				cl, err := svc.CreateClaim(ctx, slots.NewClaim{Title: fmt.Sprint("c", i), Domain: []string{"ethics", "math"}[i%2]})
				require.NoError(t, err)
				_, err = svc.AddComment(identity.WithKey(ctx, identity.Key{ID: "drafter", Name: "d"}), slots.NewComment{ClaimID: cl.ID, Body: "d", CommentType: string(slots.CommentDraft)})
				require.NoError(t, err)
				_, err = svc.ConfigureSlots(ctx, cl.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 1}, {Role: slots.RoleDefender, Count: 1}})
				require.NoError(t, err)
				claims = append(claims, cl.ID)
			}
			now := time.UnixMilli(10).UTC()
			take := func(i int, role slots.Role, domain string) slots.TakeNextParams {
				return slots.TakeNextParams{Agent: slots.Agent{KeyID: fmt.Sprint("k", i), Name: "a"}, Now: now,
					Next: slots.NextSlotParams{Role: role, Domain: domain, Random: -1}}
			}
			batch := []slots.TakeNextParams{take(0, "", ""), take(1, slots.RoleCritic, ""), take(2, "", "math"), take(3, slots.RoleDefender, "ethics"), take(4, "", ""), take(5, slots.RoleCritic, "math")}
			res, err := st.TakeNextSlots(ctx, batch)
			require.NoError(t, err)
			seen := map[string]bool{}
			var finish []slots.FinishTakeParams
			for i, r := range res {
				require.NoError(t, r.Err, i)
				require.False(t, seen[r.Job.Slot.ID], "slot %s taken twice", r.Job.Slot.ID)
				seen[r.Job.Slot.ID] = true
				finish = append(finish, slots.FinishTakeParams{
					Finish: slots.FinishParams{ClaimID: r.Job.Claim.ID, SlotID: r.Job.Slot.ID, KeyID: batch[i].Agent.KeyID, Now: now, Credit: 1},
					Next:   batch[(i+1)%len(batch)],
				})
				finish[i].Next.Agent = batch[i].Agent
			}
			more, err := st.FinishAndTakeNextSlots(ctx, finish)
			require.NoError(t, err)
			for i, r := range more {
				require.NoError(t, r.Err, i)
				if r.NextErr == nil {
					require.False(t, seen[r.Next.Slot.ID], "slot %s taken twice", r.Next.Slot.ID)
					seen[r.Next.Slot.ID] = true
				}
			}
			open := map[string]bool{}
			for _, id := range claims {
				list, err := svc.Slots(ctx, id)
				require.NoError(t, err)
				for _, sl := range list {
					require.Equal(t, seen[sl.ID], sl.Status != slots.StatusOpen, sl.ID)
					if sl.Status == slots.StatusOpen {
						open[sl.ID] = true
					}
				}
			}
			keys, err := c.Keys(ctx, "{"+prefix+"}:q:*").Result()
			require.NoError(t, err)
			require.NotEmpty(t, open, "some slots stay open")
			require.NotEmpty(t, keys)
			for _, k := range keys {
				members, err := c.ZRange(ctx, k, 0, -1).Result()
				require.NoError(t, err)
				for _, m := range members {
					require.True(t, open[m], "index %s still holds %s, which is not open", k, m)
				}
			}
			n, err := st.CountOpenSlots(ctx)
			require.NoError(t, err)
			require.Equal(t, len(open), n)
		})
	}
}
