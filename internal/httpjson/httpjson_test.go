package httpjson_test

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

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
