package observe

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

//go:generate go run gen_stores.go

// tracerName names the spans' instrumentation scope.
const tracerName = "github.com/agorahq/agora/observe"

// Stores wraps the stores of one backend so that every call is counted
// (agora_store_calls_total) and a random sample timed
// (agora_store_call_duration_seconds, WithStoreTiming), is a
// span named "store.<Operation>" under the request's (its attributes the
// backend, the operation and the result class, never a value) when the
// call's context holds a recording span — a sweeper's calls, outside any
// request, start no trace of their own every second; a call that fails on
// the server's side marks its span as an error — and, for the job queue,
// counts seats taken and done, races lost and batch sizes. A
// wrapped store behaves exactly as the store it wraps: same results, same
// errors.
type Stores struct {
	o *observer
}

// NewStores returns the wrappers of backend (the label value: memory,
// postgres, redis), recording on m when it is not nil and starting spans
// from tp when it is not nil.
func NewStores(backend string, m *Metrics, tp trace.TracerProvider) Stores {
	o := &observer{backend: backend, m: m, base: time.Now()}
	if tp != nil {
		o.tracer = tp.Tracer(tracerName)
	}
	if m != nil {
		o.taken = m.seatsTaken.WithLabelValues(backend)
		o.done = m.seatsDone.WithLabelValues(backend)
		o.lost = m.racesLost.WithLabelValues(backend)
	}
	return Stores{o: o}
}

// Slots wraps s. With metrics, the wrapped store is also the one whose
// job queue agora_job_seats_open counts for this backend at each scrape
// (the last one wrapped, when a backend's slots store is wrapped twice).
func (w Stores) Slots(s slots.Store) slots.Store {
	ws := slotsStore{next: s, o: w.o, ops: w.o.bind(slotsOps)}
	if w.o.m != nil {
		w.o.m.openSeats.watch(w.o.backend, ws)
	}
	return ws
}

// Identity wraps s.
func (w Stores) Identity(s identity.Store) identity.Store {
	return identityStore{next: s, o: w.o, ops: w.o.bind(identityOps)}
}

// Prism wraps s.
func (w Stores) Prism(s prism.Store) prism.Store {
	return prismStore{next: s, o: w.o, ops: w.o.bind(prismOps)}
}

// Arena wraps s.
func (w Stores) Arena(s arena.Store) arena.Store {
	return arenaStore{next: s, o: w.o, ops: w.o.bind(arenaOps)}
}

// Discussion wraps s.
func (w Stores) Discussion(s discussion.Store) discussion.Store {
	return discussionStore{next: s, o: w.o, ops: w.o.bind(discussionOps)}
}

// AgentChat wraps s.
func (w Stores) AgentChat(s agentchat.Store) agentchat.Store {
	return agentchatStore{next: s, o: w.o, ops: w.o.bind(agentchatOps)}
}

type (
	slotsStore struct {
		next slots.Store
		o    *observer
		ops  []opStat
	}
	identityStore struct {
		next identity.Store
		o    *observer
		ops  []opStat
	}
	prismStore struct {
		next prism.Store
		o    *observer
		ops  []opStat
	}
	arenaStore struct {
		next arena.Store
		o    *observer
		ops  []opStat
	}
	discussionStore struct {
		next discussion.Store
		o    *observer
		ops  []opStat
	}
	agentchatStore struct {
		next agentchat.Store
		o    *observer
		ops  []opStat
	}
)

var (
	_ slots.Store      = slotsStore{}
	_ identity.Store   = identityStore{}
	_ prism.Store      = prismStore{}
	_ arena.Store      = arenaStore{}
	_ discussion.Store = discussionStore{}
	_ agentchat.Store  = agentchatStore{}
	_ store.Parallel   = slotsStore{}
	_ store.Parallel   = identityStore{}
)

// Parallelism implements store.Parallel as the wrapped store does, so
// the Service on a wrapped store batches as it would on the store.
func (s slotsStore) Parallelism() int { return store.ParallelismOf(s.next) }

// Parallelism implements store.Parallel as the wrapped store does.
func (s identityStore) Parallelism() int { return store.ParallelismOf(s.next) }

