package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServerChatAuthDelegates serves the agent chat with -chat-auth
// delegate, its endpoint from the environment: the application's auth
// endpoint decides from the forwarded cookie.
func TestServerChatAuthDelegates(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("session"); err == nil && c.Value == "ok" {
			w.WriteHeader(200)
			return
		}
		w.WriteHeader(401)
	}))
	t.Cleanup(app.Close)
	t.Setenv("AGORA_CHAT_AUTH_URL", app.URL+"/auth")
	base, _ := serve(t, "-admin-key", "adm", "-agent-dir", t.TempDir(), "-claude", "/nonexistent/claude", "-chat-auth", "delegate")
	get := func(path, cookie string) int {
		req, _ := http.NewRequest("GET", base+path, nil)
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		return res.StatusCode
	}
	require.Equal(t, 401, get("/agent/conversations", ""))
	require.Equal(t, 401, get("/agent/conversations", "session=no"))
	require.Equal(t, 200, get("/agent/conversations", "session=ok"))
	require.Equal(t, 200, get("/chat/config", ""))
	require.Equal(t, 200, get("/chat.css", ""))
}

// TestTrustedChatAuthRefusesHeaderless: -chat-auth trusted passes the
// exposure guard because a proxy is to set the user header; a request
// that did not pass it (no header) is 401, not let in.
func TestTrustedChatAuthRefusesHeaderless(t *testing.T) {
	t.Parallel()
	base, _ := serve(t, "-quiet", "-addr", "0.0.0.0:0", "-agent-dir", t.TempDir(), "-claude", "/nonexistent/claude", "-chat-auth", "trusted")
	get := func(user string) int {
		req, _ := http.NewRequest("GET", base+"/agent/conversations", nil)
		if user != "" {
			req.Header.Set("X-SlotMachine-User", user)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		return res.StatusCode
	}
	require.Equal(t, http.StatusUnauthorized, get(""))
	require.Equal(t, http.StatusOK, get("alice"))
}
