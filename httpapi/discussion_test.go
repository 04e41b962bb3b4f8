package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/store/storetest"
)

// newDiscussionAPI serves the discussion routes of one process; peer (when
// not nil) is a second process on the same backend.
func newDiscussionAPI(t *testing.T, st storetest.Stores, peer bool) *apiClient {
	t.Helper()
	n := st.Notifier
	if peer {
		n = st.Peer
	}
	svc := discussion.New(st.Discussion, discussion.WithNotifier(n))
	mux := http.NewServeMux()
	h := httpapi.Discussion(svc)
	mux.Handle("/api/discussion", h)
	mux.Handle("/api/discussion/", h)
	mux.Handle("/api/squad-chat", h)
	srv := httptest.NewServer(validated(t, mux))
	t.Cleanup(srv.Close)
	return &apiClient{t: t, srv: srv}
}

func TestDiscussionPollingLoop(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newDiscussionAPI(t, st, false)
		r := c.expect(201, "POST", "/api/discussion", "", map[string]any{
			"task_id": "task-1", "requester_agent": "Developer",
			"prompt_message":     "Before implementing feature X, what should I consider?",
			"required_responses": 2, "timeout_minutes": 30,
		})
		prompt := r.body["prompt"].(map[string]any)
		chat := r.body["chat"].(map[string]any)
		require.Equal(t, "collecting", prompt["status"])
		require.Equal(t, "discussion_prompt", chat["message_type"])
		require.Equal(t, prompt["id"], chat["discussion_prompt_id"])
		require.Equal(t, chat["id"], prompt["squad_chat_id"])
		for _, f := range []string{"id", "task_id", "requester_agent", "prompt_message", "required_responses", "timeout_minutes", "status", "collected_context", "squad_chat_id", "resolved_at", "created_at"} {
			require.Contains(t, prompt, f)
		}
		id := prompt["id"].(string)

		// The responder's loop of the specification.
		pending := c.expect(200, "GET", "/api/discussion?status=collecting&agent=Builder", "", nil).body["prompts"].([]any)
		require.Len(t, pending, 1)
		require.Equal(t, id, pending[0].(map[string]any)["id"])
		resp := c.expect(201, "POST", "/api/discussion/"+id, "", map[string]any{"agent_name": "Builder", "message": "Here are my thoughts...", "is_human": false})
		require.Equal(t, "discussion_response", resp.body["chat"].(map[string]any)["message_type"])
		require.Empty(t, c.expect(200, "GET", "/api/discussion?status=collecting&agent=Builder", "", nil).body["prompts"])

		// The requester's polling loop.
		status := c.expect(200, "GET", "/api/discussion/"+id, "", nil).body
		require.Equal(t, false, status["ready"])
		require.EqualValues(t, 1, status["responseCount"])
		require.EqualValues(t, 2, status["requiredResponses"])
		c.expect(201, "POST", "/api/discussion/"+id, "", map[string]any{"agent_name": "Growth", "message": "Also think about...", "is_human": true})
		status = c.expect(200, "GET", "/api/discussion/"+id, "", nil).body
		require.Equal(t, true, status["ready"])
		require.Equal(t, "resolved", status["status"])
		ctx := status["collectedContext"].([]any)
		require.Len(t, ctx, 2)
		first := ctx[0].(map[string]any)
		require.Equal(t, "Builder", first["agent"])
		require.Equal(t, "Here are my thoughts...", first["message"])
		require.Equal(t, false, first["is_human"])
		require.NotEmpty(t, first["created_at"])
		require.Len(t, status["responses"].([]any), 2)
		require.NotNil(t, status["prompt"].(map[string]any)["resolved_at"])

		msgs := c.expect(200, "GET", "/api/squad-chat?limit=10", "", nil).body["messages"].([]any)
		require.Len(t, msgs, 3)
		require.Equal(t, "discussion_response", msgs[0].(map[string]any)["message_type"])
		require.Equal(t, "discussion_prompt", msgs[2].(map[string]any)["message_type"])
	})
}

