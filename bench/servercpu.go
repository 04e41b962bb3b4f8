package main

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agorahq/agora/internal/testdb"
)

// serverCPU reads how much CPU time the backend's server has used so far:
// where the server is the bottleneck (Redis's one thread; PostgreSQL's
// backends on a machine whose cores they fill), its CPU time per unit
// bounds the units per second a system can reach, whatever the cores of
// the machine that measures it.
type serverCPU func(ctx context.Context) (time.Duration, error)

// redisCPU reads Redis's main thread (testdb.RedisCPU).
func redisCPU(c *redis.Client) serverCPU {
	return func(ctx context.Context) (time.Duration, error) { return testdb.RedisCPU(ctx, c) }
}

// postgresCPU reads every local postgres process (testdb.PostgresCPU); a
// server on another machine is not measured.
func postgresCPU(context.Context) (time.Duration, error) { return testdb.PostgresCPU() }

// meter records the CPU time one run's timed work used: the server's
// (with read) and this process's own, the system's client side (for
// Agora over HTTP, its server's handler too).
type meter struct {
	read       serverCPU
	from, used time.Duration
	ok         bool
	// selfFrom and self are this process's CPU time, at the start and
	// used; selfOK says both were read.
	selfFrom, self time.Duration
	selfOK         bool
}

// begin marks the start of the timed work.
func (m *meter) begin(ctx context.Context) {
	if m == nil {
		return
	}
	self, err := testdb.ProcessCPU()
	m.selfFrom, m.selfOK = self, err == nil
	if m.read == nil {
		return
	}
	from, err := m.read(ctx)
	m.from, m.ok = from, err == nil
}

// end marks its end.
func (m *meter) end(ctx context.Context) {
	if m == nil {
		return
	}
	if m.selfOK {
		to, err := testdb.ProcessCPU()
		m.self, m.selfOK = to-m.selfFrom, err == nil
	}
	if !m.ok {
		return
	}
	to, err := m.read(ctx)
	m.used, m.ok = to-m.from, err == nil
}
