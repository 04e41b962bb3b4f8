package main

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMetricsFlag: with -metrics the server serves /metrics, counts its
// requests and store calls there, and its front door links it.
func TestMetricsFlag(t *testing.T) {
	t.Parallel()
	base, _ := serve(t, "-metrics")
	status, created := call(t, "POST", base+"/api/games", "", `{"min_players":3}`)
	require.Equal(t, 200, status, created)
	_, page, _ := get(t, base+"/")
	require.Contains(t, page, `href="/metrics"`)

	status, scrape, hdr := get(t, base+"/metrics")
	require.Equal(t, 200, status)
	require.Contains(t, hdr.Get("Content-Type"), "text/plain")
	require.NotEmpty(t, hdr.Get("X-Request-Id"), "every answer carries its request ID")
	for _, line := range []string{
		`agora_http_requests_total{code="200",method="POST",route="POST /api/games"} 1`,
		`agora_http_requests_total{code="200",method="GET",route="GET /{$}"} 1`,
		`agora_store_calls_total{backend="memory",operation="CreateGame",result="ok"} 1`,
		`agora_arena_games_total{status="waiting_for_agents"} 1`, // the services are observed too
		`go_goroutines `,
	} {
		require.Contains(t, scrape, line)
	}
}

// TestMetricsOffByDefault: without -metrics there is no /metrics and no
// link to it.
func TestMetricsOffByDefault(t *testing.T) {
	t.Parallel()
	base, _ := serve(t)
	status, _, _ := get(t, base+"/metrics")
	require.Equal(t, 404, status)
	_, page, _ := get(t, base+"/")
	require.NotContains(t, page, `href="/metrics"`)
}

// TestLogFormatFromEnvironment: -log-format, like every flag, comes from
// AGORA_LOG_FORMAT too, and a format that is neither text nor json stops
// the server before it starts.
func TestLogFormatFromEnvironment(t *testing.T) {
	t.Setenv("AGORA_LOG_FORMAT", "xml")
	err := run(context.Background(), []string{"-addr", "127.0.0.1:0"}, &bytes.Buffer{}, nil)
	require.ErrorContains(t, err, `log format "xml"`)
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-log-format", "yaml"}, &bytes.Buffer{}, nil)
	require.ErrorContains(t, err, `log format "yaml"`, "the command line wins")
}

// TestStreamObservedAndTraced: with -metrics and tracing on, an event
// stream still streams (the deadlines reach the connection through the
// middleware's writers) and counts as open while it lasts.
func TestStreamObservedAndTraced(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "console") // spans go to stderr
	base, _ := serve(t, "-metrics", "-admin-key", "adm", "-quiet")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/events", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer adm")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, 200, res.StatusCode)
	require.Contains(t, res.Header.Get("Content-Type"), "text/event-stream")
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	require.NoError(t, err)
	require.NotEmpty(t, line, "the stream's first event")

	_, scrape, _ := get(t, base+"/metrics")
	require.Contains(t, scrape, "agora_http_streams_open 1")
	cancel()
	require.Eventually(t, func() bool {
		_, scrape, _ := get(t, base+"/metrics")
		return strings.Contains(scrape, "agora_http_streams_open 0") &&
			strings.Contains(scrape, `agora_http_requests_total{code="200",method="GET",route="GET /api/v1/events"} 1`)
	}, 5*time.Second, 20*time.Millisecond)
}
