// Command bench measures Agora's role-slot queue against the Go job queues
// a user would compare it with, side by side on one machine: River on
// PostgreSQL and asynq on Redis. N units of work are worked by W concurrent
// workers; the runs of the two systems alternate, and each line reports the
// medians of the runs:
//
//	cd bench && go run . -postgres DSN -redis URL
//	ratio backend=postgres workers=64 agora=… peer=… ratio=…
//
// An Agora worker is an agent with its own API key that takes its first
// seat with TakeNext and then loops DoneAndTakeNext (its done and its next
// take in one store call; -loop twostep: TakeNext → Done) through the Go
// API (slots.Service, by default with WithTakeBatching and WithDoneBatching
// at a 1 ms wait and two flushers: concurrent calls coalesced, each batch
// waiting for its share of the workers the last answered), each seat one
// claim's only role slot; every run is checked exact: every seat done once
// and credited once. Both sides get pools of W+8 connections. River works
// no-op jobs with its fetch cooldown at 1 ms (its fastest; its default is
// 100 ms), asynq no-op tasks. Each system's clock starts when its first job
// or seat is handed to a worker, so neither's start-up is counted.
//
// It is its own module so that the library's go.mod keeps none of the
// peers' dependencies.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.postgres, "postgres", "", "PostgreSQL DSN (Agora and River); empty skips PostgreSQL")
	flag.StringVar(&cfg.redis, "redis", "", "Redis URL (Agora and asynq); empty skips Redis")
	flag.IntVar(&cfg.n, "n", 2000, "units of work per run")
	flag.IntVar(&cfg.runs, "runs", 5, "runs of each system per backend and worker count (alternating)")
	workers := flag.String("workers", "1,8,64", "comma-separated worker counts")
	flag.StringVar(&cfg.strategy, "strategy", "oldest", "Agora's job-queue strategy: oldest or random")
	flag.StringVar(&cfg.batch, "batch", "both", "Agora's coalescing: both (takes and dones), done, take or none")
	flag.DurationVar(&cfg.wait, "wait", time.Millisecond, "Agora's batch wait (the maxWait of slots.WithTakeBatching and WithDoneBatching): the longest a batch waits for the callers of the last one to come back; 0: none")
	flag.IntVar(&cfg.flushers, "flushers", 2, "Agora's batches in flight at once per kind (slots.WithBatchFlushers; 0: the library's default)")
	flag.BoolVar(&cfg.analyze, "analyze", false, "PostgreSQL: refresh Agora's planner statistics (pgstore's Analyze) once a run's queue is filled, before the clock starts; by default they are left to autovacuum, as in a host that never calls Analyze (the job queue's plans do not depend on them)")
	flag.StringVar(&cfg.loop, "loop", "donetake", "Agora's worker loop: donetake (DoneAndTakeNext, one store call per seat) or twostep (TakeNext then Done)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (both systems) to this file")
	flag.Parse()
	for _, w := range strings.Split(*workers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(w))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "bench: bad worker count %q\n", w)
			os.Exit(2)
		}
		cfg.workers = append(cfg.workers, n)
	}
	if cfg.loop != "donetake" && cfg.loop != "twostep" {
		fmt.Fprintf(os.Stderr, "bench: -loop is donetake or twostep, not %q\n", cfg.loop)
		os.Exit(2)
	}
	if cfg.postgres == "" && cfg.redis == "" {
		fmt.Fprintln(os.Stderr, "bench: give -postgres DSN and/or -redis URL")
		os.Exit(2)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(context.Background(), cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

type config struct {
	postgres, redis string
	n, runs         int
	workers         []int
	strategy        string
	batch           string
	loop            string
	flushers        int
	wait            time.Duration
	analyze         bool
}

// system is one queue on one backend, set up once and run many times.
type system interface {
	// run works n fresh units with w workers and returns how long the work
	// took; it fails when the work was not exact.
	run(ctx context.Context, w, n int) (time.Duration, error)
	close()
}

func run(ctx context.Context, cfg config) error {
	type pair struct {
		backend     string
		agora, peer func(ctx context.Context, maxWorkers int) (system, error)
	}
	var pairs []pair
	if cfg.postgres != "" {
		pairs = append(pairs, pair{"postgres",
			func(ctx context.Context, w int) (system, error) {
				return newAgoraPG(ctx, cfg.postgres, w, cfg)
			},
			func(ctx context.Context, w int) (system, error) { return newRiver(ctx, cfg.postgres, w) }})
	}
	if cfg.redis != "" {
		pairs = append(pairs, pair{"redis",
			func(ctx context.Context, w int) (system, error) {
				return newAgoraRedis(ctx, cfg.redis, w, cfg)
			},
			func(ctx context.Context, w int) (system, error) { return newAsynq(cfg.redis, w) }})
	}
	maxW := slices.Max(cfg.workers)
	for _, p := range pairs {
		agora, err := p.agora(ctx, maxW)
		if err != nil {
			return fmt.Errorf("%s agora: %w", p.backend, err)
		}
		peer, err := p.peer(ctx, maxW)
		if err != nil {
			agora.close()
			return fmt.Errorf("%s peer: %w", p.backend, err)
		}
		err = compare(ctx, cfg, p.backend, agora, peer)
		agora.close()
		peer.close()
		if err != nil {
			return err
		}
	}
	return nil
}

// compare runs both systems cfg.runs times at each worker count,
// alternating which goes first, and prints each run and the medians.
func compare(ctx context.Context, cfg config, backend string, agora, peer system) error {
	for _, w := range cfg.workers {
		var a, p []float64
		for i := range cfg.runs {
			order := []system{agora, peer}
			if i%2 == 1 {
				order = []system{peer, agora}
			}
			for _, s := range order {
				d, err := s.run(ctx, w, cfg.n)
				if err != nil {
					return fmt.Errorf("%s workers=%d: %w", backend, w, err)
				}
				rate := float64(cfg.n) / d.Seconds()
				if s == agora {
					a = append(a, rate)
				} else {
					p = append(p, rate)
				}
			}
			fmt.Printf("run backend=%s workers=%d n=%d agora=%.0f peer=%.0f\n", backend, w, cfg.n, a[i], p[i])
		}
		ma, mp := median(a), median(p)
		fmt.Printf("ratio backend=%s workers=%d agora=%.0f peer=%.0f ratio=%.2f\n", backend, w, ma, mp, ma/mp)
	}
	return nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// runID names a run's own keys, schema and queue.
func runID() string { return strconv.FormatInt(time.Now().UnixNano(), 36) }
