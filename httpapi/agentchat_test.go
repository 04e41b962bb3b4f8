package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/chatauth"
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
		mux.Handle("/agent/", httpapi.AgentChat(svc))
		srv := httptest.NewServer(validated(t, mux))
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

		// The run is over once its status event is stored.
		require.Eventually(t, func() bool {
			return len(c.expect(200, "GET", "/agent/conversations/"+id, "", nil).body["messages"].([]any)) == 8
		}, 5*time.Second, 10*time.Millisecond)
		full := c.expect(200, "GET", "/agent/conversations/"+id, "", nil).body
		require.Equal(t, "idle", full["conversation"].(map[string]any)["status"])
		msgs := full["messages"].([]any)
		require.Len(t, msgs, 8, "every event was stored")
		require.Equal(t, "status", msgs[7].(map[string]any)["type"], "a run ends with its status")
		require.JSONEq(t, `{"status":"idle"}`, msgs[7].(map[string]any)["content"].(string))
		require.Equal(t, "s1", full["conversation"].(map[string]any)["session_id"])
		var list []map[string]any
		require.NoError(t, json.Unmarshal([]byte(c.expect(200, "GET", "/agent/conversations", "", nil).raw), &list))
		require.Len(t, list, 1)

		require.Eventually(t, func() bool { // the service lets go of the run just after storing its end
			return c.do("POST", "/agent/conversations/"+id+"/cancel", "", nil).status == 409
		}, 5*time.Second, 10*time.Millisecond)
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
	chat := httpapi.AgentChat(svc, httpapi.WithChatAuth(chatauth.SharedSecret("X-Agent-Secret", "agent_secret", "s3cret")))
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("the app: " + r.URL.Path)) })
	srv := httptest.NewServer(validated(t, httpapi.InterceptChat(chat, app)))
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
	require.Equal(t, 200, status)
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
			srv := httptest.NewServer(validated(t, httpapi.AgentChat(svc)))
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

// newChatServer serves the agent API and the chat routes of one process on
// st, running runner.
func newChatServer(t *testing.T, st storetest.Stores, runner agentchat.Runner, opts ...httpapi.ChatOption) (*agentchat.Service, *apiClient) {
	t.Helper()
	svc := agentchat.New(st.AgentChat, runner, agentchat.WithNotifier(st.Notifier))
	t.Cleanup(svc.Close)
	srv := httptest.NewServer(validated(t, httpapi.InterceptChat(httpapi.AgentChat(svc, opts...), http.NotFoundHandler())))
	t.Cleanup(srv.Close)
	return svc, &apiClient{t: t, srv: srv}
}

// openStream opens a conversation's stream with ?after (when not empty)
// and a Last-Event-ID header (when not empty); it is closed with t.
func openStream(t *testing.T, c *apiClient, id, after, lastEventID string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	url := c.srv.URL + "/agent/conversations/" + id + "/stream"
	if after != "" {
		url += "?after=" + after
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	res, err := c.srv.Client().Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { res.Body.Close() })
	require.Equal(t, 200, res.StatusCode)
	return res
}

func eventNames(es []sseEvent) []string {
	var names []string
	for _, e := range es {
		names = append(names, e.name)
	}
	return names
}

func isStatus(e sseEvent) bool { return e.name == "status" }

