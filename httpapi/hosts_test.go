package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi"
)

// TestGuardHostsRefusesRebinding: a server on loopback answers only loopback
// Host names and the ones the operator allows, so a rebound page (its own
// name, pointed at 127.0.0.1) is refused before any handler; a server on
// another address answers every name unless names are given.
func TestGuardHostsRefusesRebinding(t *testing.T) {
	t.Parallel()
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	for _, tc := range []struct {
		listen  string
		allowed []string
		host    string
		status  int
	}{
		{"127.0.0.1:8080", nil, "127.0.0.1:8080", 204},
		{"127.0.0.1:8080", nil, "localhost:8080", 204},
		{"127.0.0.1:8080", nil, "LOCALHOST.", 204},
		{"127.0.0.1:8080", nil, "app.localhost:8080", 204},
		{"[::1]:8080", nil, "[::1]:8080", 204},
		{"localhost:8080", nil, "127.0.0.2", 204},
		{"127.0.0.1:8080", nil, "rebind.evil.example:8080", 403},
		{"127.0.0.1:8080", nil, "10.0.0.1:8080", 403},
		{"127.0.0.1:8080", nil, "", 403},
		{"127.0.0.1:8080", []string{"agora.internal"}, "Agora.Internal:8080", 204},
		{"127.0.0.1:8080", []string{"agora.internal"}, "evil.internal:8080", 403},
		{"0.0.0.0:8080", nil, "rebind.evil.example:8080", 204},
		{"0.0.0.0:8080", []string{"agora.example"}, "agora.example", 204},
		{"0.0.0.0:8080", []string{"agora.example"}, "rebind.evil.example", 403},
	} {
		req := httptest.NewRequest("POST", "/agent/conversations", nil)
		req.Host = tc.host
		req.Header.Set("Origin", "http://"+tc.host)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		rec := httptest.NewRecorder()
		httpapi.GuardHosts(ok, tc.listen, tc.allowed).ServeHTTP(rec, req)
		require.Equal(t, tc.status, rec.Code, "listen %s allowed %v host %q", tc.listen, tc.allowed, tc.host)
		if tc.status == 403 {
			require.Contains(t, rec.Body.String(), `"host_not_allowed"`)
		}
	}
}
