package claudecli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/agentchat/claudecli"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/internal/fakeanthropic"
	"github.com/agorahq/agora/store/memstore"
)

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
	bin := fakeanthropic.CLI(t)
	api := fakeanthropic.Start(t, nil)

	marker := fmt.Sprintf("AGORA_TEST_MARKER=%d", time.Now().UnixNano())
	home, dir := t.TempDir(), t.TempDir()
	runner := &claudecli.Runner{
		Path: bin, Dir: dir, AllowedTools: []string{"Bash"},
		Env:         append(api.Env(home), marker),
		IdleTimeout: 20 * time.Second, TotalTimeout: 90 * time.Second, KillGrace: 2 * time.Second, AfterResult: 2 * time.Second,
	}
	st := memstore.New()
	svc := agentchat.New(st, runner, agentchat.WithNotifier(st))
	t.Cleanup(svc.Close)
	mux := http.NewServeMux()
	mux.Handle("/agent/", httpapi.AgentChat(svc))
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
