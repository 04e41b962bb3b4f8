package testdb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The servers' own CPU time, for benchmarks: where the server is the
// bottleneck (Redis's one thread, PostgreSQL's backends on a machine whose
// cores they fill) its CPU time per unit of work bounds the units per
// second, whatever the cores of the machine measuring it, and it moves far
// less with that machine's load than wall time does.

// PostgresCPU is the CPU time every local process named postgres has used
// so far (/proc, Linux): the backends serving connections, the server's own
// workers and, through the postmaster's children's times, the backends that
// have exited. It fails where no such process is visible (a server on
// another machine, or not Linux).
func PostgresCPU() (time.Duration, error) {
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
		// are fields 14 to 17 of the line, 12 to 15 after the name.
		f := strings.Fields(s[closing+1:])
		if len(f) < 15 {
			continue
		}
		for _, v := range f[11:15] {
			n, _ := strconv.ParseInt(v, 10, 64)
			ticks += n
		}
		found = true
	}
	if !found {
		return 0, errors.New("testdb: no local postgres process")
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// clockTicks is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const clockTicks = 100

// redisInfo reads one section of INFO as field -> value.
func redisInfo(ctx context.Context, c *redis.Client, section string) (map[string]string, error) {
	info, err := c.Info(ctx, section).Result()
	if err != nil {
		return nil, err
	}
	fields := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			fields[k] = v
		}
	}
	return fields, nil
}

// RedisCPU is the CPU time of Redis's main thread so far (INFO cpu), where
// every command and script runs; the whole server's where Redis does not
// report its main thread's (before 6.2).
func RedisCPU(ctx context.Context, c *redis.Client) (time.Duration, error) {
	f, err := redisInfo(ctx, c, "cpu")
	if err != nil {
		return 0, err
	}
	user, sys := "used_cpu_user_main_thread", "used_cpu_sys_main_thread"
	if _, ok := f[user]; !ok {
		user, sys = "used_cpu_user", "used_cpu_sys"
	}
	var total float64
	for _, k := range []string{user, sys} {
		v, err := strconv.ParseFloat(f[k], 64)
		if err != nil {
			return 0, fmt.Errorf("testdb: INFO cpu %s: %w", k, err)
		}
		total += v
	}
	return time.Duration(total * float64(time.Second)), nil
}

// RedisScriptTime is the time Redis has spent running scripts by EVALSHA so
// far (INFO commandstats; 0 before the first).
func RedisScriptTime(ctx context.Context, c *redis.Client) (time.Duration, error) {
	f, err := redisInfo(ctx, c, "commandstats")
	if err != nil {
		return 0, err
	}
	for _, kv := range strings.Split(f["cmdstat_evalsha"], ",") {
		if v, ok := strings.CutPrefix(kv, "usec="); ok {
			us, err := strconv.ParseInt(v, 10, 64)
			return time.Duration(us) * time.Microsecond, err
		}
	}
	return 0, nil
}
