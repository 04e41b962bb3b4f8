package observe_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/observe"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/memstore"
	"github.com/agorahq/agora/store/storetest"
)

// series finds the metric name with exactly labels in reg, or nil.
func series(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, lp := range m.GetLabel() {
				if labels[lp.GetName()] != lp.GetValue() {
					continue next
				}
			}
			return m
		}
	}
	return nil
}

// gauge is the gauge's value in reg, failing when the series is missing.
func gauge(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	m := series(t, reg, name, labels)
	require.NotNil(t, m, "%s%v", name, labels)
	return m.GetGauge().GetValue()
}

func counter(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	m := series(t, reg, name, labels)
	if m == nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

// TestJobQueueCountersOnEveryBackend drives the job queue through a
// service on wrapped stores of every backend and reads the counters back.
func TestJobQueueCountersOnEveryBackend(t *testing.T) {
	t.Parallel()
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := context.Background()
		reg, m := newMetrics(t, observe.WithStoreTiming(1)) // every call timed
		const backend = "b"
		svc := slots.New(observe.NewStores(backend, m, nil).Slots(st.Slots)) // batching on: the default
		a, b := identity.Key{ID: "key_a", Name: "a"}, identity.Key{ID: "key_b", Name: "b"}
		claim, err := svc.CreateClaim(ctx, slots.NewClaim{Title: "t", Body: "b"})
		require.NoError(t, err)
		_, err = svc.AddComment(identity.WithKey(ctx, a), slots.NewComment{ClaimID: claim.ID, Body: "d", CommentType: string(slots.CommentDraft)})
		require.NoError(t, err)
		_, err = svc.ConfigureSlots(ctx, claim.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 2}})
		require.NoError(t, err)
		seats, err := svc.Slots(ctx, claim.ID)
		require.NoError(t, err)
		require.Len(t, seats, 2)
		bk := map[string]string{"backend": backend}
		require.Equal(t, 2.0, gauge(t, reg, "agora_job_seats_open", bk), "both seats wait in the queue")

		_, err = svc.Take(identity.WithKey(ctx, a), claim.ID, seats[0].ID) // taken
		require.NoError(t, err)
		require.Equal(t, 1.0, gauge(t, reg, "agora_job_seats_open", bk))
		_, err = svc.Take(identity.WithKey(ctx, b), claim.ID, seats[0].ID) // a race lost
		require.ErrorIs(t, err, slots.ErrSlotTaken)
		_, err = svc.Done(identity.WithKey(ctx, a), claim.ID, seats[0].ID) // done, a batch of one
		require.NoError(t, err)
		_, err = svc.TakeNext(identity.WithKey(ctx, b), slots.JobQuery{}) // taken, a batch of one
		require.NoError(t, err)
		_, err = svc.DoneAndTakeNext(identity.WithKey(ctx, b), claim.ID, seats[1].ID, slots.JobQuery{}) // done, nothing left to take
		require.NoError(t, err)
		_, err = svc.Claim(ctx, "nope")
		require.ErrorIs(t, err, store.ErrNotFound)

		require.Equal(t, 0.0, gauge(t, reg, "agora_job_seats_open", bk), "none left")
		require.Equal(t, 2.0, counter(t, reg, "agora_job_seats_taken_total", bk))
		require.Equal(t, 2.0, counter(t, reg, "agora_job_seats_done_total", bk))
		require.Equal(t, 1.0, counter(t, reg, "agora_job_races_lost_total", bk))
		call := func(op, result string) float64 {
			return counter(t, reg, "agora_store_calls_total", map[string]string{"backend": backend, "operation": op, "result": result})
		}
		require.Equal(t, 1.0, call("TakeSlot", "ok"))
		require.Equal(t, 1.0, call("TakeSlot", "conflict"))
		require.Equal(t, 1.0, call("GetClaim", "not_found"))
		require.Equal(t, 1.0, call("CreateClaim", "ok"))
		require.GreaterOrEqual(t, call("CountOpenSlots", "ok"), 3.0, "each scrape (each read here) counts once")
		for _, op := range []string{"FinishSlots", "TakeNextSlots", "FinishAndTakeNextSlots"} {
			h := series(t, reg, "agora_job_batch_size", map[string]string{"backend": backend, "operation": op})
			require.NotNil(t, h, op)
			require.EqualValues(t, 1, h.GetHistogram().GetSampleCount(), op)
			require.EqualValues(t, 1, h.GetHistogram().GetSampleSum(), op)
		}
		took := series(t, reg, "agora_store_call_duration_seconds", map[string]string{"backend": backend, "operation": "TakeSlot"})
		require.EqualValues(t, 2, took.GetHistogram().GetSampleCount())
	})
}