// TestAgentChatPageWire pins what slot-machine's chat page relies on, on
// every backend: the conversation list is a JSON array; Last-Event-ID wins
// over ?after; a second message's stream, opened after the last event the
// page saw, starts with that message and not with the previous run's
// closing status; a new conversation's stream, opened after the last event
// the page saw in another, replays the new run (IDs are the store's);
// /chat/config and /chat.css answer.
func TestAgentChatPageWire(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		gate := make(chan struct{})
		close(gate)
		_, c := newChatServer(t, st, gatedRunner{gate})

		empty := c.expect(200, "GET", "/agent/conversations", "", nil)
		require.JSONEq(t, `[]`, empty.raw, "no conversations is an empty array")
		id := c.expect(201, "POST", "/agent/conversations", "", nil).body["id"].(string)
		c.expect(202, "POST", "/agent/conversations/"+id+"/messages", "", map[string]any{"content": "first"})
		run1 := readSSE(t, openStream(t, c, id, "", ""), isStatus)
		require.Equal(t, []string{"user", "system", "assistant", "tool_use", "tool_result", "done", "status"}, eventNames(run1))
		require.JSONEq(t, `{"status":"idle"}`, run1[6].data)
		doneID := run1[5].id // the page tracks ids of every event but status

		var list []map[string]any
		require.NoError(t, json.Unmarshal([]byte(c.expect(200, "GET", "/agent/conversations", "", nil).raw), &list))
		require.Len(t, list, 1)
		require.Equal(t, id, list[0]["id"])
		require.Equal(t, "first", list[0]["title"])
		for _, f := range []string{"status", "created_at", "updated_at"} {
			require.Contains(t, list[0], f)
		}

		// The header wins over ?after: an EventSource reconnects to its
		// first URL and says in the header how far it got.
		replay := readSSE(t, openStream(t, c, id, "0", run1[4].id), isStatus)
		require.Equal(t, []string{"done", "status"}, eventNames(replay))
		replay = readSSE(t, openStream(t, c, id, "3", ""), isStatus)
		require.Equal(t, []string{"tool_use", "tool_result", "done", "status"}, eventNames(replay), "?after without the header")
		c.expect(400, "GET", "/agent/conversations/"+id+"/stream?after=x", "", nil)

		// The second message: the page reconnects after the done it saw.
		c.expect(202, "POST", "/agent/conversations/"+id+"/messages", "", map[string]any{"content": "second"})
		run2 := readSSE(t, openStream(t, c, id, doneID, ""), isStatus)
		require.Equal(t, []string{"user", "system", "assistant", "tool_use", "tool_result", "done", "status"}, eventNames(run2),
			"the new run's stream opens with its message, not the previous run's status")
		require.JSONEq(t, `{"content":"second"}`, run2[0].data)
		require.JSONEq(t, `{"content":"Looking at second"}`, run2[2].data)
		run2 = readSSE(t, openStream(t, c, id, "", doneID), isStatus)
		require.Equal(t, "user", run2[0].name, "the same through Last-Event-ID")

		// A new conversation: the page keeps the last ID it saw in the old
		// one and asks the new one's stream for later events. Message IDs
		// are the store's, so the new run's all come after it.
		seen := run2[5].id
		other := c.expect(201, "POST", "/agent/conversations", "", nil).body["id"].(string)
		c.expect(202, "POST", "/agent/conversations/"+other+"/messages", "", map[string]any{"content": "third"})
		run3 := readSSE(t, openStream(t, c, other, seen, ""), isStatus)
		require.Equal(t, []string{"user", "system", "assistant", "tool_use", "tool_result", "done", "status"}, eventNames(run3),
			"a new conversation's stream after the old one's last ID replays its whole run")
		require.JSONEq(t, `{"content":"Looking at third"}`, run3[2].data)
		last, _ := strconv.ParseInt(seen, 10, 64)
		for _, e := range run3[:6] {
			n, err := strconv.ParseInt(e.id, 10, 64)
			require.NoError(t, err)
			require.Greater(t, n, last, "IDs rise across conversations")
			last = n
		}

		cfg := c.expect(200, "GET", "/chat/config", "", nil)
		require.JSONEq(t, `{"authMode":"none","authSecret":"","chatTitle":"Agora","chatAccent":""}`, cfg.raw)
		res, err := c.srv.Client().Get(c.srv.URL + "/chat.css")
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, 200, res.StatusCode)
		require.Contains(t, res.Header.Get("Content-Type"), "text/css")
	})
}

