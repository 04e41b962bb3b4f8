package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/agorahq/agora/examples/internal/backend"
	"github.com/agorahq/agora/observe"
)

// observability is what -metrics and the OTEL_* environment turned on.
type observability struct {
	registry *prometheus.Registry // nil: -metrics is off
	metrics  *observe.Metrics
	tracer   *sdktrace.TracerProvider // nil: OTEL_TRACES_EXPORTER is none or unset
	services *observe.Services        // every service's observer: their spans and events
}

// newObservability makes the server's own registry (Agora's metrics and
// the Go runtime's and process's) when metrics is set, and a tracer
// provider as the OTEL_* environment says; console spans go to console.
func newObservability(ctx context.Context, metrics bool, console io.Writer) (*observability, error) {
	o := &observability{}
	if metrics {
		o.registry = prometheus.NewRegistry()
		o.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		m, err := observe.NewMetrics(o.registry)
		if err != nil {
			return nil, err
		}
		o.metrics = m
	}
	tp, err := observe.TracerProviderFromEnv(ctx, "agora", console)
	if err != nil {
		return nil, err
	}
	o.tracer = tp
	o.services = observe.NewServices(o.metrics, o.tracerProvider())
	return o, nil
}

// on reports whether stores and requests are observed beyond the log.
func (o *observability) on() bool { return o.registry != nil || o.tracer != nil }

// tracerProvider is the provider as Handler and the store wrappers take
// it: nil when tracing is off.
func (o *observability) tracerProvider() trace.TracerProvider {
	if o.tracer == nil {
		return nil
	}
	return o.tracer
}

// wrap puts the store wrappers of observe around b's stores, and logs
// (and with -metrics counts) the notifier's reconnects.
func (o *observability) wrap(b *backend.Backend, log *slog.Logger) {
	if r, ok := b.Notifier.(interface{ OnResync(func()) }); ok {
		var count func()
		if o.metrics != nil {
			count = o.metrics.CountResyncs(b.Name)
		}
		r.OnResync(func() {
			log.Warn("notifier reconnected: every live view re-reads", "backend", b.Name)
			if count != nil {
				count()
			}
		})
	}
	if !o.on() {
		return
	}
	w := observe.NewStores(b.Name, o.metrics, o.tracerProvider())
	b.Slots, b.Prism, b.Arena = w.Slots(b.Slots), w.Prism(b.Prism), w.Arena(b.Arena)
	b.Identity = w.Identity(b.Identity)
	b.Identity = w.Identity(b.Identity)
	b.Discussion, b.AgentChat = w.Discussion(b.Discussion), w.AgentChat(b.AgentChat)
}

// metricsHandler serves the registry in the Prometheus text format; nil
// when -metrics is off.
func (o *observability) metricsHandler() http.Handler {
	if o.registry == nil {
		return nil
	}
	return promhttp.HandlerFor(o.registry, promhttp.HandlerOpts{Registry: o.registry})
}

// close sends the spans still queued.
func (o *observability) close(log *slog.Logger) {
	if o.tracer == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := o.tracer.Shutdown(ctx); err != nil {
		log.Warn("trace exporter shutdown", "err", err)
	}
}
