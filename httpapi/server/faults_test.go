package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi/server"
)

// TestShutdownEndsStreams: shutting down with event streams open ends them
// and returns nil, instead of waiting for the streams' clients to leave.
func TestShutdownEndsStreams(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := server.New(memoryServices(t, false), server.Options{Logger: quiet})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()
	for _, path := range []string{"/api/squad-chat/events", "/api/v1/events"} {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+admin)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, path)
		line, err := bufio.NewReader(res.Body).ReadString('\n')
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(line, "event: "), line)
	}
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err, "shutdown with streams open")
	case <-time.After(30 * time.Second):
		t.Fatal("shutdown waited on the open streams")
	}
}

func TestHeadOnAStreamAnswersAtOnce(t *testing.T) {
	t.Parallel()
	base := serve(t, memoryServices(t, false), server.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "HEAD", base+"/api/squad-chat/events", nil)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
}

func TestUncleanPathsAreRefused(t *testing.T) {
	t.Parallel()
	base := serve(t, memoryServices(t, false), server.Options{})
	for _, p := range []string{"/api/../api/games", "/api/games/..", "/api//games", "/api/./games"} {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		require.NoError(t, err)
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", p)
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err, p)
		res.Body.Close()
		c.Close()
		require.Equal(t, http.StatusBadRequest, res.StatusCode, p)
		require.Contains(t, res.Header.Get("Content-Type"), "application/json", p)
	}
	requireServes(t, base+"/api/games")
}

// TestStalledClientsDoNotStopOthers: a thousand connections that send their
// headers and never their body hold nothing the server needs to answer
// anyone else.
func TestStalledClientsDoNotStopOthers(t *testing.T) {
	t.Parallel()
	base := serve(t, memoryServices(t, false), server.Options{})
	host := strings.TrimPrefix(base, "http://")
	for i := 0; i < 1000; i++ {
		c, err := net.Dial("tcp", host)
		require.NoError(t, err)
		defer c.Close()
		_, err = fmt.Fprintf(c, "POST /api/discussion HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
		require.NoError(t, err)
	}
	requireServes(t, base+"/api/games")
}

func requireServes(t *testing.T, url string) {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, url)
}

// TestMaxConnsHoldsTheRestBack: with MaxConns 2 and two connections
// stalled, a third is answered only once one of them is gone.
func TestMaxConnsHoldsTheRestBack(t *testing.T) {
	t.Parallel()
	base := serve(t, memoryServices(t, false), server.Options{MaxConns: 2})
	host := strings.TrimPrefix(base, "http://")
	var stalled []net.Conn
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", host)
		require.NoError(t, err)
		defer c.Close()
		_, err = fmt.Fprintf(c, "POST /api/discussion HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n{")
		require.NoError(t, err)
		stalled = append(stalled, c)
	}
	answered := make(chan int, 1)
	go func() {
		res, err := http.Get(base + "/api/games")
		if err != nil {
			answered <- 0
			return
		}
		res.Body.Close()
		answered <- res.StatusCode
	}()
	select {
	case s := <-answered:
		t.Fatalf("a third connection was served (%d) while two were held", s)
	case <-time.After(300 * time.Millisecond):
	}
	stalled[0].Close()
	require.Equal(t, http.StatusOK, <-answered)
}

// TestPagesRefuseFraming: no other site may frame a page.
func TestPagesRefuseFraming(t *testing.T) {
	t.Parallel()
	base := serve(t, memoryServices(t, true), server.Options{})
	for _, p := range []string{"/jobs", "/squad", "/arena/g1", "/chat"} {
		res, err := http.Get(base + p)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, p)
		require.Contains(t, res.Header.Get("Content-Security-Policy"), "frame-ancestors 'self'", p)
		require.Equal(t, "SAMEORIGIN", res.Header.Get("X-Frame-Options"), p)
	}
}

