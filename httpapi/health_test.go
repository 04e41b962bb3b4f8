package httpapi_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/store/pgstore"
	"github.com/agorahq/agora/store/redisstore"
)

// health calls GET /healthz of h and decodes the answer.
func health(t *testing.T, h http.Handler) (int, httpapi.Health, http.Header) {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
	h.ServeHTTP(rec, req)
	described, err := checkAnswer(req, rec)
	require.True(t, described, "the OpenAPI document has GET /healthz")
	require.NoError(t, err, "the OpenAPI document describes the answer")
	var body httpapi.Health
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
	return rec.Code, body, rec.Header()
}

// closedAddr is an address nothing listens on.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestHealthAnswersWhetherTheStoreAnswers: 200 with the backend's name while
// the store answers its ping, on every backend; 503 with Retry-After and no
// driver words when PostgreSQL or Redis cannot be reached.
func TestHealthAnswersWhetherTheStoreAnswers(t *testing.T) {
	t.Parallel()
	pgDB := func(t *testing.T, dsn string) *pgstore.Store {
		db, err := pgstore.Open(dsn, pgstore.PoolOptions{CallTimeout: 500 * time.Millisecond})
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		return pgstore.New(db)
	}
	rdb := func(t *testing.T, url string) *redisstore.Store {
		opts, err := redis.ParseURL(url)
		require.NoError(t, err)
		opts.MaxRetries = -1
		c := redis.NewClient(opts)
		t.Cleanup(func() { c.Close() })
		return redisstore.New(c)
	}
	up := map[string]func(t *testing.T) httpapi.Ping{
		"memory":   func(t *testing.T) httpapi.Ping { return nil },
		"postgres": func(t *testing.T) httpapi.Ping { return pgDB(t, testdb.PostgresDSN(t)).Ping },
		"redis":    func(t *testing.T) httpapi.Ping { return rdb(t, testdb.RedisURL(t)).Ping },
	}
	for name, ping := range up {
		t.Run(name+"/up", func(t *testing.T) {
			t.Parallel()
			code, body, _ := health(t, httpapi.HealthHandler(name, ping(t)))
			require.Equal(t, http.StatusOK, code)
			require.Equal(t, httpapi.Health{Status: httpapi.HealthOK, Store: name}, body)
		})
	}
	down := map[string]func(t *testing.T) httpapi.Ping{
		"postgres": func(t *testing.T) httpapi.Ping {
			return pgDB(t, "postgres://postgres@"+closedAddr(t)+"/test?sslmode=disable").Ping
		},
		"redis": func(t *testing.T) httpapi.Ping { return rdb(t, "redis://"+closedAddr(t)).Ping },
		"any": func(t *testing.T) httpapi.Ping {
			return func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() } // never answers
		},
	}
	for name, ping := range down {
		t.Run(name+"/down", func(t *testing.T) {
			t.Parallel()
			code, body, hdr := health(t, httpapi.HealthHandler(name, ping(t)))
			require.Equal(t, http.StatusServiceUnavailable, code)
			require.Equal(t, httpapi.HealthUnavailable, body.Status)
			require.Equal(t, name, body.Store)
			require.Equal(t, "the store did not answer", body.Message, "no host or port in the answer")
			require.NotEmpty(t, hdr.Get("Retry-After"))
		})
	}
}

func TestHealthIsGetOnly(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	httpapi.HealthHandler("memory", nil).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/healthz", nil))
	require.Equal(t, http.StatusMethodNotAllowed, rec.Code)
}
