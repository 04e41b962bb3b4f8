package observe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/observe"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/memstore"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

const adminKey = "admin-test"

// downStore is a memory store whose claims and job queue cannot be read:
// GetClaim and CountOpenSlots are ErrUnavailable, as a database that is
// down answers.
type downStore struct{ *memstore.Store }

func (downStore) GetClaim(context.Context, string) (slots.Claim, error) {
	return slots.Claim{}, store.Errorf(store.ErrUnavailable, "unavailable", "dial tcp 10.0.0.9:5432: connection refused")
}

func (downStore) CountOpenSlots(context.Context) (int, error) {
	return 0, store.Errorf(store.ErrUnavailable, "unavailable", "dial tcp 10.0.0.9:5432: connection refused")
}

// server is the /api/v1 routes on st behind Handler, logging JSON lines
// into the returned buffer.
func server(t *testing.T, backend interface {
	slots.Store
	identity.Store
}, reg *prometheus.Registry) (http.Handler, *bytes.Buffer, *observe.Metrics) {
	var st slots.Store = backend
	var ids identity.Store = backend
	t.Helper()
	var logs bytes.Buffer
	log, err := observe.NewLogger(&logs, "json", nil)
	require.NoError(t, err)
	var m *observe.Metrics
	if reg != nil {
		m, err = observe.NewMetrics(reg)
		require.NoError(t, err)
		wrap := observe.NewStores("memory", m, nil)
		st, ids = wrap.Slots(st), wrap.Identity(ids)
	}
	svc := slots.New(st)
	keys := identity.New(ids, identity.WithAdminKey(adminKey), identity.WithScopes(httpapi.Scopes()))
	h := observe.Handler(httpapi.Slots(svc, keys, httpapi.WithLogger(log)), observe.HTTPOptions{Log: log, Metrics: m})
	return h, &logs, m
}

func do(h http.Handler, method, path, body string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// lines parses the JSON log lines.
func lines(t *testing.T, logs *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if l == "" {
			continue
		}
		require.LessOrEqual(t, strings.Count(l, `"request_id"`), 1, "a key once a line: %s", l)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		out = append(out, m)
	}
	return out
}

func TestRequestLog(t *testing.T) {
	t.Parallel()
	h, logs, _ := server(t, downStore{memstore.New()}, nil)
	auth := []string{"Authorization", "Bearer " + adminKey}

	// A 2xx, the request ID the client sent honoured.
	w := do(h, "POST", "/api/v1/keys", `{"name":"a","scopes":["comment:create"]}`, append(auth, "X-Request-Id", "client-id-1")...)
	require.Equal(t, http.StatusCreated, w.Code, w.Body.String())
	require.Equal(t, "client-id-1", w.Header().Get("X-Request-Id"))
	// A 4xx: no key. The ID is made up and answered.
	w = do(h, "GET", "/api/v1/claims/c123", "")
	require.Equal(t, http.StatusUnauthorized, w.Code)
	made := w.Header().Get("X-Request-Id")
	require.NotEmpty(t, made)
	// A 503: the store is down; an ID with a space in it is not honoured.
	w = do(h, "GET", "/api/v1/claims/c123", "", append(auth, "X-Request-Id", "bad id")...)
	require.Equal(t, http.StatusServiceUnavailable, w.Code)
	down := w.Header().Get("X-Request-Id")
	require.NotEqual(t, "bad id", down)
	require.NotEqual(t, made, down)

	ls := lines(t, logs)
	var reqs []map[string]any
	var warn map[string]any
	for _, l := range ls {
		switch l["msg"] {
		case "request":
			reqs = append(reqs, l)
		case "store unavailable":
			warn = l
		}
	}
	require.Len(t, reqs, 3, logs.String())
	want := []struct {
		status        float64
		route, id, lv string
		key           any
	}{
		{201, "POST /api/v1/keys", "client-id-1", "INFO", "admin"},
		{401, "GET /api/v1/claims/{claimId}", made, "INFO", nil},
		{503, "GET /api/v1/claims/{claimId}", down, "ERROR", "admin"},
	}
	for i, w := range want {
		l := reqs[i]
		require.Equal(t, w.status, l["status"], l)
		require.Equal(t, w.route, l["route"], "the pattern, never the raw path")
		require.Equal(t, w.id, l["request_id"])
		require.Equal(t, w.lv, l["level"])
		require.Equal(t, w.key, l["key_id"], "the key's ID, never its secret")
		require.NotContains(t, l, "path")
		for _, f := range []string{"method", "duration_ms", "bytes"} {
			require.Contains(t, l, f)
		}
		require.Positive(t, l["bytes"])
	}
	require.NotContains(t, logs.String(), adminKey, "no secret is logged")
	require.NotNil(t, warn, "the 503's error line")
	require.Equal(t, down, warn["request_id"], "the error line carries its request's ID")
}

