package observe

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
)

// Services is the Observer of every domain's Service: give it to each
// with identity.WithObserver, slots.WithObserver, prism.WithObserver, arena.WithObserver,
// discussion.WithObserver and agentchat.WithObserver. Each service call is
// a span named after the method ("slots.Take"), a child of the request's
// span and the parent of the store calls' spans, when the call's context
// holds a recording span (a sweeper's calls start no trace); and the
// domains' events are counted: Prism layers advanced and flags raised,
// arena actions and games entering each status, long polls open.
type Services struct {
	m      *Metrics     // nil: no metrics
	tracer trace.Tracer // nil: no spans
	// opts holds each operation's span start options (its attribute),
	// made at its first call: a []trace.SpanStartOption by op name.
	opts sync.Map
}

var (
	_ identity.Observer   = (*Services)(nil)
	_ slots.Observer      = (*Services)(nil)
	_ prism.Observer      = (*Services)(nil)
	_ arena.Observer      = (*Services)(nil)
	_ discussion.Observer = (*Services)(nil)
	_ agentchat.Observer  = (*Services)(nil)
)

// NewServices returns the services' observer, recording on m when it is
// not nil and starting spans from tp when it is not nil.
func NewServices(m *Metrics, tp trace.TracerProvider) *Services {
	o := &Services{m: m}
	if tp != nil {
		o.tracer = tp.Tracer(tracerName)
	}
	return o
}

// Call implements the domains' Observer.Call: a span named op, under the
// request's, that the call ends with the error it returns (endCall).
func (o *Services) Call(ctx context.Context, op string) (context.Context, func(error)) {
	if o.tracer == nil || !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, endNothing
	}
	ctx, span := o.tracer.Start(ctx, op, o.spanOpts(op)...)
	return ctx, func(err error) { endCall(span, op, err) }
}

// endCall ends a service call's span with the call's outcome. A failure
// sets agora.error.code, the code the error answers with on the HTTP API
// ("claim_not_found", "insufficient_scope", "internal", …) or "canceled" when the
// caller went away. A server-side failure (the store unavailable, a
// deadline passed, an error the API answers 500 or 503) is also the span's
// status Error and an exception event, both naming the operation and the
// code, never the error's message, which may hold values. A client's error
// (4xx, or its own cancellation) leaves the status unset, as OpenTelemetry's
// conventions have it for a server's 4xx.
func endCall(span trace.Span, op string, err error) {
	if err != nil {
		code, server := errorClass(err)
		span.SetAttributes(attribute.String("agora.error.code", code))
		if server {
			f := failure{op: op, class: code}
			span.SetStatus(codes.Error, f.Error())
			span.RecordError(f)
		}
	}
	span.End()
}

// errorClass returns err's code and whether it is the server's failure
// rather than the client's, as the HTTP API's one error table
// (httpjson.Describe) answers it: unknown or 5xx is the server's. A
// context canceled (not past its deadline) is the caller's leaving, which
// the table answers 503 only because the caller is no longer there to read
// a 4xx.
func errorClass(err error) (code string, server bool) {
	if errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return "canceled", false
	}
	status, d, known := httpjson.Describe(err)
	return d.Code, !known || status >= http.StatusInternalServerError
}

// spanOpts returns op's span start options, made once per operation: the
// set of operations is the services' methods, bounded.
func (o *Services) spanOpts(op string) []trace.SpanStartOption {
	if v, ok := o.opts.Load(op); ok {
		return v.([]trace.SpanStartOption)
	}
	v, _ := o.opts.LoadOrStore(op, []trace.SpanStartOption{trace.WithAttributes(attribute.String("agora.service.operation", op))})
	return v.([]trace.SpanStartOption)
}

func nothing() {}

func endNothing(error) {}

// LayerAdvanced implements prism.Observer: agora_prism_layers_advanced_total.
func (o *Services) LayerAdvanced(context.Context, prism.Pipeline, int) {
	if o.m != nil {
		o.m.layersAdvanced.Inc()
	}
}

// FlagRaised implements prism.Observer: agora_prism_flags_raised_total by
// the flag's reason.
func (o *Services) FlagRaised(_ context.Context, f prism.Flag) {
	if o.m != nil {
		o.m.flagsRaised.WithLabelValues(f.Reason).Inc()
	}
}

// ArenaAction implements arena.Observer: agora_arena_actions_total.
func (o *Services) ArenaAction(_ context.Context, action string) {
	if o.m != nil {
		o.m.arenaActions.WithLabelValues(action).Inc()
	}
}

// GameEntered implements arena.Observer: agora_arena_games_total.
func (o *Services) GameEntered(_ context.Context, status arena.Status) {
	if o.m != nil {
		o.m.arenaGames.WithLabelValues(string(status)).Inc()
	}
}

// LongPoll implements arena.Observer and discussion.Observer:
// agora_long_polls_open.
func (o *Services) LongPoll(context.Context) func() {
	if o.m == nil {
		return nothing
	}
	o.m.longPolls.Inc()
	return o.m.longPolls.Dec
}
