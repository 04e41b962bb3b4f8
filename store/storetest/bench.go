package storetest

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agorahq/agora/slots"
)

// Benchmarks shared by every backend. A backend's test file calls them with
// a fresh store, e.g.
//
//	func BenchmarkTake(b *testing.B) { storetest.BenchmarkTake(b, newStore(b)) }

// seatsPerClaim is how many slots each benchmark claim gets (the most one
// configuration may open).
const seatsPerClaim = slots.MaxSlotsPerConfigure

type seat struct {
	claimID, slotID string
	agent           slots.Key
}

// prepareSeats opens n slots (on claims with a draft, so takes also leave the
// job queue) and pairs each with an agent that holds nothing on its claim.
func prepareSeats(b *testing.B, svc *slots.Service, n int) []seat {
	b.Helper()
	ctx := context.Background()
	agents := make([]slots.Key, seatsPerClaim)
	for i := range agents {
		k, _, err := svc.CreateKey(ctx, slots.NewKey{Name: fmt.Sprint("bench-", i)})
		if err != nil {
			b.Fatal(err)
		}
		agents[i] = k
	}
	seats := make([]seat, 0, n)
	for len(seats) < n {
		c, err := svc.CreateClaim(ctx, slots.NewClaim{Title: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := svc.AddComment(ctx, agents[0], slots.NewComment{ClaimID: c.ID, Body: "draft", CommentType: "draft"}); err != nil {
			b.Fatal(err)
		}
		if _, err := svc.ConfigureSlots(ctx, c.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: seatsPerClaim}}); err != nil {
			b.Fatal(err)
		}
		list, err := svc.Slots(ctx, c.ID)
		if err != nil {
			b.Fatal(err)
		}
		for i, s := range list {
			seats = append(seats, seat{claimID: c.ID, slotID: s.ID, agent: agents[i]})
		}
	}
	return seats[:n]
}

// takeChunk bounds how many seats one store holds during BenchmarkTake, so a
// large b.N measures many stores of realistic size instead of one huge one.
const takeChunk = 50_000

// BenchmarkTake measures Service.Take, each op winning a different open
// seat, with 1 and 64 concurrent callers. Seats are prepared in chunks on
// fresh stores from newStore, with the timer stopped.
func BenchmarkTake(b *testing.B, newStore func(b *testing.B) slots.Store) {
	ctx := context.Background()
	for _, callers := range []int{1, 64} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			for left := b.N; left > 0; {
				n := min(left, takeChunk)
				left -= n
				b.StopTimer()
				svc := slots.New(newStore(b))
				seats := prepareSeats(b, svc, n)
				runtime.GC() // the set-up's garbage is not the take's cost
				var next atomic.Int64
				var wg sync.WaitGroup
				b.StartTimer()
				for range min(callers, n) {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							i := next.Add(1) - 1
							if i >= int64(len(seats)) {
								return
							}
							s := seats[i]
							if _, err := svc.Take(ctx, s.agent, s.claimID, s.slotID); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
			}
		})
	}
}

// BenchmarkNextJob measures the job queue with 1k, 10k and 100k claims
// (each with a draft and two open slots) in the store: its cost must not grow
// with them. Sizes above maxClaims are skipped, so slow backends can bound
// the set-up time.
func BenchmarkNextJob(b *testing.B, newStore func(b *testing.B) slots.Store, maxClaims int) {
	ctx := context.Background()
	for _, claims := range []int{1_000, 10_000, 100_000} {
		if claims > maxClaims {
			continue
		}
		b.Run(fmt.Sprintf("claims=%d", claims), func(b *testing.B) {
			svc := slots.New(newStore(b))
			author := slots.Key{ID: "bench", Name: "bench"}
			domains := []string{"physics", "medicine", "law", "history"}
			// Several writers, so a networked backend's set-up takes seconds,
			// not minutes.
			var wg sync.WaitGroup
			var next atomic.Int64
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := int(next.Add(1) - 1); i < claims; i = int(next.Add(1) - 1) {
						c, err := svc.CreateClaim(ctx, slots.NewClaim{Title: "bench", Domain: domains[i%len(domains)]})
						if err == nil {
							_, err = svc.AddComment(ctx, author, slots.NewComment{ClaimID: c.ID, Body: "draft", CommentType: "draft"})
						}
						if err == nil {
							_, err = svc.ConfigureSlots(ctx, c.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 1}, {Role: slots.RoleDefender, Count: 1}})
						}
						if err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			if b.Failed() {
				return
			}
			for _, q := range []struct {
				name string
				q    slots.JobQuery
			}{
				{"oldest", slots.JobQuery{}},
				{"random", slots.JobQuery{Strategy: slots.StrategyRandom}},
				{"role+domain", slots.JobQuery{Role: slots.RoleDefender, Domain: "law"}},
			} {
				b.Run(q.name, func(b *testing.B) {
					b.ReportAllocs()
					for range b.N {
						if _, err := svc.NextJob(ctx, q.q); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}
