package httpapi_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/memstore"
	"github.com/agorahq/agora/store/storetest"
)

// gatedRunner answers with a tool call and waits on gate before finishing.
type gatedRunner struct{ gate chan struct{} }

func (g gatedRunner) Run(ctx context.Context, req agentchat.RunRequest) (agentchat.RunResult, error) {
	req.OnEvent(agentchat.Event{Type: agentchat.EventSystem, Content: "init", SessionID: "s1"})
	req.OnEvent(agentchat.Event{Type: agentchat.EventAssistant, Content: "Looking at " + req.Message})
	req.OnEvent(agentchat.Event{Type: agentchat.EventToolUse, Tool: "Bash", ToolUseID: "t1", Input: []byte(`{"command":"ls"}`)})
	select {
	case <-g.gate:
	case <-ctx.Done():
		return agentchat.RunResult{Stopped: "cancelled"}, nil
	}
	req.OnEvent(agentchat.Event{Type: agentchat.EventToolResult, Tool: "Bash", ToolUseID: "t1", Output: "index.html"})
	req.OnEvent(agentchat.Event{Type: agentchat.EventDone, Result: "done"})
	return agentchat.RunResult{SessionID: "s1"}, nil
}

type sseEvent struct{ id, name, data string }

// readSSE reads events from an SSE body until stop says so.
func readSSE(t *testing.T, res *http.Response, stop func(sseEvent) bool) []sseEvent {
	t.Helper()
	sc := bufio.NewScanner(res.Body)
	var out []sseEvent
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			cur.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			cur.name = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.data = line[6:]
		case line == "" && cur.name != "":
			out = append(out, cur)
			if stop(cur) {
				return out
			}
			cur = sseEvent{}
		}
	}
	t.Fatalf("stream ended after %v", out)
	return nil
}

func TestAgentChatHTTP(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		gate := make(chan struct{})
		svc := agentchat.New(st.AgentChat, gatedRunner{gate}, agentchat.WithNotifier(st.Notifier))
		t.Cleanup(svc.Close)
		mux := http.NewServeMux()
		mux.Handle("/agent/", agentchat.Handler(svc))
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		c := &apiClient{t: t, srv: srv}

		conv := c.expect(201, "POST", "/agent/conversations", "", map[string]any{"title": "footer"}).body
		id := conv["id"].(string)
		require.Equal(t, "idle", conv["status"])
		sent := c.expect(202, "POST", "/agent/conversations/"+id+"/messages", "", map[string]any{"content": "fix the footer"}).body
		require.Equal(t, false, sent["queued"])
		require.EqualValues(t, 1, sent["message_id"])

		// A first reader sees the run so far; it "reloads" after the tool call.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/agent/conversations/"+id+"/stream", nil)
		res, err := srv.Client().Do(req)
		require.NoError(t, err)
		first := readSSE(t, res, func(e sseEvent) bool { return e.name == "tool_use" })
		res.Body.Close()
		var names []string
		for _, e := range first {
			names = append(names, e.name)
		}
		require.Equal(t, []string{"user", "system", "assistant", "tool_use"}, names)
		require.JSONEq(t, `{"content":"Looking at fix the footer"}`, first[2].data)
		last := first[len(first)-1].id

		// A message while the agent works is stored, and starts nothing.
		busy := c.expect(409, "POST", "/agent/conversations/"+id+"/messages", "", map[string]any{"content": "and the header"})
		require.Equal(t, false, busy.body["queued"])

		close(gate)
		req, _ = http.NewRequestWithContext(ctx, "GET", srv.URL+"/agent/conversations/"+id+"/stream", nil)
		req.Header.Set("Last-Event-ID", last)
		res, err = srv.Client().Do(req)
		require.NoError(t, err)
		rest := readSSE(t, res, func(e sseEvent) bool { return e.name == "done" })
		res.Body.Close()
		require.Equal(t, "user", rest[0].name, "the reconnected reader resumes after the last event it saw")
		require.JSONEq(t, `{"content":"and the header"}`, rest[0].data)
		require.Equal(t, "tool_result", rest[1].name)
		require.Contains(t, rest[1].data, "index.html")
		require.Contains(t, rest[2].data, `"conversation_id":"`+id+`"`)

		require.Eventually(t, func() bool {
			return c.expect(200, "GET", "/agent/conversations/"+id, "", nil).body["conversation"].(map[string]any)["status"] == "idle"
		}, 5*time.Second, 10*time.Millisecond)
		full := c.expect(200, "GET", "/agent/conversations/"+id, "", nil).body
		msgs := full["messages"].([]any)
		require.Len(t, msgs, 8, "every event was stored")
		require.Equal(t, "status", msgs[7].(map[string]any)["type"], "a run ends with its status")
		require.JSONEq(t, `{"status":"idle"}`, msgs[7].(map[string]any)["content"].(string))
		require.Equal(t, "s1", full["conversation"].(map[string]any)["session_id"])
		list := c.expect(200, "GET", "/agent/conversations", "", nil).body["conversations"].([]any)
		require.Len(t, list, 1)

		c.expect(409, "POST", "/agent/conversations/"+id+"/cancel", "", nil)
		c.expect(404, "GET", "/agent/conversations/conv_missing", "", nil)
		c.expect(404, "POST", "/agent/conversations/conv_missing/messages", "", map[string]any{"content": "x"})
		c.expect(400, "POST", "/agent/conversations/"+id+"/messages", "", map[string]any{"content": ""})
		c.expect(400, "POST", "/agent/conversations/"+id+"/messages", "", map[string]any{"text": "x"})
		c.expect(204, "DELETE", "/agent/conversations/"+id, "", nil)
		c.expect(404, "DELETE", "/agent/conversations/"+id, "", nil)
	})
}

