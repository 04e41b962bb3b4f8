package observe_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/observe"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/memstore"
)

func attrs(kvs []attribute.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		out[string(kv.Key)] = kv.Value.Emit()
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
	require.Equal(t, map[string]string{"agora.service.operation": "slots.Claim"}, attrs(call.Attributes))

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
// an exception event naming the store operation and the result class and
// no message; a success and a client's error (a claim not found, an
// invalid claim) leave it unset, as a server span leaves a 4xx.
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
	unset := func(t *testing.T, s tracetest.SpanStub) {
		t.Helper()
		require.Equal(t, codes.Unset, s.Status.Code, s.Name)
		require.Empty(t, s.Events, s.Name)
	}

	var claim slots.Claim
	spans, err := call(func(ctx context.Context) (err error) {
		claim, err = svc.CreateClaim(ctx, slots.NewClaim{Title: "t", Body: "b"})
		return err
	})
	require.NoError(t, err)
	unset(t, spans["slots.CreateClaim"])
	unset(t, spans["store.CreateClaim"])

	spans, err = call(func(ctx context.Context) error {
		_, err := svc.CreateClaim(ctx, slots.NewClaim{})
		return err
	})
	require.ErrorIs(t, err, store.ErrInvalid)
	unset(t, spans["slots.CreateClaim"])

	spans, err = call(func(ctx context.Context) error {
		_, err := svc.Slots(ctx, "claim-missing")
		return err
	})
	require.ErrorIs(t, err, store.ErrNotFound)
	unset(t, spans["slots.Slots"])
	unset(t, spans["store.ListSlots"])
	require.Equal(t, "not_found", attrs(spans["store.ListSlots"].Attributes)["agora.store.result"])

	spans, err = call(func(ctx context.Context) error {
		_, err := svc.Claim(ctx, claim.ID)
		return err
	})
	require.ErrorIs(t, err, store.ErrUnavailable)
	for _, name := range []string{"slots.Claim", "store.GetClaim"} {
		s, ok := spans[name]
		require.True(t, ok, "%s: %v", name, spanNames(exp.GetSpans()))
		require.Equal(t, codes.Error, s.Status.Code, name)
		require.Equal(t, "store.GetClaim: unavailable", s.Status.Description, name)
		require.Len(t, s.Events, 1, name)
		ev := attrs(s.Events[0].Attributes)
		require.Equal(t, "exception", s.Events[0].Name)
		require.Equal(t, "store.GetClaim: unavailable", ev["exception.message"], "no message of the store's, which may hold values")
	}
	unset(t, spans["request"]) // a server span's status is the HTTP handler's to set
}
