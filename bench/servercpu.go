package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// serverCPU reads how much CPU time the backend's server has used so far.
// Where the server is the bottleneck (Redis's one thread; PostgreSQL's
// backends on a machine whose cores they fill), its CPU time per unit of
// work bounds the units per second a system can reach, whatever the cores
// of the machine that measures it.
type serverCPU func(ctx context.Context) (time.Duration, error)

// meter records the server CPU time one run's timed work used.
type meter struct {
	read       serverCPU
	from, used time.Duration
	ok         bool
}

// begin marks the start of the timed work.
func (m *meter) begin(ctx context.Context) {
	if m == nil || m.read == nil {
		return
	}
	m.ok = false
	from, err := m.read(ctx)
	m.from, m.ok = from, err == nil
}

// end marks its end.
func (m *meter) end(ctx context.Context) {
	if m == nil || !m.ok {
		return
	}
	to, err := m.read(ctx)
	m.used, m.ok = to-m.from, err == nil
}

// redisCPU reads the CPU time of Redis's main thread (INFO cpu), where
// every command and script runs.
func redisCPU(client *redis.Client) serverCPU {
	return func(ctx context.Context) (time.Duration, error) {
		info, err := client.Info(ctx, "cpu").Result()
		if err != nil {
			return 0, err
		}
		fields := map[string]float64{}
		for _, line := range strings.Split(info, "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok {
				continue
			}
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				fields[k] = f
			}
		}
		s, ok := fields["used_cpu_user_main_thread"]
		if ok {
			s += fields["used_cpu_sys_main_thread"]
		} else {
			s = fields["used_cpu_user"] + fields["used_cpu_sys"]
		}
		return time.Duration(s * float64(time.Second)), nil
	}
}

// clockTicks is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const clockTicks = 100

// postgresCPU reads the CPU time of every local process named postgres
// (/proc): the backends serving connections and, through the postmaster's
// children's times, the backends that have exited. It answers an error
// where no such process is visible (a server on another machine).
func postgresCPU(ctx context.Context) (time.Duration, error) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks int64
	found := false
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open || s[open+1:closing] != "postgres" {
			continue
		}
		// After the name: state, ppid, …; utime, stime, cutime and cstime
		// are fields 14 to 17 of the line, 12 to 15 after it.
		f := strings.Fields(s[closing+1:])
		if len(f) < 16 {
			continue
		}
		for _, v := range f[11:15] {
			n, _ := strconv.ParseInt(v, 10, 64)
			ticks += n
		}
		found = true
	}
	if !found {
		return 0, fmt.Errorf("no local postgres process")
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