// TestPagesAnswerJSONWhenNothingIsThere: under the pages' paths, a path
// with no page or file is a JSON 404 and another method than GET or HEAD a
// JSON 405 naming GET, as every API route answers, never the pages'
// content or a plain-text 404.
func TestPagesAnswerJSONWhenNothingIsThere(t *testing.T) {
	t.Parallel()
	base := serve(t, memoryServices(t, true), server.Options{})
	for _, tc := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/console/", 404, "route_not_found"},
		{"GET", "/console/missing.js", 404, "file_not_found"},
		{"GET", "/console/a/b", 404, "route_not_found"},
		{"GET", "/arena/", 404, "route_not_found"},
		{"GET", "/arena/g1/x", 404, "route_not_found"},
		{"HEAD", "/console/missing.js", 404, ""},
		{"POST", "/jobs", 405, "method_not_allowed"},
		{"DELETE", "/squad", 405, "method_not_allowed"},
		{"PUT", "/device", 405, "method_not_allowed"},
		{"POST", "/arena/g1", 405, "method_not_allowed"},
		{"POST", "/console/console.js", 405, "method_not_allowed"},
		{"POST", "/chat", 405, "method_not_allowed"},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, nil)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		what := tc.method + " " + tc.path
		require.Equal(t, tc.status, res.StatusCode, "%s: %s", what, body)
		require.Contains(t, res.Header.Get("Content-Type"), "application/json", what)
		if tc.code != "" {
			require.Contains(t, string(body), `"code":"`+tc.code+`"`, what)
		}
		if tc.status == 405 {
			require.Equal(t, "GET", res.Header.Get("Allow"), what)
		}
	}
	// What is there is still served.
	for _, p := range []string{"/jobs", "/squad", "/device", "/arena/g1", "/console/console.js", "/chat"} {
		for _, method := range []string{"GET", "HEAD"} {
			req, _ := http.NewRequest(method, base+p, nil)
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			res.Body.Close()
			require.Equal(t, http.StatusOK, res.StatusCode, method+" "+p)
			require.NotContains(t, res.Header.Get("Content-Type"), "json", method+" "+p)
		}
	}
}

// TestRebindingIsRefused: on a loopback address the server answers loopback
// Host names and AllowedHosts only, so a page rebound to 127.0.0.1 under
// its own name cannot drive the open agent chat, nor any other route.
func TestRebindingIsRefused(t *testing.T) {
	t.Parallel()
	base := serve(t, memoryServices(t, true), server.Options{Addr: "127.0.0.1:0", AllowedHosts: []string{"agora.internal", " "}})
	port := base[strings.LastIndex(base, ":")+1:]
	send := func(host, path string) int {
		req, err := http.NewRequest("POST", base+path, strings.NewReader(`{}`))
		require.NoError(t, err)
		req.Host = host + ":" + port
		req.Header.Set("Origin", "http://"+req.Host)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		return res.StatusCode
	}
	for _, path := range []string{"/agent/conversations", "/api/discussion", "/healthz"} {
		require.Equal(t, http.StatusForbidden, send("rebind.evil.example", path), path)
	}
	require.Equal(t, http.StatusCreated, send("127.0.0.1", "/agent/conversations"))
	require.Equal(t, http.StatusCreated, send("localhost", "/agent/conversations"))
	require.Equal(t, http.StatusCreated, send("agora.internal", "/agent/conversations"))
}

// TestMalformedChunkedBodyIs400: the campaign's request, through the server.
func TestMalformedChunkedBodyIs400(t *testing.T) {
	t.Parallel()
	base := serve(t, memoryServices(t, false), server.Options{})
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "POST /api/squad-chat HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nA\r\n0\r\n\r\n")
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
}

// TestMaxConnsSlowClientsGiveWay: with MaxConns 5 and fifty connections
// that never finish their headers, a health check is answered within a
// second: a connection without a request in progress gives its slot up.
func TestMaxConnsSlowClientsGiveWay(t *testing.T) {
	t.Parallel()
	base := serve(t, memoryServices(t, false), server.Options{MaxConns: 5})
	host := strings.TrimPrefix(base, "http://")
	for i := 0; i < 50; i++ {
		c, err := net.Dial("tcp", host)
		require.NoError(t, err)
		defer c.Close()
		_, err = fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
		require.NoError(t, err)
	}
	for i := 0; i < 3; i++ {
		start := time.Now()
		client := &http.Client{Timeout: 5 * time.Second}
		res, err := client.Get(base + "/healthz")
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Less(t, time.Since(start), time.Second, "a health check waits on slow clients")
	}
}
