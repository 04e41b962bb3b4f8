package observe_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/observe"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/memstore"
)

func attrs(kvs []attribute.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		out[string(kv.Key)] = kv.Value.String()
	}
	return out
}

func TestSpans(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	wrap, mem := observe.NewStores("memory", nil, tp), memstore.New()
	svc := slots.New(wrap.Slots(mem), slots.WithObserver(observe.NewServices(nil, tp)))
	ids := identity.New(wrap.Identity(mem), identity.WithAdminKey(adminKey), identity.WithScopes(httpapi.Scopes()))
	h := observe.Handler(httpapi.Slots(svc, ids), observe.HTTPOptions{Tracer: tp})

	// The caller's trace goes on: the request's span is a child of the
	// traceparent sent, the service call's a child of the request's, the
	// store's spans children of the service call's.
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	w := do(h, "GET", "/api/v1/claims/c-missing", "", "Authorization", "Bearer "+adminKey, "traceparent", parent)
	require.Equal(t, http.StatusNotFound, w.Code)

	spans := exp.GetSpans()
	byName := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	req, ok := byName["GET /api/v1/claims/{claimId}"]
	require.True(t, ok, "the request's span is named after its route: %v", spanNames(spans))
	require.Equal(t, trace.SpanKindServer, req.SpanKind)
	require.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", req.SpanContext.TraceID().String())
	require.Equal(t, "00f067aa0ba902b7", req.Parent.SpanID().String())
	ra := attrs(req.Attributes)
	require.Equal(t, "GET /api/v1/claims/{claimId}", ra["http.route"])
	require.Equal(t, "admin", ra["agora.key_id"])
	require.Equal(t, "404", ra["http.response.status_code"])
	require.Equal(t, "GET", ra["http.request.method"])

	call, ok := byName["slots.Claim"]
	require.True(t, ok, "a span per service call: %v", spanNames(spans))
	require.Equal(t, req.SpanContext.SpanID(), call.Parent.SpanID(), "the service call is the request's child")
	require.Equal(t, req.SpanContext.TraceID(), call.SpanContext.TraceID())
	require.Equal(t, map[string]string{"agora.service.operation": "slots.Claim", "agora.error.code": "claim_not_found"}, attrs(call.Attributes),
		"the error's code, as the answer has it")
	require.Equal(t, codes.Unset, call.Status.Code, "a client's error")

	get, ok := byName["store.GetClaim"]
	require.True(t, ok, "a span per store call: %v", spanNames(spans))
	require.Equal(t, call.SpanContext.SpanID(), get.Parent.SpanID(), "the store call is the service call's child")
	require.Equal(t, req.SpanContext.TraceID(), get.SpanContext.TraceID())
	ga := attrs(get.Attributes)
	require.Equal(t, map[string]string{"agora.store.backend": "memory", "agora.store.operation": "GetClaim", "agora.store.result": "not_found"}, ga,
		"the operation's name and result, never a value")
	require.Empty(t, get.Events, "no error message (it may hold values) is recorded")
}

func spanNames(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

func TestTracerProviderFromEnv(t *testing.T) {
	// Not parallel: it sets the process's environment.
	ctx := context.Background()
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	tp, err := observe.TracerProviderFromEnv(ctx, "agora", nil)
	require.NoError(t, err)
	require.Nil(t, tp)

	t.Setenv("OTEL_TRACES_EXPORTER", "console")
	t.Setenv("OTEL_SERVICE_NAME", "agora-test")
	var out bytes.Buffer
	tp, err = observe.TracerProviderFromEnv(ctx, "agora", &out)
	require.NoError(t, err)
	_, span := tp.Tracer("t").Start(ctx, "hello")
	span.End()
	require.NoError(t, tp.Shutdown(ctx))
	require.Contains(t, out.String(), `"Name":"hello"`)
	require.Contains(t, out.String(), "agora-test")

	for _, proto := range []string{"grpc", "http/protobuf"} {
		t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
		t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", proto)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1") // nothing is sent: no span is made
		tp, err = observe.TracerProviderFromEnv(ctx, "agora", nil)
		require.NoError(t, err, proto)
		require.NotNil(t, tp)
		sctx, cancel := context.WithTimeout(ctx, 0)
		_ = tp.Shutdown(sctx)
		cancel()
	}
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "carrier-pigeon")
	_, err = observe.TracerProviderFromEnv(ctx, "agora", nil)
	require.Error(t, err)
	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	_, err = observe.TracerProviderFromEnv(ctx, "agora", nil)
	require.Error(t, err)
}

// TestNoSpanOutsideATrace: a service or store call whose context holds
// no recording span (a sweeper's, every second) starts no trace of its own.
func TestNoSpanOutsideATrace(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	svc := slots.New(observe.NewStores("memory", nil, tp).Slots(memstore.New()), slots.WithObserver(observe.NewServices(nil, tp)))
	_, err := svc.Sweep(context.Background())
	require.NoError(t, err)
	require.Empty(t, exp.GetSpans())
}

