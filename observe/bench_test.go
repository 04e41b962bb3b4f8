package observe_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/observe"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/memstore"
)

// dropExporter takes every span and keeps none: tracing's whole cost but
// the network's.
type dropExporter struct{}

func (dropExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (dropExporter) Shutdown(context.Context) error                             { return nil }

// benchMode is what a take runs with.
type benchMode struct {
	name                 string
	log, metrics, traced bool
	// sampled is the fraction of traces sampled (parentbased_traceidratio),
	// with traced.
	sampled float64
}

var benchModes = []benchMode{
	{"off", false, false, false, 0},
	{"log", true, false, false, 0},
	{"metrics", false, true, false, 0},
	{"log+metrics", true, true, false, 0},
	{"metrics+tracing", false, true, true, 1},
	{"metrics+tracing-1%", false, true, true, 0.01},
	{"log+metrics+tracing", true, true, true, 1},
}

// benchSeat is an open slot and the token of an agent that may take it.
type benchSeat struct{ claimID, slotID, token string }

// takeBench is one chunk's service, handler and seats.
type takeBench struct {
	svc    *slots.Service
	h      http.Handler
	tracer trace.TracerProvider // nil: not traced
	keys   []identity.Key
	seats  []benchSeat
}

// newTakeBench makes a memory store with n open seats on claims of
// slots.MaxSlotsPerConfigure seats, one agent per seat index, observed as
// mode says: a request log to io.Discard and the metrics on a fresh
// registry; spans sampled and dropped.
func newTakeBench(b *testing.B, mode benchMode, n int) *takeBench {
	ctx := context.Background()
	var st slots.Store = memstore.New()
	var m *observe.Metrics
	var tp trace.TracerProvider
	if mode.metrics {
		var err error
		if m, err = observe.NewMetrics(prometheus.NewRegistry()); err != nil {
			b.Fatal(err)
		}
	}
	if mode.traced {
		sdk := sdktrace.NewTracerProvider(sdktrace.WithBatcher(dropExporter{}),
			sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(mode.sampled))))
		b.Cleanup(func() { _ = sdk.Shutdown(ctx) })
		tp = sdk
	}
	if mode.metrics || mode.traced {
		st = observe.NewStores("memory", m, tp).Slots(st)
	}
	ids := identity.New(memstore.New(), identity.WithAdminKey(adminKey), identity.WithScopes(httpapi.Scopes()))
	var opts []slots.Option
	if mode.metrics || mode.traced {
		opts = append(opts, slots.WithObserver(observe.NewServices(m, tp)))
	}
	tb := &takeBench{svc: slots.New(st, opts...), tracer: tp}
	tb.h = httpapi.Slots(tb.svc, ids, httpapi.WithLimiter(nil))
	if mode.log || mode.metrics || mode.traced {
		o := observe.HTTPOptions{Metrics: m, Tracer: tp}
		if mode.log {
			log, err := observe.NewLogger(io.Discard, "json", nil)
			if err != nil {
				b.Fatal(err)
			}
			o.Log = log
		}
		tb.h = observe.Handler(tb.h, o)
	}
	per := slots.MaxSlotsPerConfigure
	tokens := make([]string, per)
	for i := range per {
		k, tok, err := ids.CreateKey(identity.WithKey(ctx, ids.Admin()), identity.NewKey{Name: fmt.Sprint("agent", i), Scopes: []identity.Scope{slots.ScopeCommentCreate}})
		if err != nil {
			b.Fatal(err)
		}
		tb.keys, tokens[i] = append(tb.keys, k), tok
	}
	for len(tb.seats) < n {
		c, err := tb.svc.CreateClaim(ctx, slots.NewClaim{Title: "bench", Body: "bench"})
		if err == nil {
			_, err = tb.svc.AddComment(identity.WithKey(ctx, tb.keys[0]), slots.NewComment{ClaimID: c.ID, Body: "draft", CommentType: string(slots.CommentDraft)})
		}
		if err == nil {
			_, err = tb.svc.ConfigureSlots(ctx, c.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: per}})
		}
		var ss []slots.Slot
		if err == nil {
			ss, err = tb.svc.Slots(ctx, c.ID)
		}
		if err != nil {
			b.Fatal(err)
		}
		for i, s := range ss {
			tb.seats = append(tb.seats, benchSeat{c.ID, s.ID, tokens[i]})
		}
	}
	return tb
}

