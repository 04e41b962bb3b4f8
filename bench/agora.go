package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lib/pq"
	"github.com/redis/go-redis/v9"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/pgstore"
	"github.com/agorahq/agora/store/redisstore"
)

// agora is Agora's role-slot queue on one backend.
type agora struct {
	svc      *slots.Service
	ids      *identity.Service // the workers' keys
	calls    *countingStore
	strategy slots.Strategy
	// twoStep loops TakeNext → Done, two store calls per seat, instead of
	// DoneAndTakeNext, one.
	twoStep bool
	// prepared, when set, runs after a run's queue is filled, before the
	// clock starts: pgstore's Analyze (-analyze), to compare with the
	// statistics autovacuum happens to have left.
	prepared func(context.Context) error
	cleanup  func()
}

// newAgoraPG opens a pool of maxWorkers+8 connections (idle ones kept) on
// a schema of its own, dropped on close.
func newAgoraPG(ctx context.Context, dsn string, maxWorkers int, cfg config) (*agora, error) {
	schema := "agora_bench_" + runID()
	admin, err := sql.Open("postgres", dsn)
	if err != nil {
		return nil, err
	}
	if _, err := admin.ExecContext(ctx, `CREATE SCHEMA `+pq.QuoteIdentifier(schema)); err != nil {
		admin.Close()
		return nil, err
	}
	drop := func() {
		_, _ = admin.ExecContext(context.Background(), `DROP SCHEMA `+pq.QuoteIdentifier(schema)+` CASCADE`)
		admin.Close()
	}
	u, err := url.Parse(dsn)
	if err != nil {
		drop()
		return nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	db, err := pgstore.Open(u.String(), pgstore.PoolOptions{MaxOpenConns: maxWorkers + 8})
	if err != nil {
		drop()
		return nil, err
	}
	if err := pgstore.Migrate(ctx, db); err != nil {
		db.Close()
		drop()
		return nil, err
	}
	st := pgstore.New(db)
	a := newAgora(st, cfg, func() { db.Close(); drop() })
	if cfg.analyze {
		a.prepared = st.Analyze
	}
	return a, nil
}

// newAgoraRedis uses a key prefix of its own, deleted on close, and a pool
// of maxWorkers+8 connections.
func newAgoraRedis(ctx context.Context, redisURL string, maxWorkers int, cfg config) (*agora, error) {
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		return nil, err
	}
	opt.PoolSize = maxWorkers + 8
	client := redis.NewClient(opt)
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		return nil, err
	}
	prefix := "agora-bench-" + runID()
	st := redisstore.New(client, redisstore.WithPrefix(prefix))
	cleanup := func() {
		ctx := context.Background()
		iter := client.Scan(ctx, 0, "{"+prefix+"}:*", 1000).Iterator()
		for iter.Next(ctx) {
			client.Del(ctx, iter.Val())
		}
		client.Close()
	}
	return newAgora(st, cfg, cleanup), nil
}

// newAgora is the queue over st as cfg's flags set it up; the library's
// defaults unless a flag says otherwise.
func newAgora(st interface {
	slots.Store
	identity.Store
}, cfg config, cleanup func()) *agora {
	opts := batching(cfg.batch, cfg.wait)
	if cfg.flushers > 0 {
		opts = append(opts, slots.WithBatchFlushers(cfg.flushers))
	}
	calls := &countingStore{Store: st}
	ids := identity.New(st, identity.WithScopes(slots.Scopes(), slots.ScopeAliases()))
	return &agora{svc: slots.New(calls, opts...), ids: ids, calls: calls, strategy: slots.Strategy(cfg.strategy), twoStep: cfg.loop == "twostep", cleanup: cleanup}
}

func (a *agora) close() { a.cleanup() }

