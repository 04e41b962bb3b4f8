package observe

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics is Agora's set of Prometheus metrics, registered on the host's
// registry by NewMetrics. Handler records the HTTP ones, Stores the store
// and job-queue ones, Services the domains' events. docs/observability.md describes each.
type Metrics struct {
	httpRequests  *prometheus.CounterVec   // route, method, code
	httpDuration  *prometheus.HistogramVec // route, method
	streamsOpen   prometheus.Gauge
	storeCalls    *prometheus.CounterVec   // backend, operation, result
	storeDuration *prometheus.HistogramVec // backend, operation
	seatsTaken    *prometheus.CounterVec   // backend
	seatsDone     *prometheus.CounterVec   // backend
	racesLost     *prometheus.CounterVec   // backend
	batchSize     *prometheus.HistogramVec // backend, operation
	openSeats     *openSeats               // backend, counted at scrape time
	resyncs       *prometheus.CounterVec   // backend
	prompts       *prometheus.CounterVec   // backend, status
	chatRuns      *prometheus.CounterVec   // backend, status
	chatRunTime   *prometheus.HistogramVec // backend, status

	layersAdvanced prometheus.Counter
	flagsRaised    *prometheus.CounterVec // reason
	arenaActions   *prometheus.CounterVec // action
	arenaGames     *prometheus.CounterVec // status
	longPolls      prometheus.Gauge

	// storeTimedOneIn is WithStoreTiming's n.
	storeTimedOneIn uint32
}

// MetricsOption configures NewMetrics.
type MetricsOption func(*Metrics)

// DefaultStoreTiming is how many store calls share one timing unless
// WithStoreTiming says otherwise.
const DefaultStoreTiming = 16

// WithStoreTiming times one store call in n, drawn at random, into
// agora_store_call_duration_seconds, while agora_store_calls_total counts
// every call; n of 1 (or less) times every call. Reading the clock twice
// costs more than a memory store's call itself, and a random sample keeps
// the histogram's buckets and mean at a fraction of the cost; its _count
// and _sum are the sample's. The default is DefaultStoreTiming.
func WithStoreTiming(n int) MetricsOption {
	return func(m *Metrics) { m.storeTimedOneIn = uint32(max(n, 1)) }
}

// httpBuckets reach past the longest long poll (60 s).
var httpBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// storeBuckets start at a memory store's tens of microseconds.
var storeBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10}

// NewMetrics creates Agora's metrics and registers them on reg, which the
// host owns and serves (promhttp.HandlerFor(registry, …)): nothing is
// registered on the global registry. It fails when reg already holds
// metrics of the same names.
func NewMetrics(reg prometheus.Registerer, opts ...MetricsOption) (*Metrics, error) {
	m := &Metrics{
		storeTimedOneIn: DefaultStoreTiming,
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agora_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agora_http_request_duration_seconds",
			Help:    "Time from a request's arrival to the end of its answer, by route pattern and method; event streams are left out.",
			Buckets: httpBuckets,
		}, []string{"route", "method"}),
		streamsOpen: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agora_http_streams_open",
			Help: "Server-sent event streams open now.",
		}),
		storeCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agora_store_calls_total",
			Help: "Store calls, by backend, operation and result: ok, not_found, conflict, invalid, forbidden, unavailable (answered 503), canceled or error.",
		}, []string{"backend", "operation", "result"}),
		storeDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agora_store_call_duration_seconds",
			Help:    "Time one store call took, by backend and operation, of a random sample of the calls (1 in 16 by default; agora_store_calls_total counts them all).",
			Buckets: storeBuckets,
		}, []string{"backend", "operation"}),
		seatsTaken: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agora_job_seats_taken_total",
			Help: "Role slots taken from the job queue, by backend.",
		}, []string{"backend"}),
		seatsDone: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agora_job_seats_done_total",
			Help: "Role slots marked done, by backend.",
		}, []string{"backend"}),
		racesLost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agora_job_races_lost_total",
			Help: "Takes of a named role slot that another agent won first, by backend.",
		}, []string{"backend"}),
		batchSize: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agora_job_batch_size",
			Help:    "Items in one batched store call of the job queue (takes, dones, done-and-take-nexts), by backend and operation.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 9), // 1 … 256, slots.MaxBatch
		}, []string{"backend", "operation"}),
		resyncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agora_notifier_resyncs_total",
			Help: "Times the notifier's listening connection came back after a cut and every live view re-read, by backend.",
		}, []string{"backend"}),
		prompts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agora_discussion_prompts_total",
			Help: "Discussion prompts created (status created) and closed (resolved, timed_out, cancelled), by backend.",
		}, []string{"backend", "status"}),
		chatRuns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agora_agentchat_status_changes_total",
			Help: "Agent-chat conversations moved to a status (running: a run started; idle: it ended; error, cancelled, interrupted), by backend.",
		}, []string{"backend", "status"}),
		chatRunTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agora_agentchat_run_duration_seconds",
			Help:    "How long an agent-chat run lasted, from running to the status it ended with (idle, error, cancelled), by backend.",
			Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600},
		}, []string{"backend", "status"}),
		openSeats: newOpenSeats(),
		layersAdvanced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agora_prism_layers_advanced_total",
			Help: "Prism pipeline layers finished: the pipeline moved on to its next layer or, after its last, completed.",
		}),
		flagsRaised: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agora_prism_flags_raised_total",
			Help: "Flags raised on Prism pipelines (a layer's consensus below its threshold), by reason; a flagged pipeline waits for a reviewer.",
		}, []string{"reason"}),
		arenaActions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agora_arena_actions_total",
			Help: "Arena actions saved, by action: register, start, argue, decide, advance, add_fillers, timeout.",
		}, []string{"action"}),
		arenaGames: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agora_arena_games_total",
			Help: "Arena games that entered a status, by status (waiting_for_agents: created; game_completed: finished).",
		}, []string{"status"}),
		longPolls: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agora_long_polls_open",
			Help: "Long polls waiting now: arena game state and discussion prompts asked with a wait.",
		}),
	}
	for _, c := range []prometheus.Collector{m.httpRequests, m.httpDuration, m.streamsOpen, m.storeCalls,
		m.storeDuration, m.seatsTaken, m.seatsDone, m.racesLost, m.batchSize, m.openSeats, m.resyncs, m.prompts, m.chatRuns, m.chatRunTime,
		m.layersAdvanced, m.flagsRaised, m.arenaActions, m.arenaGames, m.longPolls} {
		if err := reg.Register(c); err != nil {
			return nil, errors.Join(errors.New("observe: registering metrics"), err)
		}
	}
	for _, o := range opts {
		o(m)
	}
	return m, nil
}

// CountResyncs returns the function to give a notifier's OnResync
// (pgstore.Notifier, redisstore.Store): it counts
// agora_notifier_resyncs_total for backend.
func (m *Metrics) CountResyncs(backend string) func() {
	c := m.resyncs.WithLabelValues(backend)
	return c.Inc
}
