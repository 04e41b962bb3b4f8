package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// agoraHTTP is the same queue worked over HTTP, as a remote agent works it:
// the server's handler (httpapi.Slots over the same Service) on a loopback
// port, each worker a Go client (httpapi/client) with its own key, taking
// its first seat with TakeJob and then looping DoneAndTakeJob, one request
// per seat.
type agoraHTTP struct {
	*agora
	url string
	srv *http.Server
	hc  *http.Client
}

// newAgoraHTTP serves a's Service on a loopback port; the clients share one
// transport keeping a connection per worker.
func newAgoraHTTP(a *agora, maxWorkers int) (*agoraHTTP, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	// Rate limiting off: the bench measures the queue, not the limiter; an
	// error fails the run, so the handler logs nothing.
	srv := &http.Server{Handler: httpapi.Slots(a.svc, a.ids, httpapi.WithLimiter(nil), httpapi.WithLogger(slog.New(slog.DiscardHandler))), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConns: maxWorkers + 8, MaxIdleConnsPerHost: maxWorkers + 8}}
	return &agoraHTTP{agora: a, url: "http://" + ln.Addr().String(), srv: srv, hc: hc}, nil
}

func (h *agoraHTTP) run(ctx context.Context, w, n int, m *meter) (time.Duration, error) {
	return h.timed(ctx, "agora-http", w, n, m, func(_ int, _ identity.Key, secret string) (loop, error) {
		c := client.New(h.url, client.WithToken(secret), client.WithHTTPClient(h.hc))
		q := slots.JobQuery{Strategy: h.strategy}
		return loop{
			take: func() (slots.Job, error) {
				job, err := c.TakeJob(ctx, q)
				if errors.Is(err, store.ErrNotFound) {
					return job, slots.ErrNoJob
				}
				return job, err
			},
			doneTake: func(j slots.Job) (*slots.Job, error) { return c.DoneAndTakeJob(ctx, j.Claim.ID, j.Slot.ID, q) },
		}, nil
	})
}

// close stops the server; the queue's own cleanup is its owner's.
func (h *agoraHTTP) close() {
	_ = h.srv.Close()
	h.hc.CloseIdleConnections()
}
