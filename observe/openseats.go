package observe

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// countTimeout bounds one backend's count at a scrape: a store that does
// not answer leaves its series out of that scrape instead of holding it
// past Prometheus's scrape timeout (10 s by default).
const countTimeout = 5 * time.Second

// openCounter is what openSeats asks at a scrape: slots.Store's
// CountOpenSlots.
type openCounter interface {
	CountOpenSlots(ctx context.Context) (int, error)
}

// openSeats is agora_job_seats_open: a collector that asks each backend's
// slots store for the job queue's depth when Prometheus scrapes, so that a
// take, a done or a reconfiguration does nothing to keep it. Stores.Slots
// adds its wrapped store, so the count is itself a store call, counted and
// timed as CountOpenSlots; a count that fails (the store down, or slower
// than countTimeout) leaves that backend's series out of the scrape, and
// agora_store_calls_total{operation="CountOpenSlots"} counts the failure,
// rather than failing the whole scrape.
type openSeats struct {
	desc   *prometheus.Desc
	mu     sync.Mutex
	stores map[string]openCounter // backend -> its wrapped slots store
}

func newOpenSeats() *openSeats {
	return &openSeats{
		desc: prometheus.NewDesc("agora_job_seats_open",
			"Role slots waiting in the job queue now (open, on a claim with a draft), by backend; counted by the store at each scrape, and left out of a scrape when the count fails.",
			[]string{"backend"}, nil),
		stores: map[string]openCounter{},
	}
}

// watch counts s's open seats as backend's at each scrape, in place of the
// store given before for backend, if any: one series per backend.
func (c *openSeats) watch(backend string, s openCounter) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stores[backend] = s
}

// Describe implements prometheus.Collector.
func (c *openSeats) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector: one count per backend, in
// backend order.
func (c *openSeats) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	backends := make([]string, 0, len(c.stores))
	for b := range c.stores {
		backends = append(backends, b)
	}
	stores := make([]openCounter, len(backends))
	sort.Strings(backends)
	for i, b := range backends {
		stores[i] = c.stores[b]
	}
	c.mu.Unlock()
	for i, s := range stores {
		ctx, cancel := context.WithTimeout(context.Background(), countTimeout)
		n, err := s.CountOpenSlots(ctx)
		cancel()
		if err != nil {
			continue
		}
		if m, err := prometheus.NewConstMetric(c.desc, prometheus.GaugeValue, float64(n), backends[i]); err == nil {
			ch <- m
		}
	}
}