// TestAgentChatCancelEndsLikeTheOriginal cancels a running and a queued
// run on every backend: each stream ends with status error (the status
// slot-machine's page knows a stopped run by) marked cancelled, and the
// conversation is cancelled.
func TestAgentChatCancelEndsLikeTheOriginal(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		_, c := newChatServer(t, st, gatedRunner{make(chan struct{})})
		running := c.expect(201, "POST", "/agent/conversations", "", nil).body["id"].(string)
		queued := c.expect(201, "POST", "/agent/conversations", "", nil).body["id"].(string)
		c.expect(202, "POST", "/agent/conversations/"+running+"/messages", "", map[string]any{"content": "hang"})
		require.Equal(t, true, c.expect(202, "POST", "/agent/conversations/"+queued+"/messages", "", map[string]any{"content": "wait"}).body["queued"])

		stream := openStream(t, c, running, "", "")
		readSSE(t, stream, func(e sseEvent) bool { return e.name == "tool_use" })
		waiting := openStream(t, c, queued, "", "")
		readSSE(t, waiting, func(e sseEvent) bool { return e.name == "user" })

		c.expect(200, "POST", "/agent/conversations/"+queued+"/cancel", "", nil)
		end := readSSE(t, waiting, isStatus)
		require.JSONEq(t, `{"status":"error","cancelled":true}`, end[len(end)-1].data)

		c.expect(200, "POST", "/agent/conversations/"+running+"/cancel", "", nil)
		end = readSSE(t, stream, isStatus)
		require.Equal(t, []string{"system", "status"}, eventNames(end))
		require.JSONEq(t, `{"content":"cancelled"}`, end[0].data)
		require.JSONEq(t, `{"status":"error","cancelled":true}`, end[1].data)
		for _, id := range []string{running, queued} {
			require.Eventually(t, func() bool {
				return c.expect(200, "GET", "/agent/conversations/"+id, "", nil).body["conversation"].(map[string]any)["status"] == "cancelled"
			}, 5*time.Second, 10*time.Millisecond)
		}
	})
}

// titleRunner answers as slot-machine's test agent does, its title marker
// split across chunks, when the message starts with "title:"; plainly
// otherwise.
type titleRunner struct{}

func (titleRunner) Run(ctx context.Context, req agentchat.RunRequest) (agentchat.RunResult, error) {
	title, titled := strings.CutPrefix(req.Message, "title:")
	chunks := []string{"working on: " + req.Message}
	result := "done: " + req.Message
	if titled {
		chunks = []string{"[[TIT", "LE: " + title, "]]", "\nworking on: " + req.Message}
		result = "[[TITLE: " + title + "]]\n" + result
	}
	req.OnEvent(agentchat.Event{Type: agentchat.EventSystem, Content: "init", SessionID: "s1"})
	for _, c := range chunks {
		req.OnEvent(agentchat.Event{Type: agentchat.EventAssistant, Content: c})
	}
	req.OnEvent(agentchat.Event{Type: agentchat.EventToolUse, Tool: "Edit", ToolUseID: "tool_001", Input: []byte(`{}`)})
	req.OnEvent(agentchat.Event{Type: agentchat.EventToolResult, Tool: "Edit", ToolUseID: "tool_001", Output: "File edited successfully"})
	req.OnEvent(agentchat.Event{Type: agentchat.EventDone, Result: result})
	return agentchat.RunResult{SessionID: "s1"}, nil
}