// leavingStore is a memory store whose GetClaim is where the client hangs
// up: it cancels the request's context and fails with it, as a store call
// cut short by its caller does.
type leavingStore struct {
	*memstore.Store
	hangUp context.CancelFunc
}

func (s leavingStore) GetClaim(ctx context.Context, _ string) (slots.Claim, error) {
	s.hangUp()
	<-ctx.Done()
	return slots.Claim{}, ctx.Err()
}

// TestRequestLogClientGone: a request whose client left before its answer
// is logged and counted as 499 at the lines' own level, not as a 5xx at
// ERROR: an agent hanging up is no failure of the server's.
func TestRequestLogClientGone(t *testing.T) {
	t.Parallel()
	ctx, hangUp := context.WithCancel(context.Background())
	defer hangUp()
	reg := prometheus.NewRegistry()
	h, logs, _ := server(t, leavingStore{Store: memstore.New(), hangUp: hangUp}, reg)
	r := httptest.NewRequest("GET", "/api/v1/claims/c1", nil).WithContext(ctx)
	r.Header.Set("Authorization", "Bearer "+adminKey)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	require.Equal(t, http.StatusServiceUnavailable, w.Code, "what the handler wrote, to no one")

	var req map[string]any
	for _, l := range lines(t, logs) {
		if l["msg"] == "request" {
			req = l
		}
	}
	require.NotNil(t, req, logs.String())
	require.Equal(t, float64(observe.StatusClientClosed), req["status"])
	require.Equal(t, "INFO", req["level"])
	require.Equal(t, 1.0, counter(t, reg, "agora_http_requests_total", map[string]string{"route": "GET /api/v1/claims/{claimId}", "method": "GET", "code": "499"}))
}

func TestRequestLogLevelAndSampling(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	log, err := observe.NewLogger(&logs, "text", nil)
	require.NoError(t, err)
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			http.Error(w, "no", http.StatusBadRequest)
		}
	})
	h := observe.Handler(ok, observe.HTTPOptions{Log: log, SampleOK: 3})
	for range 6 {
		do(h, "GET", "/", "")
	}
	do(h, "GET", "/fail", "")
	require.Equal(t, 3, strings.Count(logs.String(), "msg=request"), "2 of 6 successes, every failure:\n%s", logs.String())
	require.Contains(t, logs.String(), "route=unmatched", "no pattern known: never the raw path")
	require.NotContains(t, logs.String(), "/fail")

	_, err = observe.NewLogger(&logs, "xml", nil)
	require.Error(t, err)
}

func TestStreamLogsStartAndEnd(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	log, err := observe.NewLogger(&logs, "json", nil)
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	m, err := observe.NewMetrics(reg)
	require.NoError(t, err)
	var openDuring float64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /events/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		openDuring = gauge(t, reg, "agora_http_streams_open", nil)
		_, _ = w.Write([]byte("data: x\n\n"))
		require.NoError(t, http.NewResponseController(w).Flush())
	})
	h := observe.Handler(mux, observe.HTTPOptions{Log: log, Metrics: m})
	do(h, "GET", "/events/42", "")
	ls := lines(t, &logs)
	require.Len(t, ls, 2)
	require.Equal(t, "stream start", ls[0]["msg"])
	require.Equal(t, "stream end", ls[1]["msg"])
	require.Equal(t, "GET /events/{id}", ls[1]["route"])
	require.Equal(t, ls[0]["request_id"], ls[1]["request_id"])
	require.Equal(t, 1.0, openDuring)
	require.Equal(t, 0.0, gauge(t, reg, "agora_http_streams_open", nil))
}