// TestDiscussionOriginalAnswers pins mission-control's wire on every
// backend: POST /api/discussion/{id} answers {response, prompt, ready} (ready
// once resolved) beside Agora's chat and counters; squad-chat messages carry
// task_ref and reply_to_id, and a reply names the message it answers.
func TestDiscussionOriginalAnswers(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newDiscussionAPI(t, st, false)
		created := c.expect(201, "POST", "/api/discussion", "", map[string]any{"task_id": "task-9", "requester_agent": "Developer", "prompt_message": "?", "required_responses": 2}).body
		chat := created["chat"].(map[string]any)
		require.Equal(t, "task-9", chat["task_ref"], "the prompt's message refers to its task")
		require.Contains(t, chat, "reply_to_id")
		require.Nil(t, chat["reply_to_id"])
		id := created["prompt"].(map[string]any)["id"].(string)

		first := c.expect(201, "POST", "/api/discussion/"+id, "", map[string]any{"agent_name": "Builder", "message": "first"}).body
		resp := first["response"].(map[string]any)
		require.Equal(t, "Builder", resp["agent_name"])
		require.Equal(t, "first", resp["message"])
		require.Equal(t, "discussion_response", resp["message_type"])
		require.Equal(t, id, resp["discussion_prompt_id"])
		require.Equal(t, false, resp["is_human"])
		for _, f := range []string{"id", "created_at", "task_ref", "reply_to_id"} {
			require.Contains(t, resp, f)
		}
		require.Equal(t, resp, first["chat"].(map[string]any), "chat is the same message")
		require.Equal(t, false, first["ready"])
		require.Equal(t, "collecting", first["prompt"].(map[string]any)["status"])
		require.Len(t, first["prompt"].(map[string]any)["collected_context"], 1)
		require.EqualValues(t, 1, first["responseCount"])
		require.EqualValues(t, 2, first["requiredResponses"])

		second := c.expect(201, "POST", "/api/discussion/"+id, "", map[string]any{"agent_name": "Growth", "message": "second", "is_human": true}).body
		require.Equal(t, true, second["ready"])
		require.Equal(t, "resolved", second["prompt"].(map[string]any)["status"])
		require.Equal(t, true, second["response"].(map[string]any)["is_human"])

		root := c.expect(201, "POST", "/api/squad-chat", "", map[string]any{"agent_name": "Builder", "message": "who takes it?", "task_ref": "task-9"}).body
		require.Equal(t, "task-9", root["task_ref"])
		require.Nil(t, root["reply_to_id"])
		reply := c.expect(201, "POST", "/api/squad-chat", "", map[string]any{"agent_name": "Rosa", "message": "me", "is_human": true, "reply_to_id": root["id"]}).body
		require.Equal(t, root["id"], reply["reply_to_id"])
		require.Nil(t, reply["task_ref"])
		r := c.expect(400, "POST", "/api/squad-chat", "", map[string]any{"agent_name": "Rosa", "message": "me", "reply_to_id": "msg_missing"})
		require.Equal(t, "reply_to_not_found", r.errCode(t))
		c.expect(400, "POST", "/api/squad-chat", "", map[string]any{"agent_name": "Rosa", "message": "me", "reply_to_id": 7})

		msgs := c.expect(200, "GET", "/api/squad-chat?limit=2", "", nil).body["messages"].([]any)
		require.Equal(t, reply, msgs[0].(map[string]any), "read back as posted")
		require.Equal(t, root, msgs[1].(map[string]any))
	})
}

func TestDiscussionErrors(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newDiscussionAPI(t, st, false)
		for name, body := range map[string]string{
			"no requester":      `{"prompt_message":"?"}`,
			"no prompt":         `{"requester_agent":"A"}`,
			"long prompt":       `{"requester_agent":"A","prompt_message":"` + strings.Repeat("x", 10_001) + `"}`,
			"required 0":        `{"requester_agent":"A","prompt_message":"?","required_responses":0}`,
			"required 101":      `{"requester_agent":"A","prompt_message":"?","required_responses":101}`,
			"required string":   `{"requester_agent":"A","prompt_message":"?","required_responses":"2"}`,
			"required float":    `{"requester_agent":"A","prompt_message":"?","required_responses":2.5}`,
			"timeout too long":  `{"requester_agent":"A","prompt_message":"?","timeout_minutes":10081}`,
			"timeout negative":  `{"requester_agent":"A","prompt_message":"?","timeout_minutes":-1}`,
			"malformed":         `{"requester_agent":`,
			"requester not str": `{"requester_agent":7,"prompt_message":"?"}`,
		} {
			r := c.do("POST", "/api/discussion", "", body)
			require.Equal(t, 400, r.status, "%s: %s", name, r.raw)
			r.errCode(t)
		}
		require.Empty(t, c.expect(200, "GET", "/api/squad-chat", "", nil).body["messages"], "nothing half-written")

		id := c.expect(201, "POST", "/api/discussion", "", map[string]any{"requester_agent": "Developer", "prompt_message": "?", "required_responses": 1}).body["prompt"].(map[string]any)["id"].(string)
		r := c.expect(400, "POST", "/api/discussion/"+id, "", map[string]any{"agent_name": "Developer", "message": "me"})
		require.Equal(t, "own_prompt", r.errCode(t))
		c.expect(400, "POST", "/api/discussion/"+id, "", map[string]any{"agent_name": "", "message": "x"})
		// A field the route does not read is ignored, as the original's.
		c.expect(201, "POST", "/api/discussion/"+id, "", map[string]any{"agent_name": "B", "message": "x", "extra": 1})
		r = c.expect(409, "POST", "/api/discussion/"+id, "", map[string]any{"agent_name": "C", "message": "x"})
		require.Equal(t, "prompt_closed", r.errCode(t))
		c.expect(404, "POST", "/api/discussion/prompt_missing", "", map[string]any{"agent_name": "C", "message": "x"})
		c.expect(404, "GET", "/api/discussion/prompt_missing", "", nil)
		c.expect(404, "PATCH", "/api/discussion/prompt_missing", "", map[string]any{"action": "cancel"})
		c.expect(409, "PATCH", "/api/discussion/"+id, "", map[string]any{"action": "cancel"})

		open := c.expect(201, "POST", "/api/discussion", "", map[string]any{"requester_agent": "Developer", "prompt_message": "?"}).body["prompt"].(map[string]any)["id"].(string)
		c.expect(201, "POST", "/api/discussion/"+open, "", map[string]any{"agent_name": "B", "message": "x"})
		r = c.expect(409, "POST", "/api/discussion/"+open, "", map[string]any{"agent_name": "B", "message": "again"})
		require.Equal(t, "already_responded", r.errCode(t))
		c.expect(400, "PATCH", "/api/discussion/"+open, "", map[string]any{"action": "delete"})
		closed := c.expect(200, "PATCH", "/api/discussion/"+open, "", map[string]any{"action": "cancel"}).body
		patched := closed["prompt"].(map[string]any)
		require.Equal(t, "cancelled", patched["status"])
		require.Equal(t, patched["collected_context"], closed["collectedContext"], "mission-control's answer names the collected responses too")
		require.Len(t, closed["collectedContext"], 1)
		view := c.expect(200, "GET", "/api/discussion/"+open, "", nil).body
		require.Equal(t, "cancelled", view["status"])
		require.Equal(t, false, view["ready"])

		for _, q := range []string{"wait=61", "wait=-1", "wait=x"} {
			c.expect(400, "GET", "/api/discussion/"+open+"?"+q, "", nil)
		}
		c.expect(400, "GET", "/api/discussion?status=open", "", nil)
		c.expect(400, "GET", "/api/squad-chat?limit=0", "", nil)
		c.expect(400, "POST", "/api/squad-chat", "", map[string]any{"agent_name": "A"})
		m := c.expect(201, "POST", "/api/squad-chat", "", map[string]any{"agent_name": "A", "message": "hello", "is_human": true}).body
		require.Equal(t, "message", m["message_type"])
		require.Nil(t, m["discussion_prompt_id"])
		c.expect(405, "DELETE", "/api/discussion/"+open, "", nil)
	})
}