// TestAgentChatTitles runs slot-machine's TestAutoTitling on every backend:
// the agent's [[TITLE: …]] marker, split across chunks, is neither streamed
// nor stored, and becomes the conversation's title; a later marker renames
// it; without one the first message is the title.
func TestAgentChatTitles(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		_, c := newChatServer(t, st, titleRunner{})
		id := c.expect(201, "POST", "/agent/conversations", "", nil).body["id"].(string)
		c.expect(202, "POST", "/agent/conversations/"+id+"/messages", "", map[string]any{"content": "title:fix the login bug"})
		events := readSSE(t, openStream(t, c, id, "", ""), func(e sseEvent) bool { return e.name == "done" })
		var text strings.Builder
		for _, e := range events {
			require.NotContains(t, e.data, "[[TITLE:", "the stream never carries the marker")
			require.NotContains(t, e.data, "TITLE", "nor a piece of it")
			if e.name == "assistant" {
				var d struct{ Content string }
				require.NoError(t, json.Unmarshal([]byte(e.data), &d))
				text.WriteString(d.Content)
			}
		}
		require.Equal(t, "working on: title:fix the login bug", text.String())
		// TestToolEventsForwardedThroughSSE: the fields the page reads.
		var use, result map[string]any
		for _, e := range events {
			switch e.name {
			case "tool_use":
				require.NoError(t, json.Unmarshal([]byte(e.data), &use))
			case "tool_result":
				require.NoError(t, json.Unmarshal([]byte(e.data), &result))
			}
		}
		require.Equal(t, "Edit", use["tool"])
		require.Equal(t, "tool_001", use["id"])
		require.Equal(t, "tool_001", result["id"])
		require.Equal(t, "File edited successfully", result["output"])
		require.JSONEq(t, `{"conversation_id":"`+id+`","result":"done: title:fix the login bug"}`, events[len(events)-1].data, "nor the result")

		conv := c.expect(200, "GET", "/agent/conversations/"+id, "", nil).body
		require.Equal(t, "fix the login bug", conv["conversation"].(map[string]any)["title"])
		for _, m := range conv["messages"].([]any) {
			if m.(map[string]any)["type"] != "user" {
				require.NotContains(t, m.(map[string]any)["content"], "TITLE", "stored without the marker")
			}
		}

		require.Eventually(t, func() bool {
			return c.expect(200, "GET", "/agent/conversations/"+id, "", nil).body["conversation"].(map[string]any)["status"] == "idle"
		}, 5*time.Second, 10*time.Millisecond)
		require.Eventually(t, func() bool {
			return c.do("POST", "/agent/conversations/"+id+"/messages", "", map[string]any{"content": "title:login bug, part 2"}).status == 202
		}, 5*time.Second, 10*time.Millisecond)
		require.Eventually(t, func() bool {
			return c.expect(200, "GET", "/agent/conversations/"+id, "", nil).body["conversation"].(map[string]any)["title"] == "login bug, part 2"
		}, 5*time.Second, 10*time.Millisecond, "a later marker renames the conversation")

		plain := c.expect(201, "POST", "/agent/conversations", "", nil).body["id"].(string)
		require.Eventually(t, func() bool {
			return c.do("POST", "/agent/conversations/"+plain+"/messages", "", map[string]any{"content": "what is in the footer?"}).status == 202
		}, 5*time.Second, 10*time.Millisecond)
		readSSE(t, openStream(t, c, plain, "", ""), func(e sseEvent) bool { return e.name == "done" })
		require.Equal(t, "what is in the footer?", c.expect(200, "GET", "/agent/conversations/"+plain, "", nil).body["conversation"].(map[string]any)["title"],
			"without a marker the first message is the title")
	})
}

// status does a request of the agent API with the given headers (and, for
// a POST, an optional body) and returns its status code and body.
func status(t *testing.T, c *apiClient, method, path string, header map[string]string, body ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, c.srv.URL+path, strings.NewReader(strings.Join(body, "")))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := c.srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b := new(strings.Builder)
	_, _ = bufio.NewReader(res.Body).WriteTo(b)
	return res.StatusCode, b.String()
}

