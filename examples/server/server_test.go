package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/testdb"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// serve starts the server with args and returns its base URL; the server
// stops (and run must return nil) when the test ends.
func serve(t *testing.T, args ...string) (string, *bytes.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), &out, func(a string) { addr <- a })
	}()
	select {
	case a := <-addr:
		t.Cleanup(func() {
			cancel()
			// No deadline here: a shutdown that hangs is stopped by go
			// test's -timeout, and a slow one is not a failure.
			require.NoError(t, <-done, "graceful shutdown")
		})
		return "http://" + a, &out
	case err := <-done:
		cancel()
		t.Fatalf("server did not start: %v", err)
	}
	return "", nil
}

func call(t *testing.T, method, url, token, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	var m map[string]any
	if len(data) > 0 && strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		require.NoError(t, json.Unmarshal(data, &m), string(data))
	}
	return res.StatusCode, m
}

// agentLoop drives the documented agent workflow through a running server.
func agentLoop(t *testing.T, base, admin string) {
	status, key := call(t, "POST", base+"/api/v1/keys", admin, `{"name":"human","scopes":["claim:create","slots:configure","comment:create"]}`)
	require.Equal(t, 201, status)
	human := key["key"].(string)
	_, key = call(t, "POST", base+"/api/v1/keys", admin, `{"name":"Skeptic-7","scopes":["comment:create"]}`)
	agent := key["key"].(string)

	status, claim := call(t, "POST", base+"/api/v1/claims", human, `{"title":"t","body":"b","domain":"physics"}`)
	require.Equal(t, 201, status)
	id := claim["_id"].(string)
	status, _ = call(t, "POST", base+"/api/v1/claims/"+id+"/slots", human, `{"roles":[{"role":"critic","count":2}]}`)
	require.Equal(t, 201, status)
	status, _ = call(t, "POST", base+"/api/v1/claims/"+id+"/comments", human, `{"body":"d","commentType":"draft"}`)
	require.Equal(t, 200, status)
	status, job := call(t, "GET", base+"/api/v1/jobs/slots?domain=physics", agent, "")
	require.Equal(t, 200, status)
	slot := job["slot"].(map[string]any)["_id"].(string)
	status, _ = call(t, "POST", base+"/api/v1/claims/"+id+"/slots/"+slot+"/take", agent, "")
	require.Equal(t, 200, status)
	status, _ = call(t, "POST", base+"/api/v1/claims/"+id+"/slots/"+slot+"/done", agent, "")
	require.Equal(t, 200, status)
	status, me := call(t, "GET", base+"/api/v1/me", agent, "")
	require.Equal(t, 200, status)
	require.EqualValues(t, 10, me["balance"])

	// Claims start their Prism pipeline.
	status, pipe := call(t, "GET", base+"/api/v1/claims/"+id+"/pipeline", agent, "")
	require.Equal(t, 200, status)
	require.Equal(t, "active", pipe["status"])

	// The discussion routes answer beside /api/v1, without a key.
	status, created := call(t, "POST", base+"/api/discussion", "", `{"requester_agent":"Developer","prompt_message":"?","required_responses":1}`)
	require.Equal(t, 201, status)
	promptID := created["prompt"].(map[string]any)["id"].(string)
	status, _ = call(t, "POST", base+"/api/discussion/"+promptID, "", `{"agent_name":"Builder","message":"go"}`)
	require.Equal(t, 201, status)
	status, view := call(t, "GET", base+"/api/discussion/"+promptID+"?wait=1", "", "")
	require.Equal(t, 200, status)
	require.Equal(t, true, view["ready"])
	status, demo := call(t, "POST", base+"/api/demo/create", "", "")
	require.Equal(t, 200, status, "200 as the original answers a demo")
	status, _ = call(t, "GET", base+"/api/games/"+demo["game_id"].(string)+"/state", "", "")
	require.Equal(t, 200, status)
	res, err := http.Get(base + "/squad")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, 200, res.StatusCode)
	status, _ = call(t, "GET", base+"/api/nothing", "", "")
	require.Equal(t, 404, status)
}

func TestServerMemory(t *testing.T) {
	base, _ := serve(t, "-store", "memory", "-admin-key", "adm")
	status, me := call(t, "GET", base+"/api/v1/me", "adm", "")
	require.Equal(t, 200, status)
	require.Equal(t, "admin", me["_id"])
	agentLoop(t, base, "adm")
}