// By default one store call in DefaultStoreTiming is timed, drawn at
// random, and every call is counted.
func TestStoreCallsTimedBySample(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reg, m := newMetrics(t)
	st := observe.NewStores("memory", m, nil).Slots(memstore.New())
	const calls = 3200
	for range calls {
		_, err := st.GetClaim(ctx, "nope")
		require.ErrorIs(t, err, store.ErrNotFound)
	}
	labels := map[string]string{"backend": "memory", "operation": "GetClaim"}
	require.Equal(t, float64(calls), counter(t, reg, "agora_store_calls_total", map[string]string{"backend": "memory", "operation": "GetClaim", "result": "not_found"}))
	timed := series(t, reg, "agora_store_call_duration_seconds", labels).GetHistogram().GetSampleCount()
	// Binomial(3200, 1/16): mean 200, standard deviation 13.7; six of them
	// either side never fails by chance.
	require.InDelta(t, calls/observe.DefaultStoreTiming, float64(timed), 82)
}

func TestUnavailableCounted(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	h, _, _ := server(t, downStore{memstore.New()}, reg)
	w := do(h, "GET", "/api/v1/claims/c1", "", "Authorization", "Bearer "+adminKey)
	require.Equal(t, 503, w.Code)
	require.Equal(t, 1.0, counter(t, reg, "agora_store_calls_total", map[string]string{"backend": "memory", "operation": "GetClaim", "result": "unavailable"}))
	require.Equal(t, 1.0, counter(t, reg, "agora_http_requests_total", map[string]string{"route": "GET /api/v1/claims/{claimId}", "method": "GET", "code": "503"}))

	// The open seats cannot be counted either: the scrape still answers,
	// without that series, and the failed count is a store call counted.
	w = do(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), "GET", "/metrics", "")
	require.Equal(t, 200, w.Code)
	require.Contains(t, w.Body.String(), "agora_store_calls_total")
	require.NotContains(t, w.Body.String(), "agora_job_seats_open")
	require.Contains(t, w.Body.String(), `agora_store_calls_total{backend="memory",operation="CountOpenSlots",result="unavailable"}`)
}

// TestMadeUpMethodsShareALabel: a request with a method HTTP does not
// define is counted under "other", so clients cannot grow the series; the
// same route and status counted again is the same series.
func TestMadeUpMethodsShareALabel(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	h, _, _ := server(t, memstore.New(), reg)
	for _, m := range []string{"BREW", "WHEN", "GET", "GET"} {
		do(h, m, "/api/v1/nothing-here", "")
	}
	require.Equal(t, 2.0, counter(t, reg, "agora_http_requests_total", map[string]string{"route": "unmatched", "method": "other", "code": "404"}))
	require.Equal(t, 2.0, counter(t, reg, "agora_http_requests_total", map[string]string{"route": "unmatched", "method": "GET", "code": "404"}))
}

func TestNewMetricsRefusesATakenRegistry(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	_, err := observe.NewMetrics(reg)
	require.NoError(t, err)
	_, err = observe.NewMetrics(reg)
	require.Error(t, err)
}

// TestScrapePassesPromtool scrapes the metrics after a few requests and
// runs Prometheus's own linter on them. promtool comes with Debian's
// prometheus package, which .ci/run installs: under CI a missing promtool
// fails the test.
func TestScrapePassesPromtool(t *testing.T) {
	t.Parallel()
	promtool := promtoolPath(t)
	reg := prometheus.NewRegistry()
	h, _, _ := server(t, memstore.New(), reg)
	auth := []string{"Authorization", "Bearer " + adminKey}
	require.Equal(t, 201, do(h, "POST", "/api/v1/claims", `{"title":"t","body":"b"}`, auth...).Code)
	require.Equal(t, 404, do(h, "GET", "/api/v1/claims/nope", "", auth...).Code)
	require.Equal(t, 404, do(h, "GET", "/api/v1/nothing-here", "").Code)

	// The scrape as Prometheus gets it: the text format of promhttp.
	w := do(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), "GET", "/metrics", "")
	require.Equal(t, 200, w.Code)
	scrape := bytes.NewBuffer(w.Body.Bytes())
	require.Contains(t, scrape.String(), `route="unmatched"`)
	require.Contains(t, scrape.String(), `agora_job_seats_open{backend="memory"} 0`)
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = scrape
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) || strings.TrimSpace(string(out)) != "" {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
	require.NoError(t, err)
}

