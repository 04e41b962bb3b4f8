package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/redisstore"
)

// BenchmarkFinishTakeScript measures what Redis itself spends on the job
// queue's finish-and-take script (lua/finish_take_next_many.lua), per seat
// done and taken: redis-µs/seat, from INFO commandstats. Where Redis is the
// bottleneck, its one thread serving the workers of many cores, this bounds
// the seats per second, whatever the machine measuring it; it moves far
// less with the machine's load than wall time does. Agents work batches of
// 1 and 64, each seat its claim's only one, as bench/ does.
func BenchmarkFinishTakeScript(b *testing.B) {
	ctx := context.Background()
	for _, agents := range []int{1, 64} {
		b.Run(fmt.Sprintf("batch=%d", agents), func(b *testing.B) {
			c, prefix := testdb.RedisClient(b)
			st := redisstore.New(c, redisstore.WithPrefix(prefix))
			loadSeats(b, st, b.N+agents)
			now := time.UnixMilli(2).UTC()
			next := func(k int) slots.TakeNextParams {
				return slots.TakeNextParams{Agent: slots.Agent{KeyID: fmt.Sprint("agent_", k), Name: "bench"}, Now: now, Next: slots.NextSlotParams{Random: -1}}
			}
			first := make([]slots.TakeNextParams, agents)
			for k := range first {
				first[k] = next(k)
			}
			res, err := st.TakeNextSlots(ctx, first)
			if err != nil {
				b.Fatal(err)
			}
			jobs := make([]slots.Job, agents)
			for k, r := range res {
				if r.Err != nil {
					b.Fatal(r.Err)
				}
				jobs[k] = r.Job
			}
			before := scriptMicros(b, c)
			b.ResetTimer()
			for done := 0; done < b.N; {
				ps := make([]slots.FinishTakeParams, min(agents, b.N-done))
				for k := range ps {
					j := jobs[k]
					ps[k] = slots.FinishTakeParams{
						Finish: slots.FinishParams{ClaimID: j.Claim.ID, SlotID: j.Slot.ID, KeyID: j.Slot.APIKeyID, Now: now, Credit: slots.RewardRoleSlot},
						Next:   next(k),
					}
				}
				rs, err := st.FinishAndTakeNextSlots(ctx, ps)
				if err != nil {
					b.Fatal(err)
				}
				for k, r := range rs {
					if r.Err != nil || r.NextErr != nil {
						b.Fatalf("agent %d: %v, %v", k, r.Err, r.NextErr)
					}
					jobs[k] = r.Next
				}
				done += len(ps)
			}
			b.StopTimer()
			b.ReportMetric((scriptMicros(b, c)-before)/float64(b.N), "redis-µs/seat")
		})
	}
}

// loadSeats opens n claims of one open critic seat each, with a draft.
func loadSeats(b *testing.B, st *redisstore.Store, n int) {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				id := fmt.Sprintf("claim_%012d", i)
				err := st.CreateClaim(ctx, slots.Claim{ID: id, Title: "bench", Body: "work", Domain: "bench", CreatedAt: time.UnixMilli(1).UTC()})
				if err == nil {
					err = st.AddComment(ctx, slots.Comment{ID: id + "_draft", ClaimID: id, Body: "draft", CommentType: slots.CommentDraft})
				}
				if err == nil {
					err = st.ReplaceOpenSlots(ctx, id, []slots.Slot{{ID: fmt.Sprintf("slot_%012d", i), ClaimID: id, Role: slots.RoleCritic, Status: slots.StatusOpen, CreatedAt: time.UnixMilli(1).UTC()}})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

// scriptMicros is the time Redis has spent running scripts by EVALSHA
// (INFO commandstats), in microseconds.
func scriptMicros(b *testing.B, c *redis.Client) float64 {
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_evalsha:"); ok {
			for _, f := range strings.Split(rest, ",") {
				if v, ok := strings.CutPrefix(f, "usec="); ok {
					us, err := strconv.ParseFloat(v, 64)
					if err != nil {
						b.Fatal(err)
					}
					return us
				}
			}
		}
	}
	return 0
}