func TestAgentChatAuthAndIntercept(t *testing.T) {
	svc := agentchat.New(memstore.New(), gatedRunner{make(chan struct{})})
	t.Cleanup(svc.Close)
	chat := agentchat.Handler(svc, agentchat.WithAuth(agentchat.Secret("X-Agent-Secret", "agent_secret", "s3cret")))
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("the app: " + r.URL.Path)) })
	srv := httptest.NewServer(agentchat.Intercept(chat, app))
	t.Cleanup(srv.Close)

	get := func(path string, mod func(*http.Request)) (int, string) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if mod != nil {
			mod(req)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b := new(strings.Builder)
		_, _ = bufio.NewReader(res.Body).WriteTo(b)
		return res.StatusCode, b.String()
	}
	status, body := get("/", nil)
	require.Equal(t, 200, status)
	require.Equal(t, "the app: /", body, "everything else passes through untouched")
	status, body = get("/products/7", nil)
	require.Equal(t, "the app: /products/7", body)
	status, _ = get("/agent/conversations", nil)
	require.Equal(t, 401, status)
	status, _ = get("/agent/conversations", func(r *http.Request) { r.Header.Set("X-Agent-Secret", "wrong") })
	require.Equal(t, 401, status)
	status, _ = get("/agent/conversations", func(r *http.Request) { r.Header.Set("X-Agent-Secret", "s3cret") })
	require.Equal(t, 200, status)
	status, _ = get("/agent/conversations", func(r *http.Request) { r.AddCookie(&http.Cookie{Name: "agent_secret", Value: "s3cret"}) })
	require.Equal(t, 200, status)
	status, body = get("/chat", nil)
	require.Equal(t, 200, status)
	require.Contains(t, body, "data-agora-chat")
	require.NotContains(t, body, "s3cret", "the secret is never served to the page")
}

// TestAgentChatStreamAcrossProcesses runs the agent in one server and reads
// its stream from another sharing the backend.
func TestAgentChatStreamAcrossProcesses(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		gate := make(chan struct{})
		close(gate)
		mk := func(n store.Notifier) *httptest.Server {
			svc := agentchat.New(st.AgentChat, gatedRunner{gate}, agentchat.WithNotifier(n))
			t.Cleanup(svc.Close)
			srv := httptest.NewServer(agentchat.Handler(svc))
			t.Cleanup(srv.Close)
			return srv
		}
		runs, watches := mk(st.Notifier), mk(st.Peer)
		a := &apiClient{t: t, srv: runs}
		id := a.expect(201, "POST", "/agent/conversations", "", map[string]any{}).body["id"].(string)

		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", watches.URL+"/agent/conversations/"+id+"/stream", nil)
		res, err := watches.Client().Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		a.expect(202, "POST", "/agent/conversations/"+id+"/messages", "", map[string]any{"content": "hello"})
		events := readSSE(t, res, func(e sseEvent) bool { return e.name == "status" })
		var names []string
		for _, e := range events {
			names = append(names, e.name)
		}
		require.Equal(t, []string{"user", "system", "assistant", "tool_use", "tool_result", "done", "status"}, names)
		require.JSONEq(t, `{"status":"idle"}`, events[len(events)-1].data)
	})
}