// TestDocumentedAlertsPassPromtool: the alerting rules in
// docs/observability.md are valid Prometheus rules, and name only metrics
// that exist.
func TestDocumentedAlertsPassPromtool(t *testing.T) {
	t.Parallel()
	promtool := promtoolPath(t)
	doc, err := os.ReadFile("../docs/observability.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(doc), "```yaml\ngroups:")
	require.True(t, ok, "the alerting rules' block")
	rules, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	rules = "groups:" + rules
	file := t.TempDir() + "/rules.yml"
	require.NoError(t, os.WriteFile(file, []byte(rules), 0o600))
	out, err := exec.Command(promtool, "check", "rules", file).CombinedOutput()
	require.NoError(t, err, "%s", out)

	reg := prometheus.NewRegistry()
	_, err = observe.NewMetrics(reg)
	require.NoError(t, err)
	for _, name := range regexp.MustCompile(`agora_[a-z_]+`).FindAllString(rules, -1) {
		base := strings.TrimSuffix(name, "_bucket")
		require.Contains(t, string(doc), "| `"+base+"` |", "%s is in the table of metrics", base)
	}
}

// promtoolPath is Prometheus's promtool, which comes with Debian's
// prometheus package and .ci/run installs: the test is skipped without
// it, and fails under CI=true.
func promtoolPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		testdb.Unavailable(t, "promtool is not installed (apt-get install prometheus; .ci/run installs it)")
	}
	return p
}

// recordingRegisterer keeps what is registered on it.
type recordingRegisterer struct{ cs []prometheus.Collector }

func (r *recordingRegisterer) Register(c prometheus.Collector) error {
	r.cs = append(r.cs, c)
	return nil
}
func (r *recordingRegisterer) MustRegister(cs ...prometheus.Collector) { r.cs = append(r.cs, cs...) }
func (r *recordingRegisterer) Unregister(prometheus.Collector) bool    { return false }

// TestEveryMetricDocumented: each metric NewMetrics registers is in the
// table of docs/observability.md, with what to alert on or watch.
func TestEveryMetricDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/observability.md")
	require.NoError(t, err)
	var reg recordingRegisterer
	_, err = observe.NewMetrics(&reg)
	require.NoError(t, err)
	name := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	n := 0
	for _, c := range reg.cs {
		ch := make(chan *prometheus.Desc, 4)
		c.Describe(ch)
		close(ch)
		for d := range ch {
			m := name.FindStringSubmatch(d.String())
			require.NotNil(t, m, d.String())
			row := regexp.MustCompile("(?m)^\\| `" + m[1] + "` \\|.*\\|$").FindString(string(doc))
			require.NotEmpty(t, row, "%s is in the table", m[1])
			cells := strings.Split(strings.Trim(row, "|"), " | ")
			require.Len(t, cells, 5, row)
			require.NotEmpty(t, strings.TrimSpace(cells[4]), "%s says what to alert on or watch", m[1])
			n++
		}
	}
	require.Equal(t, 19, n)
}

// newMetrics returns Agora's metrics on a fresh registry.
func newMetrics(t *testing.T, opts ...observe.MetricsOption) (*prometheus.Registry, *observe.Metrics) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := observe.NewMetrics(reg, opts...)
	require.NoError(t, err)
	return reg, m
}

// TestWrappedStoresSayTheirParallelism: a wrapped store reports the
// parallelism of the store it wraps (store.Parallel), so a Service batches
// on it as on the store itself, and 0 (unknown) for one that does not say.
func TestWrappedStoresSayTheirParallelism(t *testing.T) {
	w := observe.NewStores("memory", nil, nil)
	mem := memstore.New()
	for _, st := range []any{w.Slots(mem), w.Identity(mem)} {
		p, ok := st.(store.Parallel)
		require.True(t, ok, "%T", st)
		require.Equal(t, mem.Parallelism(), p.Parallelism(), "%T", st)
	}
	quiet := struct{ slots.Store }{mem}
	require.Equal(t, 0, w.Slots(quiet).(store.Parallel).Parallelism())
}
