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
// API (slots.Service with the library's defaults: concurrent calls
// coalesced into batches, each waiting up to slots.DefaultBatchWait for its
// share of the workers the last answered, as many batches in flight as the
// load pays for), each seat one claim's only role slot; every run is
// checked exact: every seat done once and credited once. With -http the
// same loop also runs over HTTP (the server's handler on a loopback port,
// each worker a Go client with its own key), reported beside. Both sides
// get pools of W+8 connections. River works no-op jobs with its fetch
// cooldown at 1 ms (its fastest; its default is 100 ms), asynq no-op tasks.
// Each system's clock starts when its first job or seat is handed to a
// worker, so neither's start-up is counted.
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

	"github.com/redis/go-redis/v9"

	"github.com/agorahq/agora/slots"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.postgres, "postgres", "", "PostgreSQL DSN (Agora and River); empty skips PostgreSQL")
	flag.StringVar(&cfg.redis, "redis", "", "Redis URL (Agora and asynq); empty skips Redis")
	flag.IntVar(&cfg.n, "n", 2000, "units of work per run")
	flag.IntVar(&cfg.runs, "runs", 5, "runs of each system per backend and worker count (alternating)")
	workers := flag.String("workers", "1,8,64,256", "comma-separated worker counts")
	flag.StringVar(&cfg.strategy, "strategy", "oldest", "Agora's job-queue strategy: oldest or random")
	flag.StringVar(&cfg.batch, "batch", "both", "Agora's coalescing: both (takes and dones, the library's default), done, take or none (slots.WithoutBatching)")
	flag.DurationVar(&cfg.wait, "wait", slots.DefaultBatchWait, "Agora's batch wait (the maxWait of slots.WithTakeBatching and WithDoneBatching): the longest a batch waits for the callers of the last one to come back; 0: none")
	flag.IntVar(&cfg.flushers, "flushers", 0, "Agora's batches in flight at once per kind (slots.WithBatchFlushers); 0: the library's default, which adapts to the load")
	flag.BoolVar(&cfg.http, "http", false, "also work the queue over HTTP: the server's handler on a loopback port, each worker a Go client (httpapi/client) with its own key, reported beside the Go API's figures")
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
	http            bool
}

// system is one queue on one backend, set up once and run many times.
type system interface {
	// run works n fresh units with w workers and returns how long the work
	// took; it fails when the work was not exact. It calls m's begin and
	// end around the timed work.
	run(ctx context.Context, w, n int, m *meter) (time.Duration, error)
	close()
}

func run(ctx context.Context, cfg config) error {
	type pair struct {
		backend string
		agora   func(ctx context.Context, maxWorkers int) (*agora, error)
		peer    func(ctx context.Context, maxWorkers int) (system, error)
		cpu     serverCPU
	}
	var pairs []pair
	if cfg.postgres != "" {
		pairs = append(pairs, pair{"postgres",
			func(ctx context.Context, w int) (*agora, error) {
				return newAgoraPG(ctx, cfg.postgres, w, cfg)
			},
			func(ctx context.Context, w int) (system, error) { return newRiver(ctx, cfg.postgres, w) },
			postgresCPU})
	}
	if cfg.redis != "" {
		opt, err := redis.ParseURL(cfg.redis)
		if err != nil {
			return err
		}
		info := redis.NewClient(opt)
		defer info.Close()
		pairs = append(pairs, pair{"redis",
			func(ctx context.Context, w int) (*agora, error) {
				return newAgoraRedis(ctx, cfg.redis, w, cfg)
			},
			func(ctx context.Context, w int) (system, error) { return newAsynq(cfg.redis, w) },
			redisCPU(info)})
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
		systems := []system{agora, peer}
		if cfg.http {
			h, err := newAgoraHTTP(agora, maxW)
			if err != nil {
				agora.close()
				peer.close()
				return fmt.Errorf("%s agora over HTTP: %w", p.backend, err)
			}
			defer h.close()
			systems = append(systems, h)
		}
		err = compare(ctx, cfg, p.backend, systems, p.cpu)
		agora.close()
		peer.close()
		if err != nil {
			return err
		}
	}
	return nil
}

// compare runs the systems (Agora, its peer, and Agora over HTTP with
// -http) cfg.runs times at each worker count, rotating which goes first,
// and prints each run and the medians: ratio is Agora's over the peer's,
// http_ratio Agora over HTTP's over the peer's. Where cpu reads the
// server's CPU time, a server_cpu line gives the medians of the server's
// CPU time per unit (µs) during the timed work; a client_cpu line gives
// this process's own (each system's client side; Agora over HTTP's
// includes its server's handler).
func compare(ctx context.Context, cfg config, backend string, systems []system, cpu serverCPU) error {
	names := []string{"agora", "peer", "http"}
	for _, w := range cfg.workers {
		rates := make([][]float64, len(systems))
		used := make([][]float64, len(systems))
		self := make([][]float64, len(systems))
		for i := range cfg.runs {
			for j := range systems {
				k := (i + j) % len(systems)
				m := &meter{read: cpu}
				d, err := systems[k].run(ctx, w, cfg.n, m)
				if err != nil {
					return fmt.Errorf("%s %s workers=%d: %w", backend, names[k], w, err)
				}
				rates[k] = append(rates[k], float64(cfg.n)/d.Seconds())
				if m.ok {
					used[k] = append(used[k], float64(m.used.Microseconds())/float64(cfg.n))
				}
				if m.selfOK {
					self[k] = append(self[k], float64(m.self.Microseconds())/float64(cfg.n))
				}
			}
			line := fmt.Sprintf("run backend=%s workers=%d n=%d", backend, w, cfg.n)
			for k := range systems {
				line += fmt.Sprintf(" %s=%.0f", names[k], rates[k][i])
			}
			fmt.Println(line)
		}
		ma, mp := median(rates[0]), median(rates[1])
		line := fmt.Sprintf("ratio backend=%s workers=%d agora=%.0f peer=%.0f ratio=%.2f", backend, w, ma, mp, ma/mp)
		if len(systems) > 2 {
			mh := median(rates[2])
			line += fmt.Sprintf(" http=%.0f http_ratio=%.2f", mh, mh/mp)
		}
		fmt.Println(line)
		for _, c := range []struct {
			name string
			per  [][]float64
		}{{"server_cpu", used}, {"client_cpu", self}} {
			if len(c.per[0]) != cfg.runs || len(c.per[1]) != cfg.runs {
				continue
			}
			line := fmt.Sprintf("%s backend=%s workers=%d agora_us=%.1f peer_us=%.1f", c.name, backend, w, median(c.per[0]), median(c.per[1]))
			if len(systems) > 2 && len(c.per[2]) == cfg.runs {
				line += fmt.Sprintf(" http_us=%.1f", median(c.per[2]))
			}
			fmt.Println(line)
		}
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