// observer records the calls of one backend's stores.
type observer struct {
	backend           string
	m                 *Metrics     // nil: no metrics
	tracer            trace.Tracer // nil: no spans
	taken, done, lost prometheus.Counter
	runs              sync.Map // agent-chat conversation ID -> time.Time its run started
	// base anchors the calls' clock: time.Since(base) reads the monotonic
	// clock alone, where time.Now reads the wall clock too.
	base time.Time
}

// opStat is one operation's span name and, with metrics, its
// pre-resolved series: the hot path looks no label up.
type opStat struct {
	name string
	span string
	// spanOpts start the operation's span: its kind and constant
	// attributes, made once rather than per call.
	spanOpts []trace.SpanStartOption
	ok       prometheus.Counter
	took     prometheus.Observer
	// batch observes the item count of a batched job-queue call.
	batch prometheus.Observer
}

// batched names the job queue's batched operations: their item counts are
// agora_job_batch_size.
var batched = map[string]bool{"TakeNextSlots": true, "FinishSlots": true, "FinishAndTakeNextSlots": true}

func (o *observer) bind(names []string) []opStat {
	ops := make([]opStat, len(names))
	for i, n := range names {
		ops[i] = opStat{name: n, span: "store." + n, spanOpts: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("agora.store.backend", o.backend), attribute.String("agora.store.operation", n))}}
		if o.m != nil {
			ops[i].ok = o.m.storeCalls.WithLabelValues(o.backend, n, "ok")
			ops[i].took = o.m.storeDuration.WithLabelValues(o.backend, n)
			if batched[n] {
				ops[i].batch = o.m.batchSize.WithLabelValues(o.backend, n)
			}
		}
	}
	return ops
}

// call is one store call in progress.
type call struct {
	o     *observer
	op    *opStat
	span  trace.Span // nil: not traced
	timed bool
	start time.Duration // since o.base, when timed
}

func (o *observer) start(ctx context.Context, op *opStat) (context.Context, call) {
	c := call{o: o, op: op}
	if o.tracer != nil {
		if trace.SpanFromContext(ctx).IsRecording() {
			ctx, c.span = o.tracer.Start(ctx, op.span, op.spanOpts...)
		}
	}
	// One call in storeTimedOneIn is timed (WithStoreTiming).
	if o.m != nil && (o.m.storeTimedOneIn <= 1 || rand.Uint32()%o.m.storeTimedOneIn == 0) {
		c.timed, c.start = true, time.Since(o.base)
	}
	return ctx, c
}

// end records the call's outcome.
func (c call) end(err error) {
	res := ""
	if c.o.m != nil {
		if c.timed {
			c.op.took.Observe((time.Since(c.o.base) - c.start).Seconds())
		}
		if err == nil {
			c.op.ok.Inc()
		} else {
			res = result(err)
			c.o.m.storeCalls.WithLabelValues(c.o.backend, c.op.name, res).Inc()
		}
	}
	if c.span != nil {
		if err != nil {
			if res == "" {
				res = result(err)
			}
			c.span.SetAttributes(attribute.String("agora.store.result", res))
			if res == "unavailable" || res == "error" {
				c.fail(res)
			}
		}
		c.span.End()
	}
}

// failure is a failed call as its span records it: the operation and the
// error's class or code, never the error's message, which may hold values
// (a statement's, a key's, a user's text).
type failure struct{ op, class string }

func (f failure) Error() string { return f.op + ": " + f.class }

// fail marks the store call's span as failed: status Error and an
// exception event, both naming the operation and the result class. The
// service call above it records its own outcome (Services.Call), whether or
// not it comes from this store call.
func (c call) fail(res string) {
	f := failure{op: c.op.span, class: res}
	c.span.SetStatus(codes.Error, f.Error())
	c.span.RecordError(f)
}

// result classes an error for the result label.
func result(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, store.ErrUnavailable):
		return "unavailable"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	case errors.Is(err, store.ErrNotFound):
		return "not_found"
	case errors.Is(err, store.ErrConflict):
		return "conflict"
	case errors.Is(err, store.ErrInvalid):
		return "invalid"
	case errors.Is(err, store.ErrForbidden), errors.Is(err, store.ErrUnauthorized):
		return "forbidden"
	}
	return "error"
}

