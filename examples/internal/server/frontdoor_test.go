package server

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/internal/testdb"
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

	// Only "/" itself is the front door: other paths are a JSON 404.
	status, body := call(t, "GET", base+"/no/such/page", "", "")
	require.Equal(t, 404, status)
	require.NotEmpty(t, body["error"])
}

func TestFrontDoorMemory(t *testing.T) {
	base, _ := serve(t, "-admin-key", "adm")
	frontDoorAndHealth(t, base, "memory")
}

func TestFrontDoorRedis(t *testing.T) {
	_, prefix := testdb.RedisClient(t)
	base, _ := serve(t, "-store", testdb.RedisURL(t), "-redis-prefix", prefix, "-admin-key", "adm")
	frontDoorAndHealth(t, base, "redis")
}

func TestFrontDoorPostgres(t *testing.T) {
	base, _ := serve(t, "-store", testdb.PostgresDSN(t), "-admin-key", "adm")
	frontDoorAndHealth(t, base, "postgres")
}

func TestFrontDoorNamesTheChat(t *testing.T) {
	base, _ := serve(t, "-admin-key", "adm", "-agent-dir", t.TempDir(), "-claude", "/nonexistent/claude")
	_, page, _ := get(t, base+"/")
	require.Contains(t, page, `<a href="/chat"><code>/chat</code></a>`)
}

// TestStartupLogNamesThePages: the start-up log names the front door, each
// console and the health route with their URLs.
func TestStartupLogNamesThePages(t *testing.T) {
	var buf bytes.Buffer
	frontDoor{chat: true}.logPages(slog.New(slog.NewTextHandler(&buf, nil)), "http://127.0.0.1:8080")
	log := buf.String()
	for _, url := range []string{"/", "/jobs", "/squad", "/arena/{game_id}", "/chat", "/healthz", "/openapi.json"} {
		url = "url=http://127.0.0.1:8080" + url
		require.True(t, strings.Contains(log, url+" ") || strings.Contains(log, url+"\n"), "%s in\n%s", url, log)
	}
}
