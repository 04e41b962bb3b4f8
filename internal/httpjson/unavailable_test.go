package httpjson_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/store"
)

func TestUnavailableStoreIs503WithRetryAfter(t *testing.T) {
	for name, err := range map[string]error{
		"unreachable":   fmt.Errorf("pgstore: %w: %w", store.ErrUnavailable, errors.New("dial tcp 10.0.0.7:5432: connection refused")),
		"past deadline": fmt.Errorf("redisstore: %w", context.DeadlineExceeded),
	} {
		t.Run(name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			httpjson.WriteError(rec, httptest.NewRequest("GET", "/x", nil), slog.New(slog.DiscardHandler), err)
			require.Equal(t, http.StatusServiceUnavailable, rec.Code)
			require.Equal(t, "2", rec.Header().Get("Retry-After"))
			require.Contains(t, rec.Body.String(), `"code":"unavailable"`)
			require.NotContains(t, rec.Body.String(), "10.0.0.7", "the driver's words stay in the log")
		})
	}
}

func TestStreamHeadAnswersAtOnce(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpjson.Stream(w, r, make(chan []byte), 0, func(w io.Writer, _ []byte) error {
			_, err := io.WriteString(w, "event: x\ndata: {}\n\n")
			return err
		})
	}))
	defer srv.Close()
	defer srv.CloseClientConnections() // a failing run ends instead of waiting on its stream
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "HEAD", srv.URL, nil)
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	// The connection is free again: the next request on it is answered.
	req, _ = http.NewRequestWithContext(ctx, "HEAD", srv.URL, nil)
	res, err = srv.Client().Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
}
