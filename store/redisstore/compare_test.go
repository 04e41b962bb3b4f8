package redisstore

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/storetest"
)

// BenchmarkTakeVsRedisBenchmark compares a take through the whole Go stack
// (Service.Take → TakeSlot → EVALSHA over go-redis) with redis-benchmark
// running the same take script on the same server in the same run. The
// baseline script differs only in a preamble that derives its keys and
// arguments from one __rand_int__ (redis-benchmark cannot fill several
// related arguments); the take logic is take.lua itself. It reports the
// baseline's cost as baseline-ns/op and our share of its throughput as
// pct-of-baseline.
//
//	AGORA_REDIS_URL=redis://127.0.0.1:6379 go test -run x -bench TakeVsRedisBenchmark ./store/redisstore
func BenchmarkTakeVsRedisBenchmark(b *testing.B) {
	rb, err := exec.LookPath("redis-benchmark")
	if err != nil {
		b.Skip("redis-benchmark is not installed (package redis-tools)")
	}
	opts, err := redis.ParseURL(testdb.RedisURL(b))
	if err != nil {
		b.Fatal(err)
	}
	host, port := opts.Addr, "6379"
	if h, p, ok := cutLast(opts.Addr, ":"); ok {
		host, port = h, p
	}
	ctx := context.Background()
	for _, callers := range []int{1, 64} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			n := max(b.N, 20_000)
			client, prefix := testdb.RedisClient(b)
			st := New(client, WithPrefix(prefix))

			// The baseline's seats: slot i of claim i/20, taken by agent i%20.
			// It draws from 10n slots, so few of its n takes collide.
			space := 10 * n
			storetest.NumberedSlots(b, st, "base", space)
			take, _ := luaFiles.ReadFile("lua/take.lua")
			// redis-benchmark stops at the first error reply, so the rare
			// collision answers its code as a plain reply instead.
			preamble := fmt.Sprintf(`local function fail(code) return code end
local n = tonumber(ARGV[1])
local ns = %q
local claim = string.format('base_claim_%%012d', math.floor(n / %d))
local slot = string.format('base_slot_%%012d', n)
KEYS[1] = ns .. 'slot:' .. slot
KEYS[2] = ns .. 'claim:' .. claim
KEYS[3] = ns .. 'holders:' .. claim
KEYS[4] = ns .. 'leases'
ARGV[1], ARGV[2], ARGV[3] = ns, claim, slot
ARGV[4] = 'base_key_' .. (n %% %d)
ARGV[5], ARGV[6], ARGV[7], ARGV[8] = 'bench', '', '1700000000000', '0'
`, st.ns, slots.MaxSlotsPerConfigure, slots.MaxSlotsPerConfigure)
			sha, err := client.ScriptLoad(ctx, linkScript(luaHelpers, "take.lua", preamble+string(take))).Result()
			if err != nil {
				b.Fatal(err)
			}
			out, err := exec.Command(rb, "-h", host, "-p", port, "-c", strconv.Itoa(callers), "-n", strconv.Itoa(n),
				"-r", strconv.Itoa(space), "-q", "EVALSHA", sha, "0", "__rand_int__").CombinedOutput()
			if err != nil {
				b.Fatalf("redis-benchmark: %v: %s", err, out)
			}
			m := regexp.MustCompile(`([0-9.]+) requests per second`).FindAllSubmatch(out, -1)
			if len(m) == 0 {
				b.Fatalf("redis-benchmark said: %s", out)
			}
			baseRPS, _ := strconv.ParseFloat(string(m[len(m)-1][1]), 64)
			if won := client.ZCard(ctx, st.key("q", "all")).Val(); int(won) > space-n/2 {
				b.Fatalf("the baseline took only %d of %d seats", space-int(won), n)
			}

			svc := slots.New(st)
			seats := storetest.NumberedSlots(b, st, "ours", b.N)
			runtime.GC()
			b.ResetTimer()
			storetest.TakeSlots(b, svc, seats, callers)
			b.StopTimer()
			ours := float64(b.N) / b.Elapsed().Seconds()
			b.ReportMetric(1e9/baseRPS, "baseline-ns/op")
			b.ReportMetric(100*ours/baseRPS, "pct-of-baseline")
		})
	}
}

func cutLast(s, sep string) (string, string, bool) {
	for i := len(s) - len(sep); i >= 0; i-- {
		if s[i:i+len(sep)] == sep {
			return s[:i], s[i+len(sep):], true
		}
	}
	return "", "", false
}