// seats counts seats taken and done and races lost.
func (o *observer) slotsMoved(taken, done, lost int) {
	if o.m == nil {
		return
	}
	if taken > 0 {
		o.taken.Add(float64(taken))
	}
	if done > 0 {
		o.done.Add(float64(done))
	}
	if lost > 0 {
		o.lost.Add(float64(lost))
	}
}

// count returns how many of rs are ok.
func count[T any](rs []T, ok func(T) bool) int {
	n := 0
	for _, r := range rs {
		if ok(r) {
			n++
		}
	}
	return n
}

// batch observes the size of a batched call.
func (c call) batch(n int) {
	if c.op.batch != nil {
		c.op.batch.Observe(float64(n))
	}
}

// TakeSlot implements slots.Store; a win is a seat taken, ErrSlotTaken a
// race lost.
func (s slotsStore) TakeSlot(ctx context.Context, p slots.TakeParams) (slots.Slot, error) {
	ctx, c := s.o.start(ctx, &s.ops[opSlotsTakeSlot])
	r, err := s.next.TakeSlot(ctx, p)
	c.end(err)
	switch {
	case err == nil:
		s.o.slotsMoved(1, 0, 0)
	case errors.Is(err, slots.ErrSlotTaken):
		s.o.slotsMoved(0, 0, 1)
	}
	return r, err
}

// TakeNextSlot implements slots.Store; a job is a seat taken.
func (s slotsStore) TakeNextSlot(ctx context.Context, p slots.TakeNextParams) (slots.Job, error) {
	ctx, c := s.o.start(ctx, &s.ops[opSlotsTakeNextSlot])
	r, err := s.next.TakeNextSlot(ctx, p)
	c.end(err)
	if err == nil {
		s.o.slotsMoved(1, 0, 0)
	}
	return r, err
}

// TakeNextSlots implements slots.Store; each job is a seat taken.
func (s slotsStore) TakeNextSlots(ctx context.Context, ps []slots.TakeNextParams) ([]slots.JobResult, error) {
	ctx, c := s.o.start(ctx, &s.ops[opSlotsTakeNextSlots])
	rs, err := s.next.TakeNextSlots(ctx, ps)
	c.end(err)
	c.batch(len(ps))
	s.o.slotsMoved(count(rs, func(r slots.JobResult) bool { return r.Err == nil }), 0, 0)
	return rs, err
}

// FinishSlot implements slots.Store; a success is a seat done.
func (s slotsStore) FinishSlot(ctx context.Context, p slots.FinishParams) (slots.Slot, error) {
	ctx, c := s.o.start(ctx, &s.ops[opSlotsFinishSlot])
	r, err := s.next.FinishSlot(ctx, p)
	c.end(err)
	if err == nil {
		s.o.slotsMoved(0, 1, 0)
	}
	return r, err
}

// FinishSlots implements slots.Store; each success is a seat done.
func (s slotsStore) FinishSlots(ctx context.Context, ps []slots.FinishParams) ([]slots.FinishResult, error) {
	ctx, c := s.o.start(ctx, &s.ops[opSlotsFinishSlots])
	rs, err := s.next.FinishSlots(ctx, ps)
	c.end(err)
	c.batch(len(ps))
	s.o.slotsMoved(0, count(rs, func(r slots.FinishResult) bool { return r.Err == nil }), 0)
	return rs, err
}

// FinishAndTakeNextSlots implements slots.Store; each finish is a seat
// done, each next job a seat taken.
func (s slotsStore) FinishAndTakeNextSlots(ctx context.Context, ps []slots.FinishTakeParams) ([]slots.FinishTakeResult, error) {
	ctx, c := s.o.start(ctx, &s.ops[opSlotsFinishAndTakeNextSlots])
	rs, err := s.next.FinishAndTakeNextSlots(ctx, ps)
	c.end(err)
	c.batch(len(ps))
	s.o.slotsMoved(count(rs, func(r slots.FinishTakeResult) bool { return r.Err == nil && r.NextErr == nil }),
		count(rs, func(r slots.FinishTakeResult) bool { return r.Err == nil }), 0)
	return rs, err
}