// TestAgentChatAuthSchemes pins the auth options on every backend:
// slot-machine's signed X-SlotMachine-User header (TestHMACAuthRejects
// Unauthenticated: 401 without it, /chat open), its trusted header, and
// docs/agentchat.md's delegation to the application's auth endpoint with
// the request's cookies and Authorization forwarded; /chat/config names
// the scheme.
func TestAgentChatAuthSchemes(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		const secret = "deadbeef1234"
		_, c := newChatServer(t, st, gatedRunner{make(chan struct{})}, httpapi.WithChatAuth(chatauth.SignedUser(secret, true)))
		for _, m := range []string{"GET", "POST"} {
			code, _ := status(t, c, m, "/agent/conversations", nil)
			require.Equal(t, 401, code, m)
		}
		code, _ := status(t, c, "GET", "/agent/conversations", map[string]string{"X-SlotMachine-User": "alice:badsig"})
		require.Equal(t, 401, code)
		code, body := status(t, c, "GET", "/agent/conversations", map[string]string{"X-SlotMachine-User": chatauth.SignUser(secret, "alice")})
		require.Equal(t, 200, code, body)
		require.JSONEq(t, `[]`, body)
		code, body = status(t, c, "POST", "/agent/conversations", map[string]string{"X-SlotMachine-User": chatauth.SignUser(secret, "alice")}, `{"user":"mallory"}`)
		require.Equal(t, 201, code)
		require.Contains(t, body, `"user":"alice"`, "the signed user, not the one the body claims")
		code, body = status(t, c, "GET", "/chat", nil)
		require.Equal(t, 200, code)
		require.Contains(t, body, "<html")
		code, body = status(t, c, "GET", "/chat/config", nil)
		require.Equal(t, 200, code)
		require.JSONEq(t, `{"authMode":"hmac","authSecret":"deadbeef1234","chatTitle":"Agora","chatAccent":""}`, body, "served to the page, as chosen")

		_, kept := newChatServer(t, st, gatedRunner{make(chan struct{})}, httpapi.WithChatAuth(chatauth.SignedUser(secret, false)), httpapi.WithChatLook("Shop", "#c2410c", "body{}"))
		_, body = status(t, kept, "GET", "/chat/config", nil)
		require.JSONEq(t, `{"authMode":"hmac","authSecret":"","chatTitle":"Shop","chatAccent":"#c2410c"}`, body)
		_, body = status(t, kept, "GET", "/chat.css", nil)
		require.Equal(t, "body{}", body)
		_, plain := newChatServer(t, st, gatedRunner{make(chan struct{})}, httpapi.WithChatLook("", "", ""))
		_, body = status(t, plain, "GET", "/chat/config", nil)
		require.JSONEq(t, `{"authMode":"none","authSecret":"","chatTitle":"","chatAccent":""}`, body, "an empty title keeps the page's own")
		_, byHand := newChatServer(t, st, gatedRunner{make(chan struct{})}, httpapi.WithChatAuth(chatauth.Scheme{
			Authenticate: func(*http.Request) (string, error) { return "", store.Errorf(store.ErrUnauthorized, "no", "no") },
		}))
		_, body = status(t, byHand, "GET", "/chat/config", nil)
		require.JSONEq(t, `{"authMode":"custom","authSecret":"","chatTitle":"Agora","chatAccent":""}`, body, "a scheme built without a mode is custom")
		code, _ = status(t, byHand, "GET", "/agent/conversations", nil)
		require.Equal(t, 401, code, "and guards the API")

		_, open := newChatServer(t, st, gatedRunner{make(chan struct{})})
		require.Equal(t, "bob", open.expect(201, "POST", "/agent/conversations", "", map[string]any{"user": "bob"}).body["user"], "an open API takes the body's user")
		open.expect(400, "POST", "/agent/conversations", "", map[string]any{"user": strings.Repeat("x", 201)})
		open.expect(400, "POST", "/agent/conversations", "", map[string]any{"title": "a\u0000b"})
		_, secretOnly := newChatServer(t, st, gatedRunner{make(chan struct{})}, httpapi.WithChatAuth(chatauth.SharedSecret("X-Agent-Secret", "", "s3")))
		_, body = status(t, secretOnly, "POST", "/agent/conversations", map[string]string{"X-Agent-Secret": "s3"}, `{"user":"frank"}`)
		require.Contains(t, body, `"user":"frank"`, "a shared secret names no one: the body does")

		_, trusted := newChatServer(t, st, gatedRunner{make(chan struct{})}, httpapi.WithChatAuth(chatauth.TrustedUser()))
		code, _ = status(t, trusted, "GET", "/agent/conversations", map[string]string{"X-SlotMachine-User": "bob"})
		require.Equal(t, 200, code)
		_, body = status(t, trusted, "POST", "/agent/conversations", map[string]string{"X-SlotMachine-User": "bob"})
		require.Contains(t, body, `"user":"bob"`)
		for _, h := range []map[string]string{nil, {"X-SlotMachine-User": " "}} {
			code, _ = status(t, trusted, "POST", "/agent/conversations", h, `{"user":"eve"}`)
			require.Equal(t, 401, code, "without the header the request did not pass the proxy")
			code, _ = status(t, trusted, "GET", "/agent/conversations", h)
			require.Equal(t, 401, code)
		}
		_, body = status(t, trusted, "GET", "/chat/config", nil)
		require.Contains(t, body, `"authMode":"trusted"`)

		// Delegation: the application decides from the cookies and
		// Authorization it is sent.
		type seen struct{ cookie, authorization string }
		asked := make(chan seen, 16)
		app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			asked <- seen{r.Header.Get("Cookie"), r.Header.Get("Authorization")}
			switch {
			case r.URL.Path == "/broken":
				w.WriteHeader(500)
			case strings.Contains(r.Header.Get("Cookie"), "session=ok"), r.Header.Get("Authorization") == "Bearer ok":
				w.Header().Set("X-SlotMachine-User", "carol")
				w.WriteHeader(204)
			default:
				w.WriteHeader(401)
			}
		}))
		t.Cleanup(app.Close)
		auth, err := chatauth.Delegate(app.URL+"/auth", nil)
		require.NoError(t, err)
		_, d := newChatServer(t, st, gatedRunner{make(chan struct{})}, httpapi.WithChatAuth(auth))
		code, _ = status(t, d, "GET", "/agent/conversations", map[string]string{"Cookie": "session=nope; theme=dark"})
		require.Equal(t, 401, code)
		require.Equal(t, seen{"session=nope; theme=dark", ""}, <-asked, "cookies forwarded as sent")
		code, _ = status(t, d, "GET", "/agent/conversations", map[string]string{"Cookie": "session=ok"})
		require.Equal(t, 200, code)
		<-asked
		code, body = status(t, d, "POST", "/agent/conversations", map[string]string{"Authorization": "Bearer ok"})
		require.Equal(t, 201, code)
		require.Contains(t, body, `"user":"carol"`, "the user the application named")
		require.Equal(t, seen{"", "Bearer ok"}, <-asked, "Authorization forwarded")
		code, _ = status(t, d, "GET", "/chat/config", nil)
		require.Equal(t, 200, code, "the page's config does not ask the application")
		require.Empty(t, asked)

		broken, err := chatauth.Delegate(app.URL+"/broken", nil)
		require.NoError(t, err)
		_, b := newChatServer(t, st, gatedRunner{make(chan struct{})}, httpapi.WithChatAuth(broken))
		code, body = status(t, b, "GET", "/agent/conversations", map[string]string{"Cookie": "session=ok"})
		require.Equal(t, 503, code, "an application that cannot answer is no 500 and no 401")
		require.Contains(t, body, `"code":"auth_unavailable"`)
		require.NotContains(t, body, app.URL[len("http://"):], "nothing of the application's address reaches the client")
		gone, err := chatauth.Delegate("http://127.0.0.1:1/auth", nil)
		require.NoError(t, err)
		_, g := newChatServer(t, st, gatedRunner{make(chan struct{})}, httpapi.WithChatAuth(gone))
		code, _ = status(t, g, "GET", "/agent/conversations", nil)
		require.Equal(t, 503, code)
	})
}

