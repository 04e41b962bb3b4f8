package main

import (
	"context"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/testdb"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

func demo(t *testing.T, args ...string) string {
	t.Helper()
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	require.NoError(t, run(ctx, append(args, "-timeout", "2m"), &out))
	text := out.String()
	for _, want := range []string{"prism: layer 7/7 Synthesis agreed", "prism: complete", "(3/3)", "arena: the trolley took the", "arena: game completed", "answered (2/2)", "discussion: resolved", "summary:"} {
		require.Contains(t, text, want)
	}
	return text
}

func TestDemoMemory(t *testing.T) { t.Logf("\n%s", demo(t)) }

func TestDemoRedis(t *testing.T) {
	_, prefix := testdb.RedisClient(t) // cleans the prefix afterwards
	demo(t, "-store", testdb.RedisURL(t), "-redis-prefix", prefix)
}

func TestDemoPostgres(t *testing.T) { demo(t, "-store", testdb.PostgresDSN(t)) }

// syncBuffer is an output the demo writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDemoServe keeps the server up after the demo, past -timeout, and
// prints console URLs that answer, until interrupted. The timeout is as long
// as a loaded machine's demo could need, so the test waits that long: it
// must outlast the demo, or it would test the machine's speed.
func TestDemoServe(t *testing.T) {
	t.Parallel()
	const timeout = 45 * time.Second
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	var out syncBuffer
	done := make(chan error, 1)
	started := time.Now()
	go func() { done <- run(ctx, []string{"-serve", "-timeout", timeout.String()}, &out) }()

	var urls []string
	if !assert.Eventually(t, func() bool {
		text := out.String()
		i := strings.Index(text, "the console:\n")
		if i < 0 {
			return false
		}
		urls = strings.Fields(text[i+len("the console:\n"):])
		return len(urls) == 3
	}, 2*timeout, 20*time.Millisecond) {
		t.Fatalf("no console URLs; the demo printed:\n%s", out.String())
	}
	get := func() {
		for _, u := range urls {
			res, err := http.Get(u)
			require.NoError(t, err)
			res.Body.Close()
			require.Equal(t, http.StatusOK, res.StatusCode, u)
			require.Contains(t, res.Header.Get("Content-Type"), "text/html", u)
		}
	}
	get()
	time.Sleep(time.Until(started.Add(timeout + 500*time.Millisecond)))
	get() // still serving after -timeout
	select {
	case err := <-done:
		t.Fatalf("the demo returned before it was interrupted: %v", err)
	default:
	}
	interrupt()
	require.NoError(t, <-done)
}
