package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi/chatauth"
)

// start runs the command with args on a free port until the test ends,
// when it must shut down cleanly, and returns its base URL.
func start(t *testing.T, args ...string) string {
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0", "-dir", t.TempDir()}, args...), func(a string) { addr <- a })
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("no shutdown")
		}
	})
	return "http://" + <-addr
}

func TestProxyWithChat(t *testing.T) {
	base := start(t)
	get := func(path string) (int, string) {
		res, err := http.Get(base + path)
		require.NoError(t, err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	status, body := get("/pricing")
	require.Equal(t, 200, status)
	require.Contains(t, body, "Tiny app")
	status, body = get("/chat")
	require.Equal(t, 200, status)
	require.Contains(t, body, "data-agora-chat")
	status, _ = get("/agent/conversations")
	require.Equal(t, 200, status)
}

// TestChatAuthFromFlagsAndEnvironment guards the agent API with
// slot-machine's signed-user header, chosen by -chat-auth with the key
// from the environment.
func TestChatAuthFromFlagsAndEnvironment(t *testing.T) {
	t.Setenv("AGORA_CHAT_SECRET", "k3y-0123456789abcdef0123456789abcdef")
	base := start(t, "-chat-auth", "hmac")
	get := func(path, user string) (int, string) {
		req, _ := http.NewRequest("GET", base+path, nil)
		if user != "" {
			req.Header.Set(chatauth.UserHeader, user)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	status, _ := get("/agent/conversations", "")
	require.Equal(t, 401, status)
	status, _ = get("/agent/conversations", chatauth.SignUser("k3y-0123456789abcdef0123456789abcdef", "dana"))
	require.Equal(t, 200, status)
	status, body := get("/chat/config", "")
	require.Equal(t, 200, status)
	require.JSONEq(t, `{"authMode":"hmac","authSecret":"","chatTitle":"Agora","chatAccent":""}`, body)
	require.Error(t, run(context.Background(), []string{"-addr", "127.0.0.1:0", "-chat-auth", "basic"}, func(string) {}), "an unknown scheme is refused")
}

// TestRebindingIsRefused: the open chat on loopback answers loopback Host
// names only, so a page rebound to 127.0.0.1 cannot drive the agent.
func TestRebindingIsRefused(t *testing.T) {
	base := start(t)
	req, _ := http.NewRequest("POST", base+"/agent/conversations", strings.NewReader(`{}`))
	req.Host = "rebind.evil.example"
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusForbidden, res.StatusCode)
}
