package server_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/server"
)

func get(t *testing.T, url string) (int, string, http.Header) {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(body), res.Header
}

// frontDoorAndHealth checks GET / and GET /healthz of a server on backend.
func frontDoorAndHealth(t *testing.T, base, backend string) {
	status, health := call(t, "GET", base+"/healthz", "", "")
	require.Equal(t, 200, status)
	require.Equal(t, map[string]any{"status": "ok", "store": backend}, health)

	status, doc, docHdr := get(t, base+"/openapi.json")
	require.Equal(t, 200, status)
	require.Equal(t, "application/json", docHdr.Get("Content-Type"))
	require.JSONEq(t, string(httpapi.OpenAPI()), doc, "the package's document")

	status, page, hdr := get(t, base+"/")
	require.Equal(t, 200, status)
	require.Contains(t, hdr.Get("Content-Type"), "text/html")
	require.Contains(t, page, `<strong id="backend">`+backend+`</strong>`)
	require.Contains(t, page, "which answers")
	for _, link := range []string{`href="/jobs"`, `href="/squad"`, `href="/healthz"`, `href="/openapi.json"`, `/arena/{game_id}`, "/api/v1/", "README"} {
		require.Contains(t, page, link)
	}
	require.Contains(t, page, "No games yet")
	require.NotContains(t, page, `href="/chat"`, "no -agent-dir, no chat")

	status, created := call(t, "POST", base+"/api/games", "", `{"min_players":3}`)
	require.Equal(t, 200, status, created)
	game := created["game_id"].(string)
	_, page, _ = get(t, base+"/")
	require.Contains(t, page, `<a href="/arena/`+game+`">`, "the front door links the new game")
	require.Contains(t, page, "waiting for agents")

	// The Trolley Arena's SKILL.md links a spectator to "/?game_id=…".
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(base + "/?game_id=" + game)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, "/arena/"+game, res.Header.Get("Location"))

	// Only "/" itself is the front door: other paths are a JSON 404.
	status, body := call(t, "GET", base+"/no/such/page", "", "")
	require.Equal(t, 404, status)
	require.NotEmpty(t, body["error"])
}

func TestFrontDoorMemory(t *testing.T) {
	t.Parallel()
	base := serve(t, memoryServices(t, false), server.Options{})
	frontDoorAndHealth(t, base, "memory")
}

// TestFrontDoorNamesTheStore: the front door and /healthz name the store
// the host named, and say when its ping fails.
func TestFrontDoorNamesTheStore(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	ping := func(context.Context) error {
		if down.Load() {
			return errors.New("connection refused")
		}
		return nil
	}
	base := serve(t, memoryServices(t, false), server.Options{Store: "postgres", Ping: ping})
	frontDoorAndHealth(t, base, "postgres")
	down.Store(true)
	status, health := call(t, "GET", base+"/healthz", "", "")
	require.Equal(t, 503, status)
	require.Equal(t, "unavailable", health["status"])
	_, page, _ := get(t, base+"/")
	require.Contains(t, page, "does not answer")
}

func TestFrontDoorNamesTheChat(t *testing.T) {
	t.Parallel()
	base := serve(t, memoryServices(t, true), server.Options{})
	_, page, _ := get(t, base+"/")
	require.Contains(t, page, `<a href="/chat"><code>/chat</code></a>`)
}

// TestFrontDoorNamesTheMetrics: with a MetricsHandler, GET /metrics serves
// it and the front door links it.
func TestFrontDoorNamesTheMetrics(t *testing.T) {
	t.Parallel()
	metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "agora_up 1\n") })
	base := serve(t, memoryServices(t, false), server.Options{MetricsHandler: metrics})
	status, body, _ := get(t, base+"/metrics")
	require.Equal(t, 200, status)
	require.Equal(t, "agora_up 1\n", body)
	_, page, _ := get(t, base+"/")
	require.Contains(t, page, `href="/metrics"`)
}