// parallel runs fn(0) … fn(n-1) on width goroutines and returns the first
// error.
func parallel(n, width int, fn func(i int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range width {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// run prepares n claims, each with a draft and one open critic seat, and w
// agents, then times the agents' loops through the Go API from the first
// seat handed to one until the queue is empty. It checks the run exact: n
// seats done, each credited once.
func (a *agora) run(ctx context.Context, w, n int, m *meter) (time.Duration, error) {
	return a.timed(ctx, "agora", w, n, m, func(i int, k identity.Key, _ string) (loop, error) {
		q := slots.JobQuery{Strategy: a.strategy}
		return loop{
			take: func() (slots.Job, error) { return a.svc.TakeNext(identity.WithKey(ctx, k), q) },
			doneTake: func(j slots.Job) (*slots.Job, error) {
				if a.twoStep {
					if _, err := a.svc.Done(identity.WithKey(ctx, k), j.Claim.ID, j.Slot.ID); err != nil {
						return nil, err
					}
					next, err := a.svc.TakeNext(identity.WithKey(ctx, k), q)
					if errors.Is(err, slots.ErrNoJob) {
						return nil, nil
					}
					return &next, err
				}
				dn, err := a.svc.DoneAndTakeNext(identity.WithKey(ctx, k), j.Claim.ID, j.Slot.ID, q)
				return dn.Next, err
			},
		}, nil
	})
}

// loop is one agent's worker loop: its first take, then its done with the
// next take, nil when none is left.
type loop struct {
	take     func() (slots.Job, error)
	doneTake func(slots.Job) (*slots.Job, error)
}

// timed prepares n claims, each with a draft and one open critic seat, and
// w agents, then times the loops agent makes for them (system names them in
// the counters' line) (given each agent's
// index, key and secret) from the first seat handed to one until the queue
// is empty. It checks the run exact: n seats done, each credited once.
func (a *agora) timed(ctx context.Context, system string, w, n int, m *meter, agent func(i int, k identity.Key, secret string) (loop, error)) (time.Duration, error) {
	drafter := identity.Key{ID: "bench-drafter", Name: "drafter"}
	claims := make([]string, n)
	err := parallel(n, 16, func(i int) error {
		c, err := a.svc.CreateClaim(ctx, slots.NewClaim{Title: fmt.Sprint("unit ", i), Body: "work", Domain: "bench"})
		if err != nil {
			return err
		}
		if _, err := a.svc.AddComment(identity.WithKey(ctx, drafter), slots.NewComment{ClaimID: c.ID, Body: "draft", CommentType: string(slots.CommentDraft)}); err != nil {
			return err
		}
		_, err = a.svc.ConfigureSlots(ctx, c.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 1}})
		claims[i] = c.ID
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("agora setup: %w", err)
	}
	keys := make([]identity.Key, w)
	loops := make([]loop, w)
	run := runID() // key names are unique in a store, and runs share one
	for i := range keys {
		k, secret, err := a.ids.CreateKey(identity.WithKey(ctx, a.ids.Admin()), identity.NewKey{Name: fmt.Sprintf("worker-%s-%d", run, i), Scopes: []identity.Scope{slots.ScopeCommentCreate}})
		if err != nil {
			return 0, err
		}
		keys[i] = k
		if loops[i], err = agent(i, k, secret); err != nil {
			return 0, err
		}
	}

	if a.prepared != nil {
		if err := a.prepared(ctx); err != nil {
			return 0, err
		}
	}
	var done atomic.Int64
	a.calls.reset()
	var first firstStart
	m.begin(ctx)
	err = parallel(w, w, func(i int) error {
		job, err := loops[i].take()
		if errors.Is(err, slots.ErrNoJob) {
			return nil
		}
		if err != nil {
			return err
		}
		first.mark()
		for {
			next, err := loops[i].doneTake(job)
			if err != nil {
				return err
			}
			done.Add(1)
			if next == nil {
				return nil
			}
			job = *next
		}
	})
	elapsed := time.Since(first.at)
	m.end(ctx)
	if err != nil {
		return 0, fmt.Errorf("agora worker: %w", err)
	}
	calls, items, busy := a.calls.calls.Load(), a.calls.items.Load(), time.Duration(a.calls.busy.Load())
	fmt.Printf("calls system=%s workers=%d seats=%d store_calls=%d per_seat=%.2f items_per_call=%.1f store_time=%.0f%%\n", system, w, n, calls,
		float64(calls)/float64(n), float64(items)/float64(max(calls, 1)), 100*busy.Seconds()/elapsed.Seconds())
	return elapsed, a.checkExact(ctx, keys, claims, done.Load())
}

// checkExact fails unless every seat of claims is done and the agents were
// credited exactly once per seat they finished.
func (a *agora) checkExact(ctx context.Context, keys []identity.Key, claims []string, done int64) error {
	if done != int64(len(claims)) {
		return fmt.Errorf("agora: %d seats done, want %d", done, len(claims))
	}
	var credited int64
	for _, k := range keys {
		b, err := a.svc.Balance(ctx, k.ID)
		if err != nil {
			return err
		}
		credited += b
	}
	if credited != done*slots.RewardRoleSlot {
		return fmt.Errorf("agora: credited %d for %d seats", credited, done)
	}
	return parallel(len(claims), 16, func(i int) error {
		list, err := a.svc.Slots(ctx, claims[i])
		if err != nil {
			return err
		}
		if len(list) != 1 || list[0].Status != slots.StatusDone {
			return fmt.Errorf("agora: claim %s's seat is not done: %+v", claims[i], list)
		}
		return nil
	})
}

// batching is the Service options of the -batch and -wait flags.
func batching(mode string, wait time.Duration) []slots.Option {
	switch mode {
	case "none":
		return []slots.Option{slots.WithoutBatching()}
	case "take":
		return []slots.Option{slots.WithoutBatching(), slots.WithTakeBatching(wait)}
	case "done":
		return []slots.Option{slots.WithoutBatching(), slots.WithDoneBatching(wait)}
	}
	return []slots.Option{slots.WithTakeBatching(wait), slots.WithDoneBatching(wait)}
}

// countingStore counts the worker loop's calls of the store (takes and
// finishes, batched or not) and the items they carry: on PostgreSQL each
// call is one statement and one commit (a batch mixing filters, or an
// agent its batch left without a seat, costs one more), on Redis one
// script; and the time spent in them, summed over the calls (with several
// batches in flight at once, more than the run's).
type countingStore struct {
	slots.Store
	calls, items, busy atomic.Int64
}

// Parallelism passes on the store's store.Parallel, so that the Service
// bounds its batches in flight as it would on the store itself.
func (c *countingStore) Parallelism() int { return store.ParallelismOf(c.Store) }

func (c *countingStore) reset() { c.calls.Store(0); c.items.Store(0); c.busy.Store(0) }

// count counts a call of items items; the caller defers the function it
// returns, which adds the call's duration to busy.
func (c *countingStore) count(items int) func() {
	c.calls.Add(1)
	c.items.Add(int64(items))
	start := time.Now()
	return func() { c.busy.Add(int64(time.Since(start))) }
}

func (c *countingStore) TakeNextSlot(ctx context.Context, p slots.TakeNextParams) (slots.Job, error) {
	defer c.count(1)()
	return c.Store.TakeNextSlot(ctx, p)
}

func (c *countingStore) TakeNextSlots(ctx context.Context, ps []slots.TakeNextParams) ([]slots.JobResult, error) {
	defer c.count(len(ps))()
	return c.Store.TakeNextSlots(ctx, ps)
}

func (c *countingStore) FinishSlot(ctx context.Context, p slots.FinishParams) (slots.Slot, error) {
	defer c.count(1)()
	return c.Store.FinishSlot(ctx, p)
}

func (c *countingStore) FinishSlots(ctx context.Context, ps []slots.FinishParams) ([]slots.FinishResult, error) {
	defer c.count(len(ps))()
	return c.Store.FinishSlots(ctx, ps)
}

func (c *countingStore) FinishAndTakeNextSlots(ctx context.Context, ps []slots.FinishTakeParams) ([]slots.FinishTakeResult, error) {
	defer c.count(len(ps))()
	return c.Store.FinishAndTakeNextSlots(ctx, ps)
}
