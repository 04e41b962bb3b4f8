package httpapi_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/redis/go-redis/v9"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/memstore"
	"github.com/agorahq/agora/store/pgstore"
	"github.com/agorahq/agora/store/redisstore"
)

// benchArena is an arena store with a notifier for the spectators' server
// and one for the players' (another process).
type benchArena struct {
	name           string
	store          arena.Store
	spectate, play store.Notifier
}

func benchArenas(b *testing.B) []func(b *testing.B) benchArena {
	return []func(b *testing.B) benchArena{
		func(b *testing.B) benchArena {
			m := memstore.New()
			return benchArena{"memory", m, m, m}
		},
		func(b *testing.B) benchArena {
			c, prefix := testdb.RedisClient(b)
			opts, err := redis.ParseURL(testdb.RedisURL(b))
			if err != nil {
				b.Fatal(err)
			}
			peer := redis.NewClient(opts)
			b.Cleanup(func() { peer.Close() })
			st, other := redisstore.New(c, redisstore.WithPrefix(prefix)), redisstore.New(peer, redisstore.WithPrefix(prefix))
			return benchArena{"redis", st, st, other}
		},
		func(b *testing.B) benchArena {
			dsn := testdb.PostgresDSN(b)
			db, err := sqlx.Open("postgres", dsn)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			if err := pgstore.Migrate(context.Background(), db); err != nil {
				b.Fatal(err)
			}
			n := func() store.Notifier {
				nt, err := pgstore.NewNotifier(context.Background(), db, dsn)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { nt.Close() })
				return nt
			}
			return benchArena{"postgres", pgstore.New(db), n(), n()}
		},
	}
}

// BenchmarkArenaSpectators measures what an argument costs the server its
// spectators follow: each op is one argument posted by another process,
// delivered to every spectator's event stream, after which every
// spectator's page asks for the state the stream announced
// (/state?min_version=), as /arena/{id} does. reads/op is the spectators'
// server's store reads per argument. A game of 20 agents has about 1,100
// arguments: run it with -benchtime of at most 1000x.
func BenchmarkArenaSpectators(b *testing.B) {
	for _, newArena := range benchArenas(b) {
		for _, k := range []int{1, 50} {
			ba := newArena(b)
			b.Run(fmt.Sprintf("%s/spectators=%d", ba.name, k), func(b *testing.B) {
				ctx := b.Context()
				counted := &readsArena{Store: ba.store}
				srv := serveArenaB(b, arena.New(counted, arena.WithNotifier(ba.spectate)))
				players := arena.New(ba.store, arena.WithNotifier(ba.play))
				var g arena.Game
				newGame := func() {
					var err error
					g, err = players.Create(ctx, 20, 0)
					for i := 0; i < 20 && err == nil; i++ {
						_, err = players.Register(ctx, g.ID, fmt.Sprint("agent-", i), nil)
					}
					if err == nil {
						g, err = players.Start(ctx, g.ID)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				newGame()
				// Each stream reports every version it announces.
				versions := make(chan int64, 1024)
				follow := func() {
					req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/api/games/%s/events?after=%d", srv, g.ID, g.FeedLen), nil)
					res, err := http.DefaultClient.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					go func() {
						defer res.Body.Close()
						sc := bufio.NewScanner(res.Body)
						for sc.Scan() {
							if v, ok := strings.CutPrefix(sc.Text(), `data: {"version":`); ok {
								var n int64
								fmt.Sscan(strings.SplitN(v, ",", 2)[0], &n)
								versions <- n
							}
						}
					}()
				}
				for range k {
					follow()
				}
				for range k {
					<-versions
				}
				reads := counted.reads.Load()
				b.ResetTimer()
				for range b.N {
					r := g.Current()
					if r.Phase == arena.PhaseAwaiting || g.Status == arena.StatusCompleted {
						b.Fatal("the benchmark's game ran out of arguments")
					}
					var err error
					g, err = players.Argue(ctx, arena.ArgueParams{GameID: g.ID, RoundID: r.ID, AgentID: tracks(r)[len(r.ArguedThisPhase())], Text: "Every life counts."})
					if err != nil {
						b.Fatal(err)
					}
					for seen := 0; seen < k; {
						if <-versions == g.Version {
							seen++
						}
					}
					for range k {
						res, err := http.Get(fmt.Sprintf("%s/api/games/%s/state?min_version=%d", srv, g.ID, g.Version))
						if err != nil {
							b.Fatal(err)
						}
						res.Body.Close()
					}
					if g.Current().Phase == arena.PhaseAwaiting {
						b.StopTimer()
						if g, err = players.Decide(ctx, arena.DecideParams{GameID: g.ID, RoundID: r.ID, AgentID: r.Operator, Decision: arena.SaveMajority}); err != nil {
							b.Fatal(err)
						}
						if g.Status == arena.StatusCompleted {
							b.Fatal("the benchmark's game completed: run fewer ops")
						}
						for seen := 0; seen < k; {
							if <-versions == g.Version {
								seen++
							}
						}
						b.StartTimer()
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(counted.reads.Load()-reads)/float64(b.N), "reads/op")
			})
		}
	}
}

// serveArenaB is serveArena for a benchmark; it returns the server's URL.
func serveArenaB(b *testing.B, svc *arena.Service) string {
	srv := httptest.NewServer(arenaMux(svc))
	b.Cleanup(srv.Close)
	return srv.URL
}
