package main

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestProxyWithChat(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-dir", t.TempDir()}, func(a string) { addr <- a })
	}()
	base := "http://" + <-addr
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
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("no shutdown")
	}
}
