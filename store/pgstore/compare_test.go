package pgstore

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/storetest"
)

// BenchmarkTakeVsPgbench compares a take through the whole Go stack
// (Service.Take → TakeSlot over sqlx and lib/pq) with pgbench running the
// same conditional UPDATE (the take's statement, minus the fallback SELECT
// that only runs on a lost race) as a prepared statement (-M prepared, as
// the store prepares its hot statements) on the same database in the same
// run. It
// reports pgbench's cost as baseline-ns/op and our share of its throughput
// as pct-of-baseline.
//
//	AGORA_POSTGRES_DSN=postgres://postgres@127.0.0.1:5432/test?sslmode=disable \
//	  go test -run x -bench TakeVsPgbench ./store/pgstore
func BenchmarkTakeVsPgbench(b *testing.B) {
	pgbench, err := exec.LookPath("pgbench")
	if err != nil {
		if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench"); len(m) > 0 {
			pgbench = m[len(m)-1]
		} else {
			b.Skip("pgbench is not installed (package postgresql-contrib or postgresql)")
		}
	}
	for _, callers := range []int{1, 64} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			ctx := context.Background()
			dsn := testdb.PostgresDSN(b)
			db, err := sqlx.Open("postgres", dsn)
			if err != nil {
				b.Fatal(err)
			}
			db.SetMaxOpenConns(callers)
			defer db.Close()
			if err := Migrate(ctx, db); err != nil {
				b.Fatal(err)
			}
			st := New(db)
			n := max(b.N, 2000)
			space := 10 * n
			storetest.NumberedSlots(b, st, "base", space)
			seats := storetest.NumberedSlots(b, st, "ours", b.N+callers)
			if _, err := db.Exec(`ANALYZE`); err != nil {
				b.Fatal(err)
			}

			script := filepath.Join(b.TempDir(), "take.sql")
			per := slots.MaxSlotsPerConfigure
			sql := fmt.Sprintf(`\set n random(0, %d)
UPDATE agora_role_slots SET status = 'taken', api_key_id = 'base_key_' || (:n %% %d), agent_name = 'bench', agent_avatar_url = '', taken_at = 1700000000000, lease_expires_at = 0, is_open = false, lease_due = NULL
WHERE id = 'base_slot_' || lpad(:n::text, 12, '0') AND claim_id = 'base_claim_' || lpad((:n / %d)::text, 12, '0')
  AND (status = 'open' OR lease_due <= 1700000000000)
RETURNING id, claim_id, role, status, api_key_id, agent_name, agent_avatar_url, taken_at, done_at, created_at, lease_expires_at;
`, space-1, per, per)
			if err := os.WriteFile(script, []byte(sql), 0o600); err != nil {
				b.Fatal(err)
			}
			u, err := url.Parse(dsn)
			if err != nil {
				b.Fatal(err)
			}
			cmd := exec.Command(pgbench, "-n", "-M", "prepared", "-f", script, "-c", strconv.Itoa(callers), "-j", "2",
				"-t", strconv.Itoa(max(1, n/callers)), "-h", u.Hostname(), "-p", u.Port(), "-U", u.User.Username(),
				strings.TrimPrefix(u.Path, "/"))
			cmd.Env = append(os.Environ(), "PGOPTIONS=-c search_path="+u.Query().Get("search_path"))
			out, err := cmd.CombinedOutput()
			if err != nil {
				b.Fatalf("pgbench: %v: %s", err, out)
			}
			m := regexp.MustCompile(`tps = ([0-9.]+)`).FindSubmatch(out)
			if m == nil {
				b.Fatalf("pgbench said: %s", out)
			}
			baseTPS, _ := strconv.ParseFloat(string(m[1]), 64)

			// pgbench's figure leaves out connecting: warm the pool (and its
			// prepared statements) with one take per caller first.
			svc := slots.New(st)
			storetest.TakeSlots(b, svc, seats[:callers], callers)
			b.ResetTimer()
			storetest.TakeSlots(b, svc, seats[callers:], callers)
			b.StopTimer()
			ours := float64(b.N) / b.Elapsed().Seconds()
			b.ReportMetric(1e9/baseTPS, "baseline-ns/op")
			b.ReportMetric(100*ours/baseTPS, "pct-of-baseline")
		})
	}
}