// TestAgentChatStreamEdges pins, on every backend, the two stream rules
// that keep slot-machine's page on its run: a closing status is replayed
// when the user message after it started no run (the agent was busy with
// another conversation), and a run a stopped server left interrupted is
// told by a status event at the stream's start.
func TestAgentChatStreamEdges(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		svc := agentchat.New(st.AgentChat, pageRunner{}, agentchat.WithNotifier(st.Notifier), agentchat.WithRejectWhenBusy())
		t.Cleanup(svc.Close)
		srv := httptest.NewServer(validated(t, httpapi.AgentChat(svc)))
		t.Cleanup(srv.Close)
		c := &apiClient{t: t, srv: srv}

		b := c.expect(201, "POST", "/agent/conversations", "", nil).body["id"].(string)
		c.expect(202, "POST", "/agent/conversations/"+b+"/messages", "", map[string]any{"content": "first"})
		readSSE(t, openStream(t, c, b, "", ""), isStatus)
		a := c.expect(201, "POST", "/agent/conversations", "", nil).body["id"].(string)
		c.expect(202, "POST", "/agent/conversations/"+a+"/messages", "", map[string]any{"content": "hang here"})
		c.expect(409, "POST", "/agent/conversations/"+b+"/messages", "", map[string]any{"content": "while a runs"})
		events := readSSE(t, openStream(t, c, b, "", ""), isStatus)
		require.Equal(t, "done", events[len(events)-2].name, "b's run ended, and no run followed its last message")
		require.JSONEq(t, `{"status":"idle"}`, events[len(events)-1].data)
		c.expect(200, "POST", "/agent/conversations/"+a+"/cancel", "", nil)

		// A server stopped mid-run: its successor marks the run interrupted.
		ctx := context.Background()
		conv := agentchat.Conversation{ID: "conv_left_running", Status: agentchat.StatusRunning, CreatedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC()}
		require.NoError(t, st.AgentChat.CreateConversation(ctx, conv))
		lost, err := st.AgentChat.AppendChatMessage(ctx, agentchat.Message{ConversationID: conv.ID, Type: agentchat.EventUser, Content: "lost", CreatedAt: time.Now().UTC()})
		require.NoError(t, err)
		next := agentchat.New(st.AgentChat, pageRunner{}, agentchat.WithNotifier(st.Notifier))
		t.Cleanup(next.Close)
		n, err := next.Start(ctx)
		require.NoError(t, err)
		require.GreaterOrEqual(t, n, 1)
		srv2 := httptest.NewServer(validated(t, httpapi.AgentChat(next)))
		t.Cleanup(srv2.Close)
		c2 := &apiClient{t: t, srv: srv2}
		events = readSSE(t, openStream(t, c2, conv.ID, "", strconv.FormatInt(lost.ID, 10)), isStatus)
		require.Len(t, events, 1)
		require.NotEmpty(t, events[0].id, "stored as the run's closing status, as a run's end is")
		require.JSONEq(t, `{"status":"interrupted"}`, events[0].data)
	})
}

// TestConversationsArePaged: the list of conversations is a page, at most
// DefaultConversationsLimit unless limit says otherwise, the next one after
// the ID in before; still the JSON array slot-machine's page reads.
func TestConversationsArePaged(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		svc, c := newChatServer(t, st, gatedRunner{make(chan struct{})})
		ctx := context.Background()
		for range agentchat.DefaultConversationsLimit + 3 {
			_, err := svc.Create(ctx, agentchat.NewConversation{})
			require.NoError(t, err)
		}
		list := func(q string) []map[string]any {
			r := c.expect(200, "GET", "/agent/conversations"+q, "", nil)
			var page []map[string]any
			require.NoError(t, json.Unmarshal([]byte(r.raw), &page))
			return page
		}
		first := list("")
		require.Len(t, first, agentchat.DefaultConversationsLimit, "capped")
		rest := list("?before=" + first[len(first)-1]["id"].(string))
		require.Len(t, rest, 3)
		two := list("?limit=2")
		require.Equal(t, first[:2], two)
		for _, q := range []string{"?limit=0", "?limit=501", "?limit=-1", "?before=conv_missing"} {
			c.expect(400, "GET", "/agent/conversations"+q, "", nil)
		}
	})
}