// TestDiscussionLongPollAcrossProcesses waits on one server and answers
// through another sharing the backend.
func TestDiscussionLongPollAcrossProcesses(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		a, b := newDiscussionAPI(t, st, false), newDiscussionAPI(t, st, true)
		id := a.expect(201, "POST", "/api/discussion", "", map[string]any{"requester_agent": "Developer", "prompt_message": "?", "required_responses": 1}).body["prompt"].(map[string]any)["id"].(string)

		type result struct {
			r  response
			at time.Time
		}
		done := make(chan result, 1)
		go func() {
			r := a.do("GET", fmt.Sprintf("/api/discussion/%s?wait=30", id), "", nil)
			done <- result{r, time.Now()}
		}()
		time.Sleep(300 * time.Millisecond) // the waiter is parked
		answered := time.Now()
		b.expect(201, "POST", "/api/discussion/"+id, "", map[string]any{"agent_name": "Builder", "message": "go"})
		select {
		case res := <-done:
			require.Equal(t, 200, res.r.status, res.r.raw)
			require.Equal(t, true, res.r.body["ready"])
			// Logged, not asserted: how fast depends on the machine. That it
			// woke at all is what the 20 s bound below, short of the 30 s
			// wait, tells.
			t.Logf("long poll returned %v after the resolving response", res.at.Sub(answered))
		case <-time.After(20 * time.Second):
			t.Fatal("the long poll was not woken by the answer posted through the other process")
		}
	})
}

// TestHeadOnALongPollAnswersAtOnce: a HEAD has no body to wait for, so
// every long poll (a discussion prompt, an arena game's state) answers it
// at once, as the event streams do; a GET of the same waits.
func TestHeadOnALongPollAnswersAtOnce(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		d, a := newDiscussionAPI(t, st, false), newArenaAPI(t, st, false)
		id := d.expect(201, "POST", "/api/discussion", "", map[string]any{"requester_agent": "Developer", "prompt_message": "?", "required_responses": 1}).body["prompt"].(map[string]any)["id"].(string)
		game := a.expect(200, "POST", "/api/games", "", nil).body["game_id"].(string)
		v := a.expect(200, "GET", "/api/games/"+game+"/state", "", nil).body["version"].(float64)
		for _, tc := range []struct {
			c    *apiClient
			path string
		}{
			{d, "/api/discussion/" + id + "?wait=60"},
			{a, fmt.Sprintf("/api/games/%s/state?version=%d&wait=30", game, int(v))},
		} {
			start := time.Now()
			r := tc.c.do("HEAD", tc.path, "", nil)
			require.Equal(t, http.StatusOK, r.status, tc.path)
			require.Less(t, time.Since(start), 5*time.Second, "HEAD %s waited", tc.path)
			require.Equal(t, http.StatusBadRequest, tc.c.do("HEAD", strings.Replace(tc.path, "wait=", "wait=9", 1), "", nil).status, "a HEAD is still checked")
		}
	})
}