// BenchmarkTake measures the memory take path, each op winning a different
// open seat: Service.Take (path=service) and the HTTP take route in front
// of it, served in-process (path=http) and over a loopback connection
// kept alive (path=loopback, as a client on the same machine sees it), bare (obs=off), with the request log (a JSON line
// to io.Discard), with the metrics, with both, and with spans too. The
// service path has no request log: its log modes measure nothing more
// than without it, and are left out but for the one with tracing. Compare the
// modes with benchstat (docs/observability.md).
func BenchmarkTake(b *testing.B) {
	const chunk = 20_000
	for _, path := range []string{"service", "http", "loopback"} {
		for _, mode := range benchModes {
			if path == "service" && mode.log && !mode.traced {
				continue // no request log on this path: the same as without
			}
			if path == "service" && mode.sampled > 0 && mode.sampled < 1 {
				continue // the service path's parent span is always sampled
			}
			b.Run("path="+path+"/obs="+mode.name, func(b *testing.B) {
				b.ReportAllocs()
				b.ResetTimer()
				var cpu time.Duration
				for left := b.N; left > 0; {
					n := min(left, chunk)
					left -= n
					b.StopTimer()
					tb := newTakeBench(b, mode, n)
					runtime.GC() // the set-up's garbage is not the work's cost
					b.StartTimer()
					before, _ := testdb.ProcessCPU() // 0 where unmeasured: no cpu-ns/op
					switch path {
					case "service":
						tb.takeService(b, n)
					case "http":
						tb.takeHTTP(b, n)
					case "loopback":
						tb.takeLoopback(b, n)
					}
					after, _ := testdb.ProcessCPU()
					cpu += after - before
				}
				if cpu > 0 {
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}

func (tb *takeBench) takeService(b *testing.B, n int) {
	ctx := context.Background()
	if tb.tracer != nil {
		// As in a request: the store's spans are children of a span.
		var span trace.Span
		ctx, span = tb.tracer.Tracer("bench").Start(ctx, "take")
		defer span.End()
	}
	per := slots.MaxSlotsPerConfigure
	for i, s := range tb.seats[:n] {
		if _, err := tb.svc.Take(identity.WithKey(ctx, tb.keys[i%per]), s.claimID, s.slotID); err != nil {
			b.Fatal(err)
		}
	}
}

func (tb *takeBench) takeHTTP(b *testing.B, n int) {
	for _, s := range tb.seats[:n] {
		r := httptest.NewRequest("POST", "/api/v1/claims/"+s.claimID+"/slots/"+s.slotID+"/take", nil)
		r.Header.Set("Authorization", "Bearer "+s.token)
		w := httptest.NewRecorder()
		tb.h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("take: %d %s", w.Code, w.Body)
		}
	}
}

func (tb *takeBench) takeLoopback(b *testing.B, n int) {
	b.StopTimer()
	srv := httptest.NewServer(tb.h)
	defer srv.Close()
	c := srv.Client()
	b.StartTimer()
	for _, s := range tb.seats[:n] {
		r, err := http.NewRequest("POST", srv.URL+"/api/v1/claims/"+s.claimID+"/slots/"+s.slotID+"/take", nil)
		if err != nil {
			b.Fatal(err)
		}
		r.Header.Set("Authorization", "Bearer "+s.token)
		res, err := c.Do(r)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			b.Fatalf("take: %d", res.StatusCode)
		}
	}
	b.StopTimer()
}

// BenchmarkSDKSpans measures the floor that tracing a take cannot go
// below: the OpenTelemetry SDK's own spans, nested as a traced request
// nests them (the request's, the service call's, the store call's), each
// with one attribute, started and ended with nothing else around them, on
// the tracer provider BenchmarkTake traces with (every span sampled, a
// batch processor, an exporter that drops). Compare its cpu-ns/op with
// what obs=metrics+tracing adds to a take.
func BenchmarkSDKSpans(b *testing.B) {
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("spans=%d", n), func(b *testing.B) {
			sdk := sdktrace.NewTracerProvider(sdktrace.WithBatcher(dropExporter{}))
			b.Cleanup(func() { _ = sdk.Shutdown(context.Background()) })
			tr := sdk.Tracer("bench")
			opts := []trace.SpanStartOption{trace.WithAttributes(attribute.String("agora.store.operation", "TakeSlot"))}
			spans := make([]trace.Span, n)
			b.ReportAllocs()
			runtime.GC()
			before, _ := testdb.ProcessCPU()
			for b.Loop() {
				ctx := context.Background()
				for i := range spans {
					ctx, spans[i] = tr.Start(ctx, "span", opts...)
				}
				for i := len(spans) - 1; i >= 0; i-- {
					spans[i].End()
				}
			}
			if after, _ := testdb.ProcessCPU(); after > before {
				b.ReportMetric(float64((after-before).Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