// TestServiceSpanStatus: a service call's span is an error only when the
// call failed on the server's side (its store unavailable or failing), with
// an exception event naming the operation and the error's code and no
// message; the store call's span under it is marked the same way, naming
// the store's operation. A success leaves it unset; a client's error (an
// invalid claim refused before any store call, a claim not found) leaves
// the status unset and sets agora.error.code, as a server span leaves a
// 4xx.
func TestServiceSpanStatus(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	wrap := observe.NewStores("memory", nil, tp)
	down := downStore{memstore.New()}
	svc := slots.New(wrap.Slots(down), slots.WithObserver(observe.NewServices(nil, tp)))

	// call runs fn under a request's span and returns the spans it ended,
	// by name.
	call := func(fn func(ctx context.Context) error) (map[string]tracetest.SpanStub, error) {
		exp.Reset()
		ctx, req := tp.Tracer("test").Start(context.Background(), "request", trace.WithSpanKind(trace.SpanKindServer))
		err := fn(ctx)
		req.End()
		out := map[string]tracetest.SpanStub{}
		for _, s := range exp.GetSpans() {
			out[s.Name] = s
		}
		return out, err
	}
	unset := func(t *testing.T, spans map[string]tracetest.SpanStub, name string) tracetest.SpanStub {
		t.Helper()
		s, ok := spans[name]
		require.True(t, ok, "%s: %v", name, spanNames(exp.GetSpans()))
		require.Equal(t, codes.Unset, s.Status.Code, s.Name)
		require.Empty(t, s.Events, s.Name)
		return s
	}

	var claim slots.Claim
	spans, err := call(func(ctx context.Context) (err error) {
		claim, err = svc.CreateClaim(ctx, slots.NewClaim{Title: "t", Body: "b"})
		return err
	})
	require.NoError(t, err)
	s := unset(t, spans, "slots.CreateClaim")
	require.Equal(t, map[string]string{"agora.service.operation": "slots.CreateClaim"}, attrs(s.Attributes), "a success has no error code")
	unset(t, spans, "store.CreateClaim")

	spans, err = call(func(ctx context.Context) error {
		_, err := svc.CreateClaim(ctx, slots.NewClaim{})
		return err
	})
	require.ErrorIs(t, err, store.ErrInvalid)
	s = unset(t, spans, "slots.CreateClaim")
	require.Equal(t, "invalid_title", attrs(s.Attributes)["agora.error.code"])
	require.Equal(t, []string{"slots.CreateClaim", "request"}, spanNames(exp.GetSpans()), "refused before any store call")

	spans, err = call(func(ctx context.Context) error {
		_, err := svc.Slots(ctx, "claim-missing")
		return err
	})
	require.ErrorIs(t, err, store.ErrNotFound)
	s = unset(t, spans, "slots.Slots")
	require.Equal(t, "claim_not_found", attrs(s.Attributes)["agora.error.code"])
	s = unset(t, spans, "store.ListSlots")
	require.Equal(t, "not_found", attrs(s.Attributes)["agora.store.result"])

	spans, err = call(func(ctx context.Context) error {
		_, err := svc.Claim(ctx, claim.ID)
		return err
	})
	require.ErrorIs(t, err, store.ErrUnavailable)
	for name, msg := range map[string]string{"slots.Claim": "slots.Claim: unavailable", "store.GetClaim": "store.GetClaim: unavailable"} {
		failed(t, spans, name, msg)
	}
	require.Equal(t, "unavailable", attrs(spans["slots.Claim"].Attributes)["agora.error.code"])
	unset(t, spans, "request") // a server span's status is the HTTP handler's to set
}

// failed checks that spans holds the span name, marked as failed with
// status Error and one exception event, both saying msg alone.
func failed(t *testing.T, spans map[string]tracetest.SpanStub, name, msg string) {
	t.Helper()
	s, ok := spans[name]
	require.True(t, ok, name)
	require.Equal(t, codes.Error, s.Status.Code, name)
	require.Equal(t, msg, s.Status.Description, name)
	require.Len(t, s.Events, 1, name)
	require.Equal(t, "exception", s.Events[0].Name)
	require.Equal(t, msg, attrs(s.Events[0].Attributes)["exception.message"], "no message of the error's, which may hold values")
}

