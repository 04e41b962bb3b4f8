package observe

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/agorahq/agora/internal/httpjson"
)

// RequestIDHeader is the header a request ID is read from and answered in.
const RequestIDHeader = "X-Request-Id"

// StatusClientClosed is the status Handler logs, counts and sets on the
// span of a request whose context was canceled before it was answered and
// whose handler then failed: its client went away, or a server shutting
// down ended its long poll. It is nginx's "client closed request", so that
// an agent hanging up is not counted a server error.
const StatusClientClosed = 499

// HTTPOptions says what Handler does; its zero value does nothing but give
// each request an ID.
type HTTPOptions struct {
	// Log receives one line per request ("request"), and for an event
	// stream one when it starts ("stream start") and one when it ends
	// ("stream end"); nil logs nothing. Wrap its handler in LogHandler so
	// that the handlers' own lines carry the request ID too (NewLogger
	// does).
	Log *slog.Logger
	// Level is the level of the lines of answers below 500 (default
	// slog.LevelInfo); a 5xx answer's line is logged at slog.LevelError,
	// unless its client had gone (StatusClientClosed).
	Level slog.Level
	// SampleOK, when above 1, logs only one in SampleOK lines of answers
	// below 400; every 4xx and 5xx line is logged.
	SampleOK uint64
	// Metrics, when not nil, counts requests by route pattern, method and
	// status, times them, and counts open event streams.
	Metrics *Metrics
	// Tracer, when not nil, starts a server span per request, named
	// "METHOD pattern" once the route is known, continuing the trace of an
	// incoming traceparent header. Its sampler decides which requests are
	// recorded: an unsampled request costs a few allocations, and the
	// service and store calls under it start no span.
	Tracer trace.TracerProvider
}

// Handler wraps next, a host's whole handler, with the request log, the
// HTTP metrics and the request spans of o. Every request gets an ID: the
// X-Request-Id it was sent with when that is 1 to 128 printable ASCII
// characters, else a new one; it is answered in X-Request-Id and is in
// the request's context (RequestID), whence LogHandler adds it to every
// line logged with that context.
//
// The route is the pattern of the httpapi route that served the request
// ("POST /api/v1/claims/{claimId}/slots/{slotId}/take"), else the pattern
// of the ServeMux next routed it by, else "unmatched": never the raw path,
// whose IDs would make a metric's labels unbounded.
func Handler(next http.Handler, o HTTPOptions) http.Handler {
	h := &handler{next: next, o: o, prefix: newIDPrefix(), base: time.Now()}
	if o.Metrics != nil {
		h.series = newHTTPSeries(o.Metrics)
	}
	if o.Tracer != nil {
		h.tracer = o.Tracer.Tracer(tracerName)
		h.propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	return h
}

type handler struct {
	next       http.Handler
	o          HTTPOptions
	series     *httpSeries  // nil: no metrics
	tracer     trace.Tracer // nil: no spans
	propagator propagation.TextMapPropagator
	prefix     string        // of generated request IDs: random per handler
	seq        atomic.Uint64 // of generated request IDs
	lines      atomic.Uint64 // sampling counter
	// base anchors the requests' clock: time.Since(base) reads the
	// monotonic clock alone, where time.Now reads the wall clock too.
	base time.Time
}

// newIDPrefix returns 8 random hex digits.
func newIDPrefix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// requestID returns the request's ID: the one it was sent with, or a new
// one written into buf, which holds it from then on (never written again):
// the prefix, a dash and the sequence number in base 36, at most 8+1+13
// bytes, as a string that shares buf's memory rather than copying it.
func (h *handler) requestID(r *http.Request, buf *[idLen]byte) string {
	if id := r.Header.Get(RequestIDHeader); validRequestID(id) {
		return id
	}
	id := strconv.AppendUint(append(append(buf[:0], h.prefix...), '-'), h.seq.Add(1), 36)
	return unsafe.String(&buf[0], len(id))
}

// idLen bounds a generated request ID: 8 hex digits, a dash, and a uint64
// in base 36 (13 digits).
const idLen = 8 + 1 + 13

// validRequestID allows 1 to 128 printable ASCII characters without
// spaces: what can go into a log line and a header as it is.
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Since(h.base)
	outer := r.Context()
	// One allocation holds the recorder, the request ID and its header
	// value, and the context carrying what the handlers report.
	rec := &recorder{ResponseWriter: w, h: h, outer: outer, start: start}
	id := h.requestID(r, &rec.idBuf)
	rec.idHeader[0] = id
	w.Header()[RequestIDHeader] = rec.idHeader[:] // RequestIDHeader is canonical
	info := &rec.scope.Info
	info.RequestID = id
	rec.scope.Context = outer
	var span trace.Span
	if h.tracer != nil {
		ctx := outer
		// The propagators look their headers up by a name they
		// canonicalise anew each time (an allocation each): skipped when
		// the request sent neither, as most do.
		if len(r.Header["Traceparent"]) > 0 || len(r.Header["Baggage"]) > 0 {
			ctx = h.propagator.Extract(outer, propagation.HeaderCarrier(r.Header))
		}
		rec.scope.Context, span = h.tracer.Start(ctx, "http", serverSpan...)
	}
	ctx := context.Context(&rec.scope)
	r = r.WithContext(ctx)
	rec.r = r
	defer func() {
		if rec.stream && h.series != nil {
			h.o.Metrics.streamsOpen.Dec()
		}
	}()
	if span != nil {
		defer span.End()
	}
	h.next.ServeHTTP(rec, r)

	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	if status >= 500 && errors.Is(outer.Err(), context.Canceled) {
		// The client left before its answer: the handler's 503 went to
		// no one, and it is no failure of the server's.
		status = StatusClientClosed
	}
	route := rec.route()
	took := time.Since(h.base) - start
	if h.series != nil {
		h.series.observe(route, r.Method, status, took, rec.stream)
	}
	if span != nil && span.IsRecording() {
		span.SetName(spanName(r.Method, route))
		// One SetAttributes: the span grows its list once.
		kvs := [4]attribute.KeyValue{attribute.String("http.request.method", r.Method), attribute.String("http.route", route),
			attribute.Int("http.response.status_code", status)}
		n := 3
		if info.KeyID != "" {
			kvs[n] = attribute.String("agora.key_id", info.KeyID)
			n++
		}
		span.SetAttributes(kvs[:n]...)
		if status >= 500 {
			span.SetStatus(codes.Error, "")
		}
	}
	if h.o.Log == nil {
		return
	}
	msg := "request"
	if rec.stream {
		msg = "stream end"
	}
	if status < 400 && h.o.SampleOK > 1 && !rec.stream && h.lines.Add(1)%h.o.SampleOK != 0 {
		return
	}
	level := h.o.Level
	if status >= 500 {
		level = slog.LevelError
	}
	h.log(outer, level, msg, r, rec, route, status, took)
}

