package httpjson_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/store"
)

// TestErrorBodyCarriesDetail: every error answer has Agora's error object
// and the same message as detail, the field the arena original's clients
// read — domain errors, unexpected ones and unknown routes alike.
func TestErrorBodyCarriesDetail(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		err    error
		status int
		code   string
		msg    string
	}{
		{store.Errorf(store.ErrInvalid, "invalid_action", "Not in a debate phase"), 400, "invalid_action", "Not in a debate phase"},
		{errors.New("disk on fire"), 500, "internal", "internal server error"},
	} {
		w := httptest.NewRecorder()
		httpjson.WriteError(w, httptest.NewRequest("GET", "/", nil), log, tc.err)
		require.Equal(t, tc.status, w.Code)
		var body map[string]any
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
		require.Equal(t, map[string]any{"error": map[string]any{"code": tc.code, "message": tc.msg}, "detail": tc.msg}, body)
	}
	w := httptest.NewRecorder()
	httpjson.NewRouter(log).ServeHTTP(w, httptest.NewRequest("GET", "/nowhere", nil))
	require.Equal(t, 404, w.Code)
	require.JSONEq(t, `{"error":{"code":"route_not_found","message":"no route for GET /nowhere"},"detail":"no route for GET /nowhere"}`, w.Body.String())
}

// TestBrokenBodiesAreTheClients: a body whose chunked framing is malformed
// is a 400 and a body that stalls past the server's read deadline a 408,
// both with the error shape: neither is the server's fault, so neither is
// a 5xx nor logged as an error.
func TestBrokenBodiesAreTheClients(t *testing.T) {
	var logged strings.Builder
	rt := httpjson.NewRouter(slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelError})))
	rt.Handle("POST", "/things", func(w http.ResponseWriter, r *http.Request) error {
		var v struct{ A string }
		if err := httpjson.Decode(w, r, &v); err != nil {
			return err
		}
		httpjson.Write(w, http.StatusCreated, v)
		return nil
	})
	srv := httptest.NewUnstartedServer(rt)
	srv.Config.ReadTimeout = 300 * time.Millisecond
	srv.Start()
	defer srv.Close()
	for _, tc := range []struct {
		request string
		status  int
		code    string
	}{
		{"POST /things HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nA\r\n0\r\n\r\n", http.StatusBadRequest, "invalid_body"},
		{"POST /things HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{", http.StatusRequestTimeout, "request_timeout"},
		{"POST /things HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\n{\"A\":\"b\"}", http.StatusCreated, ""},
	} {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		require.NoError(t, err)
		_, err = io.WriteString(c, tc.request)
		require.NoError(t, err)
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err, tc.request)
		data, _ := io.ReadAll(res.Body)
		res.Body.Close()
		c.Close()
		require.Equal(t, tc.status, res.StatusCode, "%q: %s", tc.request, data)
		require.Empty(t, res.Header.Get("Retry-After"), tc.request)
		if tc.code != "" {
			var body httpjson.Body
			require.NoError(t, json.Unmarshal(data, &body))
			require.Equal(t, tc.code, body.Error.Code)
		}
	}
	require.Empty(t, logged.String(), "a client's broken body is not the server's error")
}