// TestServiceCallOutcome: the end of a service call classes the error it
// is given as the HTTP API's error table answers it: a 5xx or an error the
// table does not know is the server's failure; a 4xx, or the caller's own
// cancellation, is not.
func TestServiceCallOutcome(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	obs := observe.NewServices(nil, tp)
	for _, tc := range []struct {
		name   string
		err    error
		code   string
		server bool
	}{
		{"a bug", errors.New("index 42 out of range for key k_secret"), "internal", true},
		{"a deadline", fmt.Errorf("reading: %w", context.DeadlineExceeded), "unavailable", true},
		{"the store down", store.Errorf(store.ErrUnavailable, "unavailable", "dial 10.0.0.9"), "unavailable", true},
		{"the caller gone", fmt.Errorf("waiting: %w", context.Canceled), "canceled", false},
		{"a refusal", store.Errorf(store.ErrForbidden, "insufficient_scope", "needs keys:admin"), "insufficient_scope", false},
		{"a lost race", slots.ErrSlotTaken, "slot_taken", false},
		{"a rate limit", &httpjson.RateLimited{RetryAfter: time.Second}, "rate_limited", false},
		{"a bad key", identity.ErrUnauthenticated, "invalid_api_key", false},
	} {
		exp.Reset()
		ctx, req := tp.Tracer("test").Start(context.Background(), "request")
		_, end := obs.Call(ctx, "test.Op")
		end(tc.err)
		req.End()
		spans := map[string]tracetest.SpanStub{}
		for _, s := range exp.GetSpans() {
			spans[s.Name] = s
		}
		s := spans["test.Op"]
		require.Equal(t, tc.code, attrs(s.Attributes)["agora.error.code"], tc.name)
		if tc.server {
			failed(t, spans, "test.Op", "test.Op: "+tc.code)
			continue
		}
		require.Equal(t, codes.Unset, s.Status.Code, tc.name)
		require.Empty(t, s.Events, tc.name)
	}
}

// takeDownStore is a memory store whose batched takes fail as a database
// that is down does; the first holds until release is closed, so that the
// callers behind it queue into one batch.
type takeDownStore struct {
	*memstore.Store
	release  chan struct{}
	calls    atomic.Int64
	maxBatch atomic.Int64
}

func (s *takeDownStore) TakeNextSlots(_ context.Context, ps []slots.TakeNextParams) ([]slots.JobResult, error) {
	if s.calls.Add(1) == 1 {
		<-s.release
	}
	for n := int64(len(ps)); ; {
		m := s.maxBatch.Load()
		if n <= m || s.maxBatch.CompareAndSwap(m, n) {
			break
		}
	}
	return nil, store.Errorf(store.ErrUnavailable, "unavailable", "dial tcp 10.0.0.9:5432: connection refused")
}

// TestBatchedTakeFailureMarksEveryCaller: one store call answers a batch
// of TakeNext calls under the span of the call that wrote it, and when it
// fails, every caller's service span is marked, not only that one's.
func TestBatchedTakeFailureMarksEveryCaller(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	started := &startCounter{name: "slots.TakeNext"}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSpanProcessor(started))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	down := &takeDownStore{Store: memstore.New(), release: make(chan struct{})}
	svc := slots.New(observe.NewStores("memory", nil, tp).Slots(down), slots.WithObserver(observe.NewServices(nil, tp)),
		slots.WithTakeBatching(0), slots.WithBatchFlushers(1))

	const callers = 8
	errs := make(chan error, callers)
	for i := range callers {
		go func() {
			ctx, req := tp.Tracer("test").Start(context.Background(), "request", trace.WithSpanKind(trace.SpanKindServer))
			defer req.End()
			_, err := svc.TakeNext(identity.WithKey(ctx, identity.Key{ID: fmt.Sprint("key-", i)}), slots.JobQuery{})
			errs <- err
		}()
	}
	// The first caller's batch holds in the store while the others start
	// their calls and queue behind it.
	require.Eventually(t, func() bool { return started.n.Load() == callers }, 10*time.Second, time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	close(down.release)
	for range callers {
		require.ErrorIs(t, <-errs, store.ErrUnavailable)
	}
	require.Greater(t, down.maxBatch.Load(), int64(1), "some callers shared a batch")

	var calls, stores int
	for _, s := range exp.GetSpans() {
		switch s.Name {
		case "slots.TakeNext":
			calls++
			failed(t, map[string]tracetest.SpanStub{s.Name: s}, s.Name, "slots.TakeNext: unavailable")
		case "store.TakeNextSlots":
			stores++
			failed(t, map[string]tracetest.SpanStub{s.Name: s}, s.Name, "store.TakeNextSlots: unavailable")
		}
	}
	require.Equal(t, callers, calls)
	require.Less(t, stores, callers, "fewer store calls than callers: batched")
}

// startCounter counts the spans of one name started.
type startCounter struct {
	name string
	n    atomic.Int64
}

func (c *startCounter) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) {
	if s.Name() == c.name {
		c.n.Add(1)
	}
}
func (*startCounter) OnEnd(sdktrace.ReadOnlySpan)      {}
func (*startCounter) Shutdown(context.Context) error   { return nil }
func (*startCounter) ForceFlush(context.Context) error { return nil }
