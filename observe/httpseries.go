package observe

import (
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// httpSeries resolves the HTTP metrics' series of each route, method and
// status once: a request finds them in a map read without a lock, instead
// of hashing its label values in the vectors.
type httpSeries struct {
	m     *Metrics
	known atomic.Pointer[map[httpKey]httpObs] // copied on write
	mu    sync.Mutex                          // serialises writes
}

type httpKey struct {
	route, method string
	status        int
}

type httpObs struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

func newHTTPSeries(m *Metrics) *httpSeries {
	s := &httpSeries{m: m}
	s.known.Store(&map[httpKey]httpObs{})
	return s
}

// observe counts a request and, unless it was an event stream, times it.
func (s *httpSeries) observe(route, method string, status int, took time.Duration, stream bool) {
	k := httpKey{route: route, method: methodLabel(method), status: status}
	o, ok := (*s.known.Load())[k]
	if !ok {
		o = s.add(k)
	}
	o.requests.Inc()
	if !stream {
		o.duration.Observe(took.Seconds())
	}
}

// add resolves k's series and keeps them.
func (s *httpSeries) add(k httpKey) httpObs {
	s.mu.Lock()
	defer s.mu.Unlock()
	known := *s.known.Load()
	if o, ok := known[k]; ok {
		return o
	}
	o := httpObs{
		requests: s.m.httpRequests.WithLabelValues(k.route, k.method, statusCode(k.status)),
		duration: s.m.httpDuration.WithLabelValues(k.route, k.method),
	}
	next := maps.Clone(known)
	next[k] = o
	s.known.Store(&next)
	return o
}

// methodLabel is the method label of a request: its method when HTTP
// defines it, else "other", so that a client sending made-up methods
// cannot grow the metrics without bound.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}
