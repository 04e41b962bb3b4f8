package agentchat_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/store/memstore"
)

// claudeCLI finds the real Claude Code CLI: $AGORA_CLAUDE, or claude on
// PATH. Outside CI a machine without it skips; under CI=true it fails.
func claudeCLI(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("AGORA_CLAUDE"); p != "" {
		return p
	}
	if p, err := exec.LookPath("claude"); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI=true and no Claude Code CLI: npm install @anthropic-ai/claude-code (.ci/run does)")
	}
	t.Skip("no Claude Code CLI: npm install @anthropic-ai/claude-code, or set AGORA_CLAUDE")
	return ""
}

// fakeAnthropic serves just enough of the Messages API for the CLI: a
// request offering tools gets a Bash tool call, the request carrying its
// result gets a closing text, anything else a short text. A request whose
// prompt says HANG_NOW gets no answer until the test ends.
type fakeAnthropic struct {
	mu       sync.Mutex
	requests int
	hang     chan struct{}
}

func sse(w io.Writer, event string, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
}

func (f *fakeAnthropic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/v1/messages") || strings.Contains(r.URL.Path, "count_tokens") {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"input_tokens":10}`)
		return
	}
	body, _ := io.ReadAll(r.Body)
	if os.Getenv("AGORA_DEBUG_FAKE_API") != "" {
		fmt.Fprintf(os.Stderr, "fake API: %s %s %.300s\n", r.Method, r.URL, body)
	}
	f.mu.Lock()
	f.requests++
	n := f.requests
	f.mu.Unlock()
	var req struct {
		Model    string            `json:"model"`
		Tools    []json.RawMessage `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	if os.Getenv("AGORA_DEBUG_FAKE_API") != "" {
		fmt.Fprintf(os.Stderr, "fake API: tools=%d stream=%v\n", len(req.Tools), strings.Contains(string(body), `"stream":true`))
	}
	last := ""
	if len(req.Messages) > 0 {
		last = string(req.Messages[len(req.Messages)-1].Content)
	}
	if strings.Contains(last, "HANG_NOW") && len(req.Tools) > 0 {
		select {
		case <-f.hang:
		case <-r.Context().Done():
		}
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	id := fmt.Sprintf("msg_fake_%d", n)
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": req.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": 100, "output_tokens": 1}}})
	text := func(i int, s string) {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": s}})
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	stop := "end_turn"
	switch {
	case len(req.Tools) > 0 && strings.Contains(last, "tool_result"):
		text(0, "The command printed hello.")
	case len(req.Tools) > 0:
		text(0, "I'll run a command.")
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 1, "content_block": map[string]any{
			"type": "tool_use", "id": fmt.Sprintf("toolu_fake_%d", n), "name": "Bash", "input": map[string]any{}}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 1, "delta": map[string]any{
			"type": "input_json_delta", "partial_json": `{"command":"echo hello","description":"Print hello"}`}})
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 1})
		stop = "tool_use"
	default:
		text(0, "ok")
	}
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 20}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}

func streamUntil(t *testing.T, ctx context.Context, url string, after int64, stop string) []string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s?after=%d", url, after), nil)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var names []string
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			names = append(names, name)
			if name == stop || name == "error" {
				return names
			}
		}
	}
	t.Fatalf("stream ended after %v", names)
	return nil
}

// processesWith returns the PIDs of processes whose environment holds
// marker.
func processesWith(marker string) []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		env, err := os.ReadFile(d + "/environ")
		if err == nil && strings.Contains(string(env), marker) {
			out = append(out, filepath.Base(d))
		}
	}
	return out
}

// TestRealClaudeCLI runs the real Claude Code CLI against a fake Messages
// API through the HTTP API: a tool call streams in order, a second message
// resumes the same session, and a cancel leaves no process behind.
func TestRealClaudeCLI(t *testing.T) {
	bin := claudeCLI(t)
	api := &fakeAnthropic{hang: make(chan struct{})}
	apiSrv := httptest.NewServer(api)
	t.Cleanup(apiSrv.Close)
	t.Cleanup(func() { close(api.hang) })

	marker := fmt.Sprintf("AGORA_TEST_MARKER=%d", time.Now().UnixNano())
	home, dir := t.TempDir(), t.TempDir()
	runner := &agentchat.CLIRunner{
		Path: bin, Dir: dir, AllowedTools: []string{"Bash"},
		Env: []string{"HOME=" + home, "ANTHROPIC_BASE_URL=" + apiSrv.URL, "ANTHROPIC_API_KEY=sk-test-fake",
			"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", marker},
		IdleTimeout: 20 * time.Second, TotalTimeout: 90 * time.Second, KillGrace: 2 * time.Second, AfterResult: 2 * time.Second,
	}
	st := memstore.New()
	svc := agentchat.New(st, runner, agentchat.WithNotifier(st))
	t.Cleanup(svc.Close)
	mux := http.NewServeMux()
	mux.Handle("/agent/", agentchat.Handler(svc))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := &apiClient{t: t, base: srv.URL}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	id := c.post("/agent/conversations", `{"title":"cli"}`, 201)["id"].(string)
	stream := srv.URL + "/agent/conversations/" + id + "/stream"

	c.post("/agent/conversations/"+id+"/messages", `{"content":"run echo hello"}`, 202)
	names := streamUntil(t, ctx, stream, 0, "done")
	if names[len(names)-1] == "error" {
		for _, m := range c.get("/agent/conversations/" + id)["messages"].([]any) {
			t.Logf("stored: %v", m)
		}
	}
	require.Equal(t, []string{"user", "system", "assistant", "tool_use", "tool_result", "assistant", "done"}, names)
	conv := waitIdle(t, c, id)
	session := conv["session_id"].(string)
	require.NotEmpty(t, session)

	c.post("/agent/conversations/"+id+"/messages", `{"content":"and again"}`, 202)
	names = streamUntil(t, ctx, stream, 8, "done")
	require.Contains(t, names, "tool_result")
	conv = waitIdle(t, c, id)
	require.Equal(t, session, conv["session_id"], "the second message resumed the same session")

	c.post("/agent/conversations/"+id+"/messages", `{"content":"HANG_NOW"}`, 202)
	require.Eventually(t, func() bool { return len(processesWith(marker)) > 0 }, 30*time.Second, 50*time.Millisecond)
	time.Sleep(500 * time.Millisecond) // the CLI is waiting on the API
	c.post("/agent/conversations/"+id+"/cancel", ``, 200)
	require.Eventually(t, func() bool { return len(processesWith(marker)) == 0 }, 15*time.Second, 50*time.Millisecond, "no process left behind")
	require.Eventually(t, func() bool {
		return c.get("/agent/conversations/" + id)["conversation"].(map[string]any)["status"] == "cancelled"
	}, 10*time.Second, 50*time.Millisecond)
}

type apiClient struct {
	t    *testing.T
	base string
}

func (c *apiClient) do(method, path, body string, status int) map[string]any {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	require.Equal(c.t, status, res.StatusCode, "%s %s: %s", method, path, data)
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	return m
}

func (c *apiClient) post(path, body string, status int) map[string]any {
	c.t.Helper()
	return c.do("POST", path, body, status)
}

func (c *apiClient) get(path string) map[string]any {
	c.t.Helper()
	return c.do("GET", path, "", 200)
}

func waitIdle(t *testing.T, c *apiClient, id string) map[string]any {
	t.Helper()
	var conv map[string]any
	require.Eventually(t, func() bool {
		conv = c.get("/agent/conversations/" + id)["conversation"].(map[string]any)
		return conv["status"] == "idle"
	}, 30*time.Second, 50*time.Millisecond)
	return conv
}
