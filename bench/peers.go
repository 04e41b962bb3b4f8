package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// firstStart records when a peer's first job reached a worker.
type firstStart struct {
	once sync.Once
	at   time.Time
}

func (f *firstStart) mark() { f.once.Do(func() { f.at = time.Now() }) }

// noopArgs is River's unit of work.
type noopArgs struct{}

func (noopArgs) Kind() string { return "agora_bench_noop" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
	started *atomic.Pointer[firstStart]
}

func (w *noopWorker) Work(ctx context.Context, job *river.Job[noopArgs]) error {
	w.started.Load().mark()
	return nil
}

// riverPeer is River on a schema of its own, dropped on close.
type riverPeer struct {
	pool    *pgxpool.Pool
	schema  string
	workers *river.Workers
	started atomic.Pointer[firstStart]
}

// newRiver opens a pgx pool of maxWorkers+8 connections, as Agora's, and
// migrates River's tables into a new schema.
func newRiver(ctx context.Context, dsn string, maxWorkers int) (*riverPeer, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = int32(maxWorkers + 8)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	r := &riverPeer{pool: pool, schema: "river_bench_" + runID(), workers: river.NewWorkers()}
	if _, err := pool.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{r.schema}.Sanitize()); err != nil {
		pool.Close()
		return nil, err
	}
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: r.schema, Logger: quietLogger()})
	if err == nil {
		_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	}
	if err != nil {
		r.close()
		return nil, fmt.Errorf("river migrate: %w", err)
	}
	river.AddWorker(r.workers, &noopWorker{started: &r.started})
	return r, nil
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// run inserts n jobs, starts a client with w workers and a 1 ms fetch
// cooldown, and times from the first job worked to the n-th completion
// River reports (its completer marks jobs completed in batches).
func (r *riverPeer) run(ctx context.Context, w, n int, m *meter) (time.Duration, error) {
	client, err := river.NewClient(riverpgxv5.New(r.pool), &river.Config{
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: w}},
		Workers:           r.workers,
		FetchCooldown:     time.Millisecond,
		FetchPollInterval: 50 * time.Millisecond,
		Schema:            r.schema,
		Logger:            quietLogger(),
	})
	if err != nil {
		return 0, err
	}
	params := make([]river.InsertManyParams, n)
	for i := range params {
		params[i] = river.InsertManyParams{Args: noopArgs{}}
	}
	if _, err := client.InsertManyFast(ctx, params); err != nil {
		return 0, err
	}
	events, cancel := client.SubscribeConfig(&river.SubscribeConfig{ChanSize: n + 1000, Kinds: []river.EventKind{river.EventKindJobCompleted, river.EventKindJobFailed}})
	defer cancel()
	started := &firstStart{}
	r.started.Store(started)
	m.begin(ctx)
	if err := client.Start(ctx); err != nil {
		return 0, err
	}
	defer func() {
		stop, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = client.Stop(stop)
	}()
	timeout := time.After(5 * time.Minute)
	for done := 0; done < n; {
		select {
		case e := <-events:
			if e.Kind != river.EventKindJobCompleted {
				return 0, fmt.Errorf("river: job %d %s", e.Job.ID, e.Kind)
			}
			done++
		case <-timeout:
			return 0, fmt.Errorf("river: %d of %d jobs completed in 5 minutes", done, n)
		}
	}
	elapsed := time.Since(started.at)
	m.end(ctx)
	return elapsed, nil
}

func (r *riverPeer) close() {
	_, _ = r.pool.Exec(context.Background(), `DROP SCHEMA `+pgx.Identifier{r.schema}.Sanitize()+` CASCADE`)
	r.pool.Close()
}

// asynqPeer is asynq on a queue of its own per run, deleted after it.
type asynqPeer struct {
	opt       asynq.RedisClientOpt
	client    *asynq.Client
	inspector *asynq.Inspector
}

// newAsynq connects with a pool of maxWorkers+8 connections, as Agora's.
func newAsynq(redisURL string, maxWorkers int) (*asynqPeer, error) {
	conn, err := asynq.ParseRedisURI(redisURL)
	if err != nil {
		return nil, err
	}
	opt, ok := conn.(asynq.RedisClientOpt)
	if !ok {
		return nil, errors.New("asynq: only a redis:// URL is supported here")
	}
	opt.PoolSize = maxWorkers + 8
	return &asynqPeer{opt: opt, client: asynq.NewClient(opt), inspector: asynq.NewInspector(opt)}, nil
}

// run enqueues n tasks on a new queue, starts a server with concurrency w,
// and times from the first task handled until the queue holds nothing
// pending or active (every task acknowledged).
func (a *asynqPeer) run(ctx context.Context, w, n int, m *meter) (time.Duration, error) {
	queue := "agora_bench_" + runID()
	for range n {
		if _, err := a.client.EnqueueContext(ctx, asynq.NewTask("noop", nil), asynq.Queue(queue), asynq.MaxRetry(0)); err != nil {
			return 0, err
		}
	}
	defer func() { _ = a.inspector.DeleteQueue(queue, true) }()
	started := &firstStart{}
	var handled atomic.Int64
	all := make(chan struct{})
	srv := asynq.NewServer(a.opt, asynq.Config{
		Concurrency:     w,
		Queues:          map[string]int{queue: 1},
		LogLevel:        asynq.FatalLevel,
		ShutdownTimeout: 10 * time.Second,
	})
	m.begin(ctx)
	err := srv.Start(asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		started.mark()
		if handled.Add(1) == int64(n) {
			close(all)
		}
		return nil
	}))
	if err != nil {
		return 0, err
	}
	defer srv.Shutdown()
	select {
	case <-all:
	case <-time.After(5 * time.Minute):
		return 0, fmt.Errorf("asynq: %d of %d tasks handled in 5 minutes", handled.Load(), n)
	}
	for {
		info, err := a.inspector.GetQueueInfo(queue)
		if err != nil {
			return 0, err
		}
		if info.Pending == 0 && info.Active == 0 {
			if info.Retry+info.Archived > 0 {
				return 0, fmt.Errorf("asynq: %d tasks failed", info.Retry+info.Archived)
			}
			elapsed := time.Since(started.at)
			m.end(ctx)
			return elapsed, nil
		}
		time.Sleep(time.Millisecond)
	}
}

func (a *asynqPeer) close() {
	a.client.Close()
	a.inspector.Close()
}
