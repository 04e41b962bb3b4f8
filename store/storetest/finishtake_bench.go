package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agorahq/agora/slots"
)

// ServerTime reads how much time a backend's server has spent so far on
// the work a benchmark measures: its CPU time, or its scripts' time. Where
// the server is the bottleneck this bounds the seats per second whatever
// the machine measuring it (see internal/testdb's PostgresCPU, RedisCPU
// and RedisScriptTime).
type ServerTime func(ctx context.Context) (time.Duration, error)

// BenchmarkFinishAndTakeNextSlots measures the store's batched
// finish-and-take, FinishAndTakeNextSlots, called one batch after another
// by batches of 1, 8 and 64 agents (a lone agent, the small batches of a
// few workers, and many workers' batches), each seat its claim's only one
// (with a draft), as bench/ works the queue: each op is one seat done and
// the next taken. With server, it also reports the server's time per seat
// as unit (say "redis-µs/seat"), read before and after the timed loop.
func BenchmarkFinishAndTakeNextSlots(b *testing.B, newStore func(b *testing.B) slots.Store, server ServerTime, unit string) {
	ctx := context.Background()
	for _, agents := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("batch=%d", agents), func(b *testing.B) {
			st := newStore(b)
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
			var before time.Duration
			if server != nil {
				if before, err = server(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
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
			if server != nil {
				after, err := server(ctx)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64((after-before).Microseconds())/float64(b.N), unit)
			}
		})
	}
}