// log writes one line of the request. It is logged with the context the
// request came with, not the one carrying the request ID, so that a
// LogHandler does not add that ID a second time.
func (h *handler) log(ctx context.Context, level slog.Level, msg string, r *http.Request, rec *recorder, route string, status int, took time.Duration) {
	if !h.o.Log.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, 9)
	attrs = append(attrs,
		slog.String("method", r.Method),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(took.Microseconds())/1000),
		slog.Int64("bytes", rec.bytes),
		slog.String("request_id", rec.scope.Info.RequestID),
	)
	if rec.scope.Info.KeyID != "" {
		attrs = append(attrs, slog.String("key_id", rec.scope.Info.KeyID))
	}
	if sc := trace.SpanContextFromContext(r.Context()); sc.HasTraceID() {
		attrs = append(attrs, slog.String("trace_id", sc.TraceID().String()))
	}
	h.o.Log.LogAttrs(ctx, level, msg, attrs...)
}

// spanName is the request span's name, "METHOD pattern": the route
// itself when it starts with the method already, as httpapi's do.
func spanName(method, route string) string {
	if rest, ok := strings.CutPrefix(route, method); ok && strings.HasPrefix(rest, " ") {
		return route
	}
	return method + " " + route
}

// serverSpan is the request span's start option, made once.
var serverSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}

// statusCodes are the code label's values, made once.
var statusCodes = func() (s [600]string) {
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

func statusCode(status int) string {
	if status >= 0 && status < len(statusCodes) {
		return statusCodes[status]
	}
	return strconv.Itoa(status)
}

// recorder is the ResponseWriter next writes to: it keeps the status and
// the bytes written, and notices an event stream starting.
type recorder struct {
	http.ResponseWriter
	h      *handler
	outer  context.Context // the request's own, without the request ID
	r      *http.Request
	scope  httpjson.Scope // the request's context: outer, the span, the RequestInfo
	start  time.Duration  // since h.base
	status int
	bytes  int64
	stream bool
	// idHeader is the X-Request-Id header's value, kept here so that
	// setting it allocates nothing more; idBuf holds a generated ID's bytes.
	idHeader [1]string
	idBuf    [idLen]byte
}

func (rec *recorder) route() string {
	switch {
	case rec.scope.Info.Pattern != "":
		return rec.scope.Info.Pattern
	case rec.r.Pattern != "":
		return rec.r.Pattern
	}
	return httpjson.Unmatched
}

// WriteHeader implements http.ResponseWriter.
func (rec *recorder) WriteHeader(status int) {
	if rec.status == 0 && status >= 200 {
		rec.status = status
		if status == http.StatusOK && rec.r.Method != http.MethodHead &&
			strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
			rec.stream = true
			if rec.h.series != nil {
				rec.h.o.Metrics.streamsOpen.Inc()
			}
			if rec.h.o.Log != nil {
				rec.h.log(rec.outer, rec.h.o.Level, "stream start", rec.r, rec, rec.route(), status, time.Since(rec.h.base)-rec.start)
			}
		}
	}
	rec.ResponseWriter.WriteHeader(status)
}

// Write implements http.ResponseWriter.
func (rec *recorder) Write(p []byte) (int, error) {
	if rec.status == 0 {
		rec.WriteHeader(http.StatusOK)
	}
	n, err := rec.ResponseWriter.Write(p)
	rec.bytes += int64(n)
	return n, err
}

// Flush implements http.Flusher.
func (rec *recorder) Flush() {
	if rec.status == 0 {
		rec.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(rec.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection's deadlines.
func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }
