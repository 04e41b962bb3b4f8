package storetest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// Benchmarks shared by every backend. A backend's test file calls them with
// a fresh store, e.g.
//
//	func BenchmarkTake(b *testing.B) { storetest.BenchmarkTake(b, newStore(b)) }

// load runs fn(0) … fn(n-1) on eight writers, so that a networked backend's
// bulk set-up takes seconds, not minutes, then refreshes the backend's
// planner statistics when it keeps any (a database does so by itself some
// time after a bulk load). It stops the benchmark at the first error.
func load(b *testing.B, st any, n int, fn func(i int) error) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := fn(i); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	if a, ok := st.(interface{ Analyze(context.Context) error }); ok {
		if err := a.Analyze(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchSlot is an open slot and an agent that holds nothing on its claim.
type BenchSlot struct {
	ClaimID, SlotID string       // the open slot and its claim
	Agent           identity.Key // a key holding no slot on ClaimID
}

// NumberedSlots opens n slots straight through st with predictable IDs, so
// that a baseline tool (redis-benchmark, pgbench) can address them from one
// random number i: slot "<tag>_slot_<i, 12 digits>" of claim
// "<tag>_claim_<i/20, 12 digits>" (which has a draft, so takes also leave
// the job queue), for agent "<tag>_key_<i%20>".
func NumberedSlots(b *testing.B, st slots.Store, tag string, n int) []BenchSlot {
	b.Helper()
	ctx := context.Background()
	per := slots.MaxSlotsPerConfigure
	seats := make([]BenchSlot, n)
	claims := (n + per - 1) / per
	load(b, st, claims, func(c int) error {
		claimID := fmt.Sprintf("%s_claim_%012d", tag, c)
		err := st.CreateClaim(ctx, slots.Claim{ID: claimID, Title: "bench", Domain: "bench", CreatedAt: time.UnixMilli(1).UTC()})
		if err == nil {
			err = st.AddComment(ctx, slots.Comment{ID: claimID + "_draft", ClaimID: claimID, Body: "draft", CommentType: slots.CommentDraft})
		}
		if err != nil {
			return err
		}
		batch := make([]slots.Slot, 0, per)
		for i := c * per; i < min(n, (c+1)*per); i++ {
			id := fmt.Sprintf("%s_slot_%012d", tag, i)
			batch = append(batch, slots.Slot{ID: id, ClaimID: claimID, Role: slots.RoleCritic, Status: slots.StatusOpen, CreatedAt: time.UnixMilli(1).UTC()})
			seats[i] = BenchSlot{ClaimID: claimID, SlotID: id, Agent: identity.Key{ID: fmt.Sprintf("%s_key_%d", tag, i%per), Name: "bench"}}
		}
		return st.ReplaceOpenSlots(ctx, claimID, batch)
	})
	return seats
}

// TakeSlots takes every seat through svc with callers concurrent callers
// and returns when all are taken. The caller times it.
func TakeSlots(b *testing.B, svc *slots.Service, seats []BenchSlot, callers int) {
	ctx := context.Background()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(callers, len(seats)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(seats)); i = next.Add(1) - 1 {
				s := seats[i]
				if _, err := svc.Take(identity.WithKey(ctx, s.Agent), s.ClaimID, s.SlotID); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// inChunks runs b.N ops in chunks of at most chunk: prepare(n), with the
// timer stopped, sets up a fresh store for n ops and returns the work to
// time, which does them.
func inChunks(b *testing.B, chunk int, prepare func(n int) func()) {
	b.ReportAllocs()
	b.ResetTimer()
	for left := b.N; left > 0; {
		n := min(left, chunk)
		left -= n
		b.StopTimer()
		work := prepare(n)
		runtime.GC() // the set-up's garbage is not the work's cost
		b.StartTimer()
		work()
	}
}

// takeChunk bounds how many seats one store holds during BenchmarkTake, so a
// large b.N measures many stores of realistic size instead of one huge one.
const takeChunk = 50_000

// BenchmarkTake measures Service.Take, each op winning a different open
// seat, with 1 and 64 concurrent callers. Seats are prepared in chunks on
// fresh stores from newStore, with the timer stopped. Where the store is
// also a store.Notifier (memstore, redisstore), the notify=true cases give
// the service that notifier, as a live server does: each take then also
// announces its claim's change.
func BenchmarkTake(b *testing.B, newStore func(b *testing.B) slots.Store) {
	for _, notify := range []bool{false, true} {
		for _, callers := range []int{1, 64} {
			b.Run(fmt.Sprintf("notify=%t/callers=%d", notify, callers), func(b *testing.B) {
				inChunks(b, takeChunk, func(n int) func() {
					st := newStore(b)
					var opts []slots.Option
					if nt, ok := st.(store.Notifier); ok && notify {
						opts = append(opts, slots.WithNotifier(nt))
					} else if notify {
						b.Skip("the store is not a notifier")
					}
					seats := NumberedSlots(b, st, "bench", n)
					svc := slots.New(st, opts...)
					return func() { TakeSlots(b, svc, seats, callers) }
				})
			})
		}
	}
}

// BenchmarkNextJob measures the job queue with 1k, 10k and 100k claims
// (each with a draft and two open slots) in the store: its cost must not grow
// with them. The holds10 cases ask for an agent that holds a seat on each of
// the ten oldest claims, whose other open slots the queue must step over.
// Sizes above maxClaims are skipped, so slow backends can bound the set-up
// time.
func BenchmarkNextJob(b *testing.B, newStore func(b *testing.B) slots.Store, maxClaims int) {
	ctx := context.Background()
	for _, claims := range []int{1_000, 10_000, 100_000} {
		if claims > maxClaims {
			continue
		}
		b.Run(fmt.Sprintf("claims=%d", claims), func(b *testing.B) {
			st := newStore(b)
			svc := slots.New(st)
			author := identity.Key{ID: "bench", Name: "bench"}
			domains := []string{"physics", "medicine", "law", "history"}
			load(b, st, claims, func(i int) error {
				c, err := svc.CreateClaim(ctx, slots.NewClaim{Title: "bench", Domain: domains[i%len(domains)]})
				if err == nil {
					_, err = svc.AddComment(identity.WithKey(ctx, author), slots.NewComment{ClaimID: c.ID, Body: "draft", CommentType: "draft"})
				}
				if err == nil {
					_, err = svc.ConfigureSlots(ctx, c.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 1}, {Role: slots.RoleDefender, Count: 1}})
				}
				return err
			})
			// The holder takes the critic seat of the oldest claim it holds
			// nothing on, ten times: the ten oldest claims.
			holder := identity.Key{ID: "bench-holder", Name: "bench"}
			for range heldClaims {
				job, err := svc.NextJob(identity.WithKey(ctx, holder), slots.JobQuery{Role: slots.RoleCritic})
				if err == nil {
					_, err = svc.Take(identity.WithKey(ctx, holder), job.Claim.ID, job.Slot.ID)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			asHolder := identity.WithKey(ctx, holder)
			for _, q := range []struct {
				name string
				ctx  context.Context // the holder's for the holds10 cases
				q    slots.JobQuery
			}{
				{"oldest", ctx, slots.JobQuery{}},
				{"random", ctx, slots.JobQuery{Strategy: slots.StrategyRandom}},
				{"role+domain", ctx, slots.JobQuery{Role: slots.RoleDefender, Domain: "law"}},
				{"holds10-oldest", asHolder, slots.JobQuery{}},
				{"holds10-random", asHolder, slots.JobQuery{Strategy: slots.StrategyRandom}},
				{"holds10-role+domain", asHolder, slots.JobQuery{Role: slots.RoleDefender, Domain: "law"}},
			} {
				b.Run(q.name, func(b *testing.B) {
					b.ReportAllocs()
					for range b.N {
						if _, err := svc.NextJob(q.ctx, q.q); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

// heldClaims is how many claims the asking agent of BenchmarkNextJob's
// holds10 cases holds a seat on.
const heldClaims = 10

// BenchmarkNextWork measures the Prism work queue (prism.Service.NextWork)
// with 100, 10k and 100k active pipelines in the store: its cost must not
// grow with them. Sizes above maxPipelines are skipped.
func BenchmarkNextWork(b *testing.B, newStores func(b *testing.B) Stores, maxPipelines int) {
	ctx := context.Background()
	for _, n := range []int{100, 10_000, 100_000} {
		if n > maxPipelines {
			continue
		}
		b.Run(fmt.Sprintf("pipelines=%d", n), func(b *testing.B) {
			st := newStores(b)
			svc := prism.New(st.Prism, st.Slots)
			load(b, st.Prism, n, func(int) error {
				_, _, err := svc.CreateClaim(ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "bench"}})
				return err
			})
			agent := identity.Key{ID: "bench-agent", Name: "bench"}
			for _, q := range []struct {
				name string
				q    prism.WorkQuery
			}{{"any", prism.WorkQuery{}}, {"role+layer", prism.WorkQuery{Role: "contributor", Layer: new(1)}}} {
				b.Run(q.name, func(b *testing.B) {
					b.ReportAllocs()
					for range b.N {
						if _, err := svc.NextWork(identity.WithKey(ctx, agent), q.q); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

// BenchmarkArgue measures arena.Service.Argue: each op posts one argument
// on a game of five agents. A decision, and a new game once one completes,
// are made with the timer stopped. With processes=2 two services share the
// store, as two server processes would, and the arguments alternate between
// them: each change then follows one the other process made.
func BenchmarkArgue(b *testing.B, newStore func(b *testing.B) arena.Store) {
	ctx := context.Background()
	for _, processes := range []int{1, 2} {
		b.Run(fmt.Sprintf("processes=%d", processes), func(b *testing.B) {
			st := newStore(b)
			svcs := make([]*arena.Service, processes)
			for i := range svcs {
				svcs[i] = arena.New(st)
			}
			newGame := func() arena.Game {
				g, err := svcs[0].Create(ctx, 0, 0)
				for i := 0; i < 5 && err == nil; i++ {
					_, err = svcs[0].Register(ctx, g.ID, fmt.Sprint("agent-", i), nil)
				}
				if err == nil {
					g, err = svcs[0].Start(ctx, g.ID)
				}
				if err != nil {
					b.Fatal(err)
				}
				return g
			}
			g := newGame()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				r := g.Current()
				argued := 0
				for _, a := range r.Arguments {
					if a.Phase == r.Phase {
						argued++
					}
				}
				agent := append(slices.Clone(r.Majority), r.Minority...)[argued]
				var err error
				g, err = svcs[i%processes].Argue(ctx, arena.ArgueParams{GameID: g.ID, RoundID: r.ID, AgentID: agent, Text: "Five lives outweigh one."})
				if err != nil {
					b.Fatal(err)
				}
				if g.Current().Phase == arena.PhaseAwaiting {
					b.StopTimer()
					g, err = svcs[i%processes].Decide(ctx, arena.DecideParams{GameID: g.ID, RoundID: r.ID, AgentID: r.Operator, Decision: arena.SaveMajority})
					if err != nil {
						b.Fatal(err)
					}
					if g.Status == arena.StatusCompleted {
						g = newGame()
					}
					b.StartTimer()
				}
			}
		})
	}
}

// BenchmarkStageTake measures the Prism stage-slot hot path through
// prism.Service: each op is one change of a pipeline, a Take of the first
// open slot of the current phase or the Done of the slot taken just before
// (confidence 0.9, so every layer passes), by an agent holding nothing in
// that layer. A new claim, once a pipeline completes, is made with the
// timer stopped. With processes=2 two services share the store, as two
// server processes would, and the changes alternate between them: each
// change then follows one the other process made.
func BenchmarkStageTake(b *testing.B, newStores func(b *testing.B) Stores) {
	ctx := context.Background()
	for _, processes := range []int{1, 2} {
		b.Run(fmt.Sprintf("processes=%d", processes), func(b *testing.B) {
			st := newStores(b)
			svcs := make([]*prism.Service, processes)
			for i := range svcs {
				svcs[i] = prism.New(st.Prism, st.Slots)
			}
			ids := newIdentity(st.Identity)
			var agents []identity.Key
			for i := range 16 {
				k, _, err := ids.CreateKey(identity.WithKey(ctx, ids.Admin()), identity.NewKey{Name: fmt.Sprint("agent-", i), Scopes: []identity.Scope{slots.ScopeCommentCreate}})
				if err != nil {
					b.Fatal(err)
				}
				agents = append(agents, k)
			}
			newPipeline := func() prism.Pipeline {
				_, p, err := svcs[0].CreateClaim(ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "bench"}})
				if err != nil {
					b.Fatal(err)
				}
				return p
			}
			p := newPipeline()
			var taken prism.StageSlot // the slot taken by the last op, if any
			var agent identity.Key
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				svc := svcs[i%processes]
				var err error
				if taken.ID == "" {
					seated := 0
					for _, s := range p.Slots {
						if s.Layer == p.CurrentLayer && s.APIKeyID != "" {
							seated++
						}
					}
					agent = agents[seated]
					taken, p, err = svc.Take(identity.WithKey(ctx, agent), p.ClaimID, p.OpenSlots()[0].ID)
				} else {
					l := p.Layer()
					p, err = svc.Done(identity.WithKey(ctx, agent), p.ClaimID, taken.ID, prism.DoneInput{Body: "reasoning", Output: outputFor(l, taken.Phase, 0), Confidence: conf(0.9)})
					taken = prism.StageSlot{}
				}
				if err != nil {
					b.Fatal(err)
				}
				if p.Status == prism.StatusComplete {
					b.StopTimer()
					p = newPipeline()
					b.StartTimer()
				}
			}
		})
	}
}

// BenchmarkArgueLongGame measures arena.Service.Argue early and late in a
// long game: each op posts one argument in a game of agents agents, at=early
// in its first rounds, at=late in its last ones (the game is played up to
// there with the timer stopped, and again whenever the window runs out).
// The same cost early and late means an argument does not cost more as its
// game grows: the document a change rewrites stays the same size, and the
// feed and resolved rounds are appended beside it.
func BenchmarkArgueLongGame(b *testing.B, newStore func(b *testing.B) arena.Store, agents ...int) {
	ctx := context.Background()
	for _, n := range agents {
		for _, at := range []string{"early", "late"} {
			b.Run(fmt.Sprintf("agents=%d/at=%s", n, at), func(b *testing.B) {
				svc := arena.New(newStore(b))
				// The window: rounds from..to of a game that lasts about n
				// rounds.
				from, to := 1, 2
				if at == "late" {
					from, to = n-2, n+1
				}
				var g arena.Game
				argue := func() (bool, error) { // one argument, or a decision; false when the game is over
					var err error
					r := g.Current()
					if r.Phase == arena.PhaseAwaiting {
						g, err = svc.Decide(ctx, arena.DecideParams{GameID: g.ID, RoundID: r.ID, AgentID: r.Operator, Decision: arena.SaveMajority})
						return g.Status != arena.StatusCompleted, err
					}
					argued := len(r.ArguedThisPhase())
					g, err = svc.Argue(ctx, arena.ArgueParams{GameID: g.ID, RoundID: r.ID, AgentID: append(slices.Clone(r.Majority), r.Minority...)[argued], Text: "Five lives outweigh one: pull the lever."})
					return true, err
				}
				newGame := func() {
					var err error
					g, err = svc.Create(ctx, n, 0)
					for i := 0; i < n && err == nil; i++ {
						_, err = svc.Register(ctx, g.ID, fmt.Sprint("agent-", i), nil)
					}
					if err == nil {
						g, err = svc.Start(ctx, g.ID)
					}
					for err == nil && g.Current().Number < from {
						_, err = argue()
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				newGame()
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					// Decisions, and a game whose window ran out, are made
					// with the timer stopped: each op is one argument.
					for g.Status == arena.StatusCompleted || g.Current().Number > to || g.Current().Phase == arena.PhaseAwaiting {
						b.StopTimer()
						if g.Status == arena.StatusCompleted || g.Current().Number > to {
							newGame()
						} else if _, err := argue(); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
					}
					if _, err := argue(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// workChunk bounds how many seats one store holds during
// BenchmarkDoneAndTakeNext, as takeChunk does for BenchmarkTake.
const workChunk = 20_000

// BenchmarkDoneAndTakeNext measures a job queue worked by agents looping
// Service.DoneAndTakeNext (after a first TakeNext), each op one seat taken,
// done and credited, with 1, 8, 64 and 256 agents, coalesced by
// WithTakeBatching and WithDoneBatching with the library's adaptive
// flushers, with no wait (wait=0) and with DefaultBatchWait for the agents
// a batch answered (wait=1ms), and without batching (wait=none); then with
// eight batches in flight (flushers=8), as many cores would have it, where
// the batches in flight meet in the store.
// Each seat is its claim's only one, in claims prepared with the timer
// stopped, in chunks on fresh stores from newStore.
func BenchmarkDoneAndTakeNext(b *testing.B, newStore func(b *testing.B) slots.Store) {
	run := func(name string, workers int, opts ...slots.Option) {
		b.Run(fmt.Sprintf("%s/workers=%d", name, workers), func(b *testing.B) {
			inChunks(b, workChunk, func(n int) func() {
				st := newStore(b)
				loadSeats(b, st, n)
				svc := slots.New(st, opts...)
				return func() {
					if done := workQueue(b, svc, workers); done != n {
						b.Fatalf("%d seats done, want %d", done, n)
					}
				}
			})
		})
	}
	for _, wait := range []time.Duration{0, slots.DefaultBatchWait, -1} {
		name := fmt.Sprint("wait=", wait)
		opts := []slots.Option{slots.WithTakeBatching(wait), slots.WithDoneBatching(wait)}
		if wait < 0 {
			name, opts = "wait=none", []slots.Option{slots.WithoutBatching()}
		}
		for _, workers := range []int{1, 8, 64, 256} {
			run(name, workers, opts...)
		}
	}
	for _, workers := range []int{8, 64} {
		run("flushers=8", workers, slots.WithBatchFlushers(8))
	}
}

// loadSeats opens n claims straight through st, each with a draft and one
// open critic seat: the job queue as bench/ works it.
func loadSeats(b *testing.B, st slots.Store, n int) {
	ctx := context.Background()
	load(b, st, n, func(i int) error {
		claimID := fmt.Sprintf("work_claim_%012d", i)
		err := st.CreateClaim(ctx, slots.Claim{ID: claimID, Title: "bench", Body: "work", Domain: "bench", CreatedAt: time.UnixMilli(1).UTC()})
		if err == nil {
			err = st.AddComment(ctx, slots.Comment{ID: claimID + "_draft", ClaimID: claimID, Body: "draft", CommentType: slots.CommentDraft})
		}
		if err != nil {
			return err
		}
		return st.ReplaceOpenSlots(ctx, claimID, []slots.Slot{{ID: fmt.Sprintf("work_slot_%012d", i), ClaimID: claimID, Role: slots.RoleCritic, Status: slots.StatusOpen, CreatedAt: time.UnixMilli(1).UTC()}})
	})
}

// workQueue has workers agents work svc's job queue until it is empty and
// returns how many seats they finished.
func workQueue(b *testing.B, svc *slots.Service, workers int) int {
	ctx := context.Background()
	var done atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agent := identity.Key{ID: fmt.Sprint("work_key_", w), Name: "bench"}
			job, err := svc.TakeNext(identity.WithKey(ctx, agent), slots.JobQuery{})
			for err == nil {
				var dn slots.DoneNext
				if dn, err = svc.DoneAndTakeNext(identity.WithKey(ctx, agent), job.Claim.ID, job.Slot.ID, slots.JobQuery{}); err != nil {
					break
				}
				done.Add(1)
				if dn.Next == nil {
					return
				}
				job = *dn.Next
			}
			if !errors.Is(err, slots.ErrNoJob) {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	return int(done.Load())
}