func TestServerGeneratesAdminKey(t *testing.T) {
	t.Setenv("AGORA_ADMIN_KEY", "")
	base, out := serve(t)
	line := strings.TrimSpace(out.String())
	admin, ok := strings.CutPrefix(line, "admin key (shown once): ")
	require.True(t, ok, line)
	status, _ := call(t, "GET", base+"/api/v1/me", admin, "")
	require.Equal(t, 200, status)
}

func TestServerRedis(t *testing.T) {
	_, prefix := testdb.RedisClient(t) // cleans the prefix when the test ends
	base, _ := serve(t, "-store", testdb.RedisURL(t), "-redis-prefix", prefix, "-admin-key", "adm")
	agentLoop(t, base, "adm")
}

func TestServerPostgres(t *testing.T) {
	base, _ := serve(t, "-store", testdb.PostgresDSN(t), "-admin-key", "adm")
	agentLoop(t, base, "adm")
}

func TestServerBadStore(t *testing.T) {
	err := run(context.Background(), []string{"-store", "mysql://x"}, io.Discard, nil)
	require.ErrorContains(t, err, "want memory")
}

func TestServerAgentChatNeedsAgentDir(t *testing.T) {
	base, _ := serve(t, "-admin-key", "adm")
	status, _ := call(t, "GET", base+"/agent/conversations", "", "")
	require.Equal(t, 404, status, "no -agent-dir, no agent")

	dir := t.TempDir()
	env := dir + "/agent.env"
	require.NoError(t, os.WriteFile(env, []byte("FOO=bar\n"), 0o600))
	base, _ = serve(t, "-admin-key", "adm", "-agent-dir", dir, "-env-file", env, "-claude", "/nonexistent/claude")
	status, conv := call(t, "POST", base+"/agent/conversations", "", `{"title":"t"}`)
	require.Equal(t, 201, status)
	status, _ = call(t, "GET", base+"/agent/conversations/"+conv["id"].(string), "", "")
	require.Equal(t, 200, status)
	res, err := http.Get(base + "/chat")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, 200, res.StatusCode)
	require.Contains(t, res.Header.Get("Content-Type"), "text/html")
}

// TestOpenAgentChatOnlyOnLoopback: the agent API runs the coding agent, so
// without chat auth it is served on loopback only, unless -chat-open.
func TestOpenAgentChatOnlyOnLoopback(t *testing.T) {
	t.Parallel()
	args := []string{"-addr", "0.0.0.0:0", "-quiet", "-agent-dir", t.TempDir(), "-claude", "/nonexistent/claude"}
	err := run(context.Background(), args, io.Discard, nil)
	require.ErrorContains(t, err, "-chat-open")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append(args, "-chat-auth", "secret", "-chat-secret", "s3"), io.Discard, func(string) { cancel() })
	}()
	require.NoError(t, <-done, "with a secret it serves")
}

func get(t *testing.T, url string) (int, string, http.Header) {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(body), res.Header
}

// frontDoorNamesTheStore: the health route and the front door name the
// backend -store opened, and it answers.
func frontDoorNamesTheStore(t *testing.T, base, backend string) {
	status, health := call(t, "GET", base+"/healthz", "", "")
	require.Equal(t, 200, status)
	require.Equal(t, map[string]any{"status": "ok", "store": backend}, health)
	status, page, _ := get(t, base+"/")
	require.Equal(t, 200, status)
	require.Contains(t, page, `<strong id="backend">`+backend+`</strong>`)
	require.Contains(t, page, "which answers")
}

func TestFrontDoorMemory(t *testing.T) {
	base, _ := serve(t, "-admin-key", "adm")
	frontDoorNamesTheStore(t, base, "memory")
}

func TestFrontDoorRedis(t *testing.T) {
	_, prefix := testdb.RedisClient(t)
	base, _ := serve(t, "-store", testdb.RedisURL(t), "-redis-prefix", prefix, "-admin-key", "adm")
	frontDoorNamesTheStore(t, base, "redis")
}

func TestFrontDoorPostgres(t *testing.T) {
	base, _ := serve(t, "-store", testdb.PostgresDSN(t), "-admin-key", "adm")
	frontDoorNamesTheStore(t, base, "postgres")
}
